"""The Judges page breaks a judge's agreement with the reviewers down by language when the
reviewed rows hold more than one (issue 47, "What to build" 5), with the figures
``rag-eval agreement`` gives on the same rows: one function (``metrics.agreement.agreement_by_language``),
two callers. Real rows: the committed shared passages in Chinese, Japanese and English."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

import rag_eval
from rag_eval.cli import cli
from rag_eval.labels.store import item_from_record, save_review
from rag_eval.runs.store import RunStore
from rag_eval.schema import Labels
from rag_eval.text.numbers import format_number
from rag_eval.ui.constants import PAGE_JUDGES
from rag_eval.ui.help import metric_label

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
PASSAGES = Path(__file__).parents[1] / "data" / "multilingual" / "passages.jsonl"
LANGUAGES = ("zh", "ja", "en")


def _rows() -> list[dict]:
    """Six rows per language (more than the page's minimum of five): each answers with
    another stretch of its passage."""
    rows = []
    for line in PASSAGES.read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        if p["language"] in LANGUAGES:
            rows += [{"id": f"{p['language']}{i}", "question": p["question"], "documents": [p["text"]],
                      "response": p["text"][i * 30:(i + 1) * 30], "language": p["language"]} for i in range(6)]
    return rows


def _reviewed_run() -> tuple[RunStore, str]:
    """A lexical judge's run of the rows, every row reviewed: the reviewer keeps the judge's
    labels on every other row and calls the rest unsupported, relevant nowhere."""
    store = RunStore()
    run_id = rag_eval.evaluate(_rows(), judge="lexical", progress=False, store=store, name="mixed").run_id
    for n, record in enumerate(store.items(run_id)):
        item = item_from_record(record)
        labels = Labels.from_dict(record["labels"]) if n % 2 else Labels(
            unsupported_response_sentence_keys=item.response_keys, overall_supported=False)
        save_review(store, run_id, item, labels, "ann")
    return store, run_id


def test_the_judges_page_shows_agreement_by_language_as_rag_eval_agreement_does(rag_eval_home, tmp_path):
    store, run_id = _reviewed_run()
    records = store.items(run_id)
    judge = records[0]["judge"]
    truth = {s["item_id"]: s["scores"] for s in store.human_labels(run_id)}
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"id": r["id"], "language": r["language"], **r["scores"]})
                                              + "\n" for r in records))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"id": i, **s}) + "\n" for i, s in truth.items()))
    ran = CliRunner().invoke(cli, ["agreement", str(tmp_path / "p.jsonl"), str(tmp_path / "t.jsonl"), "--json"])
    assert ran.exit_code == 0, ran.output
    by_language = json.loads(ran.output)["by_language"]
    assert set(by_language) == set(LANGUAGES)

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE_JUDGES).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    (table,) = [d.value for d in at.dataframe if "language" in d.value.columns]
    shown = table[table["judge"] == judge].set_index("language")
    assert set(shown.index) == set(LANGUAGES) and set(table["judge"]) > {judge}  # the lexical reference too
    for language, report in by_language.items():
        assert shown.loc[language, "rows"] == report["coverage"]["rows_given"] == 6
        for metric, estimate in report["rmse"].items():
            cell = shown.loc[language, f"RMSE {metric_label(metric)}"]
            assert cell.split(" [")[0] == format_number(estimate["value"]), (language, metric, cell)
            assert estimate["ci_low"] is None or f"[{format_number(estimate['ci_low'])} – " in cell


def test_no_breakdown_for_reviewed_rows_of_one_language(rag_eval_home):
    store = RunStore()
    rows = [r for r in _rows() if r["language"] == "en"]
    run_id = rag_eval.evaluate(rows, judge="lexical", progress=False, store=store, name="en").run_id
    for record in store.items(run_id):
        save_review(store, run_id, item_from_record(record), Labels.from_dict(record["labels"]), "ann")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE_JUDGES).run()
    assert not at.exception and not at.error
    tables = [d.value for d in at.dataframe]
    assert tables and not any("language" in t.columns for t in tables)
