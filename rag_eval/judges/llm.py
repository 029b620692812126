"""The LLM judge: RAGBench's labelling prompt over any OpenAI-compatible endpoint.

For each item: build the prompt (:mod:`rag_eval.judges.prompts`), call the model
(:class:`~rag_eval.llm.client.LLMClient`: limiter, retries, cache), parse and
validate (:mod:`rag_eval.judges.parsing`). The repair ladder, each step bounded:

- ``finish_reason == "length"``: ask again with twice the token budget (up to
  MAX_TOKENS_CAP); still cut off -> ``truncated``;
- unusable answer (no JSON, wrong schema): re-ask once with the validation error ->
  ``repaired`` or ``parse_error``; a refusal -> ``refused``;
- response sentences without a label: re-ask once; still missing -> counted as not
  supported, ``repaired``;
- hallucinated / malformed keys: dropped and recorded -> ``repaired``;
- optional consistency check: ``overall_supported`` contradicting the sentence labels
  is re-asked (bounded); the final labels are used either way and flagged.

Provider failures after the client's retries end as ``provider_error`` or ``timeout``.
No item is ever lost: :meth:`LLMJudge.judge` returns one result per item, in order.

With ``samples > 1`` each item is judged N times at temperature > 0; labels are the
per-key majority, and ``Labels.adherence_probability`` (fraction of samples that
found the response fully supported) gives a continuous adherence score.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_eval.judges.accounting import CallLog, error_text, judge_each, status_for_error
from rag_eval.judges.base import ProgressCallback
from rag_eval.judges.consistency import make_consistent
from rag_eval.judges.parsing import ParsedTrace, ParseProblem, parse_trace
from rag_eval.judges.prompts import TRACE_PROMPT_ID, consistency_message, reask, repair_message, trace_messages
from rag_eval.llm import errors
from rag_eval.llm.client import Completion, LLMClient
from rag_eval.llm.config import LLMConfig
from rag_eval.llm.pricing import CostEstimate, dry_run_estimate
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels, SentenceSupport
from rag_eval.text.keys import normalize_key

MAX_TOKENS_CAP = 16384
MAX_TRUNCATION_RETRIES = 2
DEFAULT_SAMPLE_TEMPERATURE = 0.7
# Expected answer size for dry runs: fixed fields plus one support entry per sentence.
EXPECTED_BASE_TOKENS = 150
EXPECTED_TOKENS_PER_RESPONSE_SENTENCE = 60


def estimate_judging(items: Sequence[EvalItem], config: LLMConfig, samples: int = 1,
                     prompt_id: str = TRACE_PROMPT_ID) -> CostEstimate:
    """What labelling ``items`` sends (no request is made): each item's chat ``samples``
    times, answered with fixed fields plus one support entry per response sentence."""
    expected = [EXPECTED_BASE_TOKENS + EXPECTED_TOKENS_PER_RESPONSE_SENTENCE * len(i.response_sentences) for i in items]
    return dry_run_estimate([trace_messages(i, prompt_id) for i in items], config.model, expected, config.prices,
                            samples=samples, purpose="judge", reasks_per_chat=1)  # one re-ask per sample (_sample)


@dataclass(slots=True)
class _Outcome:
    """One sample's judgement."""

    status: JudgeStatus
    parsed: ParsedTrace | None = None
    error: str | None = None
    raw: str | None = None
    log: CallLog = field(default_factory=CallLog)
    reasks: int = 0
    truncation_retries: int = 0
    consistency_reasks: int = 0
    inconsistent: bool = False


def _is_consistent(labels: Labels) -> bool:
    return labels.overall_supported is None or bool(labels.overall_supported) == (
        not labels.unsupported_response_sentence_keys
    )


class LLMJudge:
    """Implements the :class:`~rag_eval.judges.base.Judge` protocol."""

    def __init__(
        self,
        config: LLMConfig | None = None,
        samples: int = 1,
        consistency_check: bool = False,
        *,
        prompt_id: str = TRACE_PROMPT_ID,
        sample_temperature: float = DEFAULT_SAMPLE_TEMPERATURE,
        max_consistency_reasks: int = 1,
        consistent_labels: bool = True,
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        if max_consistency_reasks < 0:
            raise ValueError(f"max_consistency_reasks must be >= 0, got {max_consistency_reasks}")
        self.config = config or LLMConfig.from_settings()
        self.client = LLMClient(self.config)
        self.samples = samples
        self.consistency_check = consistency_check
        self.prompt_id = prompt_id
        self.sample_temperature = sample_temperature
        self.max_consistency_reasks = max_consistency_reasks
        # Repair labels that contradict themselves (judges.consistency), recorded per row;
        # off only to replay labels exactly as given (bench/bench_judge_replay.py).
        self.consistent_labels = consistent_labels
        trace_messages(EvalItem("probe", "", [], []), prompt_id)  # unknown prompt id -> ValueError now
        self.name = f"llm:{self.config.model}"

    # -- planning ------------------------------------------------------------------------
    def messages_for(self, item: EvalItem) -> list[dict[str, str]]:
        return trace_messages(item, self.prompt_id)

    # -- one call ------------------------------------------------------------------------
    async def _call(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int, namespace: str, log: CallLog
    ) -> Completion:
        return log.add(await self.client.complete(messages, temperature=temperature, max_tokens=max_tokens,
                                                  json_mode=self.config.json_mode, cache_namespace=namespace))

    async def _ask(
        self, messages: list[dict[str, str]], temperature: float, namespace: str, out: _Outcome
    ) -> Completion:
        """One question, re-asked with a bigger budget while the answer is cut off."""
        max_tokens = self.config.max_tokens
        completion = await self._call(messages, temperature, max_tokens, namespace, out.log)
        while (completion.finish_reason == "length" and max_tokens < MAX_TOKENS_CAP
               and out.truncation_retries < MAX_TRUNCATION_RETRIES):
            max_tokens = min(max_tokens * 2, MAX_TOKENS_CAP)
            out.truncation_retries += 1
            completion = await self._call(messages, temperature, max_tokens, namespace, out.log)
        return completion

    # -- one sample ----------------------------------------------------------------------
    async def _sample(self, item: EvalItem, temperature: float, namespace: str) -> _Outcome:
        out = _Outcome(JudgeStatus.PARSE_ERROR)
        messages = self.messages_for(item)
        try:
            completion = await self._ask(messages, temperature, namespace, out)
            out.raw = completion.text or completion.refusal
            problem = self._problem(completion, item)
            parsed = None if isinstance(problem, ParseProblem) else problem
            if isinstance(problem, ParseProblem):
                if problem.kind in ("refusal", "truncated"):
                    return self._fail(out, problem)
                out.reasks += 1
                followup = reask(messages, completion.text, repair_message(problem.message))
                second = await self._ask(followup, temperature, namespace, out)
                out.raw = second.text or second.refusal
                again = self._problem(second, item)
                if isinstance(again, ParseProblem):
                    if again.kind in ("refusal", "truncated"):
                        return self._fail(out, again)
                    out.error = f"{problem.message}; after a re-ask: {again.message}"
                    out.status = JudgeStatus.PARSE_ERROR
                    return out
                parsed, messages, completion = again, followup, second
            elif parsed is not None and parsed.missing_response_keys:
                parsed, messages, completion = await self._ask_missing(
                    item, messages, completion, parsed, temperature, namespace, out
                )
            assert parsed is not None  # a ParseProblem either returned or was repaired above
            out.parsed = parsed
            out.status = JudgeStatus.REPAIRED if (parsed.repaired or out.reasks) else JudgeStatus.OK
            if self.consistency_check:
                await self._check_consistency(item, messages, completion, temperature, namespace, out)
            return out
        except errors.LLMError as err:
            out.status, out.error, out.parsed = status_for_error(err), error_text(err), None
            return out

    def _problem(self, completion: Completion, item: EvalItem) -> ParsedTrace | ParseProblem:
        if completion.refusal and not (completion.text or "").strip():
            return ParseProblem("refusal", f"the model refused: {completion.refusal.strip()[:200]}")
        if completion.finish_reason == "content_filter":  # Azure / OpenAI moderation
            return ParseProblem("refusal", "the provider's content filter blocked the answer")
        parsed = parse_trace(completion.text or "", item)
        if isinstance(parsed, ParseProblem) and completion.finish_reason == "length":
            return ParseProblem(
                "truncated",
                f"answer cut off at the token limit (finish_reason=length) even with a larger budget; {parsed.message}",
            )
        return parsed

    @staticmethod
    def _fail(out: _Outcome, problem: ParseProblem) -> _Outcome:
        out.status, out.error = JudgeStatus.REFUSED if problem.kind == "refusal" else JudgeStatus.TRUNCATED, problem.message
        return out

    async def _ask_missing(
        self, item, messages, completion, parsed: ParsedTrace, temperature, namespace, out: _Outcome
    ) -> tuple[ParsedTrace, list[dict[str, str]], Completion]:
        """Re-ask once for response sentences the judge left unlabelled."""
        out.reasks += 1
        followup = reask(messages, completion.text, repair_message(
            "sentence_support_information has no entry for response sentence(s) " + ", ".join(parsed.missing_response_keys)))
        second = await self._ask(followup, temperature, namespace, out)
        again = self._problem(second, item)
        if isinstance(again, ParsedTrace) and len(again.missing_response_keys) < len(parsed.missing_response_keys):
            out.raw = second.text
            return again, followup, second
        return parsed, messages, completion

    async def _check_consistency(self, item, messages, completion, temperature, namespace, out: _Outcome) -> None:
        """RAGBench's check: overall_supported must agree with the sentence labels."""
        assert out.parsed is not None
        while not _is_consistent(out.parsed.labels) and out.consistency_reasks < self.max_consistency_reasks:
            out.consistency_reasks += 1
            labels = out.parsed.labels
            messages = reask(messages, completion.text, consistency_message(
                bool(labels.overall_supported), labels.unsupported_response_sentence_keys))
            completion = await self._ask(messages, temperature, namespace, out)
            again = self._problem(completion, item)
            if isinstance(again, ParseProblem):
                break  # keep the earlier, usable labels
            out.parsed = again
            out.raw = completion.text
        out.inconsistent = not _is_consistent(out.parsed.labels)

    # -- one item ------------------------------------------------------------------------
    async def judge_one(self, item: EvalItem) -> JudgeResult:
        """Judge one item (inside a running loop)."""
        started = time.perf_counter()
        if self.samples == 1:
            outcomes = [await self._sample(item, self.config.temperature, "")]
        else:
            temperature = self.config.temperature if self.config.temperature > 0 else self.sample_temperature
            outcomes = list(await asyncio.gather(*(self._sample(item, temperature, f"sample:{i}")
                                                   for i in range(self.samples))))
        return self._result(item, outcomes, time.perf_counter() - started)

    def _result(self, item: EvalItem, outcomes: list[_Outcome], latency: float) -> JudgeResult:
        log = CallLog()
        for o in outcomes:
            log.extend(o.log)
        usable = [o for o in outcomes if o.status.usable and o.parsed is not None]
        extra: dict[str, Any] = {
            **log.summary(),
            "reasks": sum(o.reasks for o in outcomes),
            "truncation_retries": sum(o.truncation_retries for o in outcomes),
        }
        if self.consistency_check:
            extra["consistency_reasks"] = sum(o.consistency_reasks for o in outcomes)
            extra["inconsistent"] = any(o.inconsistent for o in usable)
        if self.samples > 1:
            extra["samples"] = self.samples
            extra["samples_usable"] = len(usable)
            extra["sample_statuses"] = [o.status.value for o in outcomes]
        first = outcomes[0]
        base: dict[str, Any] = dict(
            id=item.id, raw=first.raw, tokens=log.tokens(), cost_usd=log.cost_usd(), latency_s=latency,
            judge=self.name, prompt_id=self.prompt_id,
        )
        if not usable:
            return JudgeResult(status=first.status, labels=None, error=first.error, extra=extra, **base)
        if len(outcomes) == 1:
            parsed = usable[0].parsed
            assert parsed is not None
            extra.update(_parse_extra(parsed))
            labels = _consistent(item, parsed.labels, extra) if self.consistent_labels else parsed.labels
            return JudgeResult(status=first.status, labels=labels, extra=extra, **base)
        labels, agreement = aggregate_samples(item, [o.parsed.labels for o in usable if o.parsed])
        if self.consistent_labels:
            labels = _consistent(item, labels, extra)
        extra["agreement_rate"] = agreement
        dropped = [d for o in usable if o.parsed for d in o.parsed.dropped]
        if dropped:
            extra["dropped_keys"] = dropped
        status = JudgeStatus.REPAIRED if any(o.status is JudgeStatus.REPAIRED for o in usable) else JudgeStatus.OK
        if len(usable) < len(outcomes):
            extra["sample_errors"] = [o.error for o in outcomes if o not in usable]
        return JudgeResult(status=status, labels=labels, extra=extra, **base)

    # -- the protocol --------------------------------------------------------------------
    def judge(
        self,
        items: Sequence[EvalItem],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> list[JudgeResult]:
        """One result per item, in input order; never raises for an item."""

        def failed(item: EvalItem, status: JudgeStatus, error: str) -> JudgeResult:
            return JudgeResult(item.id, status, error=error, judge=self.name, prompt_id=self.prompt_id)

        return judge_each(self.client, self.judge_one, items, failed, progress, cancel, "cancelled before it was judged")


def _consistent(item: EvalItem, labels: Labels, extra: dict[str, Any]) -> Labels:
    """The repair step of :mod:`rag_eval.judges.consistency`, recorded in ``extra``."""
    labels, repairs = make_consistent(item, labels)
    if repairs:
        extra["label_repairs"] = repairs
    return labels


def _parse_extra(parsed: ParsedTrace) -> dict[str, Any]:
    extra: dict[str, Any] = {"extraction": parsed.how}
    if parsed.dropped:
        extra["dropped_keys"] = parsed.dropped
    if parsed.missing_response_keys:
        extra["missing_response_keys"] = parsed.missing_response_keys
    if parsed.derived:
        extra["derived_fields"] = parsed.derived
    return extra


def aggregate_samples(item: EvalItem, samples: Sequence[Labels]) -> tuple[Labels, float]:
    """Majority labels of several samples with per-key probabilities, and the
    agreement rate (fraction of samples agreeing with the majority on adherence).

    ``adherence_probability`` is the fraction of samples that found every response
    sentence supported; a key is relevant/utilized/supported when at least half the
    samples say so."""
    if not samples:
        raise ValueError("aggregate_samples needs at least one sample")
    n = len(samples)
    doc_order = [normalize_key(k) for k in item.document_keys]

    def share(keys_of) -> dict[str, float]:
        counts: dict[str, int] = {}
        for labels in samples:
            for key in set(keys_of(labels)):
                counts[key] = counts.get(key, 0) + 1
        return {k: counts[k] / n for k in doc_order if k in counts}

    relevance = share(lambda lab: lab.all_relevant_sentence_keys)
    utilization = share(lambda lab: lab.all_utilized_sentence_keys)
    support_prob: dict[str, float] = {}
    support: list[SentenceSupport] = []
    for key in (normalize_key(k) for k in item.response_keys):
        votes = [s for lab in samples for s in lab.sentence_support_information if s.response_sentence_key == key]
        unsupported_votes = sum(1 for lab in samples if key in lab.unsupported_response_sentence_keys)
        p = 1.0 - unsupported_votes / n
        support_prob[key] = p
        template = votes[0] if votes else SentenceSupport(key)
        support.append(SentenceSupport(key, list(template.supporting_sentence_keys), p >= 0.5,
                                       template.explanation, probability=p))
    adherent = [not lab.unsupported_response_sentence_keys for lab in samples]
    adherence_probability = sum(adherent) / n
    majority = adherence_probability >= 0.5
    agreement = sum(1 for a in adherent if a == majority) / n
    unsupported = [s.response_sentence_key for s in support if not s.fully_supported]
    labels = Labels(
        all_relevant_sentence_keys=[k for k, p in relevance.items() if p >= 0.5],
        all_utilized_sentence_keys=[k for k, p in utilization.items() if p >= 0.5],
        sentence_support_information=support,
        unsupported_response_sentence_keys=unsupported,
        overall_supported=not unsupported,
        relevance_explanation=samples[0].relevance_explanation,
        overall_supported_explanation=samples[0].overall_supported_explanation,
        relevance_probabilities=relevance,
        utilization_probabilities=utilization,
        support_probabilities=support_prob,
        adherence_probability=adherence_probability,
    )
    return labels, agreement
