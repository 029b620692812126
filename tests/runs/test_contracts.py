"""The engine's contracts are Protocols the real sources, sinks and judges satisfy."""

from rag_eval.judges.base import Judge, ManagedJudge
from rag_eval.runs.contracts import Sink, Source
from rag_eval.runs.records import build_record
from rag_eval.runs.sinks import FileSink, MemorySink, StoreSink
from rag_eval.runs.sources import RagSource, RowsSource, SourceItem
from rag_eval.schema import JudgeResult, JudgeStatus


def test_sources_and_sinks_satisfy_the_protocols(tmp_path):
    assert isinstance(RowsSource([{"question": "q"}]), Source)
    assert isinstance(MemorySink(), Sink) and isinstance(FileSink(tmp_path / "o.jsonl"), Sink)
    assert isinstance(StoreSink(None, None), Sink)
    assert all(hasattr(RagSource, name) for name in ("open", "describe", "size_hint", "items", "row_cache"))


def test_build_record_leaves_its_input_alone():
    source = SourceItem(0, "1", "q?")
    result = JudgeResult("1", JudgeStatus.PARSE_ERROR, error="bad json", raw="{")
    record = build_record(source, result, "clean")
    assert record.judge_result is result and source.objects == {} and source.status is None


def test_a_plugin_judge_needs_only_the_judge_protocol():
    class Minimal:
        name = "minimal:1"

        def judge(self, items, progress=None, cancel=None):
            return []

    assert isinstance(Minimal(), Judge) and not isinstance(Minimal(), ManagedJudge)
