"""A rubric metric end to end from the dashboard (issue 34, item 4): installed with
``rag-eval metrics add`` while the dashboard runs, named on the Batch page, scored there
by the environment's LLM endpoint (the local OpenAI-compatible server) on a few rows; the
stored items carry its value and the judge's reason (or why it has none), with the key in
no record; the Runs page shows its column."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from harness.openai_server import Reply
from rag_eval.cli import cli
from rag_eval.demo import load_labelled_sample
from rag_eval.ui.constants import STATE_SETTINGS
from tests.conftest import RUBRIC
from tests.conftest import RUBRIC_KEY as KEY
from tests.ui.page_steps import APP, SAMPLE, batch_of_sample, no_failure

ROWS = 3


def _named(at: AppTest) -> list[str]:
    """The Batch page's caption naming the per-item metrics every run computes."""
    return [c.value for c in at.caption if c.value.startswith("Also computed per row")]


def test_an_installed_rubric_is_named_scored_and_stored_from_the_batch_page(rubric_endpoint):
    unscored = load_labelled_sample()[1]["question"]  # the judge gives this row no score

    def answer(body: dict) -> Reply:
        if unscored in body["messages"][1]["content"]:
            return Reply(content="I would rather not say.")
        return Reply(content=f"4\nCourteous throughout. (header {KEY})",
                     first_token_logprobs={"4": math.log(0.75), "5": math.log(0.25)})

    rubric_endpoint.set_handler(answer)
    from rag_eval.ui.settings import environment_settings

    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.session_state[STATE_SETTINGS] = {**environment_settings(), "provider": "local"}  # the local judge: TRACe
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value(SAMPLE).run()
    no_failure(at)
    assert not _named(at)  # the page has read the registry: no rubric installed yet
    added = CliRunner().invoke(cli, ["metrics", "add", str(RUBRIC)])  # while the dashboard runs
    assert added.exit_code == 0, added.output
    at.run()
    named = _named(at)
    assert named and "Politeness" in named[0] and "rubric politeness" in named[0]  # the installed rubric, by name
    run_id = batch_of_sample(at, ROWS)

    from rag_eval.runs.store import RunStore

    store = RunStore()
    items = store.items(run_id)
    assert len(items) == ROWS and {i["status"] for i in items} == {"ok"}
    scored = [i for i in items if (i.get("metrics") or {}).get("politeness") is not None]
    failed = [i for i in items if i not in scored]
    assert len(scored) == ROWS - 1 and len(failed) == 1
    for item in scored:  # G-Eval's weighted score, and the judge's reason beside it
        assert item["metrics"]["politeness"] == pytest.approx(4.25)
        assert item["metric_reasons"]["politeness"].startswith("Courteous throughout.")
    assert failed[0]["question"] == unscored and "no score from 1 to 5" in failed[0]["metric_errors"]["politeness"]
    assert KEY not in json.dumps(items)  # the answer quoted the key: redacted before it was stored
    summary = store.get_run(run_id)["summary"]
    assert summary["custom"]["politeness"]["n"] == ROWS - 1 and summary["metric_failures"] == {"politeness": 1}

    at.switch_page("pages/runs.py").run()
    no_failure(at)
    table = at.dataframe[0].value
    assert run_id in set(table["id"]) and "Politeness" in table.columns  # the rubric's label
    assert table.loc[table["id"] == run_id, "Politeness"].iloc[0] == pytest.approx(4.25)
