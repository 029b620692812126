"""Applying a stored calibration to the local judge (fitting is in ``rag_eval.labels.calibrate``).

A calibration moves the intercepts of the local judge's row-level heads (relevance
rate, utilization rate, completeness, adherence), sets its support threshold and, when
cross-validation says it helps, adapts the sentence-level support head's coefficients
to the domain's sentence labels (``support_coef_delta``, ``support_intercept_delta``). It is stored
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


def list_calibrations() -> list[dict[str, Any]]:
    folder = calibrations_dir()
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))] if folder.exists() else []


def apply_calibration(model: Any, fitted: dict[str, float]) -> Any:
    """``model`` (a :class:`~rag_eval.judges.local.LocalModel`) with the fitted intercept
    shifts and support threshold; raises ``ValueError`` on a missing value."""
    changes: dict[str, Any] = {}
    for head, key in INTERCEPT_SHIFTS.items():
        if key not in fitted:
            raise ValueError(f"calibration lacks '{key}'")
        h = getattr(model, head)
        changes[head] = dataclasses.replace(h, intercept=h.intercept + float(fitted[key]))
    if "support_threshold" not in fitted:
        raise ValueError("calibration lacks 'support_threshold'")
    changes["support_threshold"] = float(fitted["support_threshold"])
    if fitted.get("support_coef_delta") is not None:  # the support head adapted to the domain's sentence labels
        import numpy as np

        head = model.support
        delta = np.asarray(fitted["support_coef_delta"], dtype=np.float64)
        if delta.shape != head.coef.shape:
            raise ValueError(f"calibration's support head change has {delta.size} coefficients, the model {head.coef.size}")
        changes["support"] = dataclasses.replace(head, coef=head.coef + delta,
                                                 intercept=head.intercept + float(fitted["support_intercept_delta"]))
    return dataclasses.replace(model, **changes)
