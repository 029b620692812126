"""Issue 46 items 3 and "One comparison": the report, the Compare page and ``rag-eval compare``
table one comparison (:func:`rag_eval.runs.compare.compare_at_cutoff`): a top-2 and a top-5
run side by side have recall, precision, nDCG and MRR at k = 2 for both, the same numbers
in all three, runs labelled by name."""

from __future__ import annotations

import json
import re
from pathlib import Path

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


PASSAGES = Path(__file__).parents[1] / "data" / "multilingual" / "passages.jsonl"


def _rows_in(languages: tuple[str, ...]) -> list[dict]:
    """Three rows per committed shared passage of ``languages`` (real text in its own script):
    each answers with another stretch of the passage, so the judges score them apart."""
    rows = []
    for line in PASSAGES.read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        if p["language"] in languages:
            rows += [{"id": f"{p['id']}:{i}", "question": p["question"], "documents": [p["text"]],
                      "response": p["text"][i * 60:(i + 1) * 60] + ("" if i else p["question"]),
                      "language": p["language"]} for i in range(3)]
    return rows


def test_the_three_agree_on_the_differences_per_language(tmp_path):
    """Issue 47, item 7: two runs of rows in Chinese, Japanese and English differ per language,
    each with its paired interval and n, the same in the report, the page (its data and the
    table it draws) and the CLI; a pair of runs in one language shows no breakdown."""
    import rag_eval
    from rag_eval.ui import data

    store = RunStore()
    rows = _rows_in(("zh", "ja", "en"))
    a = rag_eval.evaluate(rows, judge="lexical", progress=False, store=store, name="lexical").run_id
    b = rag_eval.evaluate(rows, judge=OverlapJudge(), progress=False, store=store, name="overlap").run_id
    runs = [store.get_run(a), store.get_run(b)]

    ran = CliRunner().invoke(cli, ["compare", a, b, "--json"])
    assert ran.exit_code == 0, ran.output
    cli_table = json.loads(ran.output)
    page = data.comparison(data.where(), (a, b), tuple(data.run_stamp(r) for r in runs))

    def by_language(result):
        return {(p["run"], p["language"], p["metric"]): (p["mean_difference"], p["ci_low"], p["ci_high"], p["n_pairs"])
                for p in result["paired_by_language"]}

    rows_cli = by_language(cli_table)
    assert rows_cli == by_language(page)
    assert {language for _, language, _ in rows_cli} == {"zh", "ja", "en"}
    for (_, language, metric), (difference, low, high, n) in rows_cli.items():
        assert n == 3, (language, metric)  # each language's three questions, scored by both
        assert difference is not None and low is not None and low <= difference <= high, (language, metric)
    # per language, the paired questions are the whole's, split: their counts add up
    whole = {p["metric"]: p["n_pairs"] for p in cli_table["paired"]}
    assert all(sum(n for (_, _, m), (*_, n) in rows_cli.items() if m == metric) == n_all
               for metric, n_all in whole.items())

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).parents[2] / "dashboard.py"), default_timeout=120)
    at.query_params["runs"] = f"{a},{b}"
    at.run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    (drawn,) = [d.value for d in at.dataframe if "language" in d.value.columns and "n_pairs" in d.value.columns]
    assert sorted(zip(drawn["language"], drawn["n_pairs"], drawn["mean_difference"], drawn["ci_low"])) == sorted(
        (language, n, difference, low) for (_, language, _), (difference, low, _, n) in rows_cli.items())
    assert len(drawn) == len(rows_cli)

    html = build_report(runs, {r: store.items(r) for r in (a, b)})
    section = html.split("<h3>Paired differences by language</h3>", 1)[1].split("</table>", 1)[0]
    for (_, language, metric), (difference, low, high, n) in rows_cli.items():
        row = next(r for r in section.split("<tr>") if f"<bdi>{language}</bdi></td><td>{metric}</td>" in r)
        shown = (format_number(difference, signed=True), f"[{format_number(low)}, {format_number(high)}]", f">{n}</td>")
        assert all(part in row for part in shown), (language, metric, row)
    text = CliRunner().invoke(cli, ["compare", a, b]).output.split("Paired differences by language", 1)[1]
    for language in ("zh", "ja", "en"):
        lines = [line for line in text.splitlines() if line.startswith(f"| {language} | ")]
        assert len(lines) == len(whole) and all(line.endswith(" | 3 |") for line in lines), (language, lines)

    one = _rows_in(("en",))
    c = rag_eval.evaluate(one, judge="lexical", progress=False, store=store, name="en-a").run_id
    d = rag_eval.evaluate(one, judge=OverlapJudge(), progress=False, store=store, name="en-b").run_id
    only_english = json.loads(CliRunner().invoke(cli, ["compare", c, d, "--json"]).output)
    assert only_english["paired_by_language"] == [] and only_english["paired"]
    assert "by language" not in build_report([store.get_run(c), store.get_run(d)],
                                             {r: store.items(r) for r in (c, d)})
    assert "by language" not in CliRunner().invoke(cli, ["compare", c, d]).output
