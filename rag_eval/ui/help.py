"""Words the dashboard shows beside its numbers: what each metric and term means,
timings and sources in plain form, and the document-sentence sets of one judged row.

Pure (no Streamlit): pages pass these strings to ``help=`` and captions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rag_eval.display.style import DOC_BOTH, DOC_NEITHER, DOC_RELEVANT, DOC_UTILIZED
from rag_eval.metrics.registry import METRICS

#: Words for the dashboard's terms; a metric's own help text is its registry declaration's.
METRIC_HELP: dict[str, str] = {
    "coverage": "Scored rows / all rows. Failed rows are counted here and never averaged in as 0.",
    "ci": "95% percentile-bootstrap interval of the mean (fixed seed): overlapping intervals mean the difference may "
          "be noise.",
    "consistency": "1 − min(aggregated RMSE, 1): 1 is perfect agreement with ground truth.",
    "aggregated_rmse": "sqrt(mean of the squared per-metric RMSEs) against ground truth; lower is better.",
    "hallucination_auroc": "How well 1 − adherence score ranks the ground truth's hallucinated rows above the grounded "
                           "ones (0.5 = chance, 1 = perfect).",
    "paired": "Mean of (run − baseline) over the questions both runs scored, with a bootstrap 95% interval; an "
              "interval that excludes 0 is a real difference on these questions.",
    "spread": "RMSE of one row's four metrics around their mean: balanced < 0.10, moderately imbalanced < 0.25, "
              "else imbalanced.",
}

TERM_LABELS = {
    "aggregated_rmse": "Aggregated RMSE", "consistency": "Consistency", "hallucination_auroc": "Hallucination AUROC",
    "coverage": "Coverage", "ci": "95% interval", "paired": "Paired difference", "spread": "Spread",
}


#: a metric at a cut-off (``recall@5``; ``recall@5_cosine`` against gold passages)
_AT_K = re.compile(r"([a-z_0-9]+)@(\d+)(_cosine)?")


def metric_label(name: str) -> str:
    """``hit_rate@5`` -> ``hit@5``, ``ndcg@5`` -> ``nDCG@5``: the registry's labels."""
    if name in TERM_LABELS:
        return TERM_LABELS[name]
    match = _AT_K.fullmatch(name)
    if match and METRICS.find(match[1]) is not None:
        return f"{METRICS.label(match[1])}@{match[2]}" + (" (cosine)" if match[3] else "")
    return METRICS.label(name)


def metric_help(name: str) -> str:
    """What a metric or term means, for ``help=`` and glossaries (a metric's is its
    declaration's, at the cut-off a name gives)."""
    if name in METRIC_HELP:
        return METRIC_HELP[name]
    if name.startswith("rmse:"):
        return f"RMSE of {metric_label(name[5:]).lower()} against ground truth; lower is better."
    match = _AT_K.fullmatch(name)
    if not match or METRICS.find(match[1]) is None:
        return METRICS.help(name) or name
    text = METRICS.help(match[1])
    if not re.search(r"\b(top|at) k\b", text):  # a metric over the whole ranking (MRR), cut at k
        return text + f" Counted within the top {match[2]} (0 when the first gold document is lower)."
    text = re.sub(r"\b(top|at) k\b", lambda m: f"{m[1]} {match[2]}", text)
    return text + (" Gold passages matched one to one by embedding cosine." if match[3] else "")


def glossary(names: list[str]) -> str:
    """Markdown list explaining each name (for an expander)."""
    from rag_eval.ui.markdown import escape_markdown  # a stored record's metric names are data

    return "\n".join(f"- **{escape_markdown(metric_label(n))}**: {escape_markdown(metric_help(n))}"
                     for n in dict.fromkeys(names))


def format_timings(timings: Mapping[str, Any]) -> str:
    """``{"retrieve_s": 0.0234, "generate_s": 1.5}`` -> ``retrieve 0.023 s · generate 1.500 s``: the
    stages of one line to the same millisecond, so they read down to one decimal place (three
    significant digits each gave 0.0633 s beside 0.297 s beside 0.00534 s)."""
    parts = []
    for key, value in timings.items():
        if not isinstance(value, (int, float)):
            continue
        name = (key[:-2] if key.endswith("_s") else key).replace("_", " ")
        parts.append(f"{name} {value:,.3f} s")
    return " · ".join(parts)


def set_counts(classes: list[str]) -> dict[str, int]:
    """Counts of document-sentence classes (``support_map.document_sentence_class``):
    relevant only, utilized only, both, neither, and the two sets' sizes."""
    n = {c: classes.count(c) for c in (DOC_RELEVANT, DOC_UTILIZED, DOC_BOTH, DOC_NEITHER)}
    return {"relevant_only": n[DOC_RELEVANT], "utilized_only": n[DOC_UTILIZED], "both": n[DOC_BOTH],
            "neither": n[DOC_NEITHER], "relevant": n[DOC_RELEVANT] + n[DOC_BOTH],
            "utilized": n[DOC_UTILIZED] + n[DOC_BOTH], "total": len(classes)}
