"""Aggregation decided once: the bootstrap interval, the mean with its coverage, and
the rules for zero rows and one row that every summary follows (run statistics,
comparisons, agreement against ground truth).

- Values that are not finite numbers (None, NaN, text) are missing: counted in the
  coverage, never averaged.
- Coverage is ``used / total``; with no rows at all it is ``None`` (nothing to cover),
  never 0.
- The interval is a percentile bootstrap with a fixed seed (the same values always
  give the same interval). It needs at least :data:`MIN_ROWS_FOR_INTERVAL` rows: with
  one row there is a value but no interval, and the reason says so.
- Above :data:`MAX_BOOTSTRAP_ROWS` values the interval of a mean is the normal one
  (mean ± z·s/√n, from the exact mean and variance): the bootstrap would hold an
  ``n_boot × n`` resample matrix (8 GB for a million rows), and at that size the two agree
  to the fourth decimal. :class:`MeanTally` takes values one at a time in memory bounded
  by that limit, and gives exactly :func:`mean_with_coverage`'s result below it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from rag_eval.metrics._common import finite, finite_number
from rag_eval.metrics.defaults import DEFAULT_N_BOOT, DEFAULT_SEED

DEFAULT_CONFIDENCE = 0.95
MIN_ROWS_FOR_INTERVAL = 2
# Fewer defined resamples than this fraction of n_boot: no interval (e.g. AUROC on
# resamples that mostly hold one class only).
MIN_VALID_RESAMPLE_FRACTION = 0.5
#: above this many values a mean's interval is the normal one (see the module docstring)
MAX_BOOTSTRAP_ROWS = 10_000
#: index cells drawn at once by :func:`bootstrap_ci` (8 MB)
BOOTSTRAP_BLOCK_CELLS = 1_000_000

Interval = tuple[float | None, float | None, str | None]  # (low, high, reason when missing)


def nan_row_mean(values: np.ndarray) -> np.ndarray:
    """The mean of each row's non-NaN values (NaN for a row without any): one resample's
    statistic when a resampled row may lack the value."""
    present = ~np.isnan(values)
    count = present.sum(axis=1)
    total = np.where(present, values, 0.0).sum(axis=1)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def coverage_fraction(used: int, total: int) -> float | None:
    """``used / total``; ``None`` when there are no rows."""
    return used / total if total else None


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail])
    return float(low), float(high)


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")


def why_no_interval(n: int, n_boot: int) -> str | None:
    """The reason ``n`` rows get no interval, or None when they can have one."""
    if n_boot <= 0:
        return "bootstrap disabled"
    if n < MIN_ROWS_FOR_INTERVAL:
        return f"too few rows for a bootstrap ({n})"
    return None


def interval_from_samples(samples: np.ndarray, n_boot: int, confidence: float) -> Interval:
    """The percentile interval of bootstrap ``samples`` (NaN where a resample was undefined)."""
    valid = samples[~np.isnan(samples)]
    if valid.size < MIN_VALID_RESAMPLE_FRACTION * n_boot:
        return None, None, f"only {valid.size} of {n_boot} resamples were defined"
    low, high = percentile_interval(valid, confidence)
    return low, high, None


def resample_indices(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray | None:
    """An (n_boot, n) matrix of row indices, or None when ``n`` rows get no interval."""
    return None if why_no_interval(n, n_boot) else rng.integers(0, n, size=(n_boot, n))


def bootstrap_ci(statistic: Callable[[np.ndarray], np.ndarray], n: int, *, n_boot: int = DEFAULT_N_BOOT,
                 confidence: float = DEFAULT_CONFIDENCE, rng: np.random.Generator | None = None) -> Interval:
    """Percentile bootstrap over ``n`` rows. ``statistic`` takes a (k, n) index matrix
    (a block of the n_boot resamples) and returns one value per resample, row by row (NaN
    where undefined). Returns
    ``(low, high, None)`` or ``(None, None, reason)``."""
    check_confidence(confidence)
    why = why_no_interval(n, n_boot)
    if why:
        return None, None, why
    rng = rng if rng is not None else np.random.default_rng(DEFAULT_SEED)
    # resamples drawn and reduced a block at a time: the same indices as one (n_boot, n) draw
    # (the generator's stream is continuous across calls), in 8 MB instead of n_boot x n x 8 bytes
    block = max(1, BOOTSTRAP_BLOCK_CELLS // n)
    samples = [np.asarray(statistic(rng.integers(0, n, size=(min(block, n_boot - start), n))), dtype=float)
               for start in range(0, n_boot, block)]
    return interval_from_samples(np.concatenate(samples), n_boot, confidence)


def mean_interval(values: Sequence[float], *, n_boot: int = DEFAULT_N_BOOT, confidence: float = DEFAULT_CONFIDENCE,
                  seed: int = DEFAULT_SEED) -> Interval:
    """The bootstrap interval of the mean of ``values`` (all finite); the normal interval
    above :data:`MAX_BOOTSTRAP_ROWS` values."""
    data = np.asarray(values, dtype=float)
    if data.size > MAX_BOOTSTRAP_ROWS and n_boot > 0:
        check_confidence(confidence)
        mean = float(data.mean())
        return normal_interval(mean, float(data.var(ddof=1)), int(data.size), confidence)
    return bootstrap_ci(lambda idx: data[idx].mean(axis=1), data.size, n_boot=n_boot, confidence=confidence,
                        rng=np.random.default_rng(seed))


class AsDict:
    """``to_dict()`` for a dataclass: its fields, nested ones as dicts (what JSON outputs store)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class MeanWithCoverage(AsDict):
    """The mean of the finite values, its interval, how many values it rests on, and
    their share of all rows."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    coverage: float | None
    reason: str | None = None  # why the mean or its interval is missing


def mean_with_coverage(values: Iterable[Any], total: int | None = None, seed: int = DEFAULT_SEED,
                       n_boot: int = DEFAULT_N_BOOT, confidence: float = DEFAULT_CONFIDENCE) -> MeanWithCoverage:
    """Mean, interval, n and coverage (n / ``total``; ``total`` defaults to the number of
    values given, missing ones included) of the finite ``values``."""
    given = list(values)
    data = finite(given)
    total = len(given) if total is None else total
    if not data:
        return MeanWithCoverage(None, None, None, 0, coverage_fraction(0, total), "no value to average")
    low, high, why = mean_interval(data, n_boot=n_boot, confidence=confidence, seed=seed)
    return MeanWithCoverage(float(np.mean(data)), low, high, len(data), coverage_fraction(len(data), total), why)


def normal_interval(mean: float, variance: float, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """The normal (central limit) interval of a mean: ``mean ± z · sqrt(variance / n)``,
    ``variance`` the sample variance (``ddof=1``)."""
    from statistics import NormalDist

    if n < MIN_ROWS_FOR_INTERVAL:
        return None, None, f"too few rows for an interval ({n})"
    half = NormalDist().inv_cdf(0.5 + confidence / 2.0) * math.sqrt(max(variance, 0.0) / n)
    return mean - half, mean + half, None


class MeanTally:
    """A mean with its coverage, taken one value at a time in bounded memory: the values
    are kept up to :data:`MAX_BOOTSTRAP_ROWS` (then :meth:`result` is exactly
    :func:`mean_with_coverage` of them), beyond that only their count, mean and sum of
    squared deviations (Welford), which give the normal interval."""

    __slots__ = ("kept", "n", "_mean", "_m2")

    def __init__(self) -> None:
        self.kept: list[float] | None = []
        self.n = 0
        self._mean = 0.0
        self._m2 = 0.0

    @property
    def mean(self) -> float | None:
        return self._mean if self.n else None

    def add(self, value: Any) -> None:
        """Count ``value`` when it is a finite number (booleans as 0/1), as :func:`finite` does."""
        x = finite_number(value)
        if x is None:
            return
        self.n += 1
        delta = x - self._mean
        self._mean += delta / self.n
        self._m2 += delta * (x - self._mean)
        if self.kept is not None:
            self.kept.append(x)
            if len(self.kept) > MAX_BOOTSTRAP_ROWS:
                self.kept = None

    def result(self, total: int, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
               confidence: float = DEFAULT_CONFIDENCE) -> MeanWithCoverage:
        """Mean, interval, n and coverage (n / ``total``)."""
        if self.kept is not None:
            return mean_with_coverage(self.kept, total, seed=seed, n_boot=n_boot, confidence=confidence)
        check_confidence(confidence)
        low, high, why = normal_interval(self._mean, self._m2 / (self.n - 1), self.n, confidence)
        return MeanWithCoverage(self._mean, low, high, self.n, coverage_fraction(self.n, total), why)


def mean_difference_interval(first: Mapping[Any, float], second: Mapping[Any, float], *, n_boot: int = DEFAULT_N_BOOT,
                             confidence: float = DEFAULT_CONFIDENCE,
                             seed: int = DEFAULT_SEED) -> tuple[float | None, float | None, float | None, str | None]:
    """``mean(second) - mean(first)`` of two samples keyed by unit (e.g. item id), with a
    bootstrap interval that resamples *units*: a unit in both samples is drawn as one, so
    the pairing is kept where it exists and the samples are independent where it does not.
    Returns ``(difference, low, high, reason)``; without a value on one side there is no
    difference, and each side needs :data:`MIN_ROWS_FOR_INTERVAL` values for an interval."""
    a, b = finite(first.values()), finite(second.values())
    if not a or not b:
        return None, None, None, "no value on one side"
    difference = float(np.mean(b) - np.mean(a))
    if min(len(a), len(b)) < MIN_ROWS_FOR_INTERVAL:
        return difference, None, None, f"too few rows for a bootstrap ({min(len(a), len(b))})"
    units = sorted(set(first) | set(second), key=str)
    x = np.array([finite_number(first.get(u)) for u in units], dtype=float)  # None -> NaN
    y = np.array([finite_number(second.get(u)) for u in units], dtype=float)
    # NaN: a resample without that side
    low, high, why = bootstrap_ci(lambda idx: nan_row_mean(y[idx]) - nan_row_mean(x[idx]), len(units), n_boot=n_boot,
                                  confidence=confidence, rng=np.random.default_rng(seed))
    return difference, low, high, why
