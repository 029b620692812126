"""The plugin package of tests/data/plugins reaches the dashboard: its judge is a choice
in Settings and judges a Batch; its metric is computed there and shown on Runs and Compare."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from harness.plugins import install
from rag_eval.ui.constants import STATE_SETTINGS
from tests.ui.page_steps import APP, SAMPLE, batch_of_sample, no_failure


@pytest.fixture
def plugins(tmp_path):
    with install(tmp_path / "site", "rag_eval_words") as projects:
        yield projects


def test_plugin_judge_and_metric_on_batch_runs_and_compare(plugins, demo_home):
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.switch_page("pages/settings.py").run()
    no_failure(at)
    assert "overlap (runs on this machine, no key)" in at.selectbox(key="settings.judge").options  # plugins too, with what they need
    from rag_eval.ui.settings import environment_settings

    at.session_state[STATE_SETTINGS] = {**environment_settings(), "judge": "overlap"}
    first, second = batch_of_sample(at, 3), batch_of_sample(at, 4)
    from rag_eval.runs.store import RunStore, default_db_location

    run = RunStore(default_db_location()).get_run(second)
    assert run["config"]["judge"]["kind"] == "overlap"
    assert run["summary"]["custom"]["answer_words"]["n"] == 4

    at.switch_page("pages/runs.py").run()
    no_failure(at)
    table = at.dataframe[0].value
    # the page shows the newest dataset's runs: two runs made within one second tie on their time
    assert {first, second} & set(table["id"]) and "Answer length (words)" in table.columns  # labelled

    at.switch_page("pages/compare.py").run()
    at.multiselect(key="compare.runs").set_value([first, second]).run()
    no_failure(at)
    shown = set()
    for frame in at.dataframe:
        if "metric" in frame.value.columns:
            shown |= set(frame.value["metric"])
    assert "Answer length (words)" in shown

    at.switch_page("pages/ask.py").run()  # Ask lists every kind too, on the session's choice
    no_failure(at)
    assert at.selectbox(key="ask.judge").value == "overlap"
    assert {"llm", "local", "lexical", "overlap"} <= {o.split(" (")[0] for o in at.selectbox(key="ask.judge").options}
    at.selectbox(key="ask.judge").set_value("lexical").run()
    no_failure(at)
    assert any("judge lexical" in c.value for c in at.caption)


@pytest.mark.browser
def test_docs_endpoint_judge_chosen_in_settings_judges_a_batch_in_chromium(demo_home, openai_server, tmp_path):
    """docs/plugins.md's endpoint judge, installed for a real ``streamlit run``: chosen in
    Settings' judge list (with what it needs), it is Batch's judge, sends one request per row to
    the endpoint Settings names, and the stored run counts its tokens and prices them."""
    import json
    import os

    from harness import browser
    from rag_eval.runs.store import RunStore
    from tests.test_docs_judge import PRICES, write_doc_plugin

    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    openai_server.set_handler(lambda body: "supported")
    paths = write_doc_plugin(tmp_path / "plugin")
    env = {"PYTHONPATH": os.pathsep.join([*paths, *filter(None, [os.environ.get("PYTHONPATH")])]),
           "RAG_EVAL_DEPLOYMENT": "local", "RAG_EVAL_LLM_BASE_URL": openai_server.base_url,
           "RAG_EVAL_LLM_MODEL": "test-model", "RAG_EVAL_LLM_PRICES": json.dumps(PRICES)}
    wait = 240.0
    with browser.streamlit_server(demo_home, extra_env=env) as server, browser.BrowserSession() as session:
        browser.wait_healthy(server.url, timeout_s=wait, process=server.process)
        session.goto(f"{server.url}/settings", "Settings", wait)
        browser.choose(session, "Judge", "overlap (an OpenAI-compatible endpoint", wait)
        session.idle(wait)
        session.click_button("Save settings")
        session.wait_for("document.body.innerText.includes('Saved for this session.')", wait)
        assert session.evaluate("(() => { const a = Array.from(document.querySelectorAll('[data-testid=stSidebarNav] a'))"
                                ".find(a => new URL(a.href).pathname === '/batch'); if (a) a.click(); return !!a; })()")
        session.wait_for(browser.HEADING_JS % json.dumps("Batch evaluation"), wait)  # the same session, as a person
        browser.mouse_click(session, "Array.from(document.querySelectorAll('[data-testid=stRadio] label'))"
                                     f".find(l => l.innerText.trim().startsWith({json.dumps(SAMPLE)}))", wait)
        session.wait_for("document.body.innerText.includes('rows are usable')", wait)
        session.wait_for("Array.from(document.querySelectorAll('button')).some(b => b.innerText.trim() === 'Run')", wait)
        session.idle(wait)  # the page drawn whole, on the sample's rows
        assert browser.selectbox_value(session, "Judge").startswith("overlap"), session.main_text()[:2000]
        session.click_button("Run")
        session.wait_for("document.body.innerText.includes('Results · ')", wait)
        dom = str(session.evaluate("document.documentElement.outerHTML"))
        assert browser.page_errors(dom) == [], session.main_text()[:2000]
    run = RunStore(demo_home / "runs.sqlite").list_runs(limit=1)[0]
    run = RunStore(demo_home / "runs.sqlite").get_run(run["id"])
    judge, summary = run["config"]["judge"], run["summary"]
    assert (judge["kind"], judge["model"], judge["base_url"]) == ("overlap", "test-model", openai_server.base_url)
    assert summary["n_items"] == openai_server.request_count > 0 and summary["n_scored"] == summary["n_items"]
    assert summary["tokens_total"] > 0 and summary["cost_usd_total"] > 0  # tokens reported, priced at PRICES
