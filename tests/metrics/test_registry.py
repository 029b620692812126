"""The metric registry and the one name parser."""

import pytest

from rag_eval.metrics.registry import RETRIEVAL_METRICS, MetricName, evaluate_run, parse_metric_name, resolve_metric
from rag_eval.metrics.retrieval import precision_at_k, recall_at_k


@pytest.mark.parametrize(
    "name, parsed",
    [("recall@5", MetricName("recall", 5)), ("ndcg@10", MetricName("ndcg", 10)), ("MRR", MetricName("mrr", None)),
     (" hit_rate @ 3 ", MetricName("hit_rate", 3)), ("log_rank@1", MetricName("log_rank", 1))],
)
def test_parse(name, parsed):
    assert parse_metric_name(name) == parsed


@pytest.mark.parametrize("name", ["recal@5", "recall@0", "recall@", "recall@x", "@5", "", "bleu"])
def test_unknown_or_malformed_names_list_what_exists(name):
    with pytest.raises(ValueError) as info:
        parse_metric_name(name)
    if "k in" not in str(info.value):
        for key in RETRIEVAL_METRICS:
            assert key in str(info.value)


def test_resolve_binds_k_and_only_the_parameters_a_metric_takes():
    run, rel = ["a", "b", "c"], {"b"}
    expected = precision_at_k(run, rel, k=2, denominator="retrieved")
    assert resolve_metric("precision@2", denominator="retrieved", alpha=0.3)(run, rel) == expected
    assert resolve_metric("recall@1", denominator="retrieved")(run, rel) == recall_at_k(run, rel, k=1)


def test_evaluate_run_names_results_canonically():
    out = evaluate_run({"q": ["a"]}, {"q": {"a": 1}}, ["Recall@1", "mrr"])
    assert set(out) == {"recall@1", "mrr"} and out["recall@1"].value == 1.0


# ---------------------------------------------------------------- the metric declarations
import math  # noqa: E402

from rag_eval.metrics.registry import (  # noqa: E402
    METRICS,
    TRACE_METRICS,
    TRACE_SCORES,
    Metric,
    MetricItem,
    compute_item_metrics,
    metric,
)


def test_every_list_is_derived_from_the_declarations():
    assert TRACE_METRICS == ("context_relevance", "context_utilization", "completeness", "adherence")
    assert TRACE_SCORES == (*TRACE_METRICS, "adherence_score")
    assert METRICS.names("correctness") == ("bleu", "rouge_l", "answer_match")
    # the ranking's metrics by name (``rag-eval retrieval``), and those against gold passages
    assert set(METRICS.names("retrieval")) == {*RETRIEVAL_METRICS, "recall_cosine", "precision_cosine"}
    assert METRICS.label("recall@5") == "recall@5" and METRICS.label("rouge_l").startswith("Answer correctness")
    assert all(METRICS.help(name) for name in TRACE_SCORES)


def test_a_second_declaration_of_a_name_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        METRICS.register(Metric("completeness", "Another completeness", "custom"))
    with pytest.raises(ValueError, match="column name"):
        Metric("Bad Name", "x")
    with pytest.raises(ValueError, match="needs"):
        Metric("x", "x", needs=frozenset({"telepathy"}))


ITEM = MetricItem(id="1", question="q?", response="one two three", documents=["a b"], reference=None)


def test_item_metrics_floats_dicts_and_failures_with_reasons():
    @metric(name="t_words", higher_is_better=False)
    def words(item):
        return len(item.response.split())

    @metric(name="t_parts")
    def parts(item):
        return {"first": 1, "second": 0.5}

    @metric(name="t_raises")
    def raises(item):
        raise RuntimeError("no can do")

    @metric(name="t_nan")
    def nan(item):
        return math.nan

    @metric(name="t_needs_reference", needs=("response", "reference"))
    def needs(item):
        return 1.0

    try:
        assert words.metric.label == "T words" and METRICS.per_item()[-5:] == tuple(
            m.metric for m in (words, parts, raises, nan, needs))
        out = compute_item_metrics(METRICS.per_item(), ITEM)
        assert out.values["t_words"] == 3.0
        assert out.values["t_parts.first"] == 1.0 and out.values["t_parts.second"] == 0.5
        assert out.values["t_raises"] is None and "no can do" in out.errors["t_raises"]
        assert out.values["t_nan"] is None and "finite" in out.errors["t_nan"]
        assert out.values["t_needs_reference"] is None and "reference" in out.errors["t_needs_reference"]
    finally:
        for name in ("t_words", "t_parts", "t_raises", "t_nan", "t_needs_reference"):
            METRICS.unregister(name)
