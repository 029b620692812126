"""One estimate of what a run will send, before it starts: ``rag-eval judge --dry-run``,
the Batch page and :func:`rag_eval.estimate` all call :func:`estimate_run`.

The rows are read through the run's own source, so the rows counted are the ones the run
judges (an ``invalid_input`` row costs nothing). Requests are counted by purpose: **answers**
(one per usable question when the generator calls an endpoint), **the judge** (what its kind
declares, :attr:`rag_eval.judges.kinds.JudgeKind.estimate`; a local kind costs nothing) and
**metrics** (each per-item metric whose ``compute`` declares an ``estimate``). Tokens are
counted from the text sent (:func:`rag_eval.llm.pricing.estimate_tokens`), completions at a
typical answer's size; cached replies are not counted, so the figures are a first run's.
Re-asks are counted apart, as the most they add (every answer that a part re-asks when it
does not parse needing its re-ask): a run sends ``requests`` when every answer parses and
at most ``max_requests``, cut-off answers asked again with a larger budget aside. A RAG run
counts ``retrieval.k`` chunks of the chunking size per question (an upper bound: about 1.5
times what is sent on the demo collection) and a typical answer.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag_eval.judges.base import JudgeSpec
from rag_eval.llm.pricing import CostEstimate, dry_run_estimate
from rag_eval.metrics.registry import Metric
from rag_eval.runs.records import metric_item
from rag_eval.runs.sources import RagSource, SourceItem

#: A typical sentence of a retrieved chunk (RAG runs: the chunks are not retrieved yet).
STAND_IN_SENTENCE = "This sentence stands in for one of a retrieved chunk, of the usual length. "
#: An LLM generator's typical answer, in tokens (capped by its ``max_tokens``).
ANSWER_TOKENS = 120


@dataclass(frozen=True)
class RunEstimate:
    """What a run of ``rows`` rows (``usable`` of them judged) will send, by purpose."""

    judge: str
    rows: int
    usable: int
    calls_network: bool
    parts: tuple[CostEstimate, ...] = ()
    #: the judge calls a network but its kind declares no estimate: its requests are unknown
    judge_unknown: bool = False

    @property
    def requests(self) -> int:
        return sum(p.requests for p in self.parts)

    @property
    def reasks(self) -> int:
        """The requests re-asks add at most (every re-askable answer re-asked once)."""
        return sum(p.reasks for p in self.parts)

    @property
    def max_requests(self) -> int:
        return self.requests + self.reasks

    @property
    def prompt_tokens(self) -> int:
        return sum(p.prompt_tokens for p in self.parts)

    @property
    def completion_tokens(self) -> int:
        return sum(p.completion_tokens for p in self.parts)

    @property
    def cost_usd(self) -> float | None:
        """The cost of every request; None when one part's model has no price (or the
        judge's requests are unknown), never a partial sum shown as the whole."""
        paid = [p for p in self.parts if p.requests]
        if self.judge_unknown or any(p.cost_usd is None for p in paid):
            return None
        return sum(p.cost_usd or 0.0 for p in paid)

    def lines(self) -> list[str]:
        """The estimate in words, the same on the command line and on the Batch page."""
        where = "calls a network" if self.calls_network else "runs on this machine"
        lines = [f"{self.usable} of {self.rows} row(s) usable (the others are reported, not sent); "
                 f"the {self.judge} judge {where}."]
        if self.judge_unknown:
            lines.append(f"requests: unknown (the {self.judge} judge kind declares no estimate)")
        if not self.requests:
            return lines + (["estimated cost: unknown"] if self.judge_unknown else ["requests: none; cost: none"])
        by_purpose = ", ".join(f"{p.requests} {p.purpose}" for p in self.parts if p.requests)
        models = sorted({p.model for p in self.parts if p.requests})
        cost = self.cost_usd
        if self.judge_unknown:
            usd = "unknown"
        elif cost is None:
            unpriced = ", ".join(m for m in models if any(p.cost_usd is None for p in self.parts if p.model == m and p.requests))
            usd = f"unknown (no price for {unpriced}; see --price-in/--price-out or RAG_EVAL_LLM_PRICES)"
        else:
            usd = f"${cost:.4f}"
        reasked = ", ".join(f"{p.reasks} {p.purpose}" for p in self.parts if p.reasks)
        at_most = (f"; up to {self.max_requests} if every answer needs its re-ask ({reasked})" if self.reasks else "")
        return lines + [
            f"requests: {self.requests} ({by_purpose}) to {', '.join(models)}{at_most}; more if an answer is cut "
            "off, fewer if replies are cached",
            f"prompt tokens: ~{self.prompt_tokens:,}; completion tokens: ~{self.completion_tokens:,}",
            f"estimated cost: {usd}",
        ]


def estimate_rows(rows: Sequence[SourceItem], spec: JudgeSpec, metrics: Sequence[Metric] = (),
                  answers: CostEstimate | None = None) -> RunEstimate:
    """The estimate for the source items ``rows`` (the usable ones have ``item`` set) of a
    run judged as ``spec`` says, computing ``metrics``; ``answers``: the generation's part.
    Pure: nothing is read or sent."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    kind = JUDGE_KINDS.get(spec.kind)
    spec = kind.resolve(spec)
    usable = [r for r in rows if r.item is not None]
    parts = [answers] if answers is not None else []
    judged = kind.estimate(usable, spec) if kind.estimate is not None else None
    parts += list(judged or ())
    measured = [m for m in (metric_item(r) for r in usable) if m is not None]
    for metric in metrics:
        declared = getattr(metric.compute, "estimate", None)
        if declared is not None:
            parts.append(declared(measured))
    return RunEstimate(spec.kind, len(rows), len(usable), kind.calls_network, tuple(p for p in parts if p.requests),
                       judge_unknown=kind.calls_network and kind.estimate is None)


def estimate_run(source: Any, spec: JudgeSpec, metrics: Sequence[Metric] | None = None) -> RunEstimate:
    """:func:`estimate_rows` of what ``source`` yields (read as the run reads it; no row
    cache, no answer match: nothing is sent). ``metrics``: the per-item metrics the run
    computes (None: every installed one, as the run)."""
    from rag_eval.runs.engine import item_metrics

    measured = item_metrics(None) if metrics is None else metrics
    if isinstance(source, RagSource):
        rows, answers = _rag_rows(source)
        return estimate_rows(rows, spec, measured, answers)
    return estimate_rows(source_rows(source), spec, measured)


def source_rows(source: Any) -> list[SourceItem]:
    """What a rows source yields, read as the run reads it but with no row cache and no
    answer match (nothing is sent); the caller's source is left as it was."""
    import copy

    reading = copy.copy(source)
    reading.answer_matcher, reading.row_cache = None, None
    return list(reading.items())


def _rag_rows(source: RagSource) -> tuple[list[SourceItem], CostEstimate | None]:
    """Stand-in items for the questions of a RAG run (``retrieval.k`` chunks of the
    chunking size, a typical answer) and its generation's part."""
    from rag_eval.rag.generate import build_messages, get_template
    from rag_eval.rag.retrieve import RetrievedChunk
    from rag_eval.text.sentences import item_from_texts

    config = source.config
    chunk = (STAND_IN_SENTENCE * (config.chunking.size // len(STAND_IN_SENTENCE) + 1))[:config.chunking.size].strip()
    chunks = [RetrievedChunk(f"c{i}", chunk, 0.0, f"d{i}", "", i) for i in range(config.retrieval.k)]
    llm_answers = config.generator.kind == "openai"
    answer_chars = 4 * min(ANSWER_TOKENS, config.generator.max_tokens) if llm_answers else \
        len(STAND_IN_SENTENCE) * config.generator.max_sentences
    answer = (STAND_IN_SENTENCE * (answer_chars // len(STAND_IN_SENTENCE) + 1))[:answer_chars].strip()
    rows = []
    for q in source.questions:
        row = copy.deepcopy(q)  # the source's parsed question, as a pass of the run would take it
        if row.status is None:
            row.answer = answer
            row.item = item_from_texts(q.id, q.question, [c.text for c in chunks], answer)
        rows.append(row)
    if not llm_answers:
        return rows, None
    from rag_eval.llm.config import LLMConfig

    generator = config.generator
    model = generator.model or LLMConfig.from_settings().model
    template = get_template(generator.prompt_template)
    chats = [build_messages(r.question, chunks, template) for r in rows if r.item is not None]
    return rows, dry_run_estimate(chats, model, min(ANSWER_TOKENS, generator.max_tokens),
                                  LLMConfig.from_settings().prices, purpose="answers")
