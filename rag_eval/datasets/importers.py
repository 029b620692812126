"""Importers: RAGBench rows, BEIR collections and plain question/answer/contexts CSV files into
:class:`DatasetRow` rows. Each returns a :class:`~rag_eval.datasets.io.LoadResult`: the rows it could
build and an issue for everything it could not (a bad line, a missing column, a qrels line naming an
unknown query); nothing is dropped without a reason.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_eval.datasets.io import LoadResult, finish_rows, good_rows
from rag_eval.datasets.schema import Provenance
from rag_eval.datasets.validate import Issue, Severity, missing_columns
from rag_eval.io.rows import FileFormatError, _decode_lenient
from rag_eval.io.trec import read_qrels

KINDS = ("ragbench", "beir", "csv")


# ---------------------------------------------------------------- RAGBench
def _subset_of(row: dict[str, Any], path: Path) -> str | None:
    if row.get("_subset"):
        return str(row["_subset"])
    name = str(row.get("dataset_name") or "")
    if name:
        return name.rsplit("_", 1)[0] if name.endswith(("_train", "_validation", "_test")) else name
    return path.parent.name if path.suffix == ".parquet" and path.parent.name else None


def ragbench_record(row: dict[str, Any], subset: str | None = None, prefix_subset: bool = False) -> dict[str, Any]:
    """A RAGBench row as a dataset record: every RAGBench column kept under its own
    name, plus ``metadata`` (domain = subset) and ``provenance: llm`` (RAGBench's labels
    were written by GPT-4). With ``prefix_subset`` the id becomes ``<subset>-<id>``
    (RAGBench ids repeat across subsets) and the original is kept as ``source_id``."""
    record = dict(row)
    rid = str(record.get("id", ""))
    if prefix_subset and subset and rid:
        record["source_id"] = rid
        record["id"] = f"{subset}-{rid}"
    meta = dict(record.get("metadata") or {}) if isinstance(record.get("metadata"), dict) else {}
    meta.setdefault("domain", subset)
    meta.setdefault("question_source", f"ragbench:{subset}" if subset else "ragbench")
    record["metadata"] = {k: v for k, v in meta.items() if v is not None}
    record.setdefault("provenance", Provenance.LLM.value)
    return record


def _unique_id(record: dict[str, Any], seen: dict[str, int], file: str, number: int, issues: list[Issue]) -> None:
    """RAGBench repeats ids for the same question answered twice (emanual train holds
    every id twice, with different responses): the repeat becomes ``<id>~<n>``, the
    original id is kept in ``source_id``, and a warning says so."""
    rid = str(record.get("id", ""))
    if not rid:
        return
    seen[rid] = seen.get(rid, 0) + 1
    if seen[rid] > 1:
        new = f"{rid}~{seen[rid]}"
        record.setdefault("source_id", rid)
        record["id"] = new
        issues.append(Issue(file, number, "id", f"id '{rid}' repeats in the source; imported as '{new}'", Severity.WARNING))


RAGBENCH_COLUMNS = {"id": ("id",), "question": ("question",)}  # what every RAGBench row has


def import_ragbench(paths: Sequence[str | Path], prefix_subset: bool = False) -> LoadResult:
    """RAGBench rows from ``.parquet`` / ``.jsonl`` / ``.json`` / ``.csv`` files."""
    result, numbered = LoadResult(), []
    seen: dict[str, int] = {}
    for path in map(Path, paths):
        rows = list(good_rows(path, result.issues))
        columns = missing_columns(str(path), (k for _, row in rows for k in row), RAGBENCH_COLUMNS) if rows else None
        if columns is not None:  # said once for the file, not on every row
            result.issues.append(columns)
            continue
        for number, row in rows:
            record = ragbench_record(row, _subset_of(row, path), prefix_subset)
            _unique_id(record, seen, str(path), number, result.issues)
            numbered.append((number, record, str(path)))
    if not numbered and not result.issues:
        result.issues.append(Issue(", ".join(map(str, paths)), 0, None, "no rows found"))
    return finish_rows(result, numbered)


# ---------------------------------------------------------------- BEIR
@dataclass(slots=True)
class BeirFiles:
    queries: Path
    qrels: list[Path]
    corpus: Path | None = None


def find_beir_files(paths: Sequence[str | Path]) -> BeirFiles:
    """The queries / qrels / corpus files of a BEIR collection, given its folder or the
    files themselves (queries*.jsonl, corpus*.jsonl, *.tsv). Raises ``ValueError``."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(p.glob("*.jsonl")) + sorted(p.glob("qrels/*.tsv")) + sorted(p.glob("*.tsv"))
        elif p.exists():
            files.append(p)
        else:
            raise ValueError(f"{p}: no such file or folder")
    queries = [f for f in files if f.suffix == ".jsonl" and "quer" in f.name]
    corpus = [f for f in files if f.suffix == ".jsonl" and "corpus" in f.name]
    qrels = [f for f in files if f.suffix == ".tsv"]
    if len(queries) != 1:
        raise ValueError(f"expected one queries .jsonl file among {', '.join(map(str, paths))}, found {len(queries)}")
    if not qrels:
        raise ValueError(f"no qrels .tsv file among {', '.join(map(str, paths))}")
    return BeirFiles(queries[0], qrels, corpus[0] if corpus else None)


def _corpus_texts(path: Path, wanted: set[str], issues: list[Issue]) -> dict[str, str]:
    texts = {}
    for _number, row in good_rows(path, issues):
        if str(row.get("_id")) in wanted:
            title, text = str(row.get("title") or ""), str(row.get("text") or "")
            texts[str(row["_id"])] = f"{title}\n{text}" if title else text
    return texts


def import_beir(paths: Sequence[str | Path], min_score: int = 1) -> LoadResult:
    """One row per query: ``gold_doc_ids`` are the documents judged ``>= min_score``,
    ``qrels`` keeps every judgement, and with a corpus file ``gold_contexts`` holds the
    gold documents' texts (title and text). Queries without a relevant document are
    kept with a warning; qrels naming an unknown query or document are reported."""
    files = find_beir_files(paths)
    result, numbered = LoadResult(), []
    qrels: dict[str, dict[str, int]] = {}
    for path in files.qrels:  # the one qrels reader (TREC or BEIR TSV), its bad lines as issues
        read, errors = read_qrels(path)
        result.issues.extend(map(Issue.from_row_error, errors))
        for qid, docs in read.items():
            qrels.setdefault(qid, {}).update(docs)
    relevant_ids = {d for docs in qrels.values() for d, s in docs.items() if s >= min_score}
    texts = _corpus_texts(files.corpus, relevant_ids, result.issues) if files.corpus else {}
    seen: dict[str, tuple[Any, Any]] = {}
    qfile = str(files.queries)
    for number, row in good_rows(files.queries, result.issues):
        qid = str(row.get("_id", row.get("id", "")))
        if qid in seen and seen[qid] == (row.get("text"), row.get("metadata")):
            result.issues.append(Issue(qfile, number, "_id", f"query '{qid}' repeats an earlier line exactly; "
                                       "imported once (its qrels cannot tell the copies apart)", Severity.WARNING))
            continue
        seen.setdefault(qid, (row.get("text"), row.get("metadata")))
        judged = qrels.get(qid, {})
        gold = [d for d, s in judged.items() if s >= min_score]
        meta = dict(row.get("metadata") or {}) if isinstance(row.get("metadata"), dict) else {}
        if "subset" in meta:
            meta.setdefault("domain", meta["subset"])
        meta.setdefault("question_source", "beir")
        record: dict[str, Any] = {
            "id": qid, "question": row.get("text", row.get("question")), "gold_doc_ids": gold,
            "metadata": meta, "provenance": Provenance.HUMAN.value,
        }
        if judged:
            record["qrels"] = judged
        if files.corpus:
            missing = [d for d in gold if d not in texts]
            if missing:
                result.issues.append(Issue(qfile, number, "gold_doc_ids",
                                           f"documents not in the corpus: {', '.join(missing)}", Severity.WARNING))
            if texts and gold and not missing:
                record["gold_contexts"] = [texts[d] for d in gold]
        if not gold:
            result.issues.append(Issue(qfile, number, "gold_doc_ids", "no relevant document in the qrels", Severity.WARNING))
        numbered.append((number, record, qfile))
    unknown = sorted(set(qrels) - set(seen))
    if unknown:
        shown = ", ".join(unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        result.issues.append(Issue(str(files.qrels[0]), 0, "query-id",
                                   f"{len(unknown)} qrels queries not in {files.queries.name}: {shown}", Severity.WARNING))
    return finish_rows(result, numbered)


# ---------------------------------------------------------------- plain CSV
# Accepted column names for each field (first present wins), including Ragas' names.
CSV_COLUMNS = {
    "question": ("question", "query", "user_input", "q"),
    "answer": ("answer", "reference_answer", "reference", "ground_truth", "ground_truths", "answers"),
    "contexts": ("contexts", "context", "reference_contexts", "gold_contexts"),
    "id": ("id", "qid", "query_id", "_id"),
    "response": ("response", "generated_answer", "prediction"),
    "documents": ("documents", "retrieved_contexts"),
}


def _as_text_list(value: Any) -> list[Any]:
    if value is None or value == "":
        return []
    return value if isinstance(value, list) else [value]


def _header(path: Path) -> list[str]:
    # Lenient: a non-UTF-8 byte in a data row is reported on that row (iter_raw), and
    # the file's good rows still import, as on the golden-set path.
    text = _decode_lenient(path)[0]
    first = next(csv.reader(text.splitlines()[:1]), [])
    return [c.strip() for c in first]


def import_csv(paths: Sequence[str | Path]) -> LoadResult:
    """Plain CSV files with question / answer / contexts columns (aliases in
    :data:`CSV_COLUMNS`). ``contexts`` and ``answer`` cells may hold one text or a JSON
    list; other columns go to ``metadata`` when they are metadata names, else are kept."""
    result, numbered = LoadResult(), []
    for path in map(Path, paths):
        if path.suffix.lower() != ".csv":
            raise FileFormatError(f"{path}: the csv importer reads .csv files")
        if not path.exists():
            raise FileFormatError(f"{path}: no such file")
        header = _header(path)
        if not header:
            result.issues.append(Issue(str(path), 0, None, "the file is empty (no header row)"))
            continue
        columns = {name: next((c for c in names if c in header), None) for name, names in CSV_COLUMNS.items()}
        missing = missing_columns(str(path), header, {"question": CSV_COLUMNS["question"]})
        if missing is not None:
            result.issues.append(missing)
            continue
        used = {c for c in columns.values() if c}
        for number, row in good_rows(path, result.issues):
            record = _csv_record(row, columns, used, path.stem, number)
            numbered.append((number, record, str(path)))
    return finish_rows(result, numbered)


_META_NAMES = ("query_type", "question_source", "difficulty", "domain")


def _csv_record(row: dict[str, Any], columns: dict[str, str | None], used: set[str], stem: str, number: int) -> dict[str, Any]:
    def cell(name: str) -> Any:
        column = columns[name]
        return row.get(column) if column else None

    record: dict[str, Any] = {"id": cell("id") if cell("id") not in (None, "") else f"{stem}-{number}",
                              "question": cell("question")}
    answers = [str(a) for a in _as_text_list(cell("answer"))]
    if answers:
        record["reference_answers"] = answers
    if columns["contexts"] and columns["contexts"] in row:
        record["gold_contexts"] = _as_text_list(cell("contexts"))
    if cell("response") not in (None, ""):
        record["response"] = cell("response")
    if columns["documents"] and columns["documents"] in row:
        record["documents"] = _as_text_list(cell("documents"))
    meta = {k: row[k] for k in _META_NAMES if row.get(k) not in (None, "")}
    meta.setdefault("question_source", "csv")
    record["metadata"] = meta
    record["provenance"] = str(row.get("provenance") or Provenance.HUMAN.value)
    for key, value in row.items():
        if key not in used and key not in _META_NAMES and key not in record and value is not None:
            record[key] = value
    return record


def import_dataset(kind: str, paths: Sequence[str | Path], **options: Any) -> LoadResult:
    """Dispatch on ``kind`` (``ragbench`` | ``beir`` | ``csv``)."""
    importers = {"ragbench": import_ragbench, "beir": import_beir, "csv": import_csv}
    if kind not in importers:
        raise ValueError(f"unknown dataset kind {kind!r} (use {', '.join(importers)})")
    if not paths:
        raise ValueError("no input files given")
    return importers[kind](list(paths), **options)

