"""Regenerate the dashboard screenshots in docs/screenshots/ (``make screenshots``).

Builds real runs in a throw-away data directory (the demo questions at top-k 2 and 5
through the RAG system, and the labelled RAGBench sample judged by the local judge),
starts ``streamlit run app.py`` on a free loopback port and saves one PNG per page from
headless Chromium. PNGs are at most 1280 px wide and quantised to a palette, so each
stays under 250 KB.

    python scripts/screenshots.py [--out docs/screenshots] [--keep-home DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WIDTH, HEIGHT = 1280, 900
MAX_BYTES = 250_000
WAIT_S = 300.0


def shrink(path: Path) -> int:
    """Quantise the PNG to a palette (fewer colours until it fits); returns its size."""
    from PIL import Image

    image = Image.open(path).convert("RGB")
    if image.width > WIDTH:
        image = image.resize((WIDTH, round(image.height * WIDTH / image.width)))
    for colours in (128, 64, 32, 16):
        image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
        if path.stat().st_size < MAX_BYTES:
            break
    return path.stat().st_size


def make_runs(home: Path) -> dict:
    import os

    os.environ["RAG_EVAL_HOME"] = str(home)
    from harness.examples import make_example_runs
    from rag_eval.rag.store import close_clients
    from rag_eval.runs.store import RunStore

    store = RunStore()
    runs = make_example_runs(store, n_demo=6, n_sample=10)
    store.close()
    close_clients()
    return runs


def capture(home: Path, out: Path, runs: dict) -> list[tuple[str, int]]:
    from harness import browser

    k2, k5 = runs["rag"]
    item = runs["items"][0]
    shots: list[tuple[str, int]] = []
    with browser.streamlit_server(home) as server, browser.BrowserSession(WIDTH, HEIGHT) as s:
        browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
        url = server.url

        def shot(name: str, full: bool = True, max_height: int = 2000) -> None:
            path = s.screenshot(out / f"{name}.png", full_height=full, max_height=max_height)
            shots.append((path.name, shrink(path)))

        s.goto(f"{url}/", "RAG Eval Workbench", WAIT_S)
        shot("overview", max_height=1500)
        s.goto(f"{url}/ask", "Ask", WAIT_S)
        s.type_into('input[aria-label="Question"]', "How do I turn on the TV's Game Mode?")
        s.evaluate("document.querySelector('input[aria-label=\"Question\"]').blur()")
        s.idle(WAIT_S)
        s.click_button("Ask")
        s.wait_for("document.body.innerText.includes('Timings:')", WAIT_S)
        s.idle(WAIT_S)
        shot("ask", max_height=2400)
        s.goto(f"{url}/support_map?run={k5}&item={item}", "Sentence support map", WAIT_S)
        shot("support_map", max_height=1600)
        s.goto(f"{url}/support_map?runs={k2},{k5}&item={item}", "Sentence support map", WAIT_S)
        shot("support_map_side_by_side", max_height=1600)
        s.goto(f"{url}/batch", "Batch evaluation", WAIT_S)
        s.wait_for("document.body.innerText.includes('rows are usable')", WAIT_S)
        shot("batch_setup", full=False)
        s.type_into('input[aria-label^="Rows to evaluate"]', "4")
        s.evaluate("document.querySelector('input[aria-label^=\"Rows to evaluate\"]').blur()")
        s.wait_for("document.body.innerText.includes('4 of 4 rows are usable')", WAIT_S)
        s.idle(WAIT_S)
        s.click_button("Run")
        s.wait_for("document.body.innerText.includes('Results ·')", WAIT_S)
        s.idle(WAIT_S)
        shot("batch_results", max_height=2200)
        s.goto(f"{url}/runs?dataset=all", "Runs and trends", WAIT_S)
        s.wait_for(f"{browser.CHARTS_DRAWN_JS} >= 1", WAIT_S)
        s.idle(WAIT_S)
        shot("runs", max_height=2600)
        s.goto(f"{url}/runs?dataset=all&view=agreement", "Runs and trends", WAIT_S)
        s.wait_for(f"{browser.CHARTS_DRAWN_JS} >= 1", WAIT_S)
        s.idle(WAIT_S)
        shot("runs_agreement", max_height=2600)
        s.goto(f"{url}/runs?dataset=all&run={k5}", "Runs and trends", WAIT_S)  # One run: the metric spread per row
        s.wait_for("document.body.innerText.includes('Metric spread per row')", WAIT_S)
        s.wait_for(f"{browser.CHARTS_DRAWN_JS} >= 1", WAIT_S)
        s.idle(WAIT_S)
        shot("runs_one_run", max_height=2600)
        s.goto(f"{url}/compare?runs={k2},{k5}", "Compare runs", WAIT_S)
        s.wait_for("document.body.innerText.includes('retrieval.k: 2 → 5')", WAIT_S)
        s.wait_for("document.body.innerText.includes('Questions whose scores differ most')", WAIT_S)
        s.idle(WAIT_S)
        shot("compare", max_height=2400)
        s.goto(f"{url}/judges", "Judges", WAIT_S)
        s.idle(WAIT_S)
        shot("judges", max_height=1600)
        s.goto(f"{url}/datasets", "Datasets", WAIT_S)
        shot("datasets", max_height=1200)
        s.goto(f"{url}/corpus", "Corpus", WAIT_S)
        shot("corpus", max_height=1200)
        s.goto(f"{url}/settings", "Settings", WAIT_S)
        shot("settings", max_height=1400)
        errors = browser.page_errors(str(s.evaluate("document.documentElement.outerHTML")))
        if errors:
            raise RuntimeError(f"the last page shows an error: {errors}")
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--keep-home", type=Path, help="use (and keep) this data directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rag-eval-shots-") as tmp:
        home = args.keep_home or Path(tmp)
        home.mkdir(parents=True, exist_ok=True)
        runs = make_runs(home)
        shots = capture(home, args.out, runs)
    total = sum(size for _, size in shots)
    for name, size in shots:
        print(f"{name:32s} {size / 1000:7.1f} KB")
    print(f"{'total':32s} {total / 1000:7.1f} KB")
    print(json.dumps({"screenshots": len(shots), "total_kb": round(total / 1000, 1)}))
    return 0 if all(size < MAX_BYTES for _, size in shots) else 1


if __name__ == "__main__":
    sys.exit(main())
