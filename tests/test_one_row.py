"""Issue 46 "One result row": the same rows (a plugin's metric that fails on one row, ranked
retrieval against gold ids) give the same columns in every output: ``rag-eval judge --out``,
``runs export``, ``to_pandas()`` of a fresh and of a stored run, and the Batch and Runs pages'
table; ``rag-eval score``'s rows have the same fixed columns. Every one is
:func:`rag_eval.runs.records.item_row`, its columns derived from the registry's families."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.plugins import install
from rag_eval.cli import cli
from rag_eval.runs.records import FILE_ONLY, row_columns

RETRIEVED = [["d1", "d2", "d3"], ["d4", "d1", "d9"], ["d2", "d5", "d6"], ["d7", "d8", "d1"]]
GOLD = [["d2"], ["d1"], ["d9"], ["d1", "d3"]]


@pytest.fixture
def plugins(tmp_path):
    with install(tmp_path / "site", "rag_eval_words") as projects:
        yield projects


def _invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_output_has_the_columns_of_the_one_row(plugins, tmp_path, ragbench_rows):
    import rag_eval
    from rag_eval.runs.store import RunStore
    from rag_eval.ui import frames

    rows = [{**{k: r[k] for k in ("id", "question", "documents", "response")}, "retrieved_doc_ids": retrieved,
             "gold_doc_ids": gold} for r, retrieved, gold in zip(ragbench_rows[:4], RETRIEVED, GOLD)]
    rows[2]["response"] += " FAIL_ME"  # the plugin metric raises on this row
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "runs.sqlite"

    out = tmp_path / "judged.jsonl"
    _invoke("judge", path, "--judge", "local", "--metrics", "answer_words", "--out", out)
    judged = _jsonl(out)
    _invoke("run", path, "--judge-only", "--metrics", "answer_words", "--db", db, "--name", "one-row")
    store = RunStore(db)
    run = store.get_run("one-row")
    exported_path = tmp_path / "export.jsonl"
    _invoke("runs", "export", run["id"], "--format", "jsonl", "--out", exported_path, "--db", db)
    exported = _jsonl(exported_path)
    fresh = rag_eval.evaluate(path, metrics=["answer_words"], progress=False).to_pandas()
    loaded = rag_eval.load_run(run["id"], store=store).to_pandas()
    table = frames.items_frame(store.items(run["id"]))  # the Batch and the Runs pages' per-item table

    want = row_columns(judged)
    assert "answer_words" in want and {"recall@3", "mrr", "ndcg@3", "language", "metric_errors"} <= set(want)
    outputs = {
        "judge --out": [c for c in dict.fromkeys(k for r in judged for k in r) if c not in FILE_ONLY],
        "runs export": [c for c in exported[0] if c not in ("run_id", "config_hash", "chunks")],
        "to_pandas (fresh)": list(fresh.columns),
        "to_pandas (stored)": list(loaded.columns),
        "Batch/Runs table": list(table.columns),
    }
    for name, columns in outputs.items():
        assert sorted(columns) == sorted(want), name
    assert list(fresh.columns) == list(loaded.columns) == list(table.columns) == want
    # the failed metric is visible in every output, with its reason
    assert "asked to fail" in judged[2]["metric_errors"]["answer_words"] and judged[2]["answer_words"] is None
    assert "asked to fail" in exported[2]["metric_errors"]["answer_words"]
    assert "asked to fail" in loaded["metric_errors"].iloc[2]["answer_words"]
    assert "asked to fail" in table["metric_errors"].iloc[2]["answer_words"]
    assert judged[0]["recall@3"] == exported[0]["recall@3"] == loaded["recall@3"].iloc[0] == 1.0

    scored_out = tmp_path / "scored.jsonl"
    _invoke("score", _ragbench_file(tmp_path, ragbench_rows),
            "--out", scored_out, "--n-boot", 0)
    scored = _jsonl(scored_out)
    assert list(scored[0]) == row_columns([])  # the fixed columns: no retrieval, no plugin metric asked


def _ragbench_file(tmp_path, ragbench_rows):
    path = tmp_path / "ragbench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ragbench_rows[:2]), encoding="utf-8")
    return path
