"""Human review of one judged row, drawn under its support map.

The reviewer corrects the labels in one form (Tab moves through it;
Alt+S saves): relevant and utilized document sentences, each response sentence
supported / partial / unsupported with its supporting sentences, and a note. Nothing
is stored until *Save review*; *Reset to last saved* (Alt+Z) undoes unsaved edits.
A save appends a human label set in RAGBench's schema to the run store, beside the
judge's labels, with TRACe recomputed from the human labels (``rag_eval.labels``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from rag_eval.display.views import SupportView, scores_from_record, view_from_record
from rag_eval.labels.review import (
    SUPPORT_CHOICES,
    ReviewDraft,
    draft_from_labels,
    labels_from_review,
    reviewable_metrics,
)
from rag_eval.labels.store import (
    ADHOC_PREFIX,
    adhoc_run_id,
    latest_review,
    review_progress,
    save_review,
)
from rag_eval.schema import Labels
from rag_eval.text.numbers import format_number
from rag_eval.ui import panels, state
from rag_eval.ui.constants import STATE_REVIEW_QUEUE, STATE_REVIEWER
from rag_eval.ui.markdown import md

PREFIX = "review"
K_REVIEWER = f"{PREFIX}.reviewer"
CHOICE_LABELS = {"supported": "supported", "partial": "partially supported", "unsupported": "unsupported"}


def review_target(view: SupportView) -> str:
    """The run the row belongs to, or where rows outside a run are kept."""
    run_id = view.extra.get("run_id")
    if run_id:
        return str(run_id)
    return adhoc_run_id("ragbench-sample" if view.judge.startswith("ragbench:") else "ask")


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _version_key(run_id: str, item_id: str) -> str:
    return f"{PREFIX}.version.{run_id}.{item_id}"


def draw_progress(store: Any, run_id: str, slot: Any = None) -> None:
    if not run_id.startswith(ADHOC_PREFIX):
        (slot or st).caption(md("Review progress of this run: **{}**", review_progress(store, run_id).text))


def _draw_form(view: SupportView, base: Labels | None, note: str, keys: str,
               scored: dict[str, float] | None = None) -> tuple[bool, ReviewDraft]:
    item = view.item
    text = item.sentence_text()
    doc_keys = item.document_keys
    draft = draft_from_labels(item, base, note)
    scored = dict(scored or {})

    def label(k: str) -> str:  # short: a chip shows the key and the sentence's start, so several fit a line
        return f"{k} · {_short(text.get(k, ''), 20)}"

    with st.form(key=f"{keys}.form", border=True):  # chips wrap: every chosen sentence shows
        relevant = st.multiselect("Relevant document sentences", doc_keys, default=draft.relevant,
                                  format_func=label, key=f"{keys}.relevant", wrap=True)
        utilized = st.multiselect("Utilized document sentences", doc_keys, default=draft.utilized,
                                  format_func=label, key=f"{keys}.utilized", wrap=True)
        support: dict[str, str] = {}
        supporting: dict[str, list[str]] = {}
        for key in item.response_keys:
            st.markdown(md("**{}** · {}", key, _short(text.get(key, ""), 200)))
            c1, c2 = st.columns([1, 2])
            support[key] = c1.radio(md("Support of {}", key), SUPPORT_CHOICES,
                                    index=SUPPORT_CHOICES.index(draft.support.get(key, "supported")),
                                    format_func=CHOICE_LABELS.__getitem__, horizontal=True,
                                    key=f"{keys}.support.{key}", label_visibility="collapsed")
            supporting[key] = c2.multiselect(md("Supporting sentences of {}", key), doc_keys,
                                             default=draft.supporting.get(key, []), format_func=label,
                                             key=f"{keys}.supporting.{key}", placeholder="supporting sentences",
                                             wrap=True)  # in a column the chips would scroll out of sight
        scores = _draw_metric_scores(view, scored, keys)
        note_text = st.text_area("Note", value=draft.note, key=f"{keys}.note", height=68)
        saved = st.form_submit_button("Save review", type="primary", key=f"{keys}.save", shortcut="Alt+S")
    return saved, ReviewDraft(relevant, utilized, support, supporting, note_text, scores)


def _draw_metric_scores(view: SupportView, scored: dict[str, float], keys: str) -> dict[str, float]:
    """A score field per per-item metric the row was measured on (a rubric: its criteria as
    the field's help), empty until the reviewer scores it; the run's value is not shown, so
    it does not anchor the reviewer."""
    measured = view.extra.get("metrics") or {}
    metrics = [m for m in reviewable_metrics() if m.name in scored or m.name in measured
               or f"{m.name}.mean" in measured]
    if not metrics:
        return {}
    st.markdown("**Your scores** (leave empty to skip)")
    out: dict[str, float] = {}
    for m in metrics:
        low, high = m.range
        value = st.number_input(md("{} ({})", m.label, f"{low:g} to {high:g}" if low is not None and high is not None
                                   else m.direction), min_value=low, max_value=high, value=scored.get(m.name),
                                step=1.0 if low is not None and float(low).is_integer() else 0.05,
                                help=m.help or None, key=f"{keys}.metric.{m.name}")
        if value is not None:
            out[m.name] = float(value)
    return out


def pending(queued: list[str], reviewed: set[str]) -> list[str]:
    """The queued row ids not reviewed yet, in queue order (what *Start reviewing* opens first)."""
    return [i for i in queued if str(i) not in reviewed]


def _draw_queue_nav(store: Any, run_id: str, item_id: str) -> None:
    queue = st.session_state.get(STATE_REVIEW_QUEUE)
    if not queue or queue.get("run_id") != run_id or item_id not in queue.get("ids", []):
        return
    ids = queue["ids"]
    pos = ids.index(item_id)
    st.caption(md("Review queue ({}): row {} of {}", queue.get("strategy", ""), pos + 1, len(ids)))
    if pos + 1 < len(ids) and st.button("Next in queue", key=f"{PREFIX}.next", shortcut="Alt+N"):
        record = next((r for r in store.items(run_id) if str(r["id"]) == ids[pos + 1]), None)
        if record is not None:
            view = view_from_record(record, queue.get("run_name", run_id))
            view.extra["run_id"] = run_id
            state.open_support_map(view)


def draw_review(view: SupportView, store: Any) -> None:
    """The review form of ``view``'s row, its saved human scores, and the run's progress."""
    run_id = review_target(view)
    item_id = view.item.id
    st.subheader("Review this row")
    reviewer = st.text_input("Reviewer", value=st.session_state.get(STATE_REVIEWER, "") or "", key=K_REVIEWER,
                             placeholder="your name (stored with your labels)").strip()
    st.session_state[STATE_REVIEWER] = reviewer
    progress = st.empty()  # filled last, so a save in this run is counted
    draw_progress(store, run_id, progress)
    if not view.item.response_sentences or not view.item.document_keys:
        st.info("This row has no document or response sentences to review.")
        return
    if not reviewer:
        st.info("Enter your name to review this row; each reviewer's labels are kept apart.")
        return
    saved = latest_review(store, run_id, item_id, reviewer)
    base = Labels.from_dict(saved["labels"]) if saved else view.labels
    version = int(st.session_state.get(_version_key(run_id, item_id), 0))
    keys = f"{PREFIX}.{run_id}.{item_id}.{reviewer}.{version}"
    st.caption(("Editing your saved labels" if saved else md("Starting from the labels of {}", view.judge or "no judge"))
               + " · nothing is stored until Save review (Alt+S); Reset undoes unsaved edits (Alt+Z).")
    submitted, draft = _draw_form(view, base, saved.get("note", "") if saved else "", keys,
                                  saved.get("metrics") if saved else None)
    if submitted:
        try:  # a key the row lacks, a score outside its metric's range: nothing is stored
            labels = labels_from_review(view.item, draft)
            saved = save_review(store, run_id, view.item, labels, reviewer, note=draft.note, judge=view.judge,
                                source=view.title, metrics=draft.metrics)
        except ValueError as err:
            st.error(md("{}", err))
        else:
            st.success(md("Saved {}'s labels at {} (the judge's labels are unchanged).", reviewer, saved["created_at"]))
    if st.button("Reset to last saved", key=f"{PREFIX}.reset", shortcut="Alt+Z"):
        st.session_state[_version_key(run_id, item_id)] = version + 1
        st.rerun()
    draw_progress(store, run_id, progress)
    if saved:
        st.markdown(md("**Human scores** ({}, saved {})", saved["reviewer"], saved["created_at"]))
        panels.draw_scores(scores_from_record(saved), f"human:{saved['reviewer']}", "reviewed")
    _draw_queue_nav(store, run_id, item_id)


# Fewer reviewed rows than this give no meaningful agreement figure: the tables say so
# instead of printing a number (an AUROC of 1.0 or an RMSE of 0 on two rows measures nothing).
MIN_ROWS = 5
TOO_FEW = "too few rows"

AGREEMENT_GLOSSARY = {
    "RMSE": "Root mean squared error of the judge's metric against the metric recomputed from the human labels, "
            "over the reviewed rows; 0 is perfect, lower is better.",
    "95% CI": "Percentile-bootstrap interval of the figure; wide when few rows were reviewed.",
    "AUROC": "Hallucination detection: how well the judge's (1 − adherence score) ranks the rows the humans marked "
             "as hallucinated above the grounded ones; 0.5 is chance, 1 is perfect. Undefined when the reviewed rows "
             "are all grounded or all hallucinated.",
    "kappa": "Cohen's kappa of the adherent / not adherent verdicts: agreement beyond chance (1 perfect, 0 chance).",
    "precision / recall / F1": "Sentence keys the judge chose (relevant, utilized, supporting…) against the keys "
                               "the humans chose: precision = share of the judge's keys the humans also chose, "
                               "recall = share of the humans' keys the judge found, F1 their harmonic mean.",
    "rows": "Reviewed rows this judge also labelled (failed judge rows are not counted). With fewer than "
            f"{MIN_ROWS}, no figure is shown.",
}


def _figure(value: float | None, n_rows: int, reason: str | None = None) -> str:
    """A figure as shown: a number, ``too few rows (n=2)``, or why it is undefined."""
    if n_rows < MIN_ROWS:
        return f"{TOO_FEW} (n={n_rows})"
    if value is None:
        return f"not defined ({reason})" if reason else "not defined"
    return format_number(float(value))


def _interval(e: Any, n_rows: int) -> str:
    if n_rows < MIN_ROWS:
        return ""
    return (f"{format_number(e.ci_low)} – {format_number(e.ci_high)}" if e.ci_low is not None and e.ci_high is not None
            else (e.reason or ""))


def agreement_tables(result: Any) -> dict[str, Any]:
    """The figures of ``labels.store.RunAgreement`` grouped into three long tables a reader
    can scan (drawing only): TRACe scores (RMSE per metric), hallucination and adherence
    (AUROC, kappa), and sentence keys (precision / recall / F1 per kind). A judge with
    fewer than :data:`MIN_ROWS` rows shows ``too few rows`` instead of a figure."""
    import pandas as pd

    from rag_eval.ui.help import metric_label

    scores, verdicts, keys = [], [], []
    for j in result.judges:
        n = j.n_rows
        for metric, e in j.trace.rmse.items():
            scores.append({"judge": j.judge, "metric": metric_label(metric), "RMSE": _figure(e.value, n, e.reason),
                           "95% CI": _interval(e, n), "rows": n})
        auroc = j.trace.hallucination_auroc
        verdicts.append({"judge": j.judge, "hallucination AUROC": _figure(auroc.value, n, auroc.reason),
                         "95% CI": _interval(auroc, n),
                         "kappa (adherence)": _figure(j.kappa, n, getattr(j, "kappa_reason", None)), "rows": n})
        for kind, prf in j.sentences.items():
            keys.append({"judge": j.judge, "sentence keys": kind.replace("_", " "),
                         "precision": _figure(prf.precision, n), "recall": _figure(prf.recall, n),
                         "F1": _figure(prf.f1, n), "rows": n})
    return {"TRACe scores (RMSE against the human labels)": pd.DataFrame(scores),
            "Hallucination and adherence": pd.DataFrame(verdicts),
            "Sentence keys": pd.DataFrame(keys)}


def language_table(result: Any) -> Any:
    """Each judge's agreement per language of the reviewed rows (``JudgeAgreement.by_language``,
    the breakdown ``rag-eval agreement`` prints), one row per judge and language: its rows, the
    RMSE of each TRACe metric and the hallucination AUROC, each with its 95% interval; None
    when no judge's rows span more than one language (drawing only)."""
    import pandas as pd

    from rag_eval.ui.help import metric_label

    def cell(e: Any, n: int) -> str:
        interval = _interval(e, n) if e.value is not None else ""
        return _figure(e.value, n, e.reason) + (f" [{interval}]" if interval else "")

    rows = []
    for j in result.judges:
        for language, report in (getattr(j, "by_language", None) or {}).items():
            n = report.coverage.rows_given
            rows.append({"judge": j.judge, "language": language, "rows": n,
                         **{f"RMSE {metric_label(m)}": cell(e, n) for m, e in report.rmse.items()},
                         "hallucination AUROC": cell(report.hallucination_auroc, n)})
    return pd.DataFrame(rows) if rows else None


def metric_table(result: Any) -> Any:
    """Each per-item metric the reviewers scored (a rubric) against the run's values of it
    (drawing only; the figures come from ``labels.agreement.metric_vs_human``)."""
    import pandas as pd

    from rag_eval.ui.help import metric_label

    return pd.DataFrame([{"metric": metric_label(m.metric), "mean abs error": _figure(m.mae, m.n_rows),
                          "RMSE": _figure(m.rmse, m.n_rows),
                          "Spearman": _figure(m.spearman, m.n_rows, m.spearman_reason), "rows": m.n_rows}
                         for m in result.metrics])


def pairs_table(result: Any) -> Any:
    import pandas as pd

    return pd.DataFrame([{"a": p.a, "b": p.b, "rows": p.n_rows, "kappa (adherence)": p.kappa,
                          "relevant-key F1": p.relevant_f1,
                          **{f"RMSE {m}": v for m, v in p.rmse.items()}} for p in result.pairs])


def calibration_table(cal: dict[str, Any]) -> Any:
    """Per metric: cross-validated error before / after with intervals and the decision
    (labels.calibrate.calibration_report, which says "unmeasured" where rows are too few)."""
    import pandas as pd

    from rag_eval.labels.calibrate import calibration_report

    return pd.DataFrame(calibration_report(cal))
