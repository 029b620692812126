"""Retrieval runs and relevance judgements (qrels) in the formats tools exchange.

Runs
    TREC: ``query_id Q0 doc_id rank score tag`` (whitespace separated). Each query's
    documents are ordered by score, highest first; equal scores keep the order of the
    rank column, then of the file. JSONL: one ``{"query_id": ..., "doc_ids": [...]}``
    per line, already in rank order.
Qrels
    TREC: ``query_id iteration doc_id relevance``. BEIR: a tab-separated file with the
    header ``query-id corpus-id score``. The layout is recognised from the first line.

Like :mod:`rag_eval.io.rows`, reading never stops at a bad line: it comes back as a
:class:`RowError` naming the file, line and field, and the good lines are kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_eval.io.rows import FileFormatError, RowError, _decode, jsonl_row

Run = dict[str, list[str]]
Qrels = dict[str, dict[str, int]]

TREC_RUN_COLUMNS = ("query_id", "Q0", "doc_id", "rank", "score", "tag")


def _lines(path: str | Path) -> tuple[str, list[tuple[int, str]]]:
    path = Path(path)
    if not path.is_file():
        raise FileFormatError(f"{path}: no such file")
    text = _decode(path)
    return str(path), [(i, line) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def read_run(path: str | Path) -> tuple[Run, list[RowError]]:
    """``({query_id: [doc_id, ...] in rank order}, errors)`` from a TREC or JSONL run."""
    name, lines = _lines(path)
    if not lines:
        return {}, []
    if Path(path).suffix.lower() in (".jsonl", ".json") or lines[0][1].lstrip().startswith("{"):
        return _read_jsonl_run(name, lines)
    return _read_trec_run(name, lines)


def _read_jsonl_run(name: str, lines: list[tuple[int, str]]) -> tuple[Run, list[RowError]]:
    run: Run = {}
    errors: list[RowError] = []
    for lineno, line in lines:
        value = jsonl_row(name, lineno, line)
        if isinstance(value, RowError):
            errors.append(value)
            continue
        qid, docs = value.get("query_id"), value.get("doc_ids")
        if qid is None or isinstance(qid, (dict, list)):
            errors.append(RowError(name, lineno, "query_id", "missing or not a string"))
            continue
        if not isinstance(docs, list) or any(isinstance(d, (dict, list)) or d is None for d in docs):
            errors.append(RowError(name, lineno, "doc_ids", "expected a list of document ids"))
            continue
        if str(qid) in run:
            errors.append(RowError(name, lineno, "query_id", f"query {qid!r} appears again; kept the first"))
            continue
        run[str(qid)] = list(dict.fromkeys(str(d) for d in docs))
    return run, errors


def _read_trec_run(name: str, lines: list[tuple[int, str]]) -> tuple[Run, list[RowError]]:
    entries: dict[str, list[tuple[float, float, int, str]]] = {}
    seen: set[tuple[str, str]] = set()
    errors: list[RowError] = []
    for order, (lineno, line) in enumerate(lines):
        cells = line.split()
        if len(cells) != len(TREC_RUN_COLUMNS):
            expected = f"{len(TREC_RUN_COLUMNS)} columns ({' '.join(TREC_RUN_COLUMNS)})"
            errors.append(RowError(name, lineno, None, f"expected {expected}, got {len(cells)}"))
            continue
        qid, _, doc, rank_text, score_text, _ = cells
        rank, score = _number(rank_text), _number(score_text)
        if score is None:
            errors.append(RowError(name, lineno, "score", f"not a number: {score_text!r}"))
            continue
        if rank is None:
            errors.append(RowError(name, lineno, "rank", f"not a number: {rank_text!r}"))
            continue
        if (qid, doc) in seen:
            errors.append(RowError(name, lineno, "doc_id", f"document {doc!r} appears twice for query {qid!r}; kept the first"))
            continue
        seen.add((qid, doc))
        entries.setdefault(qid, []).append((-score, rank, order, doc))
    return {qid: [doc for *_, doc in sorted(items)] for qid, items in entries.items()}, errors


def read_qrels(path: str | Path) -> tuple[Qrels, list[RowError]]:
    """``({query_id: {doc_id: relevance}}, errors)`` from TREC or BEIR-TSV qrels.
    Relevance must be an integer; 0 (or less) means judged non-relevant."""
    name, lines = _lines(path)
    if not lines:
        return {}, []
    first = lines[0][1].split("\t") if "\t" in lines[0][1] else lines[0][1].split()
    beir = len(first) == 3
    if beir and _number(first[2].strip()) is None:  # a header line
        lines = lines[1:]
    columns = ("query_id", "doc_id", "relevance") if beir else ("query_id", "iteration", "doc_id", "relevance")
    qrels: Qrels = {}
    errors: list[RowError] = []
    for lineno, line in lines:
        cells = [c.strip() for c in (line.split("\t") if beir else line.split())]
        if len(cells) != len(columns):
            errors.append(RowError(name, lineno, None, f"expected {len(columns)} columns ({' '.join(columns)}), got {len(cells)}"))
            continue
        qid, doc, grade_text = (cells[0], cells[1], cells[2]) if beir else (cells[0], cells[2], cells[3])
        grade = _number(grade_text)
        if grade is None or not grade.is_integer():
            errors.append(RowError(name, lineno, "relevance", f"expected an integer, got {grade_text!r}"))
            continue
        if doc in qrels.get(qid, {}):
            errors.append(RowError(name, lineno, "doc_id", f"document {doc!r} judged twice for query {qid!r}; kept the first"))
            continue
        qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels, errors


def write_trec_run(run: Mapping[str, Sequence[Any]], path: str | Path, tag: str = "rag-eval") -> Path:
    """Write ``run`` in TREC format; the score of rank r of n is n - r + 1."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for qid, docs in run.items():
            for rank, doc in enumerate(docs, start=1):
                fh.write(f"{qid} Q0 {doc} {rank} {len(docs) - rank + 1} {tag}\n")
    return path


