"""An endpoint that quotes the Authorization header back (in normal answers, refusals,
tool-call arguments, streamed chunks, error bodies and headers) never gets the key into
any artefact: stdout, stderr, output files, the run store, exports, the LLM cache, or
the page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rag_eval.rag.config import default_config
from tests.cli.test_judge_cli import GOOD, write_jsonl
from tests.echo_server import ECHO_KEY, echo_handler

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from rag_eval.cli import cli; cli()", *args], cwd=ROOT,
                          env=dict(os.environ), capture_output=True, text=True, timeout=600)


def _files_with_key(*folders: Path) -> list[str]:
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and ECHO_KEY.encode() in path.read_bytes():
                found.append(str(path))
    return found


def rendered(at: AppTest) -> str:
    """Everything the page sends to the browser: the protobuf of every element (text,
    markdown, tables as Arrow bytes, widget labels and values)."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        children = getattr(node, "children", None) or {}
        for child in (children.values() if isinstance(children, dict) else children):
            walk(child)

    walk(at._tree)
    return "\n".join(out)


@pytest.fixture
def echoing(openai_server, monkeypatch, fast_backoff):
    monkeypatch.setenv("OPENAI_API_KEY", ECHO_KEY)
    monkeypatch.setenv("RAG_EVAL_LLM_MAX_RETRIES", "0")
    openai_server.set_handler(echo_handler(openai_server))
    return openai_server


def test_cli_artefacts_never_hold_the_key(echoing, tmp_path, demo_home):
    config = tmp_path / "echo.yaml"
    default_config("echo").with_changes(**{
        "generator.kind": "openai", "generator.model": "test-model", "generator.base_url": echoing.base_url,
        "judge.kind": "llm", "judge.model": "test-model", "judge.base_url": echoing.base_url,
    }).to_yaml(config)
    rows = write_jsonl(tmp_path / "rows.jsonl", GOOD * 3)
    questions = write_jsonl(tmp_path / "qs.jsonl", [{"id": f"q{i}", "question": q} for i, q in enumerate(
        ["How do I reset the TV?", "What is the warranty?", "How do I pair a remote?", "Where is the power button?"])])
    results = [
        _cli("judge", str(rows), "--model", "test-model", "--base-url", echoing.base_url,
             "--out", str(tmp_path / "judged.jsonl"), "--min-coverage", "0"),
        # the file names the endpoint: trusted on purpose, so the key goes there and is echoed back
        _cli("ask", "How do I reset the TV?", "--config", str(config), "--trust-config-endpoints", "--json"),
        _cli("ask", "How do I reset the TV?", "--config", str(config), "--trust-config-endpoints"),
        _cli("run", str(questions), "--config", str(config), "--trust-config-endpoints", "--name", "echo",
             "--min-coverage", "0"),
        _cli("runs", "show", "echo", "--items"),
        _cli("runs", "export", "echo", "--format", "jsonl", "--out", str(tmp_path / "export.jsonl")),
        _cli("runs", "export", "echo", "--format", "csv", "--out", str(tmp_path / "export.csv")),
    ]
    assert echoing.request_count >= 10
    assert {h.get("authorization") for h in echoing.headers} == {f"Bearer {ECHO_KEY}"}  # it was sent, and echoed
    for result in results:
        assert result.returncode in (0, 1), result.stderr[-2000:]
        assert ECHO_KEY not in result.stdout and ECHO_KEY not in result.stderr
    assert (tmp_path / "judged.jsonl").is_file() and (tmp_path / "export.jsonl").is_file()
    assert "***" in (tmp_path / "judged.jsonl").read_text(encoding="utf-8")  # the echo arrived, redacted
    assert _files_with_key(tmp_path, demo_home) == []  # outputs, exports, runs.sqlite(+WAL), cache/llm


def test_ask_page_never_shows_the_key(echoing, demo_home):
    import os

    os.environ["RAG_EVAL_ALLOWED_BASE_URLS"] = echoing.base_url  # deployment mode (a key is set)
    try:
        at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=120)
        at.run()
        at.switch_page("pages/settings.py").run()
        at.radio(key="settings.provider").set_value("openai")
        at.selectbox(key="settings.base_url").select(echoing.base_url)
        at.checkbox(key="settings.use_llm_generator").check()
        at.button[0].click().run()
        at.switch_page("pages/ask.py").run()
        pages = []
        for index in (1, 2, 3):
            at.selectbox(key="ask.example").select_index(index).run()
            at.button(key="ask.ask").click().run()
            assert not at.exception, [e.value for e in at.exception]
            page = rendered(at)
            assert ECHO_KEY not in page
            pages.append(page)
        assert any("***" in page for page in pages)  # the echo reached the page, redacted
    finally:
        del os.environ["RAG_EVAL_ALLOWED_BASE_URLS"]
    assert echoing.request_count >= 2
    assert _files_with_key(demo_home) == []
