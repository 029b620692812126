"""The owner's ceilings hold for the whole process (issue 41): with limits shared, evaluations
in separate threads (each its own event loop and client, as Streamlit sessions are) together
never have more requests in flight at the real local server than the cap, nor start more
than the rate allows in any window; a visitor's own key is limited apart.

The rate is checked where it is kept, at the gate's grants: arrivals at the server also carry
the machine's scheduling delays (on a loaded 2-core CI runner one request held back 50 ms
lands beside the next, 12 in a window the gate spaced to 11), so the server's own count is
held only to "no burst" (a missing gate would let all 30 through in one window)."""

from __future__ import annotations

import threading
import time

import pytest

from harness.fake_answers import answer_text
from rag_eval.llm import limiter

CAP = 2
RPM = 1200.0
WINDOW_S = 0.5
ROWS = 10
REPLY_S = {"cap": 0.1, "rate": 0.01}  # how long the server takes: which of the two limits sets the pace


@pytest.fixture(params=["cap", "rate"])
def counting_server(request, openai_server):
    """The server, counting requests in flight and recording each one's arrival; it answers
    slowly ("cap": the concurrency cap sets the pace; ``RPM`` would allow 20 starts per
    answer) or quickly ("rate": ``RPM`` sets it, one start per 50 ms)."""
    seen: dict = {"now": 0, "max": 0, "starts": []}
    lock = threading.Lock()

    def handler(body):
        with lock:
            seen["now"] += 1
            seen["max"] = max(seen["max"], seen["now"])
            seen["starts"].append(time.monotonic())
        time.sleep(REPLY_S[request.param])
        with lock:
            seen["now"] -= 1
        return answer_text(body)

    openai_server.set_handler(handler)
    return openai_server, seen, request.param


def _evaluate_in_thread(server, offset: int, results: list) -> threading.Thread:
    import rag_eval

    rows = [{"id": f"t{offset}-{i}", "question": f"What is X? ({offset}, {i})",
             "documents": ["X is a cat. It purrs."], "response": "X is a cat."} for i in range(ROWS)]

    def run() -> None:
        results.append(rag_eval.evaluate(rows, judge="llm", metrics=[], progress=False, concurrency=8,
                                         judge_options={"model": "test-model", "base_url": server.base_url}))

    return threading.Thread(target=run)


def most_in_window(starts: list[float]) -> int:
    """The most requests that started within any ``WINDOW_S`` seconds."""
    return max(sum(1 for t in starts if s <= t < s + WINDOW_S) for s in starts)


def test_evaluations_in_threads_share_one_cap_and_one_rate(counting_server, monkeypatch):
    server, seen, _pace = counting_server
    limiter.share_limits(CAP, RPM)
    granted: list[float] = []  # the gate's own clock at each grant, read under its lock
    try_start = limiter.SharedGate._try_start
    last_read = threading.local()

    def recording_try_start(gate):
        if not getattr(gate, "_recording", False):
            clock = gate._clock

            def remembering_clock() -> float:
                last_read.now = clock()
                return last_read.now

            gate._clock, gate._recording = remembering_clock, True
        wait, reason = try_start(gate)
        if reason is None:
            granted.append(last_read.now)
        return wait, reason

    monkeypatch.setattr(limiter.SharedGate, "_try_start", recording_try_start)
    results: list = []
    threads = [_evaluate_in_thread(server, n, results) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(results) == 3 and all(r.summary.n_usable == ROWS for r in results)
    starts = sorted(seen["starts"])
    assert len(starts) == 3 * ROWS
    assert 1 <= seen["max"] <= CAP  # three evaluations, each asking for 8 at once
    assert len(granted) == 3 * ROWS and most_in_window(sorted(granted)) <= WINDOW_S * RPM / 60 + 1
    assert most_in_window(starts) <= 2 * (WINDOW_S * RPM / 60 + 1)


def test_without_sharing_each_client_keeps_its_own_limits():
    assert limiter.shared_gate("http://127.0.0.1:1/v1", "OPENAI_API_KEY") is None


def test_one_gate_per_endpoint_and_key_variable_so_a_visitor_key_is_apart():
    from rag_eval.config import forget_session_key, register_session_key

    limiter.share_limits(CAP, RPM)
    url = "http://127.0.0.1:1/v1"
    server_key = limiter.shared_gate(url, "OPENAI_API_KEY")
    assert server_key is limiter.shared_gate(url, "OPENAI_API_KEY")  # every session's server-key clients
    assert (server_key.concurrency, server_key.rpm) == (CAP, RPM)
    visitor = register_session_key("sk-visitor-0123456789")
    try:
        own = limiter.shared_gate(url, visitor)
        assert own is not server_key and own is limiter.shared_gate(url, visitor)  # this session's own
    finally:
        forget_session_key(visitor)
    assert limiter.shared_gate("http://127.0.0.1:2/v1", "OPENAI_API_KEY") is not server_key
    assert limiter.shared_gate("http://127.0.0.1:1/v1/", "OPENAI_API_KEY") is server_key  # one endpoint, one cap
    assert all(k[1] != visitor for k in limiter._GATES)  # the forgotten key's idle gate went with it


def test_a_locked_dashboard_shares_the_owners_ceilings(monkeypatch):
    from rag_eval.ui import settings

    monkeypatch.setenv("RAG_EVAL_DEPLOYMENT", "local")
    settings.policy()
    assert limiter.shared_gate("http://127.0.0.1:1/v1", "OPENAI_API_KEY") is None  # a developer's own server
    monkeypatch.setenv("RAG_EVAL_DEPLOYMENT", "public")
    monkeypatch.setenv("RAG_EVAL_LLM_CONCURRENCY", "3")
    monkeypatch.setenv("RAG_EVAL_LLM_RPM", "30")
    settings.policy()
    gate = limiter.shared_gate("http://127.0.0.1:1/v1", "OPENAI_API_KEY")
    assert gate is not None and (gate.concurrency, gate.rpm) == (3, 30.0)


async def test_a_request_waiting_on_the_shared_gate_names_the_limit():
    import asyncio

    limiter.share_limits(1, None)
    gate = limiter.shared_gate("http://127.0.0.1:1/v1", "OPENAI_API_KEY")
    await gate.acquire()
    second = asyncio.ensure_future(gate.acquire())
    while gate.waiting_on is None:
        await asyncio.sleep(0.005)
    assert gate.waiting_on == "the 1-at-a-time limit all sessions share" and gate.in_flight == 1
    gate.release()
    await second
    assert gate.in_flight == 1 and gate.waiting_on is None
