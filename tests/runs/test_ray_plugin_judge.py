"""A judge plugin on Ray (issue 34): the ``overlap`` kind of the test plugin package
(tests/data/plugins/rag_eval_words, declared through its ``rag_eval.judges`` entry point)
runs in two Ray workers of a local Ray instance, which find it through the entry point
in their own processes, and gives the labels it gives in one process."""

from __future__ import annotations

import pytest

from harness.plugins import install
from rag_eval.judges.base import JudgeSpec, RaySpec
from rag_eval.judges.factory import build_judge
from rag_eval.text.sentences import item_from_row

ray = pytest.importorskip("ray", reason="ray is in requirements-dev.txt; install it to run the Ray tests")

from rag_eval.judges.ray import RayJudge  # noqa: E402  (after the importorskip)


def test_a_plugin_judge_on_two_ray_workers_labels_as_in_one_process(tmp_path, ragbench_rows):
    items = [item_from_row(r, default_id=f"row-{i}") for i, r in enumerate(ragbench_rows[:8])]
    spec = JudgeSpec(kind="overlap", options={"threshold": 0.4})
    assert not ray.is_initialized()  # the workers must start with the plugin installed
    with install(tmp_path / "site", "rag_eval_words"):
        one_process = build_judge(spec).judge(items)
        with build_judge(spec, ray=RaySpec(address=None, workers=2)) as judge:
            assert isinstance(judge, RayJudge)  # a plugin judge runs on this machine: in the workers
            judge.chunk_rows = 3  # several chunks, so both workers judge
            got = judge.judge(items)
            pids = judge.worker_pids()
        assert not ray.is_initialized()  # the judge stopped the Ray instance it started
    assert len(set(pids)) == 2
    assert [r.id for r in got] == [it.id for it in items]
    assert {r.status.value for r in got} == {"ok"} and {r.judge for r in got} == {"overlap:0.4"}
    assert [r.labels for r in got] == [r.labels for r in one_process]
    assert any(r.labels.unsupported_response_sentence_keys for r in got)  # not trivially all supported
