"""Every judge run carries its judge's expected error, with where the figure comes from:
a calibration's cross-validation (this domain), the shipped model's leave-one-domain-out
figures (a new domain), or 'unknown' for a judge nothing measured."""

from __future__ import annotations

import json

from rag_eval.judges import expected_error as ee
from rag_eval.judges.local import LocalJudge, LocalModel


class _LLMJudge:
    name = "llm:gpt-4o-mini"


def test_the_shipped_local_judge_carries_its_leave_one_domain_out_figures():
    model = LocalModel.load()
    held = model.metadata["held_out_quality"]
    e = ee.expected_judge_error(LocalJudge())
    assert e["source"] == ee.SOURCE_HELD_OUT and e["judge"] == f"local:{model.version}"
    rel = e["metrics"]["context_relevance"]
    assert rel["rmse"] == round(held["mean"]["rmse_relevance"], 3)
    per = [v["rmse_relevance"] for v in held["per_subset"].values()]
    assert rel["range"] == [round(min(per), 3), round(max(per), 3)]
    assert "not measured on this domain" in e["basis"]
    text = ee.describe(e, "context_relevance")
    assert text.startswith(f"expected judge error ± {rel['rmse']:.2f} per row on a new domain")
    lines = ee.summary_lines(e, {"context_relevance": 0.42, "context_utilization": None, "completeness": 0.5})
    assert lines[0].startswith("context_relevance 0.42, expected judge error ±")
    assert json.loads(json.dumps(e)) == e  # stored as JSON in a run's summary


def test_the_expected_error_names_the_languages_it_was_measured_in():
    e = ee.expected_judge_error(LocalJudge())
    assert e["languages"] == ["en"] and "not measured in other languages" in e["basis"]
    assert ee.language_note(e, ["en"]) is None
    note = ee.language_note(e, ["en", "zh", "ar"])
    assert note == "expected judge error not measured in ar, zh (measured in en)"
    assert ee.summary_lines(e, {}, languages=["ja"])[-1].startswith("expected judge error not measured in ja")
    assert ee.language_note(ee.expected_judge_error(_LLMJudge()), ["zh"]) is None  # unknown everywhere anyway


def test_an_llm_judge_is_unknown_and_says_how_to_measure_it():
    e = ee.expected_judge_error(_LLMJudge())
    assert e["source"] == ee.SOURCE_UNKNOWN and e["metrics"] == {}
    assert "review rows on the Judges page" in e["basis"]
    assert ee.describe(e, "context_relevance") == "expected judge error unknown"


def test_a_calibrated_judge_reports_its_cross_validated_error(rag_eval_home):
    version = LocalModel.load().version
    cal = {"format": 2, "name": "dom", "base_version": version,
           "fitted": {"relevance_rate_shift": 0.0, "utilization_rate_shift": 0.0, "completeness_shift": 0.0,
                      "adherence_logit_shift": 0.0, "support_threshold": LocalModel.load().support_threshold},
           "cross_validation": {"rows": 30, "metrics": {
               "relevance": {"after": 0.141, "after_interval": [0.11, 0.17]},
               "utilization": {"after": 0.09, "after_interval": [0.07, 0.11]}},
               "auroc": {"after": {"measured": False, "reason": "3 hallucinated and 27 grounded row(s)"}}}}
    folder = rag_eval_home / "calibrations"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dom.json").write_text(json.dumps(cal), encoding="utf-8")
    e = ee.expected_judge_error(LocalJudge(calibration="dom"))
    assert e["source"] == ee.SOURCE_CALIBRATION and e["judge"] == f"local:{version}+dom"
    assert e["metrics"]["context_relevance"] == {"rmse": 0.141, "interval": [0.11, 0.17], "range": None}
    assert "cross-validated on 30 labelled row(s) of this domain" in e["basis"]
    assert e["hallucination_auroc_unmeasured"].startswith("3 hallucinated")
    assert ee.describe(e, "context_relevance").endswith("here (calibrated on this domain), 95% CI 0.11-0.17")
    # A stored run whose configuration names the calibration gets the same figures.
    run = {"config": {"judge": {"kind": "local", "calibration": "dom"}}, "summary": {"metrics": {}}}
    assert ee.for_run(run)["metrics"] == e["metrics"]


def test_for_run_prefers_what_the_run_stored_and_every_caption_names_its_run():
    stored = {"judge": "local:x", "source": ee.SOURCE_HELD_OUT, "basis": "b",
              "metrics": {"context_relevance": {"rmse": 0.17, "range": None}}}
    a = {"id": "a", "name": "A", "summary": {"expected_judge_error": stored,
                                             "trace": {"context_relevance": {"mean": 0.42}}}}
    assert ee.for_run(a) == stored
    assert ee.run_caption(a).startswith("A: context relevance 0.42, expected judge error ± 0.17")
    llm_run = {"name": "L", "config": {"judge": {"kind": "llm"}},
               "summary": {"trace": {"context_relevance": {"mean": 0.4}}}}
    assert ee.for_run(llm_run)["source"] == ee.SOURCE_UNKNOWN
    assert "expected judge error unknown" in ee.run_caption(llm_run)


def test_a_pages_caption_shows_the_range_its_basis_names():
    """The held-out basis says "mean, and the range over domains": the page's caption shows
    that range beside the mean, as the CLI does (it was the CLI's alone)."""
    stored = {"source": ee.SOURCE_HELD_OUT, "basis": "leave one domain out, 7 domains: mean, and the range over domains",
              "metrics": {"context_relevance": {"rmse": 0.17, "range": [0.12, 0.25]}}}
    run = {"name": "A", "summary": {"expected_judge_error": stored, "trace": {"context_relevance": {"mean": 0.42}}}}
    assert ee.run_caption(run).startswith("A: context relevance 0.42, expected judge error ± 0.17, 0.12-0.25 across "
                                          "domains (per row; leave one domain out")
    assert ee.describe(stored, "context_relevance").endswith(", 0.12-0.25 across domains")
