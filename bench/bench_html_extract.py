"""Main-content extraction from HTML: trafilatura (used) against readability-lxml, on the
real documentation pages in tests/data/docs and, when installed, a sample of Debian's
PostgreSQL 15 manual.

For each extractor: time per page, how many of the sentences a reader sees on the
fixture pages are found whole in the extracted text (white space collapsed), how many
page-chrome strings survive (``Previous topic``, ``Show Source``, …), and whether code
blocks keep their line breaks. Then, for ours, how many of the pages' ``<pre>`` blocks
(outside tables, whose cells are collapsed) come out whole as one code block, on the
PostgreSQL sample and on as many pages of the Python 3.11 documentation (python3.11-doc).

    nice .venv/bin/python bench/bench_html_extract.py [--pages 100]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.extract_pages import CHROME, DOCS, READER_SENTENCES  # noqa: E402

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
_WS = re.compile(r"\s+")
CODE_LINES = {"controlflow.html": ">>> for n in range(2, 10):\n...     for x in range(2, n):"}


def with_trafilatura(html: str) -> str:
    from rag_eval.rag.extract.html import extract_html

    return extract_html(html).assemble()[0]


def with_readability(html: str) -> str:
    import lxml.html
    from readability import Document

    summary = lxml.html.fromstring(Document(html).summary(html_partial=True))
    for block in summary.iter("p", "pre", "li", "h1", "h2", "h3", "h4", "tr", "div"):
        block.tail = "\n\n" + (block.tail or "")
    return summary.text_content()


def page_headings(html: str) -> list[str]:
    """The h1-h3 headings a reader sees on the page (permalink marks dropped)."""
    import lxml.html

    root = lxml.html.fromstring(html.encode("utf-8"))
    body = root.find(".//div[@role='main']")
    heads = (body if body is not None else root).iter("h1", "h2", "h3")
    return [_WS.sub(" ", h.text_content()).replace("¶", "").strip() for h in heads]


def pre_blocks_kept(pages: list[str]) -> tuple[int, int]:
    """How many ``<pre>`` blocks outside tables are one code block of the extraction, of how many."""
    from trafilatura import load_html

    from rag_eval.rag.extract.html import extract_html

    kept = total = 0
    for html in pages:
        tree = load_html(html)
        if tree is None:
            continue
        pres = [str(pre.xpath("string()")).replace("\u200b", "").strip("\n").rstrip() for pre in tree.iter("pre")
                if next(pre.iterancestors("td", "th"), None) is None]
        code = {b.text for b in extract_html(html).blocks if b.kind == "code"}
        total += sum(1 for p in pres if p.strip())
        kept += sum(1 for p in pres if p.strip() and p in code)
    return kept, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100, help="PostgreSQL manual pages timed besides the fixtures")
    args = parser.parse_args()
    fixtures = {name: (DOCS / name).read_text(encoding="utf-8") for name in READER_SENTENCES if name.endswith(".html")}
    manual = sorted(MANUAL.glob("*.html")) if MANUAL.is_dir() else []
    sample = [p.read_text(encoding="utf-8", errors="replace")
              for p in random.Random(0).sample(manual, min(args.pages, len(manual)))] if manual else []
    print(f"{len(fixtures)} fixture pages; {len(sample)} PostgreSQL manual pages for timing\n")
    print("| extractor | ms/page | reader sentences found | headings found | chrome strings left | code lines kept |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for name, extract in (("trafilatura", with_trafilatura), ("readability-lxml", with_readability)):
        found = total = chrome = heads = heads_total = 0
        code_ok = True
        pages = list(fixtures.values()) + sample
        t = time.perf_counter()
        texts = [extract(html) for html in pages]
        ms = 1000 * (time.perf_counter() - t) / len(pages)
        for (page, _), text in zip(fixtures.items(), texts):
            flat = _WS.sub(" ", text)
            for sentence in READER_SENTENCES[page]:
                total += 1
                found += _WS.sub(" ", sentence) in flat
            chrome += sum(c in text for c in CHROME)
            for heading in page_headings(fixtures[page]):
                heads_total += 1
                heads += heading in flat
            if page in CODE_LINES:
                code_ok = code_ok and CODE_LINES[page] in text
        print(f"| {name} | {ms:.1f} | {found}/{total} | {heads}/{heads_total} | {chrome} | "
              f"{'yes' if code_ok else 'no'} |")
    python = sorted(PYTHON_DOCS.glob("*/*.html")) if PYTHON_DOCS.is_dir() else []
    python_sample = [p.read_text(encoding="utf-8", errors="replace")
                     for p in random.Random(0).sample(python, min(args.pages, len(python)))]
    print("\n| pages (trafilatura) | <pre> blocks kept whole as one code block |\n| --- | ---: |")
    for label, pages in ((f"{len(sample)} PostgreSQL manual", sample), (f"{len(python_sample)} Python 3.11 docs",
                                                                          python_sample)):
        if pages:
            kept, total = pre_blocks_kept(pages)
            print(f"| {label} | {kept}/{total} ({kept / max(total, 1):.1%}) |")


if __name__ == "__main__":
    main()
