"""Export and import of human label sets, so labelling can also happen outside.

Both formats hold one RAGBench-schema row per label set: ``id``, ``question``,
``response``, ``documents_sentences``, ``response_sentences``, the annotation fields
(``all_relevant_sentence_keys``, ``all_utilized_sentence_keys``,
``sentence_support_information``, ``unsupported_response_sentence_keys``,
``overall_supported``, explanations), the score columns (``relevance_score``,
``utilization_score``, ``completeness_score``, ``adherence_score``) and ``reviewer``,
``reviewed_at``, ``note``, ``run_id``. Importing a file exported from a run gives back
the same label sets, so export -> import -> export is identical.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_eval.labels.formats import FORMATS
from rag_eval.labels.review import ragbench_scores
from rag_eval.labels.store import item_from_record, save_review
from rag_eval.runs.store import RunStore
from rag_eval.schema import Labels, _as_list
from rag_eval.text.sentences import item_from_row

LABEL_FIELDS = ("all_relevant_sentence_keys", "all_utilized_sentence_keys", "sentence_support_information",
                "unsupported_response_sentence_keys", "overall_supported", "relevance_explanation",
                "overall_supported_explanation")
SUPPORT_FIELDS = ("response_sentence_key", "supporting_sentence_keys", "fully_supported", "explanation")


def label_set_row(label_set: dict[str, Any]) -> dict[str, Any]:
    """One stored label set as a RAGBench row."""
    labels = label_set["labels"]
    row = dict(label_set["item"])
    row.update({f: labels.get(f) for f in LABEL_FIELDS})
    row["sentence_support_information"] = [{k: s.get(k) for k in SUPPORT_FIELDS}
                                           for s in labels.get("sentence_support_information") or []]
    row.update(ragbench_scores(label_set["scores"]))
    row.update(reviewer=label_set["reviewer"], reviewed_at=label_set["created_at"], note=label_set.get("note", ""),
               run_id=label_set["run_id"])
    return row


def export_rows(store: RunStore, run_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
    """The run's current label sets as RAGBench rows, ordered by item id then reviewer."""
    return [label_set_row(s) for s in store.human_labels(run_id, reviewer=reviewer)]


def write_export(rows: Sequence[dict[str, Any]], path: str | Path, fmt: str) -> Path:
    path = Path(path)
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows),
                        encoding="utf-8")
    elif fmt == "ragbench-parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        # Nested columns as JSON-compatible lists; keyed pairs become list<list<string>>.
        pq.write_table(pa.Table.from_pylist(list(rows)), path)
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return path


def read_label_rows(path: str | Path) -> list[dict[str, Any]]:
    """Rows of an exported (or externally labelled) file: ``.jsonl`` or ``.parquet``."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return [_plain(r) for r in pq.read_table(path).to_pylist()]
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}: line {n}: not JSON ({err.msg})") from None
    return rows


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def import_rows(store: RunStore, run_id: str, rows: Sequence[dict[str, Any]], reviewer: str,
                source: str = "import") -> tuple[int, list[str]]:
    """Store each row's labels as ``reviewer``'s label set on the run's item with the
    same id. A row whose item is not in the run, or whose sentence keys differ from the
    run's item, is refused with the reason; the others are stored. Returns (stored, errors)."""
    records = {str(r["id"]): r for r in store.items(run_id)}
    stored, errors = 0, []
    for n, row in enumerate(rows, 1):
        item_id = str(row.get("id", ""))
        try:
            item = item_from_row({k: row[k] for k in ("id", "question", "response", "documents_sentences",
                                                      "response_sentences") if k in row})
            if records:
                if item_id not in records:
                    raise ValueError(f"item '{item_id}' is not in run {run_id}")
                run_item = item_from_record(records[item_id])
                if run_item.document_keys != item.document_keys or run_item.response_keys != item.response_keys:
                    raise ValueError(f"item '{item_id}': sentence keys differ from the run's item")
            missing = [f for f in ("all_relevant_sentence_keys", "all_utilized_sentence_keys",
                                   "unsupported_response_sentence_keys") if f not in row]
            if missing:
                raise ValueError(f"field '{missing[0]}' is missing")
            labels = Labels.from_dict({**row, "sentence_support_information": [
                dict(s) for s in _as_list(row.get("sentence_support_information")) if isinstance(s, dict)]})
            save_review(store, run_id, item, labels, reviewer, note=str(row.get("note") or ""), source=source,
                        created_at=str(row["reviewed_at"]) if row.get("reviewed_at") else None)
            stored += 1
        except (ValueError, KeyError, TypeError) as err:
            errors.append(f"row {n}: {err}")
    return stored, errors
