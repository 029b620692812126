"""A run that mixes languages is broken down by language in its summary and in every
CLI summary (issue 47, "What to build" 7): each language's items, coverage and TRACe means."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import rag_eval
from rag_eval.cli import cli
from rag_eval.runs.summary import language_lines

PASSAGES = Path(__file__).parents[1] / "data" / "multilingual" / "passages.jsonl"


def _rows() -> list[dict]:
    """Each shared passage's answer sentence as a grounded response, in its own language, plus
    two English rows: a run of several languages."""
    rows = []
    for line in PASSAGES.read_text(encoding="utf-8").splitlines()[:6]:
        p = json.loads(line)
        rows.append({"id": p["id"], "question": p["question"], "documents": [p["text"]],
                     "response": p["text"][:120]})
    rows += [{"id": f"en{i}", "question": "How do I reset the TV?",
              "documents": ["Hold the power button for ten seconds to reset the TV. The TV then restarts."],
              "response": "Hold the power button for ten seconds."} for i in range(2)]
    return rows


def test_a_mixed_run_is_broken_down_by_language(tmp_path):
    result = rag_eval.evaluate(_rows(), judge="lexical", progress=False)
    breakdown = result.summary.by_language
    frame = result.to_pandas()
    assert set(frame["language"]) == set(breakdown) and {"en", "zh"} <= set(breakdown)
    assert sum(part["n_items"] for part in breakdown.values()) == len(frame)
    for language, part in breakdown.items():
        assert part["n_items"] == int((frame["language"] == language).sum())
        assert set(part["trace"]) >= {"context_relevance", "adherence"} or part["n_scored"] == 0
    lines = language_lines({"by_language": breakdown})
    assert "By language" in str(result.summary)
    assert set(result.summary.languages_frame()["language"]) == set(breakdown)
    assert lines[0] == "By language" and any(line.startswith("| zh |") for line in lines)

    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in _rows()), encoding="utf-8")
    out = CliRunner().invoke(cli, ["judge", str(path), "--judge", "lexical", "--out", str(tmp_path / "o.jsonl")])
    assert out.exit_code == 0, out.output
    assert "By language" in out.output and "| zh |" in out.output


def test_a_run_of_one_language_prints_no_breakdown():
    result = rag_eval.evaluate(_rows()[-2:], judge="lexical", progress=False)
    assert list(result.summary.by_language) == ["en"] and "By language" not in str(result.summary)


def test_a_stored_mixed_run_shows_its_languages_in_runs_show_and_the_report(tmp_path):
    from rag_eval.report.html import write_report
    from rag_eval.runs.store import RunStore

    store = RunStore(tmp_path / "runs.sqlite")
    result = rag_eval.evaluate(_rows(), judge="lexical", progress=False, store=store, name="mixed")
    run = store.get_run(result.run_id)
    assert {"en", "zh"} <= set(run["summary"]["by_language"])  # what the Runs and Batch pages draw
    html = write_report(store, [result.run_id], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "By language: " in html and "<bdi>zh</bdi>" in html
    shown = CliRunner().invoke(cli, ["runs", "show", result.run_id, "--db", str(tmp_path / "runs.sqlite")])
    assert shown.exit_code == 0, shown.output
    assert "By language" in shown.output


def test_agreement_is_broken_down_by_language(tmp_path):
    """rag-eval agreement: each language's RMSE and AUROC beside the whole's, from the rows'
    ``language`` (a judge's output carries it)."""
    pred, truth = [], []
    for i in range(16):
        language = "en" if i % 2 else "ja"
        grounded = i % 4 < 2
        pred.append({"id": f"r{i}", "language": language, "context_relevance": 0.5, "context_utilization": 0.4,
                     "completeness": 0.8, "adherence_score": 0.9 if grounded else 0.2})
        truth.append({"id": f"r{i}", "relevance_score": 0.5 if language == "en" else 0.1,
                      "utilization_score": 0.4, "completeness_score": 0.8, "adherence_score": grounded})
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(r) for r in pred))
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(r) for r in truth))
    out = CliRunner().invoke(cli, ["agreement", str(tmp_path / "p.jsonl"), str(tmp_path / "t.jsonl"), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    by_language = report["by_language"]
    assert set(by_language) == {"en", "ja"}
    assert by_language["en"]["rmse"]["context_relevance"]["value"] == 0.0
    assert abs(by_language["ja"]["rmse"]["context_relevance"]["value"] - 0.4) < 1e-9
    text = CliRunner().invoke(cli, ["agreement", str(tmp_path / "p.jsonl"), str(tmp_path / "t.jsonl")]).output
    assert "Language ja:" in text and "Language en:" in text
