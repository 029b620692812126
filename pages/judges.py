"""Judges: how far each judge agrees with the human labels of a run's reviewed rows.

Pick a run; queue its rows for review (random, lowest judge confidence, two judges'
largest disagreement, flagged as hallucinated) and review them in the support map;
see every judge's agreement with those labels (RMSE per TRACe metric with bootstrap
intervals, hallucination AUROC, sentence-key precision / recall / F1, Cohen's kappa),
each per-item metric the reviewers scored (a rubric) against the run's values of it,
and judge against judge; calibrate the local judge on the reviewed rows and rerun
them with it. Every figure comes from ``rag_eval.labels``.
"""

from __future__ import annotations

import streamlit as st

from rag_eval.display.views import view_from_record
from rag_eval.judges.factory import build_judge
from rag_eval.labels.agreement import REFERENCE_NOTE
from rag_eval.labels.calibrate import MIN_ROWS, TooFewRows, calibrate_run, calibration_summary
from rag_eval.labels.queue import STRATEGIES, build_queue
from rag_eval.labels.rerun import rejudge_run
from rag_eval.labels.store import agreement_for_run, review_progress
from rag_eval.ui import components, data, review, state
from rag_eval.ui.constants import STATE_REVIEW_QUEUE
from rag_eval.ui.markdown import md, paths_shown

PAGE = "judges"
K_RUN = f"{PAGE}.run"
K_STRATEGY, K_N, K_SEED, K_OTHER = f"{PAGE}.strategy", f"{PAGE}.n", f"{PAGE}.seed", f"{PAGE}.other"
K_CAL_NAME, K_CAL_SEED, K_CAL_RESULT = f"{PAGE}.cal_name", f"{PAGE}.cal_seed", f"{PAGE}.cal_result"
K_RERUN = f"{PAGE}.rerun_result"
STRATEGY_LABELS = {"random": "random (seeded)", "confidence": "lowest judge confidence",
                   "disagreement": "largest disagreement between two judges", "hallucinated": "flagged as hallucinated"}


def init_page_state() -> None:
    state.init_defaults({K_N: 20, K_SEED: 0, K_CAL_SEED: 0})


def render_run_picker(runs: list[dict]) -> dict:
    by_id = {r["id"]: r for r in runs}
    run_id = st.selectbox("Run", list(by_id), key=K_RUN,
                          format_func=lambda i: f"{by_id[i]['name']} · {i} · {by_id[i]['n_done']} rows")
    run = by_id[run_id]
    st.caption(md("{}", review_progress(data.run_store(), run["id"]).text))
    return run


def render_queue(run: dict, runs: list[dict]) -> None:
    st.subheader("Review queue")
    store = data.run_store()
    cols = st.columns([3, 1, 1])
    strategy = cols[0].selectbox("Queue rows by", STRATEGIES, format_func=STRATEGY_LABELS.__getitem__, key=K_STRATEGY)
    n = cols[1].number_input("Rows", min_value=1, max_value=500, key=K_N)
    seed = cols[2].number_input("Seed", min_value=0, key=K_SEED)
    other = None
    if strategy == "disagreement":
        others = [r for r in runs if r["id"] != run["id"]]
        if not others:
            st.info("Disagreement needs a second run of the same rows by another judge.")
            return
        pick = st.selectbox("Second judge's run", range(len(others)), key=K_OTHER,
                            format_func=lambda i: f"{others[i]['name']} · {others[i]['id']}")
        other = store.items(others[pick]["id"])
    if st.button("Build queue", key=f"{PAGE}.build"):
        done = {s["item_id"] for s in store.human_labels(run["id"])}
        ids = build_queue(strategy, store.items(run["id"]), n=int(n), seed=int(seed), exclude=done, other=other)
        st.session_state[STATE_REVIEW_QUEUE] = {"run_id": run["id"], "run_name": run["name"], "ids": ids, "strategy": strategy}
    queue = st.session_state.get(STATE_REVIEW_QUEUE)
    if queue and queue["run_id"] == run["id"]:
        reviewed = {str(s["item_id"]) for s in store.human_labels(run["id"])}
        left = review.pending(queue["ids"], reviewed)
        st.caption(md("{} of {} queued row(s) left to review ({}): ", len(left), len(queue["ids"]),
                      STRATEGY_LABELS[queue["strategy"]]) + md("{}", ", ".join(left[:20]))
                   + (" …" if len(left) > 20 else "") + ("" if left else "all reviewed."))
        if left and st.button("Start reviewing" if len(left) == len(queue["ids"]) else "Continue reviewing",
                              key=f"{PAGE}.start", type="primary"):
            record = next(r for r in store.items(run["id"]) if str(r["id"]) == left[0])
            view = view_from_record(record, run["name"])
            view.extra["run_id"] = run["id"]
            state.open_support_map(view)


def render_agreement(run: dict) -> None:
    st.subheader("Judge against human labels")
    result = agreement_for_run(data.run_store(), run["id"])
    if not result.n_reviewed:
        st.info("No reviewed rows yet: build a queue and review rows in the support map.")
        return
    if result.metrics:  # reviewers scored per-item metrics (a rubric): can its scores be trusted?
        st.markdown("**Per-item metrics against the reviewers' scores** (this run's values, rows both scored)")
        components.draw_table(review.metric_table(result), key=f"{PAGE}.metrics")
    if not result.judges:
        st.info("No judge labelled the reviewed rows.")
        return
    st.caption(f"{result.n_reviewed} reviewed row(s); truth = each row's latest human label set; "
               "95% bootstrap intervals; failed judge rows are not counted.")
    if result.reference:
        st.caption(REFERENCE_NOTE)
    if result.n_reviewed < review.MIN_ROWS:
        st.warning(f"Only {result.n_reviewed} reviewed row(s): fewer than {review.MIN_ROWS} give no meaningful "
                   "agreement figure, so none is shown. Review more rows.")
    for i, (title, table) in enumerate(review.agreement_tables(result).items()):
        st.markdown(f"**{title}**")
        components.draw_table(table, key=f"{PAGE}.judges.{i}")
    by_language = review.language_table(result)
    if by_language is not None:  # a judge measured in one language may not hold in another
        st.markdown("**By language** (each language's reviewed rows; as `rag-eval agreement` breaks them down)")
        components.draw_table(by_language, key=f"{PAGE}.by_language")
    with st.expander("What each column means"):
        st.markdown("\n".join(f"- **{name}**: {text}" for name, text in review.AGREEMENT_GLOSSARY.items()))
    if result.pairs:
        st.markdown("**Judge against judge, reviewer against reviewer** (rows both labelled)")
        components.draw_table(review.pairs_table(result), key=f"{PAGE}.pairs")


def render_calibration(run: dict) -> None:
    st.subheader("Calibrate local judge")
    st.caption(f"Moves the local judge's rate intercepts and threshold toward this run's reviewed rows, per metric "
               f"only as far as cross-validation over the rows says it helps (each metric stays at the base judge "
               f"otherwise), and stores it under a name. Needs at least {MIN_ROWS} reviewed rows.")
    cols = st.columns([3, 1])
    name = cols[0].text_input("Calibration name", key=K_CAL_NAME, placeholder="e.g. my-domain")
    seed = cols[1].number_input("Fold seed", min_value=0, key=K_CAL_SEED)
    if st.button("Calibrate local judge", key=f"{PAGE}.calibrate", disabled=not name):
        try:
            with st.spinner("Featurising the reviewed rows and cross-validating…"):
                cal, where, errors = calibrate_run(data.run_store(), run["id"], name.strip(), seed=int(seed),
                                                   overwrite=True)
        except TooFewRows as err:
            st.session_state[K_CAL_RESULT] = {"refused": str(err), "run_id": run["id"]}
        else:
            place = str(where) if paths_shown() else "on the server"  # a deployed dashboard shows no server path
            st.session_state[K_CAL_RESULT] = {"cal": cal, "where": place, "errors": errors, "run_id": run["id"]}
    result = st.session_state.get(K_CAL_RESULT)
    if not result or result["run_id"] != run["id"]:
        return
    if "refused" in result:
        st.warning(f"{result['refused']}. Nothing was stored.")
        return
    cal = result["cal"]
    st.success(md("Stored calibration **{}** ({}): {}.", cal["name"], result["where"], calibration_summary(cal)))
    components.draw_table(review.calibration_table(cal), key=f"{PAGE}.cal_table")
    for line in result["errors"][:10]:
        st.warning(md("skipped {}", line))
    if st.button(md("Rerun the reviewed rows with local:{}", cal["name"]), key=f"{PAGE}.rerun"):
        reviewed = {s["item_id"] for s in data.run_store().human_labels(run["id"])}
        with st.spinner("Judging…"):
            new_id = rejudge_run(data.run_store(), run["id"], build_judge(f"local:{cal['name']}"), only=reviewed)
        data.refresh()
        st.session_state[K_RERUN] = new_id
        st.rerun()  # the agreement table above now includes the calibrated judge
    if st.session_state.get(K_RERUN):
        st.info(md("Run {} holds the calibrated judge's labels; its agreement is in the tables above.", st.session_state.get(K_RERUN)))


def main() -> None:
    init_page_state()
    st.title("Judges")
    runs = [r for r in data.list_runs() if r.get("n_done")]
    if not runs:
        st.info("No runs yet: run a batch evaluation first, then review its rows here.")
        return
    run = render_run_picker(runs)
    render_queue(run, runs)
    render_agreement(run)
    render_calibration(run)


state.guarded(main)
