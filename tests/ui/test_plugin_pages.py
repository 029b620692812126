"""The plugin package of tests/data/plugins reaches the dashboard: its judge is a choice
in Settings and judges a Batch; its metric is computed there and shown on Runs and Compare."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from harness.plugins import install
from rag_eval.ui.constants import STATE_SETTINGS
from tests.ui.page_steps import APP, batch_of_sample, no_failure


@pytest.fixture
def plugins(tmp_path):
    with install(tmp_path / "site", "rag_eval_words") as projects:
        yield projects


def test_plugin_judge_and_metric_on_batch_runs_and_compare(plugins, rag_eval_home):
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.switch_page("pages/settings.py").run()
    no_failure(at)
    assert "overlap" in at.selectbox(key="settings.judge").options  # the registry's kinds, plugins included
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
