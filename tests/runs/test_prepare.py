"""One preparation for rows that already carry a response: the same fields, ids and
errors whether a file is judged by ``rag-eval judge``, ``rag-eval run --judge-only`` or
the Batch page (which reads files with ``iter_raw`` and calls ``judge_dataset``)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.runs import judge_dataset
from rag_eval.cli import cli
from rag_eval.datasets.io import iter_raw, write_dataset
from rag_eval.judges.local import LocalJudge
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.rag.config import default_config
from rag_eval.runs.prepare import has_response, prepare_row
from rag_eval.runs.sources import RowsSource
from rag_eval.runs.store import RunStore


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"response": "r", "documents": ["d"]}, "question"),
        ({"question": "q", "documents": ["d"]}, "response"),
        ({"question": "q", "response": "r"}, "documents"),
        ({"question": "q", "response": "r", "documents": "one text"}, "documents"),
        ({"question": "q", "response": "r", "documents": ["ok", 3]}, "documents[1]"),
        ({"question": "q", "answer": 7, "contexts": ["d"]}, "answer"),
        ({"question": "q", "response": "r", "contexts": ["ok", None]}, "contexts[1]"),
        ({"question": 5, "response": "r", "documents": ["d"]}, "question"),
        ({"question": "q", "response": "r", "documents_sentences": [[["0a"]]]}, "documents_sentences[0][0]"),
        # the dataset schema's own checks apply too
        ({"question": "q", "response": "r", "documents": ["d"], "relevance_score": 3}, "relevance_score"),
    ],
)
def test_problems_name_file_row_and_field(row, field):
    prepared = prepare_row(row, 7, "f.jsonl")
    assert prepared.item is None
    assert (prepared.error.file, prepared.error.row, prepared.error.field) == ("f.jsonl", 7, field)
    assert str(prepared.error).startswith("f.jsonl: row 7")


def test_accepted_fields_and_ids(ragbench_rows):
    plain = {"question": "What colour is the sky?", "answer": "It is blue.", "contexts": ["The sky is blue. Grass is green."]}
    assert has_response(plain)
    prepared = prepare_row(plain, 4)
    assert prepared.item.response == "It is blue." and prepared.item.document_texts == ["The sky is blue. Grass is green."]
    assert prepared.id == "row-4"  # no id: the row's number
    for blank in ("", "  ", None, float("nan")):
        assert prepare_row({**plain, "id": blank}, 9).id == "row-9"
    assert prepare_row({**plain, "id": 12}, 1).id == "12"
    assert all(prepare_row(r, i).item is not None for i, r in enumerate(ragbench_rows, start=1))
    truth = prepare_row(ragbench_rows[0], 1).truth
    assert truth["context_relevance"] == ragbench_rows[0]["relevance_score"]


def _rows(ragbench_rows):
    rows = [
        {"id": "with-id", "question": "What colour is the sky?", "answer": "It is blue.",
         "contexts": ["The sky is blue. Grass is green."]},
        {"question": "Who barks?", "response": "Dogs bark. Cats sleep.", "documents": ["Dogs bark at strangers."]},
        {"id": "", "question": "Blank id?", "response": "Yes.", "documents": ["A blank id is no id. Yes."]},
        dict(ragbench_rows[0]),
        {"question": "No response here", "documents": ["x"]},
    ]
    rows[3].pop("id", None)
    return rows


def _write_jsonl_with_blank_lines(rows, path):
    lines = []
    for row in rows:
        lines += [json.dumps(row), ""]  # a blank line after every row
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _scores(row):
    return tuple(None if row.get(m) is None else round(float(row[m]), 9) for m in TRACE_METRICS)


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_cli_judge_cli_run_and_batch_page_agree(tmp_path, ragbench_rows, suffix):
    rows = _rows(ragbench_rows)
    path = tmp_path / f"in.{suffix}"
    if suffix == "jsonl":
        _write_jsonl_with_blank_lines(rows, path)
    else:
        write_dataset(rows, path)

    # rag-eval judge
    out = tmp_path / "judged.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(path), "--judge", "local", "--out", str(out)])
    assert result.exit_code == 1, result.output  # the row without a response failed, the rest were judged
    judged = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    from_judge = [(r["id"], r["status"], _scores(r)) for r in judged]

    # rag-eval run --judge-only
    db = tmp_path / "runs.sqlite"
    result = CliRunner().invoke(cli, ["run", str(path), "--judge-only", "--name", "cli", "--db", str(db)])
    assert result.exit_code == 1, result.output  # the same failed row fails the run too
    store = RunStore(str(db))
    (run,) = store.list_runs()
    from_run = [(i["id"], i["status"], _scores(i["scores"] or {})) for i in store.items(run["id"])]

    # the Batch page: rows read with iter_raw, judged with judge_dataset
    page_store = RunStore(":memory:")
    run_id = judge_dataset(list(iter_raw(path)), default_config(), page_store, LocalJudge(), name="page",
                           dataset_path=path.name)
    from_page = [(i["id"], i["status"], _scores(i["scores"] or {})) for i in page_store.items(run_id)]

    assert from_judge == from_run == from_page
    ids = [i for i, _, _ in from_judge]
    assert ids[0] == "with-id" and ids[1:3] == [e.id for e in RowsSource(path=path).items()][1:3]
    assert all(i.startswith("row-") for i in ids[1:])
    assert [s for _, s, _ in from_judge] == ["ok", "ok", "ok", "ok", "invalid_input"]
    if suffix == "jsonl":  # line numbers, blank lines counted
        assert ids[1:] == ["row-3", "row-5", "row-7", "row-9"]
    assert [e.id for e in RowsSource(path=path).items()] == ids
