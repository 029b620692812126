"""Applying a stored calibration to the local judge (fitting is in ``rag_eval.labels.calibrate``).

A calibration moves the intercepts of the local judge's row-level heads (relevance
rate, utilization rate, completeness, adherence), sets its support threshold and, when
cross-validation says it helps, adapts the sentence-level support, relevance and
utilization heads' coefficients to the domain's sentence labels (``<head>_coef_delta``,
``<head>_intercept_delta`` for the heads in :data:`ADAPTED_HEADS`). It is stored
as JSON under ``$RAG_EVAL_HOME/calibrations/<name>.json`` with its provenance, and a
judge using it is named ``local:<version>+<name>`` so every run records it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from rag_eval.config import data_dir

CALIBRATIONS_DIR = "calibrations"
#: Head name -> the fitted value that shifts its intercept.
INTERCEPT_SHIFTS = {
    "relevance_rate": "relevance_rate_shift",
    "utilization_rate": "utilization_rate_shift",
    "completeness": "completeness_shift",
    "adherence": "adherence_logit_shift",
}
#: Sentence-level heads a calibration may adapt: ``<head>_coef_delta`` (in the head's
#: standardised feature space) and ``<head>_intercept_delta`` are added to them.
ADAPTED_HEADS = ("support", "relevance", "utilization")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def calibrations_dir() -> Path:
    return data_dir() / CALIBRATIONS_DIR


def check_name(name: str) -> str:
    if not NAME_PATTERN.match(name or ""):
        raise ValueError(f"calibration name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    return name


def calibration_path(name: str) -> Path:
    return calibrations_dir() / f"{check_name(name)}.json"


def load_calibration(name: str) -> dict[str, Any]:
    """The stored calibration ``name`` (raises ``FileNotFoundError`` naming the folder)."""
    path = calibration_path(name)
    if not path.exists():
        known = sorted(p.stem for p in calibrations_dir().glob("*.json")) if calibrations_dir().exists() else []
        raise FileNotFoundError(f"no calibration '{name}' in {calibrations_dir()}"
                                + (f" (have: {', '.join(known)})" if known else ""))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return data


def apply_calibration(model: Any, fitted: dict[str, float]) -> Any:
    """``model`` (a :class:`~rag_eval.judges.local.LocalModel`) with the fitted intercept
    shifts, support threshold and adapted sentence heads; raises ``ValueError`` on a
    missing value or an adapted head whose coefficients do not match the model's."""
    changes: dict[str, Any] = {}
    for head, key in INTERCEPT_SHIFTS.items():
        if key not in fitted:
            raise ValueError(f"calibration lacks '{key}'")
        h = getattr(model, head)
        changes[head] = dataclasses.replace(h, intercept=h.intercept + float(fitted[key]))
    if "support_threshold" not in fitted:
        raise ValueError("calibration lacks 'support_threshold'")
    changes["support_threshold"] = float(fitted["support_threshold"])
    for head_name in ADAPTED_HEADS:  # sentence heads adapted to the domain's sentence labels
        if fitted.get(f"{head_name}_coef_delta") is None:
            continue
        import numpy as np

        head = getattr(model, head_name)
        delta = np.asarray(fitted[f"{head_name}_coef_delta"], dtype=np.float64)
        if delta.shape != head.coef.shape:
            raise ValueError(f"calibration's {head_name} head change has {delta.size} coefficients, "
                             f"the model {head.coef.size}")
        changes[head_name] = dataclasses.replace(
            head, coef=head.coef + delta, intercept=head.intercept + float(fitted[f"{head_name}_intercept_delta"]))
    return dataclasses.replace(model, **changes)
