"""How far a judge's scores may be from the truth in the domain it is used on.

Every judge run carries, per TRACe metric, the judge's *expected error*: the per-row
RMSE between the judge's score and the label's score that the judge showed where it
was measured. Where the figure comes from is part of the figure:

- a calibrated local judge (``local:<version>+NAME``): the calibration's
  cross-validated error on the user's own labelled rows (after calibration), with its
  bootstrap interval: *this* domain;
- the shipped local judge: its leave-one-domain-out figures on RAGBench (trained on six
  domains, tested on the seventh; stored in the model's ``model.json`` by
  ``scripts/train_local_judge.py --evaluate``): the mean over seven domains and the
  worst one, i.e. what to expect on *a* domain it was not trained on, not a measurement
  of this one;
- an LLM judge: unknown. Nothing measured says how far its labels are from a human's
  here; a review (Judges page) measures it.

Pure functions over plain dicts, so the run store (as JSON in a run's summary), the CLI,
the pages and the report all show the same thing.
"""

from __future__ import annotations

import math
from typing import Any

from rag_eval.judges.local_error import (  # noqa: F401 - the figures' names, used by callers
    METRICS,
    SOURCE_CALIBRATION,
    SOURCE_HELD_OUT,
    SOURCE_UNKNOWN,
    for_local_model,
)


def expected_judge_error(judge: Any) -> dict[str, Any]:
    """The expected error of ``judge`` (any judge object with a ``name``) as a JSON-able
    dict: ``judge``, ``source`` (calibration / leave_one_domain_out / unknown),
    ``basis`` (in words), ``metrics`` (run metric name -> ``rmse``, ``interval`` or
    ``range``). Its kind says it (:attr:`rag_eval.judges.kinds.JudgeKind.expected_error`);
    a kind that declares none: unknown."""
    return _of_kind(judge)


def _of_kind(judge: Any, calibration: str | None = None, label: str | None = None) -> dict[str, Any]:
    """What the kind of ``judge`` (an object, or a recorded judge name) declares; unknown
    (named ``label``) when it declares nothing."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    name = str(getattr(judge, "name", judge))
    declared = JUDGE_KINDS.find(name)
    found = declared.expected_error(judge, calibration) if declared is not None and declared.expected_error else None
    return found or {"judge": label or name, "source": SOURCE_UNKNOWN, "metrics": {},
                     "basis": ("unknown: no measurement says how far this judge's labels are from a human's here; "
                               "review rows on the Judges page to measure it")}


def for_judge_name(name: str | None, calibration: str | None = None) -> dict[str, Any]:
    """From a stored run's judge name / configuration alone (runs stored before runs
    carried their expected error): what the judge's kind says, else unknown."""
    return _of_kind(name or "unknown judge", calibration)


def for_run(run: dict[str, Any]) -> dict[str, Any]:
    """A stored run's expected judge error: the one its summary carries, else derived
    from its configuration's judge (``judge.kind`` / ``judge.calibration``)."""
    stored = (run.get("summary") or {}).get("expected_judge_error")
    if stored:
        return dict(stored)
    judge = (run.get("config") or {}).get("judge") or {}
    kind = judge.get("kind") if isinstance(judge, dict) else None
    calibration = judge.get("calibration") if isinstance(judge, dict) else None
    return _of_kind(str(kind or ""), calibration, label=f"{kind or 'unknown'} judge")


def metric_error(expected: dict[str, Any], metric: str) -> float | None:
    """The expected per-row error of ``metric`` (run metric name), or None when unknown."""
    entry = (expected.get("metrics") or {}).get(metric)
    return float(entry["rmse"]) if entry and entry.get("rmse") is not None else None


def describe(expected: dict[str, Any], metric: str) -> str:
    """``expected judge error ± 0.17 here (…)`` for one metric, or why it is unknown."""
    err = metric_error(expected, metric)
    if err is None:
        return "expected judge error unknown"
    where = {SOURCE_CALIBRATION: "here (calibrated on this domain)",
             SOURCE_HELD_OUT: "on a new domain (RAGBench, leave one domain out)"}.get(expected.get("source", ""), "")
    entry = expected["metrics"][metric]
    extra = ""
    if entry.get("interval"):
        extra = f", 95% CI {entry['interval'][0]:.2f}-{entry['interval'][1]:.2f}"
    elif entry.get("range"):
        extra = f", {entry['range'][0]:.2f}-{entry['range'][1]:.2f} across domains"
    return f"expected judge error ± {err:.2f} per row {where}{extra}".replace("  ", " ")


def summary_lines(expected: dict[str, Any], means: dict[str, float | None] | None = None) -> list[str]:
    """Text lines for the CLI: each metric's mean beside its expected judge error, and the basis."""
    lines = []
    for metric in METRICS:
        mean = (means or {}).get(metric)
        head = f"{metric} {mean:.2f}, " if isinstance(mean, int | float) else f"{metric}: "
        lines.append(head + describe(expected, metric))
    lines.append(f"judge error basis: {expected.get('basis', 'unknown')}")
    return lines


#: The two-sided 95% normal quantile.
Z95 = 1.959963984540054


def same_judge(expected_a: dict[str, Any], expected_b: dict[str, Any]) -> bool:
    """Whether two runs were scored by one judge (same name, calibration included), so a
    bias the judge has in common cancels in their paired difference."""
    name_a, name_b = expected_a.get("judge"), expected_b.get("judge")
    return bool(name_a) and name_a == name_b and expected_a.get("source") == expected_b.get("source")


def difference_band(metric: str, n_pairs: int, n_changed: int, expected_a: dict[str, Any],
                    expected_b: dict[str, Any]) -> float | None:
    """Half-width of the 95% band that the judges' own errors put on a *paired difference of
    means* over ``n_pairs`` questions, ``n_changed`` of which scored differently; None when a
    judge's error is unknown.

    A judge's per-row error is a bias plus a random part. Scored by one judge, the bias is
    shared by both runs and cancels in the paired difference; the random parts of the
    changed pairs do not, and they average out as 1/n: band = z * sqrt(m * (e_a² + e_b²)) / n,
    with m changed pairs and the per-row errors e as the bound of each random part (a per-row
    RMSE is at least the residuals' spread, so the band errs on the wide side). A pair whose
    score did not change carries no judge disagreement, and identical runs get a band of 0.
    Scored by two judges, their biases need not cancel: the per-row errors bound them,
    sqrt(e_a² + e_b²), added to the random part."""
    err_a, err_b = metric_error(expected_a, metric), metric_error(expected_b, metric)
    if err_a is None or err_b is None or n_pairs <= 0:
        return None
    random_part = Z95 * math.sqrt(max(0, n_changed) * (err_a ** 2 + err_b ** 2)) / n_pairs
    if same_judge(expected_a, expected_b):
        return random_part
    return random_part + math.sqrt(err_a ** 2 + err_b ** 2)


def difference_note(metric: str, difference: float | None, n_pairs: int, n_changed: int,
                    expected_a: dict[str, Any], expected_b: dict[str, Any]) -> str | None:
    """A sentence when a paired difference of means (``run - baseline``) lies inside the band
    of :func:`difference_band`, so it may be the judges' rather than the systems'. None when
    it lies outside, when nothing changed, or when a judge's error is unknown."""
    if difference is None or n_changed <= 0:
        return None
    band = difference_band(metric, n_pairs, n_changed, expected_a, expected_b)
    if band is None or band <= 0 or abs(difference) > band:
        return None
    how = ("one judge: its shared bias cancels, the random part of the changed pairs does not"
           if same_judge(expected_a, expected_b) else "two judges: their biases need not cancel")
    return (f"{metric.replace('_', ' ')}: the difference {difference:+.3f} lies within the judge error of a paired "
            f"difference (± {band:.3f}, 95%; {n_changed} of {n_pairs} questions changed; {how}): it may come "
            "from the judge rather than the systems; confirm on reviewed rows")


def run_caption(run: dict[str, Any]) -> str:
    """One line for a page: the run's name, its means beside its judge's expected error, and
    the basis."""
    expected = for_run(run)
    metrics = (run.get("summary") or {}).get("metrics") or {}
    parts = []
    for metric in METRICS:
        mean = (metrics.get(metric) or {}).get("mean")
        err = metric_error(expected, metric)
        if mean is None:
            continue
        parts.append(f"{metric.replace('_', ' ')} {mean:.2f}" + (f", expected judge error ± {err:.2f}" if err is not None
                                                                 else ", expected judge error unknown"))
    name = run.get("name") or run.get("id") or "run"
    basis = expected.get("basis", "unknown")
    return (f"{name}: " + "; ".join(parts) + f" (per row; {basis})") if parts else f"{name}: expected judge error: {basis}"
