"""Review queues are pure functions of a run's records."""

from __future__ import annotations

import pytest

from rag_eval.labels.queue import build_queue, judge_confidence, score_disagreement
from rag_eval.schema import Labels


def _record(i, adherent=True, p=None, score=None, status="ok", rel=0.5):
    labels = Labels(adherence_probability=p).to_dict()
    return {"id": f"r{i}", "status": status, "labels": labels,
            "scores": {"context_relevance": rel, "context_utilization": 0.1, "completeness": 1.0,
                       "adherence": float(adherent), "adherence_score": score}}


RECORDS = [_record(0, p=0.9), _record(1, p=0.55), _record(2, adherent=False, p=0.2, score=0.2),
           _record(3, adherent=False, p=None, score=0.6), _record(4, status="parse_error")]


def test_random_queue_is_seeded_and_excludes_reviewed():
    q1 = build_queue("random", RECORDS, seed=7)
    assert q1 == build_queue("random", RECORDS, seed=7)
    assert sorted(q1) == [f"r{i}" for i in range(5)]
    assert "r1" not in build_queue("random", RECORDS, seed=7, exclude={"r1"})
    assert len(build_queue("random", RECORDS, n=2, seed=7)) == 2


def test_confidence_queue_lowest_first_unknown_last():
    assert judge_confidence(Labels(adherence_probability=0.55)) == pytest.approx(0.1)
    assert judge_confidence(Labels(support_probabilities={"a": 0.9, "b": 0.4})) == pytest.approx(0.2)
    assert judge_confidence(Labels()) is None
    assert build_queue("confidence", RECORDS) == ["r1", "r2", "r0", "r3"]  # r4 failed: not queued


def test_hallucinated_queue_least_adherent_first():
    assert build_queue("hallucinated", RECORDS) == ["r2", "r3"]


def test_disagreement_queue_needs_second_judge_and_orders_by_difference():
    other = [_record(0, rel=0.5), _record(1, rel=0.0), _record(2, adherent=True, rel=0.5)]
    assert score_disagreement({"adherence": 1.0}, {"adherence": 0.0}) == 1.0
    assert build_queue("disagreement", RECORDS, other=other) == ["r2", "r1", "r0"]
    with pytest.raises(ValueError, match="second judge"):
        build_queue("disagreement", RECORDS)
    with pytest.raises(ValueError, match="unknown queue"):
        build_queue("nope", RECORDS)
