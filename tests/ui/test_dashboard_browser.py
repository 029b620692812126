"""The views issue 15 fixed, checked in a real browser: ``streamlit run app.py`` on a
free loopback port, loaded by headless Chromium, over real runs (the demo questions at
top-k 2 and 5, and the RAGBench sample judged by the local judge).

- Runs draws one trend series per dataset (and starts on the newest dataset), with Vega-Lite,
  and shows one view at a time (a deep link opens a run; a tab opens another view);
- Compare opened by a deep link shows the configuration diff ``retrieval.k: 2 → 5``;
- Batch counts all rows of the demo questions;
- no metric label or value is cut off in the side-by-side support maps;
- settings survive a browser reload, and no key is ever in the URL or the page.

Every wait polls with a generous limit (the machine may be loaded): nothing here
depends on how fast a page renders.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator

import pytest

from harness import browser

pytestmark = pytest.mark.browser

FAKE_KEY = "test-key-not-real-123"
WAIT_S = 240.0


@pytest.fixture(scope="module")
def site(tmp_path_factory, _demo_qdrant, _session_models_dir) -> Iterator[dict]:
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    from harness.examples import make_example_runs
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.store import close_clients
    from rag_eval.runs.store import RunStore

    home = tmp_path_factory.mktemp("browser-home")
    shutil.copytree(_demo_qdrant, home / "qdrant")
    (home / "models").symlink_to(_session_models_dir, target_is_directory=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAG_EVAL_HOME", str(home))
        mp.delenv("RAG_EVAL_DB", raising=False)
        try:
            build_judge("local")
        except (ValueError, OSError, ImportError) as err:
            pytest.skip(f"local judge unavailable: {err}")
        store = RunStore()
        runs = make_example_runs(store, n_demo=3, n_sample=4)
        store.close()
        close_clients()  # the server opens the embedded Qdrant folder next
    # local use with a key (RAG_EVAL_DEPLOYMENT=local): the owner may change the model; the key never shows
    with browser.streamlit_server(home, extra_env={"OPENAI_API_KEY": FAKE_KEY, "RAG_EVAL_DEPLOYMENT": "local"}) as server:
        browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
        with browser.BrowserSession() as session:
            yield {"url": server.url, "session": session, "runs": runs, "server": server}


def _clean(session: browser.BrowserSession) -> None:
    dom = str(session.evaluate("document.documentElement.outerHTML"))
    assert browser.page_errors(dom) == [], session.main_text()[:2000]
    assert FAKE_KEY not in dom and FAKE_KEY not in str(session.evaluate("location.href"))


def _trend_names(session: browser.BrowserSession) -> list[str]:
    """The dataset of every line Vega drew (the trend chart's lines carry a "dataset" field).

    Read only once every chart on the page is drawn, and twice in a row with the same result:
    Vega draws each panel on its own after the script ends (CI once read three of four)."""
    query = browser.LINE_SERIES_JS % json.dumps("dataset")
    session.wait_for(browser.ALL_CHARTS_DRAWN_JS, WAIT_S)
    previous: object = None
    deadline = time.monotonic() + WAIT_S
    while True:
        names = session.wait_for(f"(() => {{ const n = {query}; return n.length ? n : null; }})()", WAIT_S)
        if names == previous or time.monotonic() > deadline:
            return list(names)  # type: ignore[call-overload]
        previous = names
        time.sleep(0.5)


def test_runs_draws_one_trend_series_per_dataset(site):
    session = site["session"]
    session.goto(f"{site['url']}/runs?dataset=all", "Runs and trends", WAIT_S)
    names = _trend_names(session)
    _clean(session)
    # two datasets (demo questions, RAGBench sample): two series, each in the four metric panels
    assert len(set(names)) == 2, names
    assert sorted(names.count(n) for n in set(names)) == [4, 4], names
    assert any("demo questions" in n for n in names) and any("ragbench labelled sample" in n for n in names)
    session.goto(f"{site['url']}/runs", "Runs and trends", WAIT_S)  # default: the newest run's dataset only
    assert len(set(_trend_names(session))) == 1
    assert session.evaluate(browser.CHARTS_DRAWN_JS) >= 1
    assert session.evaluate("document.querySelectorAll('.js-plotly-plot').length") == 0  # Vega-Lite only


def test_runs_shows_one_view_at_a_time(site):
    """/runs?run=ID opens "One run"; clicking another tab runs and shows that view instead."""
    session = site["session"]
    _, k5 = site["runs"]["rag"]
    session.goto(f"{site['url']}/runs?dataset=all&run={k5}", "Runs and trends", WAIT_S)
    session.wait_for("document.body.innerText.includes('Save tags and note')", WAIT_S)
    session.click_tab("Agreement with ground truth")
    session.wait_for("document.body.innerText.includes('Agreement table and what each statistic means')", WAIT_S)
    session.idle(WAIT_S)
    _clean(session)
    assert "Save tags and note" not in session.main_text()


def test_compare_deep_link_shows_the_configuration_diff(site):
    session = site["session"]
    k2, k5 = site["runs"]["rag"]
    session.goto(f"{site['url']}/compare?runs={k2},{k5}", "Compare runs", WAIT_S)
    session.wait_for("document.body.innerText.includes('retrieval.k: 2 → 5')", WAIT_S)
    text = session.main_text()
    _clean(session)
    assert "demo-k2 → demo-k5" in text
    assert "MRR" in text or "mrr" not in text  # every metric shown by its readable name


def test_batch_counts_every_row_by_default(site):
    session = site["session"]
    session.goto(f"{site['url']}/batch", "Batch evaluation", WAIT_S)
    session.wait_for("document.body.innerText.includes('rows are usable')", WAIT_S)
    text = session.main_text()
    _clean(session)
    assert "20 of 20 rows are usable (all rows)" in text
    assert "the dataset has 20" in text


def test_side_by_side_support_maps_truncate_no_metric(site):
    session = site["session"]
    k2, k5 = site["runs"]["rag"]
    item = site["runs"]["items"][0]
    session.goto(f"{site['url']}/support_map?runs={k2},{k5}&item={item}", "Sentence support map", WAIT_S)
    session.wait_for("document.querySelectorAll('[data-testid=stMetricLabel]').length >= 8", WAIT_S)
    session.idle(WAIT_S)
    _clean(session)
    labels = session.evaluate(
        "Array.from(document.querySelectorAll('[data-testid=stMetricLabel]')).map(e => e.innerText)")
    assert sum("Context relevance" in str(x) for x in labels) == 2, labels  # both sides
    assert session.evaluate(browser.TRUNCATED_METRICS_JS) == []


def test_settings_survive_a_reload_without_any_key(site):
    session = site["session"]
    session.goto(f"{site['url']}/settings", "Settings", WAIT_S)
    session.wait_for("!!document.querySelector('input[aria-label=\"Model\"]')", WAIT_S)
    session.type_into('input[aria-label="Model"]', "my-test-model-x")
    session.click_button("Save settings")
    session.wait_for("location.search.includes('model=my-test-model-x')", WAIT_S)
    session.reload("Settings", WAIT_S)
    value = session.wait_for(
        "(() => { const e = document.querySelector('input[aria-label=\"Model\"]'); "
        "return e && e.value === 'my-test-model-x' ? e.value : null; })()", WAIT_S)
    assert value == "my-test-model-x"
    _clean(session)
