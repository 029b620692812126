"""Issue 46 items 3 and "One comparison": the report, the Compare page and ``rag-eval compare``
table one comparison (:func:`rag_eval.runs.compare.compare_at_cutoff`): a top-2 and a top-5
run side by side have recall, precision, nDCG and MRR at k = 2 for both, the same numbers
in all three, runs labelled by name."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from harness.runs import run_dataset
from rag_eval.cli import cli
from rag_eval.rag.config import default_config
from rag_eval.report.html import build_report
from rag_eval.runs.store import RunStore
from rag_eval.text.numbers import format_number
from tests.runs.conftest import OverlapJudge

AT_2 = ("recall@2", "precision@2", "ndcg@2", "mrr@2")


def test_the_report_the_compare_page_and_the_cli_show_one_comparison(demo_collection, demo_questions):
    from rag_eval.ui import data

    store = RunStore()
    rows = demo_questions[:6]
    k2 = run_dataset(rows, default_config("k2").with_changes(**{"retrieval.k": 2}), demo_collection, store,
                     judge=OverlapJudge(), name="k2")
    k5 = run_dataset(rows, default_config("k5"), demo_collection, store, judge=OverlapJudge(), name="k5")
    runs = [store.get_run(k2), store.get_run(k5)]

    ran = CliRunner().invoke(cli, ["compare", "k2", "k5", "--json"])
    assert ran.exit_code == 0, ran.output
    cli_table = json.loads(ran.output)
    page = data.comparison(data.where(), (k2, k5), tuple(data.run_stamp(r) for r in runs))
    assert cli_table["k"] == page["k"] == 2 and cli_table["labels"] == {k2: f"k2 · {k2[-6:]}", k5: f"k5 · {k5[-6:]}"}

    def means(result):
        return {(r["run"], r["metric"]): (r["mean"], r["n"]) for r in result["metrics"]}

    def paired(result):
        return {(p["run"], p["metric"]): (p["mean_difference"], p["n_pairs"]) for p in result["paired"]}

    assert means(cli_table) == means(page) and paired(cli_table) == paired(page)
    for run_id in (k2, k5):
        for metric in AT_2:
            assert means(page)[run_id, metric][0] is not None, (run_id, metric)

    html = build_report(runs, {r: store.items(r) for r in (k2, k5)})
    retrieval = html.split("<h3>Retrieval</h3>", 1)[1].split("</table>", 1)[0]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", retrieval)
    assert headers == ["run", *("recall@2", "precision@2", "nDCG@2", "MRR@2")] or set(headers[1:]) >= {
        "recall@2", "precision@2", "nDCG@2", "MRR@2"}, headers
    assert "@5" not in retrieval and "—" not in retrieval  # every run at k = 2, none missing
    for run_id in (k2, k5):
        line = retrieval.split(cli_table["labels"][run_id], 1)[1].split("</tr>", 1)[0]
        for metric in AT_2:
            mean, n = means(page)[run_id, metric]
            assert f"{format_number(mean)} " in line and f"n={n}" in line, (run_id, metric, line)
    for (run_id, metric), (difference, _) in paired(page).items():
        if run_id != k2 and metric in AT_2 and difference is not None:
            assert format_number(difference, signed=True) in html.split('id="comparison"', 1)[1]
