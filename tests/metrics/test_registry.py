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
