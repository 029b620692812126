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

from collections.abc import Iterable
from typing import Any

from rag_eval.judges.local_error import METRICS, SOURCE_CALIBRATION, SOURCE_HELD_OUT, SOURCE_UNKNOWN


def expected_judge_error(judge: Any, calibration: str | None = None, label: str | None = None) -> dict[str, Any]:
    """The expected error of ``judge`` (a judge object with a ``name``, or a recorded judge
    name with its ``calibration``) as a JSON-able dict: ``judge``, ``source`` (calibration /
    leave_one_domain_out / unknown), ``basis`` (in words), ``metrics`` (run metric name ->
    ``rmse``, ``interval`` or ``range``). Its kind says it
    (:attr:`rag_eval.judges.kinds.JudgeKind.expected_error`); a kind that declares none:
    unknown (named ``label``)."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    name = str(getattr(judge, "name", judge))
    declared = JUDGE_KINDS.find(name)
    found = declared.expected_error(judge, calibration) if declared is not None and declared.expected_error else None
    return found or {"judge": label or name, "source": SOURCE_UNKNOWN, "metrics": {},
                     "basis": ("unknown: no measurement says how far this judge's labels are from a human's here; "
                               "review rows on the Judges page to measure it")}


def for_run(run: dict[str, Any]) -> dict[str, Any]:
    """A stored run's expected judge error: the one its summary carries, else derived
    from its configuration's judge (``judge.kind`` / ``judge.calibration``)."""
    stored = (run.get("summary") or {}).get("expected_judge_error")
    if stored:
        return dict(stored)
    judge = (run.get("config") or {}).get("judge")
    judge = judge if isinstance(judge, dict) else {}
    kind = judge.get("kind")
    return expected_judge_error(str(kind or ""), judge.get("calibration"), label=f"{kind or 'unknown'} judge")


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
    return f"expected judge error ± {err:.2f} per row {where}{_spread(expected, metric)}".replace("  ", " ")


def _spread(expected: dict[str, Any], metric: str) -> str:
    """``, 95% CI 0.12-0.20`` or ``, 0.12-0.25 across domains``: what the basis promises beside
    the error (CLI and pages alike), or nothing."""
    entry = (expected.get("metrics") or {}).get(metric) or {}
    if entry.get("interval"):
        return f", 95% CI {entry['interval'][0]:.2f}-{entry['interval'][1]:.2f}"
    if entry.get("range"):
        return f", {entry['range'][0]:.2f}-{entry['range'][1]:.2f} across domains"
    return ""


def language_note(expected: dict[str, Any], languages: Iterable[str]) -> str | None:
    """Which of ``languages`` (ISO 639-1, e.g. a run's) the expected error was not
    measured in, in words; None when it was measured in all of them or is unknown anyway.
    A figure carries the languages it was measured in (``languages``); one that names none
    (a calibration on the user's rows) was measured on those rows, whatever their language."""
    measured = expected.get("languages")
    if not measured:
        return None
    missing = sorted({code for code in languages if code} - set(measured))
    if not missing:
        return None
    return f"expected judge error not measured in {', '.join(missing)} (measured in {', '.join(measured)})"


def summary_lines(expected: dict[str, Any], means: dict[str, float | None] | None = None,
                  languages: Iterable[str] = ()) -> list[str]:
    """Text lines for the CLI: each metric's mean beside its expected judge error, the basis,
    and which of the rows' ``languages`` it was not measured in."""
    lines = []
    for metric in METRICS:
        mean = (means or {}).get(metric)
        head = f"{metric} {mean:.2f}, " if isinstance(mean, int | float) else f"{metric}: "
        lines.append(head + describe(expected, metric))
    lines.append(f"judge error basis: {expected.get('basis', 'unknown')}")
    note = language_note(expected, languages)
    if note:
        lines.append(note)
    return lines


def run_caption(run: dict[str, Any]) -> str:
    """One line for a page: the run's name, its means beside its judge's expected error, and
    the basis."""
    expected = for_run(run)
    metrics = (run.get("summary") or {}).get("trace") or {}  # a stored summary's TRACe family
    parts = []
    for metric in METRICS:
        mean = (metrics.get(metric) or {}).get("mean")
        err = metric_error(expected, metric)
        if mean is None:
            continue
        parts.append(f"{metric.replace('_', ' ')} {mean:.2f}" + (f", expected judge error ± {err:.2f}"
                                                                 f"{_spread(expected, metric)}" if err is not None
                                                                 else ", expected judge error unknown"))
    name = run.get("name") or run.get("id") or "run"
    basis = expected.get("basis", "unknown")
    return (f"{name}: " + "; ".join(parts) + f" (per row; {basis})") if parts else f"{name}: expected judge error: {basis}"
