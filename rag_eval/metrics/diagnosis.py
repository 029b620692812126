"""A diagnosis of a batch of evaluations from the patterns of their four metrics.

The original project named four patterns; each is checked on every row, and a finding
lists the rows that show it (a pattern is a property of rows, so the evidence is rows):

``prompt``  high context relevance, low context utilization
    the retriever found good context and the generator did not use it: work on the
    prompt and the generator's instructions;
``retrieval_coverage``  low completeness, high adherence
    the answer is grounded but leaves out relevant information: widen retrieval
    (more or larger chunks, better ranking) so the context covers the question;
``systematic``  all four metrics low (and therefore balanced)
    nothing stands out because everything is weak: review the whole pipeline;
``hallucination_risk``  low context relevance, high context utilization
    the answer leans on context that does not address the question.

"High" means at least ``high`` (0.6 by default) and "low" at most ``low`` (0.4). Adherence
uses the continuous ``adherence_score`` when the row has one, else the 0/1 verdict. A
row lacking a metric that a pattern needs is not counted for that pattern. Failed rows
(no scores) never enter; the diagnosis says how many rows it looked at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rag_eval.metrics.aggregate import finite_number
from rag_eval.metrics.registry import TRACE_SCORES

DEFAULT_HIGH = 0.6
DEFAULT_LOW = 0.4
MAX_IDS_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Pattern:
    key: str
    title: str
    meaning: str
    action: str


PATTERNS: tuple[Pattern, ...] = (
    Pattern("prompt", "High relevance, low utilization",
            "good context was retrieved but the answer does not use it",
            "improve the prompt and the generator's instructions"),
    Pattern("retrieval_coverage", "Low completeness, high adherence",
            "grounded but incomplete answers",
            "improve retrieval coverage (k, chunk size, ranking)"),
    Pattern("systematic", "Balanced but all low",
            "every metric is weak: a systematic problem, not one stage",
            "review the whole RAG pipeline"),
    Pattern("hallucination_risk", "Low relevance, high utilization",
            "the answer leans on context that does not address the question",
            "check grounding; tighten retrieval and the prompt"),
)


@dataclass(frozen=True, slots=True)
class Finding:
    pattern: str
    title: str
    meaning: str
    action: str
    ids: tuple[str, ...]
    share: float  # of the rows looked at
    n_rows: int = -1  # rows found, when ids holds only the first of them (DiagnosisTally)

    @property
    def count(self) -> int:
        """How many rows show the pattern."""
        return self.n_rows if self.n_rows >= 0 else len(self.ids)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ids"] = list(self.ids)
        out["n_rows"] = self.count
        return out


@dataclass(frozen=True, slots=True)
class Diagnosis:
    findings: tuple[Finding, ...]
    rows_considered: int
    rows_given: int
    high: float = DEFAULT_HIGH
    low: float = DEFAULT_LOW
    notes: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Diagnosis:
        """The diagnosis :meth:`to_dict` gave (as a run's stored summary keeps it)."""
        findings = tuple(Finding(f["pattern"], f["title"], f["meaning"], f["action"], tuple(f.get("ids", f.get("row_ids", ()))),
                                 float(f["share"]), int(f.get("n_rows", -1))) for f in d.get("findings", ()))
        return cls(findings, int(d["rows_considered"]), int(d["rows_given"]), float(d.get("high", DEFAULT_HIGH)),
                   float(d.get("low", DEFAULT_LOW)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "findings": [f.to_dict() for f in self.findings],
            "rows_considered": self.rows_considered,
            "rows_given": self.rows_given,
            "high": self.high,
            "low": self.low,
        }

    def lines(self, max_ids: int = MAX_IDS_SHOWN) -> list[str]:
        """Plain-text rendering for terminals and failure messages."""
        head = (f"Diagnosis ({self.rows_considered}/{self.rows_given} scored rows; high >= {self.high:g}, "
                f"low <= {self.low:g}):")
        if not self.findings:
            return [head, "  no pattern found" if self.rows_considered else "  no scored row to diagnose"]
        out = [head]
        for f in self.findings:
            ids = ", ".join(f.ids[:max_ids]) + (f" … (+{f.count - max_ids})" if f.count > max_ids else "")
            out.append(f"  - {f.title}: {f.count} row(s) ({f.share:.0%}); {f.meaning} -> {f.action}")
            out.append(f"    rows: {ids}")
        return out


def row_patterns(values: Mapping[str, Any], high: float = DEFAULT_HIGH, low: float = DEFAULT_LOW) -> list[str]:
    """The pattern keys one row's metrics show (in :data:`PATTERNS` order)."""
    rel = finite_number(values.get("context_relevance"))
    util = finite_number(values.get("context_utilization"))
    comp = finite_number(values.get("completeness"))
    adh = finite_number(values.get("adherence_score"))
    if adh is None:
        adh = finite_number(values.get("adherence"))
    found = []
    if rel is not None and util is not None and rel >= high and util <= low:
        found.append("prompt")
    if comp is not None and adh is not None and comp <= low and adh >= high:
        found.append("retrieval_coverage")
    metrics = (rel, util, comp, adh)
    if all(m is not None for m in metrics) and all(m <= low for m in metrics):  # type: ignore[operator]
        found.append("systematic")
    if rel is not None and util is not None and rel <= low and util >= high:
        found.append("hallucination_risk")
    return found


def diagnose(rows: Sequence[tuple[str, Mapping[str, Any] | None]], high: float = DEFAULT_HIGH,
             low: float = DEFAULT_LOW) -> Diagnosis:
    """Findings over ``(item, metric values or None)`` pairs; None marks a failed row. The
    :class:`DiagnosisTally` of the rows, with room for every id."""
    tally = DiagnosisTally(high, low, keep_ids=len(rows))
    for item, values in rows:
        tally.add(item, values)
    return tally.result()


class DiagnosisTally:
    """:func:`diagnose` over rows given one at a time, in bounded memory: every row is
    counted, the first ``keep_ids`` ids of each pattern kept (for runs too large to keep
    every id; the findings' ``n_rows`` says how many there are)."""

    def __init__(self, high: float = DEFAULT_HIGH, low: float = DEFAULT_LOW, keep_ids: int = 100) -> None:
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"need 0 <= low <= high <= 1, got low={low}, high={high}")
        self.high, self.low, self.keep_ids = high, low, keep_ids
        self.ids: dict[str, list[str]] = {p.key: [] for p in PATTERNS}
        self.counts: dict[str, int] = {p.key: 0 for p in PATTERNS}
        self.considered = self.given = 0

    def add(self, item: str, values: Mapping[str, Any] | None) -> None:
        self.given += 1
        if not values or all(finite_number(values.get(m)) is None for m in TRACE_SCORES):
            return
        self.considered += 1
        for key in row_patterns(values, self.high, self.low):
            self.counts[key] += 1
            if len(self.ids[key]) < self.keep_ids:
                self.ids[key].append(str(item))

    def result(self) -> Diagnosis:
        findings = tuple(
            Finding(p.key, p.title, p.meaning, p.action, tuple(self.ids[p.key]),
                    self.counts[p.key] / self.considered, self.counts[p.key])
            for p in PATTERNS if self.counts[p.key]
        )
        return Diagnosis(findings, self.considered, self.given, self.high, self.low)
