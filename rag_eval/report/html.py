# ruff: noqa: E501 - the HTML template keeps its markup on one line per row
"""One self-contained HTML report of one or more stored runs (``rag-eval report``, and the
Runs page's "Download report").

Everything the file needs is inside it: plotly's JavaScript is inlined once in the head
and every chart is a plotly div, so the file opens offline, from an e-mail attachment or
a CI artifact. Sections (each an HTML ``section`` with a stable id):

``summary``       the runs: name, configuration, dataset, status, items, coverage
``metrics``       every family's means (the registry's headings and labels) with 95% bootstrap
                  intervals, and the reasons metrics gave for their worst values
``distributions`` per-metric histograms (one trace per run)
``rmse-bands``    the single-evaluation RMSE of every row read through the bands
``agreement``     RMSE against ground truth, aggregated RMSE, consistency (with its
                  reading), hallucination AUROC, when the runs carry ground truth
``diagnosis``     the metric patterns, each with the rows that show it
``cost-latency``  tokens, cost, latency percentiles
``worst-rows``    the support maps of the lowest-scoring rows (and failed rows)
``comparison``    with several runs: means side by side and paired differences

Every piece of user text (questions, documents, answers, run names, errors) is escaped
by Jinja2's autoescaping or by :func:`rag_eval.display.support_map.support_map_html`: HTML in a
document renders as text. Numbers come from the library (``runs.stats``,
``runs.compare``, ``metrics.agreement``, ``metrics.diagnosis``); nothing is estimated here.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_eval.display.style import SPREAD_BAND_LABELS, SPREAD_BAND_MEANING
from rag_eval.judges import expected_error
from rag_eval.metrics.agreement import agreement
from rag_eval.metrics.registry import FAMILY_FIELD, FAMILY_HEADING, METRICS, TRACE_METRICS, TRACE_SCORES
from rag_eval.metrics.report_fields import (
    RMSE_BANDS,
    consistency_reading,
    rmse_band,
)
from rag_eval.report.defaults import DEFAULT_WORST
from rag_eval.runs.compare import (
    compare_at_cutoff,
    differences_message,
    judge_error_notes,
    metric_table,
    run_labels,
)
from rag_eval.runs.item_fields import run_diagnosis
from rag_eval.runs.records import item_row
from rag_eval.runs.stats import summarize_items
from rag_eval.runs.summary import BY_LANGUAGE_METRICS, family_means, language_rows
from rag_eval.text.numbers import format_number as _f  # a number as the dashboard shows it

SECTIONS = ("summary", "metrics", "distributions", "rmse-bands", "agreement", "diagnosis", "cost-latency",
            "worst-rows", "comparison")

_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1150px;padding:1em 2em;color:#212529}
h1{margin-bottom:0.1em} h2{border-bottom:2px solid #dee2e6;padding-bottom:0.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:0.5em 0 1em 0;font-size:0.9em;display:block;max-width:100%;overflow-x:auto} th,td{border:1px solid #dee2e6;padding:3px 8px;text-align:left}
th{background:#f1f3f5;white-space:nowrap} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td:first-child{min-width:8em}
.muted{color:#6c757d} .note{background:#f8f9fa;border-left:4px solid #adb5bd;padding:0.4em 0.8em}
.band-excellent{background:#f1f3f5} .band-good{background:#e7f0fa} .band-acceptable{background:#d0e2f5} .band-poor{background:#b6d1ee}
details.row>summary{cursor:pointer} details.row[open]>summary{margin-bottom:0.4em}
.row{border:1px solid #dee2e6;border-radius:6px;padding:0.6em 1em;margin:0.8em 0}
.ids{font-family:ui-monospace,monospace;font-size:0.85em}
</style>
<script type="text/javascript">{{ plotly_js }}</script>
</head><body>
<h1>{{ title }}</h1>
<p class="muted">Generated {{ generated }} by rag-eval {{ version }} · {{ runs|length }} run(s) · self-contained: opens offline.</p>

<section id="summary"><h2>Runs</h2>
<table><tr><th>run</th><th>name</th><th>config</th><th>dataset</th><th>status</th><th>items</th><th>scored</th><th>coverage</th><th>statuses</th><th>created</th></tr>
{% for r in runs %}<tr><td class="ids">{{ r.id }}</td><td>{{ r.name }}</td><td>{{ r.config }}</td><td>{{ r.dataset }}</td><td>{{ r.status }}</td>
<td class="num">{{ r.n_items }}</td><td class="num">{{ r.n_scored }}</td><td class="num">{{ r.coverage }}</td><td>{{ r.statuses }}</td><td>{{ r.created }}</td></tr>
{% endfor %}</table>
<p class="muted">Coverage = items with usable judge labels / all items. Failed items are counted here and never averaged in.</p>
</section>

<section id="metrics"><h2>Metrics (mean, 95% bootstrap interval)</h2>
{% for f in families %}<h3>{{ f.heading }}</h3>
<table><tr><th>run</th>{% for m in f.metrics %}<th title="{{ m.help }}">{{ m.label }}</th>{% endfor %}</tr>
{% for r in runs %}<tr><td>{{ r.label }}</td>{% for m in f.metrics %}<td class="num">{{ r.metrics.get(m.name, "—") }}</td>{% endfor %}</tr>
{% endfor %}</table>
{% for m in f.metrics if m.reasons %}<details class="row"><summary>{{ m.label }}: the reasons of its worst values</summary>
<table><tr><th>run</th><th>item</th><th>value</th><th>reason</th></tr>{% for x in m.reasons %}<tr><td>{{ x.run }}</td><td class="ids">{{ x.id }}</td><td class="num">{{ x.value }}</td><td>{{ x.reason }}</td></tr>{% endfor %}</table></details>
{% endfor %}{% endfor %}
{% for r in runs if r.languages %}<h3>By language: {{ r.label }}</h3>
<table><tr><th>language</th><th>items</th><th>coverage</th>{% for m in language_metrics %}<th>{{ m }}</th>{% endfor %}</tr>
{% for l in r.languages %}<tr><td><bdi>{{ l.language }}</bdi></td><td class="num">{{ l.items }}</td><td class="num">{{ l.coverage }}</td>{% for v in l.cells %}<td class="num">{{ v }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endfor %}
<p class="muted">Expected judge error (how far a row's score may be from a careful label, per row; docs/local-judge.md):</p>
<ul>{% for r in runs %}<li>{{ r.label }}: {{ r.expected_error }}</li>{% endfor %}</ul>
{{ charts.metrics }}
</section>

<section id="distributions"><h2>Distributions</h2>
{{ charts.distributions }}
</section>

<section id="rmse-bands"><h2>Metric spread per row</h2>
<p>Each row's <code>rmse_aggregation</code>: how unevenly its four metrics sit around their <code>average</code>. A spread, not a quality verdict: four metrics all at 0.1 have spread 0.</p>
<table><tr><th>run</th>{% for b in bands %}<th class="band-{{ b.name }}">{{ b.label }} ({{ b.range }})</th>{% endfor %}<th>rows</th></tr>
{% for r in runs %}<tr><td>{{ r.label }}</td>{% for b in bands %}<td class="num">{{ r.band_counts[b.name] }}</td>{% endfor %}<td class="num">{{ r.n_spread }}</td></tr>
{% endfor %}</table>
<table><tr><th>spread</th><th>meaning</th></tr>{% for b in bands %}<tr><td class="band-{{ b.name }}">{{ b.label }}</td><td>{{ b.meaning }}</td></tr>{% endfor %}</table>
{{ charts.spread }}
</section>

<section id="agreement"><h2>Agreement with ground truth</h2>
{% if agreement %}
<table><tr><th>run</th><th>statistic</th><th>value</th><th>95% CI</th><th>n</th><th>note</th></tr>
{% for a in agreement %}<tr><td>{{ a.run }}</td><td>{{ a.statistic }}</td><td class="num">{{ a.value }}</td><td class="num">{{ a.ci }}</td><td class="num">{{ a.n }}</td><td>{{ a.note }}</td></tr>
{% endfor %}</table>
<p class="muted">Consistency = 1 − min(aggregated RMSE, 1), read as excellent ≥ 0.90, good ≥ 0.80, acceptable ≥ 0.70, poor below.</p>
{% else %}<p class="note">No ground truth in these runs (judge RAGBench rows, or rows with relevance_score… columns, to get it).</p>{% endif %}
</section>

<section id="diagnosis"><h2>Diagnosis</h2>
{% for r in runs %}<h3>{{ r.label }}</h3>
<p class="muted">{{ r.diagnosis.rows_considered }} of {{ r.diagnosis.rows_given }} rows scored; high ≥ {{ r.diagnosis.high }}, low ≤ {{ r.diagnosis.low }}.</p>
{% if r.diagnosis.findings %}<table><tr><th>pattern</th><th>rows</th><th>share</th><th>what it means</th><th>what to do</th><th>row ids</th></tr>
{% for f in r.diagnosis.findings %}<tr><td>{{ f.title }}</td><td class="num">{{ f.n_rows }}</td><td class="num">{{ f.share }}</td><td>{{ f.meaning }}</td><td>{{ f.action }}</td><td class="ids">{{ f.ids }}</td></tr>
{% endfor %}</table>{% else %}<p class="note">No pattern found.</p>{% endif %}
{% endfor %}
</section>

<section id="cost-latency"><h2>Cost and latency</h2>
<table><tr><th>run</th><th>tokens</th><th>cost (USD)</th><th>latency p50 (s)</th><th>latency p95 (s)</th></tr>
{% for r in runs %}<tr><td>{{ r.label }}</td><td class="num">{{ r.tokens }}</td><td class="num">{{ r.cost }}</td><td class="num">{{ r.p50 }}</td><td class="num">{{ r.p95 }}</td></tr>
{% endfor %}</table>
{{ charts.latency }}
</section>

<section id="worst-rows"><h2>Worst rows</h2>
<p class="muted">Per run, the {{ worst }} scored rows with the lowest average of the four metrics, then up to {{ worst }} failed rows; click a row to open its support map.</p>
{% for r in runs %}<h3>{{ r.label }}</h3>
{% for w in r.worst %}<details class="row"><summary><strong>{{ w.id }}</strong> · status {{ w.status }}{% if w.fields %} · average {{ w.fields.average }} · metric spread {{ w.fields.rmse_aggregation }} · overall_supported {{ w.fields.overall_supported }} · sentences fully / partially / unsupported {{ w.fields.fully }} / {{ w.fields.partially }} / {{ w.fields.unsupported }}{% endif %}</summary>
{% if w.scores %}<p class="ids">{{ w.scores }}</p>{% endif %}
{% if w.error %}<p class="note">{{ w.error }}</p>{% endif %}
{{ w.map }}</details>
{% else %}<p class="note">No row to show.</p>{% endfor %}
{% endfor %}
</section>

<section id="comparison"><h2>Comparison</h2>
{% if comparison %}
<p>Baseline: {{ comparison.baseline }}. Paired differences use the items scored in both runs.</p>
<table><tr><th>metric</th><th>run</th><th>mean difference</th><th>95% CI</th><th>pairs</th></tr>
{% for p in comparison.paired %}<tr><td>{{ p.metric }}</td><td>{{ p.run }}</td><td class="num">{{ p.diff }}</td><td class="num">{{ p.ci }}</td><td class="num">{{ p.n }}</td></tr>
{% endfor %}</table>
{% if comparison.by_language %}<h3>Paired differences by language</h3>
<table><tr><th>language</th><th>metric</th><th>run</th><th>mean difference</th><th>95% CI</th><th>pairs</th></tr>
{% for p in comparison.by_language %}<tr><td><bdi>{{ p.language }}</bdi></td><td>{{ p.metric }}</td><td>{{ p.run }}</td><td class="num">{{ p.diff }}</td><td class="num">{{ p.ci }}</td><td class="num">{{ p.n }}</td></tr>
{% endfor %}</table>{% endif %}
{% if expected_error_notes %}<p class="muted">The judge and these differences:</p>
<ul>{% for n in expected_error_notes %}<li>{{ n }}</li>{% endfor %}</ul>{% endif %}
<h3>Largest per-question differences</h3>
{% if comparison.empty %}<p class="note">{{ comparison.empty }}</p>{% else %}<table><tr><th>item</th><th>metric</th><th>run</th><th>baseline</th><th>other</th><th>difference</th><th>question</th></tr>
{% for d in comparison.differences %}<tr><td class="ids">{{ d.id }}</td><td>{{ d.metric }}</td><td>{{ d.run }}</td><td class="num">{{ d.base }}</td><td class="num">{{ d.other }}</td><td class="num">{{ d.difference }}</td><td>{{ d.question }}</td></tr>
{% endfor %}</table>{% endif %}
{% else %}<p class="note">One run in this report: pass several runs to compare them.</p>{% endif %}
</section>
</body></html>
"""


def _ci(low: Any, high: Any) -> str:
    return "—" if low is None or high is None else f"[{_f(low)}, {_f(high)}]"


def _band_rows() -> list[dict[str, str]]:
    out, low = [], 0.0
    for upper, name in RMSE_BANDS:
        out.append({"name": name, "label": SPREAD_BAND_LABELS[name], "meaning": SPREAD_BAND_MEANING[name],
                    "range": f"> {low:.2f}" if upper == float("inf") else f"{'0' if not low else f'> {low:.2f}'} – {upper:.2f}"})
        low = upper
    return out


def _figure_html(fig: Any) -> str:
    return str(fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False}))


def _charts(runs: Sequence[dict[str, Any]], items_by_run: Mapping[str, Sequence[dict[str, Any]]],
            labels: Mapping[str, str]) -> dict[str, str]:
    import pandas as pd
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from rag_eval.display.style import METRIC_LABELS, PALETTE
    from rag_eval.display.tables import spread_frame
    from rag_eval.report import charts as report_charts

    out: dict[str, str] = {}
    table = pd.DataFrame(metric_table(items_by_run, list(TRACE_METRICS)))
    out["metrics"] = _figure_html(report_charts.metric_bars(table, dict(labels))) if not table.empty else ""

    dist = make_subplots(rows=1, cols=4, subplot_titles=[METRIC_LABELS[m] for m in TRACE_METRICS])
    for i, run in enumerate(runs):
        items = items_by_run[run["id"]]
        for col, metric in enumerate(TRACE_METRICS, start=1):
            name = "adherence_score" if metric == "adherence" else metric
            values = [float(v) for i2 in items if (v := (i2.get("scores") or {}).get(name)) is not None]
            dist.add_trace(go.Histogram(x=values, xbins={"start": 0, "end": 1.0001, "size": 0.1}, name=labels[run["id"]],
                                        marker_color=PALETTE[i % len(PALETTE)], opacity=0.7,
                                        showlegend=col == 1, legendgroup=run["id"]), row=1, col=col)
    dist.update_layout(barmode="overlay", height=320, template="plotly_white", margin={"l": 40, "r": 20, "t": 60, "b": 40},
                       title="Per-row scores (adherence: continuous adherence score)")
    out["distributions"] = _figure_html(dist)

    spreads = [(run["id"], spread_frame(items_by_run[run["id"]])) for run in runs]
    spreads = [(run_id, s) for run_id, s in spreads if not s.empty]
    if spreads:
        fig = report_charts.spread_figure(spreads[0][1])
        fig.data[0].name = labels[spreads[0][0]]
        for i, (run_id, spread) in enumerate(spreads[1:], start=1):
            fig.add_trace(go.Histogram(x=spread["spread_rmse"], xbins={"start": 0, "end": 0.6, "size": 0.025},
                                       name=labels[run_id], marker_color=PALETTE[i % len(PALETTE)]))
        fig.update_traces(xbins={"start": 0, "end": 0.6, "size": 0.025}, opacity=0.75)
        fig.update_layout(barmode="overlay", showlegend=len(spreads) > 1)
        out["spread"] = _figure_html(fig)
    else:
        out["spread"] = ""

    lat = go.Figure()
    for i, run in enumerate(runs):
        values = [float(v) for item in items_by_run[run["id"]] if isinstance(v := item.get("latency_s"), (int, float))]
        lat.add_trace(go.Box(x=values, name=labels[run["id"]], marker_color=PALETTE[i % len(PALETTE)],
                             boxpoints="outliers"))
    lat.update_layout(title="Latency per row (s)", height=260 + 30 * len(runs), template="plotly_white",
                      margin={"l": 40, "r": 20, "t": 60, "b": 40}, showlegend=False)
    out["latency"] = _figure_html(lat)
    return out


def _worst_rows(items: Sequence[dict[str, Any]], worst: int, label: str) -> list[dict[str, Any]]:
    from markupsafe import Markup

    from rag_eval.display.support_map import support_map_html
    from rag_eval.display.views import view_from_record

    scored = [(item_row(i), i) for i in items if i.get("scores")]  # the one row's report fields
    scored = [(f, i) for f, i in scored if f["average"] is not None]
    scored.sort(key=lambda p: (p[0]["average"], str(p[1].get("id"))))
    failed = [i for i in items if not i.get("scores")][:worst]
    rows = []
    for fields, item in [*scored[:worst], *[(None, i) for i in failed]]:
        try:
            view = view_from_record(dict(item), label)
            html_map = support_map_html(view.item, view.labels)
        except Exception as err:  # noqa: BLE001 - a record too damaged to rebuild still gets its line
            html_map = f"<p class='note'>support map unavailable: {type(err).__name__}</p>"
        scores = item.get("scores") or {}
        failures = "; ".join(f"{name} failed: {why}" for name, why in (item.get("metric_errors") or {}).items())
        rows.append({
            "id": item.get("id"), "status": item.get("status"),
            "error": " · ".join(e for e in (item.get("error"), failures) if e) or None,
            "scores": "  ".join(f"{m} {_f(scores.get(m))}" for m in TRACE_SCORES) if scores else "",
            "fields": None if fields is None else {
                "average": _f(fields["average"]), "rmse_aggregation": _f(fields["rmse_aggregation"]),
                "overall_supported": _f(fields["overall_supported"]), "fully": _f(fields["fully_supported_sentences"]),
                "partially": _f(fields["partially_supported_sentences"]), "unsupported": _f(fields["unsupported_sentences"]),
            },
            "map": Markup(html_map),  # built by support_map_html, which escapes every text
        })
    return rows


def _families(shown: Mapping[str, Mapping[str, None]], items_by_run: Mapping[str, Sequence[dict[str, Any]]],
              labels: Mapping[str, str], n_reasons: int = 10) -> list[dict[str, Any]]:
    """Each family the runs have, under its heading: its metrics' labels and help, and for a
    metric that gives reasons, those of its ``n_reasons`` worst values over the runs."""
    out = []
    for family, names in shown.items():
        metrics = []
        for name in names:
            given = [((i.get(FAMILY_FIELD[family]) or {}).get(name), labels[run_id], i.get("id"), why)
                     for run_id, items in items_by_run.items() for i in items
                     if (why := (i.get("metric_reasons") or {}).get(name))]
            sign = 1.0 if METRICS.higher_is_better(name) else -1.0  # the worst values first
            given.sort(key=lambda g: (g[0] is None, sign * (g[0] or 0.0)))
            metrics.append({"name": name, "label": METRICS.label(name), "help": METRICS.help(name),
                            "reasons": [{"run": run, "id": item_id, "value": _f(value), "reason": why}
                                        for value, run, item_id, why in given[:n_reasons]]})
        out.append({"heading": FAMILY_HEADING[family], "metrics": metrics})
    return out


def _agreement_rows(label: str, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    if not any(i.get("truth") for i in items):
        return []
    predictions = [dict(i["scores"]) if i.get("scores") else None for i in items]
    truths = [dict(i["truth"]) if i.get("truth") else None for i in items]
    report = agreement(predictions, truths, n_boot=500)
    stats = {f"RMSE {m}": report.rmse[m] for m in TRACE_METRICS}
    stats.update({"aggregated RMSE": report.aggregated_rmse, "consistency": report.consistency,
                  "hallucination AUROC": report.hallucination_auroc})
    rows = []
    for name, est in stats.items():
        note = est.reason or ""
        if name == "consistency" and est.value is not None:
            note = consistency_reading(est.value) or ""
        rows.append({"run": label, "statistic": name, "value": _f(est.value), "ci": _ci(est.ci_low, est.ci_high),
                     "n": est.n, "note": note})
    cov = report.coverage
    rows.append({"run": label, "statistic": "coverage", "value": f"{cov.rows_used}/{cov.rows_given}", "ci": "",
                 "n": cov.rows_used, "note": f"{cov.missing_prediction} without prediction, {cov.missing_truth} without truth"})
    return rows


def build_report(runs: Sequence[dict[str, Any]], items_by_run: Mapping[str, Sequence[dict[str, Any]]], *,
                 worst: int = DEFAULT_WORST, title: str | None = None, generated: str | None = None,
                 reviewed: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> str:
    """The report as one HTML string. ``runs`` are run records (the first is the
    comparison baseline); ``items_by_run`` maps each run id to its item records;
    ``reviewed`` the reviewers' scores per run (``labels.store.reviewed_scores``), which
    measure a judge bias that differs between the compared runs."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    import jinja2
    from plotly.offline import get_plotlyjs

    try:
        version = package_version("rag-eval")
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        version = "dev"
    from markupsafe import Markup

    if not runs:
        raise ValueError("a report needs at least one run")
    # several runs: compared by the one comparison (the Compare page's, ``rag-eval compare``'s):
    # retrieval at the cut-off every run reaches, never MRR@2 beside MRR@5
    result = compare_at_cutoff({r["id"]: list(items_by_run[r["id"]]) for r in runs}, runs=runs) if len(runs) >= 2 else None
    labels = result["labels"] if result is not None else run_labels(runs)
    compared = {(row["run"], row["metric"]): row for row in (result or {}).get("metrics", ())}
    views, agreement_rows = [], []
    shown: dict[str, dict[str, None]] = {}  # each family's metrics any run has
    for run in runs:
        items = items_by_run[run["id"]]
        summary = summarize_items(list(items))
        metrics: dict[str, Any] = {}
        for family, means in family_means(summary).items():
            if family == "retrieval" and result is not None:
                means = {m: row for (run_id, m), row in compared.items()
                         if run_id == run["id"] and getattr(METRICS.find(m), "family", "") == "retrieval"}
            shown.setdefault(family, {}).update(dict.fromkeys(means))
            metrics.update(means)
        fields = [item_row(i) for i in items]
        bands = Counter(r for f in fields if (r := rmse_band(f["rmse_aggregation"])) is not None)
        diagnosis = run_diagnosis(items).to_dict()
        for f in diagnosis["findings"]:
            f["ids"] = ", ".join(f["ids"][:25]) + (f" … (+{len(f['ids']) - 25})" if len(f["ids"]) > 25 else "")
            f["share"] = f"{f['share']:.0%}"
        views.append({
            "id": run["id"], "name": run.get("name"), "label": labels[run["id"]],
            "config": f"{run.get('config_name')} ({run.get('config_hash')})",
            "dataset": run.get("dataset_path") or "—", "status": run.get("status"), "created": run.get("created_at"),
            "n_items": summary["n_items"], "n_scored": summary["n_scored"], "coverage": _f(summary["coverage"], "share"),
            "statuses": ", ".join(f"{k}={v}" for k, v in summary["status_counts"].items()),
            "metrics": {m: f"{_f(v['mean'])} {_ci(v['ci_low'], v['ci_high'])} n={v['n']}"
                        for m, v in metrics.items()},
            "band_counts": {name: bands.get(name, 0) for _, name in RMSE_BANDS}, "n_spread": sum(bands.values()),
            "diagnosis": diagnosis,
            "tokens": summary["tokens_total"], "cost": _f(summary["cost_usd_total"], "usd"),
            "p50": _f(summary["latency_p50_s"], "seconds"), "p95": _f(summary["latency_p95_s"], "seconds"),
            "worst": _worst_rows(items, worst, labels[run["id"]]),
            "expected_error": expected_error.run_caption(run),
            "languages": [{"language": row["language"], "items": row["items"], "coverage": _f(row["coverage"], "share"),
                           "cells": [f"{_f(row[m])} {_ci(row[f'{m} ci_low'], row[f'{m} ci_high'])}"
                                     for m in BY_LANGUAGE_METRICS]}
                          for row in language_rows(summary)],
        })
        agreement_rows += _agreement_rows(labels[run["id"]], items)

    comparison, notes = None, []
    if result is not None:
        notes = judge_error_notes(runs, result["paired"], items_by_run, reviewed or {})
        comparison = {
            "empty": differences_message(result),
            "baseline": labels[runs[0]["id"]],
            "paired": [{"metric": p["metric"], "run": labels.get(p["run"], p["run"]), "diff": _f(p["mean_difference"], signed=True),
                        "ci": _ci(p["ci_low"], p["ci_high"]), "n": p["n_pairs"]} for p in result["paired"]],
            "by_language": [{"language": p["language"], "metric": p["metric"], "run": labels.get(p["run"], p["run"]),
                             "diff": _f(p["mean_difference"], signed=True), "ci": _ci(p["ci_low"], p["ci_high"]),
                             "n": p["n_pairs"]} for p in result["paired_by_language"]],
            "differences": [{**d, "run": labels.get(d["run"], d["run"]), "base": _f(d["base"]), "other": _f(d["other"]),
                             "difference": _f(d["difference"], signed=True), "question": (d.get("question") or "")[:120]}
                            for d in result["differences"][:15]],
        }
    charts = {k: Markup(v) for k, v in _charts(runs, items_by_run, labels).items()}
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_TEMPLATE).render(
        title=title or ("rag-eval report: " + ", ".join(labels.values())),
        generated=generated or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=version, runs=views, families=_families(shown, items_by_run, labels), bands=_band_rows(),
        agreement=agreement_rows, language_metrics=BY_LANGUAGE_METRICS,
        comparison=comparison, charts=charts, worst=worst, plotly_js=Markup(get_plotlyjs()),
        expected_error_notes=notes,
    )


def write_report(store: Any, run_refs: Sequence[str], path: str | Path, *, worst: int = DEFAULT_WORST) -> Path:
    """Build the report of ``run_refs`` (ids, id prefixes or names) from ``store`` and write it."""
    ids = [store.resolve_run_id(ref) for ref in run_refs]
    runs = [store.get_run(i) for i in ids]
    from rag_eval.labels.store import reviewed_scores

    html_text = build_report(runs, {i: store.items(i) for i in ids}, worst=worst,
                             reviewed=reviewed_scores(store, ids) if len(ids) > 1 else None)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html_text, encoding="utf-8")
    return path
