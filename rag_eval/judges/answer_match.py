"""LLM-as-judge answer matching: does a predicted answer say what the reference says?

The second judge task (seed 004): given a question, a reference answer and a predicted
answer, return ``is_matching`` and a short reasoning. It uses the same client, cache,
limiter and statuses as the TRACe judge: unusable answers are re-asked once, cut-off
answers retried with a larger budget, and every item ends with an explicit status.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from rag_eval.judges.accounting import CallLog, error_text, judge_each, status_for_error
from rag_eval.judges.base import ProgressCallback
from rag_eval.judges.parsing import ParseProblem, find_json, looks_like_refusal, text_or_empty, validation_message
from rag_eval.judges.prompts import ANSWER_MATCH_PROMPT_ID, answer_match_messages, reask, repair_message
from rag_eval.llm import errors
from rag_eval.llm.client import Completion, LLMClient
from rag_eval.llm.config import LLMConfig
from rag_eval.llm.pricing import CostEstimate, dry_run_estimate
from rag_eval.schema import JudgeResult, JudgeStatus

MATCH_MAX_TOKENS = 400
#: Expected answer size for dry runs: ``{"is_matching": ..., "reasoning": "<a sentence or two>"}``.
EXPECTED_MATCH_TOKENS = 50


@dataclass(slots=True)
class MatchItem:
    id: str
    question: str
    reference: str
    predicted: str


@dataclass(slots=True)
class MatchResult(JudgeResult):
    """A judge's result (statuses, tokens, cost as the TRACe judge's; no ``labels``) with
    the verdict: ``is_matching`` and the judge's ``reasoning``."""

    prompt_id: str | None = ANSWER_MATCH_PROMPT_ID
    is_matching: bool | None = None
    reasoning: str = ""


class MatchOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    is_matching: bool
    reasoning: str = ""

    _text = field_validator("reasoning", mode="before")(lambda cls, v: text_or_empty(v))


def parse_match(text: str) -> MatchOutput | str:
    """The validated answer, or the problem as a message."""
    value = find_json(text).value
    if value is None:
        return "no JSON object found in the answer"
    try:
        return MatchOutput.model_validate(value)
    except ValidationError as err:
        return f"wrong schema: {validation_message(err)}"


def estimate_matching(items: Sequence[tuple[str, str, str]], config: LLMConfig) -> CostEstimate:
    """What matching ``(question, reference, predicted)`` triples sends: one chat each."""
    return dry_run_estimate([answer_match_messages(*item) for item in items], config.model, EXPECTED_MATCH_TOKENS,
                            config.prices, purpose="answer match", reasks_per_chat=1)  # re-asked once (match_one)


class AnswerMatchJudge:
    def __init__(self, config: LLMConfig | None = None, client: LLMClient | None = None) -> None:
        self.config = config or LLMConfig.from_settings()
        self.client = client or LLMClient(self.config)
        self.name = f"llm:{self.config.model}"

    async def _ask(self, messages: list[dict[str, str]], log: CallLog) -> Completion:
        budget = min(self.config.max_tokens, MATCH_MAX_TOKENS)
        completion = log.add(await self.client.complete(messages, max_tokens=budget, json_mode=self.config.json_mode))
        if completion.finish_reason == "length":
            completion = log.add(
                await self.client.complete(messages, max_tokens=budget * 4, json_mode=self.config.json_mode)
            )
        return completion

    async def match_one(self, item: MatchItem) -> MatchResult:
        started = time.perf_counter()
        log = CallLog()
        result = MatchResult(item.id, JudgeStatus.PARSE_ERROR, judge=self.name)
        messages = answer_match_messages(item.question, item.reference, item.predicted)
        try:
            status = JudgeStatus.OK
            completion = await self._ask(messages, log)
            parsed = self._parse(completion)
            if isinstance(parsed, ParseProblem) and parsed.kind in ("no_json", "schema"):
                status = JudgeStatus.REPAIRED
                log.reasks += 1
                messages = reask(messages, completion.text, repair_message(parsed.message))
                completion = await self._ask(messages, log)
                parsed = self._parse(completion)
            result.raw = completion.text or completion.refusal
            if isinstance(parsed, MatchOutput):
                result.status, result.is_matching, result.reasoning = status, parsed.is_matching, parsed.reasoning
            else:
                result.status = {"refusal": JudgeStatus.REFUSED, "truncated": JudgeStatus.TRUNCATED}.get(
                    parsed.kind, JudgeStatus.PARSE_ERROR
                )
                result.error = parsed.message
        except errors.LLMError as err:
            result.status, result.error = status_for_error(err), error_text(err)
        result.tokens, result.cost_usd = log.tokens(), log.cost_usd()
        result.latency_s = time.perf_counter() - started
        result.extra = log.summary()
        return result

    @staticmethod
    def _parse(completion: Completion) -> MatchOutput | ParseProblem:
        text = completion.text or ""
        if (completion.refusal and not text.strip()) or looks_like_refusal(text):
            return ParseProblem("refusal", f"the model refused: {(completion.refusal or text).strip()[:200]}")
        if completion.finish_reason == "content_filter":
            return ParseProblem("refusal", "the provider's content filter blocked the answer")
        parsed = parse_match(text)
        if isinstance(parsed, str):
            kind = "truncated" if completion.finish_reason == "length" else "schema"
            if kind == "schema" and parsed.startswith("no JSON"):
                kind = "no_json"
            return ParseProblem(kind, parsed)
        return parsed

    def match(
        self,
        items: Sequence[MatchItem],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> list[MatchResult]:
        """One result per item, in order; never raises for an item."""

        def failed(item: MatchItem, status: JudgeStatus, error: str) -> MatchResult:
            return MatchResult(item.id, status, error=error, judge=self.name)

        return judge_each(self.client, self.match_one, items, failed, progress, cancel)
