"""Reviewers score a registered per-item metric (issue 34, item 4: "going past the
anchors"): the review form offers it, the label set stores the score, and ``rag-eval
agreement --by-judge`` and the Judges page report the metric's values against the
reviewers' scores, so a team learns whether its own metric (a rubric) can be trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from rag_eval.cli import cli
from rag_eval.labels.agreement import metric_vs_human, spearman
from rag_eval.labels.review import check_metric_scores
from rag_eval.labels.store import agreement_for_run, item_from_record, save_review
from rag_eval.metrics.registry import METRICS, Metric
from rag_eval.schema import Labels

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")


def _clarity(item) -> float:
    """A stand-in for a rubric: 1 to 5 from the response's length."""
    return float(min(5, 1 + len(item.response.split()) // 20))


@pytest.fixture
def clarity():
    METRICS.register(Metric(name="clarity", label="Clarity", range=(1.0, 5.0), compute=_clarity,
                            help="How clear the answer is, 1 to 5.", origin="tests"))
    yield
    METRICS.unregister("clarity")


def test_metric_against_reviewers_hand_computed():
    measured = {"a": {"clarity": 4.0}, "b": {"clarity": 2.0}, "c": {"clarity": None}, "d": {"clarity.mean": 5.0},
                "e": {}}
    human = {"a": {"clarity": 5.0}, "b": {"clarity": 2.0}, "c": {"clarity": 3.0}, "d": {"clarity": 4.0},
             "e": {"clarity": 1.0}}
    (got,) = metric_vs_human(measured, human)
    # rows a, b, d (c's metric failed, e was not measured: left out, never a 0); d is a sampled rubric's mean
    assert got.metric == "clarity" and got.n_rows == 3 and got.item_ids == ["a", "b", "d"]
    assert got.mae == pytest.approx((1 + 0 + 1) / 3) and got.rmse == pytest.approx((2 / 3) ** 0.5)
    assert got.spearman == pytest.approx(0.5)  # ranks (2, 1, 3) against (3, 1, 2): 1 - 6 * 2 / (3 * 8)
    assert spearman([1.0, 2.0], [1.0, 2.0]) == (None, "too few rows (2)")
    assert spearman([3.0, 3.0, 3.0], [1.0, 2.0, 3.0])[1] == "one side gives one constant score"


def test_a_score_is_checked_against_the_registry(clarity):
    assert check_metric_scores({"clarity": 4, "other": None}) == {"clarity": 4.0}
    with pytest.raises(ValueError, match="outside its range 1 to 5"):
        check_metric_scores({"clarity": 7})
    with pytest.raises(ValueError, match="not a per-item metric"):
        check_metric_scores({"adherence": 1.0})


def test_agreement_cli_reports_the_metric_against_reviewers(clarity, judged_run, ragbench_rows):
    store, run_id = judged_run
    items = store.items(run_id)
    assert all(i["metrics"]["clarity"] is not None for i in items)  # the run measured it
    by_id = {str(r["id"]): r for r in ragbench_rows}
    for n, record in enumerate(items[:6]):  # the reviewer agrees except on the first row (off by one)
        score = record["metrics"]["clarity"] + (1 if n == 0 and record["metrics"]["clarity"] < 5 else
                                               -1 if n == 0 else 0)
        save_review(store, run_id, item_from_record(record), Labels.from_dict(by_id[record["id"]]), "gt",
                    metrics={"clarity": score})
    (figures,) = agreement_for_run(store, run_id, n_boot=0).metrics
    assert figures.n_rows == 6 and figures.mae == pytest.approx(1 / 6)
    out = CliRunner().invoke(cli, ["agreement", run_id, "--by-judge", "--n-boot", "0"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "Per-item metrics against the reviewers' scores" in out.output
    assert any(line.startswith("| clarity | 6 | 0.167 |") for line in out.output.splitlines())
    data = json.loads(CliRunner().invoke(cli, ["agreement", run_id, "--by-judge", "--json", "--n-boot", "0"]).output)
    assert data["metrics"][0]["metric"] == "clarity" and data["metrics"][0]["n_rows"] == 6


def test_review_form_scores_the_metric_and_the_judges_page_shows_it(clarity, judged_run):
    store, run_id = judged_run
    record = store.items(run_id)[0]
    from rag_eval.display.views import view_from_record
    from rag_eval.ui.constants import PAGE_JUDGES, PAGE_SUPPORT_MAP, STATE_FOCUS, STATE_SUPPORT_SOURCE

    view = view_from_record(record, "sample")
    view.extra["run_id"] = run_id  # as the Judges page's queue opens it
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.session_state[STATE_SUPPORT_SOURCE] = view
    at.session_state[STATE_FOCUS] = "single"
    at.switch_page(PAGE_SUPPORT_MAP).run()
    at.text_input(key="review.reviewer").input("alice").run()
    field = next(w for w in at.number_input if w.key and w.key.endswith(".metric.clarity"))
    assert field.value is None  # empty: the run's value is not shown to anchor the reviewer
    field.set_value(3.0)
    save = next(w for w in at.button if w.key and w.key.endswith(".save"))
    save.click().run()
    assert not at.error, [e.value for e in at.error]
    (saved,) = store.human_labels(run_id)
    assert saved["metrics"] == {"clarity": 3.0}

    at.switch_page(PAGE_JUDGES).run()
    assert not at.exception, [e.value for e in at.exception]
    tables = [t.value for t in at.dataframe if "Spearman" in t.value.columns]
    assert tables and tables[0]["metric"].tolist() == ["Clarity"] and tables[0]["rows"].tolist() == [1]
