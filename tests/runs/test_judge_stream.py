"""The streaming judge pipeline: order, streaming, flat memory, cancel, cheap cache hits.

LLM cases use the real local OpenAI-compatible server (harness/openai_server.py); the
memory case uses a fast in-process judge so 100,000 rows take seconds. No timing is
asserted: order, event sequence, memory and statuses are.
"""

from __future__ import annotations

import json
import re
import threading
import tracemalloc

import pytest

import rag_eval.runs.sources as sources_module
from harness.fake_answers import answer_text
from harness.openai_server import Reply
from rag_eval.judges.llm import LLMJudge
from rag_eval.llm.config import LLMConfig
from rag_eval.runs.engine import RunHooks, evaluate
from rag_eval.runs.judge_stream import JudgeStream, Pending, stream_judge
from rag_eval.runs.records import build_record, to_file_row
from rag_eval.runs.row_cache import RowCache
from rag_eval.runs.sinks import FileSink
from rag_eval.runs.sources import RowsSource
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels, Sentence

KEY = "test-key-not-real-123"


def write_jsonl(path, rows):
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def judge_file(src, out, judge, mode, *, cancel=None, progress=None, use_row_cache=True):
    """What ``rag-eval judge`` runs: the file's rows through the engine into ``out``; the summary rows."""
    source = RowsSource(path=src, row_cache=RowCache.for_judge(judge) if use_row_cache else None)
    return evaluate(source, judge, FileSink(out), config=mode,
                    hooks=RunHooks(cancel, (lambda done, total: progress(done)) if progress else None))


def judged_row(job, result):
    return to_file_row(build_record(job.context, result, "clean"))


def rows(n):
    return [{"id": f"r{i}", "question": f"Question number Q{i}?", "documents": [f"Doc {i} says yes. It is so."],
             "response": f"Answer {i} is yes."} for i in range(n)]


def llm_judge(server, tmp_path, monkeypatch, concurrency=8, cache=True):
    monkeypatch.setenv("RAG_EVAL_TEST_KEY", KEY)
    config = LLMConfig(model="test-model", base_url=server.base_url, api_key_env="RAG_EVAL_TEST_KEY",
                       concurrency=concurrency, cache_dir=str(tmp_path / "cache"), use_cache=cache, max_retries=0)
    return LLMJudge(config)


def test_output_keeps_input_order_when_answers_finish_out_of_order(tmp_path, openai_server, monkeypatch):
    n = 12

    def reply(body):  # the first rows answer last
        i = int(re.search(r"Q(\d+)", json.dumps(body)).group(1))
        return Reply(content=answer_text(body), delay_s=0.03 * (n - i))

    openai_server.set_handler(reply)
    finished: list[str] = []
    judge = llm_judge(openai_server, tmp_path, monkeypatch, concurrency=n)
    inner = judge.judge_one

    async def recording(item):
        result = await inner(item)
        finished.append(item.id)
        return result

    judge.judge_one = recording  # type: ignore[method-assign]
    src = write_jsonl(tmp_path / "in.jsonl", rows(n))
    kept = judge_file(src, tmp_path / "out.jsonl", judge, "clean", use_row_cache=False).rows
    expected = [f"r{i}" for i in range(n)]
    assert finished != expected  # they did finish out of order...
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl")] == expected  # ...and were written in order
    assert [r["id"] for r in kept] == expected and all(r["status"] == "ok" for r in kept)


class FastJudge:
    """A fast in-process judge: the first document sentence supports every response sentence."""

    name = "fast:test"

    def judge(self, items, progress=None, cancel=None):
        out = []
        for item in items:
            first = [item.documents[0][0].key] if item.documents and item.documents[0] else []
            labels = Labels(all_relevant_sentence_keys=first, all_utilized_sentence_keys=first,
                            unsupported_response_sentence_keys=[], overall_supported=True)
            out.append(JudgeResult(item.id, JudgeStatus.OK, labels=labels, judge=self.name))
        return out


def _item(i: int) -> EvalItem:
    return EvalItem(f"r{i}", "q", [[Sentence("0a", "d")]], [Sentence("a", "r")], response="r")


def test_first_row_is_written_before_the_last_row_is_prepared():
    events: list[tuple[str, int]] = []
    n = 200

    def jobs():
        for i in range(n):
            events.append(("prepared", i))
            yield Pending(item=_item(i), context=sources_module.SourceItem(i, f"r{i}", item=_item(i)))

    def sink(row):
        events.append(("written", int(row["id"][1:])))

    stream_judge(jobs(), JudgeStream(FastJudge(), judged_row, sink, concurrency=4, window=8))
    first_written = events.index(("written", 0))
    last_prepared = events.index(("prepared", n - 1))
    assert first_written < last_prepared
    assert [i for kind, i in events if kind == "written"] == list(range(n))


def test_llm_stream_writes_first_row_before_preparing_the_last(tmp_path, openai_server, monkeypatch):
    openai_server.set_handler(lambda body: answer_text(body))
    events: list[str] = []
    prepare = sources_module.prepare_row

    def recording_prepare_row(row, number, name):
        events.append(f"prepared:{number}")
        return prepare(row, number, name)

    monkeypatch.setattr(sources_module, "prepare_row", recording_prepare_row)
    judge = llm_judge(openai_server, tmp_path, monkeypatch, concurrency=2)
    src = write_jsonl(tmp_path / "in.jsonl", rows(40))
    judge_file(src, tmp_path / "out.jsonl", judge, "clean", progress=lambda done: events.append(f"written:{done}"))
    assert events.index("written:1") < events.index("prepared:40")
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl")] == [f"r{i}" for i in range(40)]


def _peak_growth(path, out) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        written = 0
        with out.open("w", encoding="utf-8") as fh:
            def sink(row):
                nonlocal written
                written += 1
                fh.write(json.dumps(row) + "\n")

            jobs = (Pending(item=s.item, context=s) for s in RowsSource(path=path).items())
            stream_judge(jobs, JudgeStream(FastJudge(), judged_row, sink, concurrency=16))
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_stays_flat_from_5k_to_50k_rows(tmp_path):
    """Ten times the rows, the same peak: the pipeline holds a bounded window, never the rows.
    A list of the 45k extra judged rows would hold about 140 MB (3.3 KB a row as parsed JSON),
    18 times the limit (tracemalloc slows every allocation: half the rows of 10k-to-100k, half the time)."""
    def make(n):
        path = tmp_path / f"in{n}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for i in range(n):  # pre-split rows: the test measures the pipeline, not the splitter
                fh.write(json.dumps({"id": f"r{i}", "question": f"q{i}", "response": f"Answer {i}.",
                                     "documents_sentences": [[["0a", f"Doc {i}."], ["0b", "More."]]],
                                     "response_sentences": [["a", f"Answer {i}."]]}) + "\n")
        return path

    small = _peak_growth(make(5_000), tmp_path / "out5k.jsonl")
    large = _peak_growth(make(50_000), tmp_path / "out50k.jsonl")
    assert sum(1 for _ in (tmp_path / "out50k.jsonl").open()) == 50_000
    # flat: ten times the rows may not cost more than a few MB more
    assert large - small < 8 * 1024 * 1024, (small, large)


def test_cancel_keeps_the_rest_as_cancelled(tmp_path, openai_server, monkeypatch):
    openai_server.latency_s = 0.05
    openai_server.set_handler(lambda body: answer_text(body))
    judge = llm_judge(openai_server, tmp_path, monkeypatch, concurrency=2)
    cancel = threading.Event()
    src = write_jsonl(tmp_path / "in.jsonl", rows(60))

    def progress(done):
        if done == 5:
            cancel.set()

    kept = judge_file(src, tmp_path / "out.jsonl", judge, "clean", cancel=cancel, progress=progress)
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == [f"r{i}" for i in range(60)]
    statuses = [r["status"] for r in out]
    assert statuses[:5] == ["ok"] * 5 and statuses[-1] == "cancelled"
    assert set(statuses) <= {"ok", "cancelled"}
    cancelled = [r for r in out if r["status"] == "cancelled"]
    assert all(r["context_relevance"] is None for r in cancelled)
    assert openai_server.request_count < 60
    summary = kept
    assert summary.counts["cancelled"] == len(cancelled) and summary.coverage == pytest.approx(1 - len(cancelled) / 60)


def test_identical_rerun_is_answered_without_preparing_rows(tmp_path, openai_server, monkeypatch):
    openai_server.set_handler(lambda body: answer_text(body))
    src = write_jsonl(tmp_path / "in.jsonl", rows(10) + [{"id": "bad", "question": "q?"}])
    first = judge_file(src, tmp_path / "one.jsonl", llm_judge(openai_server, tmp_path, monkeypatch), "clean").rows
    sent = openai_server.request_count
    assert sent == 10

    real_prepare = sources_module.prepare_row

    def no_preparing(row, number, name):
        if row.get("id") != "bad":  # the invalid row is prepared again (its error is not cached)
            raise AssertionError(f"row {number} was prepared on a cached rerun")
        return real_prepare(row, number, name)

    monkeypatch.setattr(sources_module, "prepare_row", no_preparing)
    again = judge_file(src, tmp_path / "two.jsonl", llm_judge(openai_server, tmp_path, monkeypatch), "clean").rows
    assert openai_server.request_count == sent
    one, two = read_jsonl(tmp_path / "one.jsonl"), read_jsonl(tmp_path / "two.jsonl")
    assert [r["id"] for r in two] == [r["id"] for r in one]
    for a, b in zip(one, two):
        assert a["status"] == b["status"]
        assert a["context_relevance"] == b["context_relevance"] and a["adherence"] == b["adherence"]
        assert a["sentence_support_information"] == b["sentence_support_information"]
    assert two[-1]["status"] == "invalid_input"
    assert all(r.get("cost_usd_spent") in (0.0, None) for r in again)
    assert [r["status"] for r in first] == [r["status"] for r in again]


def test_cached_rerun_opens_no_client_session(tmp_path, openai_server, monkeypatch):
    """Every row from the row cache: no client (nor the openai package, nor a TLS context) is set up."""
    openai_server.set_handler(lambda body: answer_text(body))
    src = write_jsonl(tmp_path / "in.jsonl", rows(70))  # more than one hand-over of finished rows
    judge_file(src, tmp_path / "one.jsonl", llm_judge(openai_server, tmp_path, monkeypatch), "clean")
    judge = llm_judge(openai_server, tmp_path, monkeypatch)

    def no_session():
        raise AssertionError("a client session was opened on a fully cached rerun")

    monkeypatch.setattr(judge.client, "_open_aclient", no_session)
    again = judge_file(src, tmp_path / "two.jsonl", judge, "clean").rows
    assert [r["status"] for r in again] == ["ok"] * 70
    assert [r["id"] for r in read_jsonl(tmp_path / "two.jsonl")] == [f"r{i}" for i in range(70)]


def test_row_cache_key_changes_with_the_row_and_the_judge(tmp_path, openai_server, monkeypatch):
    from rag_eval.runs.row_cache import RowCache

    judge = llm_judge(openai_server, tmp_path, monkeypatch)
    cache = RowCache.for_judge(judge)
    assert cache is not None
    row = rows(1)[0]
    assert cache.key(row, "r0") == cache.key(dict(row), "r0")
    assert cache.key(row, "r0") != cache.key({**row, "response": "Other."}, "r0")
    other = LLMJudge(LLMConfig(model="other-model", base_url=openai_server.base_url, api_key_env="RAG_EVAL_TEST_KEY",
                               cache_dir=str(tmp_path / "cache")))
    assert RowCache(tmp_path / "cache", other).key(row, "r0") != cache.key(row, "r0")
    assert RowCache.for_judge(llm_judge(openai_server, tmp_path, monkeypatch, cache=False)) is None


def test_labels_to_dict_is_asdict():
    from dataclasses import asdict

    from rag_eval.schema import SentenceSupport

    labels = Labels(["0a"], ["0b"], [SentenceSupport("a", ["0a"], True, "x", 0.5)], ["b"], True, "r", "o",
                    {"0a": 0.1}, None, {"a": 0.2}, 0.7)
    assert labels.to_dict() == asdict(labels)


def test_ctrl_c_on_the_cli_writes_the_rest_as_cancelled(tmp_path, openai_server):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    openai_server.latency_s = 0.2
    openai_server.set_handler(lambda body: answer_text(body))
    src = write_jsonl(tmp_path / "in.jsonl", rows(40))
    out = tmp_path / "out.jsonl"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag_eval.cli", "judge", str(src), "--model", "test-model", "--base-url",
         openai_server.base_url, "--api-key-env", "RAG_EVAL_TEST_KEY", "--concurrency", "1",
         "--cache", str(tmp_path / "cache"), "--out", str(out)],
        cwd=root, env={**os.environ, "RAG_EVAL_TEST_KEY": KEY}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        for _ in range(600):  # until the first row is written (bounded wait)
            if out.exists() and out.read_text(encoding="utf-8").strip():
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr
    written = read_jsonl(out)
    assert [r["id"] for r in written] == [f"r{i}" for i in range(40)]
    statuses = [r["status"] for r in written]
    assert statuses[0] == "ok" and statuses[-1] == "cancelled" and set(statuses) <= {"ok", "cancelled"}
    assert "cancelled" in stdout and "Interrupted" in stderr
