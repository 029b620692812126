"""A locked dashboard reaches no address a visitor types (issue 33, item 1).

Two locked servers, ``RAG_EVAL_DEPLOYMENT=public`` without ``SPACE_ID`` and a Space
(``SPACE_ID``), each with the owner's LLM endpoint and keys set (the LLM key and
``PHOENIX_API_KEY``). A visitor walks every page, types a loopback listener's address into
every text field and presses every button; the listener receives nothing. Forged settings
links change nothing (the judge included) and leave the address bar; downloads carry no
server path. One policy decides all of it (``rag_eval.llm.policy``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.fake_answers import answer_text
from harness.listener import Listener
from rag_eval.ui.constants import ALL_PAGES

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
OWNER_KEY = "test-key-not-real-owner-3e3e"
PHOENIX_KEY = "test-key-not-real-phoenix-4f4f"
LOCKS = {"public": {"RAG_EVAL_DEPLOYMENT": "public"}, "space": {"SPACE_ID": "someone/rag-eval"}}


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.stop()


@pytest.fixture(params=sorted(LOCKS))
def locked(request, monkeypatch, openai_server):
    for name, value in LOCKS[request.param].items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", OWNER_KEY)
    monkeypatch.setenv("PHOENIX_API_KEY", PHOENIX_KEY)
    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")
    openai_server.set_handler(lambda body: answer_text(body))
    return openai_server


def _fill_and_press(at: AppTest, address: str, page: str) -> None:
    """Every text field gets ``address``; then every enabled button is pressed once."""
    for field in list(at.text_input):
        field.input(address)
    at.run()
    for key in [b.key for b in at.button if not b.disabled]:
        at.switch_page(page).run()
        for field in list(at.text_input):
            field.input(address)
        button = next((b for b in at.button if b.key == key and not b.disabled), None)
        if button is not None:
            button.click().run()


def test_no_visitor_input_reaches_a_typed_address(locked, listener, demo_home):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    for page in ALL_PAGES:
        at.switch_page(page).run()
        _fill_and_press(at, listener.url, page)
        assert listener.heard == [], (page, listener.heard[:1])
    at.switch_page("pages/datasets.py").run()
    assert "datasets.phoenix_url" not in {w.key for w in at.text_input}  # locked: no field takes an address
    assert all(h.get("authorization") == f"Bearer {OWNER_KEY}" for h in locked.headers)  # owner's host only


def test_the_owners_phoenix_server_is_the_only_one_and_gets_the_key(locked, listener, monkeypatch, rag_eval_home):
    """With RAG_EVAL_PHOENIX_URL the owner offers their server: a visitor may import from it,
    never from an address of their own."""
    phoenix = Listener()
    try:
        monkeypatch.setenv("RAG_EVAL_PHOENIX_URL", phoenix.url)
        at = AppTest.from_file(APP, default_timeout=120)
        at.run()
        at.switch_page("pages/datasets.py").run()
        assert "datasets.phoenix_url" not in {w.key for w in at.text_input}
        at.checkbox(key="datasets.phoenix_owner").check().run()
        at.text_input(key="datasets.trace_name").input("t").run()
        at.button(key="datasets.import_traces").click().run()
        assert listener.heard == []
        assert phoenix.heard, "the owner's server was asked"  # (it answers 404: no Phoenix there)
        assert all(h.headers.get("authorization") == f"Bearer {PHOENIX_KEY}" for h in phoenix.heard)
    finally:
        phoenix.stop()


def test_a_forged_settings_link_changes_nothing_and_leaves_the_address_bar(locked, listener, rag_eval_home):
    plain = AppTest.from_file(APP, default_timeout=120)
    plain.run()
    plain.switch_page("pages/settings.py").run()
    forged = AppTest.from_file(APP, default_timeout=120)
    forged.query_params.update({"base_url": listener.url, "key_env": "HOME"})
    forged.run()
    forged.switch_page("pages/settings.py").run()
    assert not forged.exception, [e.value for e in forged.exception]
    yaml_of = lambda at: next(c.value for c in at.code if "judge:" in c.value)  # noqa: E731
    assert "kind: llm" in yaml_of(plain) and yaml_of(forged) == yaml_of(plain)  # the owner's judge stays
    assert not {"base_url", "key_env"} & set(forged.query_params)
    assert listener.heard == []


def test_settings_links_name_no_key_variable_even_unlocked():
    from rag_eval.llm.policy import DeployPolicy, url_settings

    accepted = url_settings(DeployPolicy(), {}, {"api_key_env": "HOME", "model": "m"})
    assert accepted == {"model": "m"}
    assert url_settings(DeployPolicy(), {}, {"api_key_env": "GROQ_API_KEY"}) == {}  # issue 41: never by link


def test_downloads_and_the_cli_carry_no_server_path(demo_home):
    """Batch's downloads (runs.export.export_rows) and `rag-eval runs show` of a demo run hold
    no path of the server's: chunk sources are file names, the dataset is 'demo'."""
    import json

    from click.testing import CliRunner

    from rag_eval.cli import cli
    from rag_eval.demo import DEMO_DIR
    from rag_eval.runs.export import export_rows

    runner = CliRunner()
    result = runner.invoke(cli, ["run", "demo", "--name", "paths", "--min-coverage", "0"])
    assert result.exit_code in (0, 1), result.output
    assert str(DEMO_DIR) not in result.output
    from rag_eval.runs.store import RunStore

    store = RunStore()
    run = store.get_run("paths")
    rows = export_rows(run, store.items(run["id"]))
    text = json.dumps(rows)
    assert str(DEMO_DIR) not in text and "corpus.jsonl" in text
    shown = runner.invoke(cli, ["runs", "show", "paths", "--items"])
    assert str(DEMO_DIR) not in shown.output
