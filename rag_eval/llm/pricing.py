"""Token prices and cost accounting, with a dry-run estimate before a batch starts.

The table is USD per million tokens from the providers' public price pages (checked
2025; prices change, so override them: ``LLMConfig(prices={"model": {"input": x,
"output": y}})``, ``RAG_EVAL_LLM_PRICES`` as JSON, or ``rag-eval judge --price-in/--price-out``).
An unknown model has cost ``None`` (unknown), never 0, so a summary can say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_eval.llm.constants import CHARS_PER_TOKEN


@dataclass(frozen=True, slots=True)
class ModelPrice:
    input_per_m: float
    output_per_m: float


DEFAULT_PRICES: dict[str, ModelPrice] = {
    # OpenAI
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4o": ModelPrice(2.50, 10.00),
    "gpt-4.1": ModelPrice(2.00, 8.00),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40),
    "gpt-4-turbo": ModelPrice(10.00, 30.00),
    "gpt-3.5-turbo": ModelPrice(0.50, 1.50),
    "o4-mini": ModelPrice(1.10, 4.40),
    "o3-mini": ModelPrice(1.10, 4.40),
    # Groq
    "llama-3.1-8b-instant": ModelPrice(0.05, 0.08),
    "llama-3.3-70b-versatile": ModelPrice(0.59, 0.79),
    # Together
    "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo": ModelPrice(0.18, 0.18),
    "meta-llama/Llama-3.3-70B-Instruct-Turbo": ModelPrice(0.88, 0.88),
}


def _as_price(value: Any) -> ModelPrice:
    if isinstance(value, ModelPrice):
        return value
    if isinstance(value, Mapping) and "input" in value and "output" in value:
        return ModelPrice(float(value["input"]), float(value["output"]))
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return ModelPrice(float(value[0]), float(value[1]))
    raise ValueError(f"a price must be {{'input': USD/1M, 'output': USD/1M}}, got {value!r}")


def price_for(model: str, overrides: Mapping[str, Any] | None = None) -> ModelPrice | None:
    """The price of ``model``: an override first, then the table; dated snapshots
    (``gpt-4o-mini-2024-07-18``) and provider prefixes (``openai/gpt-4o``) match
    their base name, longest match first."""
    table = {**DEFAULT_PRICES, **{name: _as_price(value) for name, value in (overrides or {}).items()}}
    if model in table:
        return table[model]
    bare = model.split("/")[-1]
    for name in sorted(table, key=len, reverse=True):
        if bare == name or bare.startswith(name + "-") or model.startswith(name + "-"):
            return table[name]
    return None


def cost_usd(usage: Mapping[str, int] | None, price: ModelPrice | None) -> float | None:
    """Cost of one call from the provider's usage counts; None when the price or the
    usage is unknown."""
    if price is None or not usage:
        return None
    prompt = int(usage.get("prompt_tokens", 0) or 0)
    completion = int(usage.get("completion_tokens", 0) or 0)
    return (prompt * price.input_per_m + completion * price.output_per_m) / 1_000_000


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 4 characters per token for English)."""
    return max(1, round(len(text) / CHARS_PER_TOKEN)) if text else 0


def estimate_message_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Estimated prompt tokens of a chat (plus ~4 tokens of framing per message)."""
    return sum(estimate_tokens(str(m.get("content") or "")) + 4 for m in messages)


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """What one part of a run will send (``purpose``: answers, judge, answer match, a
    metric's name): requests, estimated tokens, and their cost (None: no price for ``model``)."""

    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    model: str
    purpose: str = "judge"
    #: the requests re-asks add when every answer needs the re-ask its sender allows (an
    #: unparseable answer asked again once): ``requests + reasks`` is what a run can send at most,
    #: cut-off answers aside; 0 for a part that never re-asks
    reasks: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in ("purpose", "model", "requests", "reasks", "prompt_tokens",
                                                     "completion_tokens", "cost_usd")}


def dry_run_estimate(
    batch: Sequence[Sequence[Mapping[str, Any]]],
    model: str,
    expected_completion_tokens: int | Sequence[int],
    overrides: Mapping[str, Any] | None = None,
    samples: int = 1,
    purpose: str = "judge",
    reasks_per_chat: int = 0,
) -> CostEstimate:
    """What a batch of chats would cost, without sending anything: each chat ``samples``
    times. Completion tokens are an expectation (one figure for every call, or one per
    chat: the caller knows a typical answer's size). Re-asks are counted apart
    (``reasks_per_chat``: how many times the sender asks again when an answer does not
    parse), as the most they add; tokens and cost are a first answer's."""
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    completions = ([expected_completion_tokens] * len(batch) if isinstance(expected_completion_tokens, int)
                   else list(expected_completion_tokens))
    prompt = sum(estimate_message_tokens(m) for m in batch) * samples
    completion = sum(completions) * samples
    cost = cost_usd({"prompt_tokens": prompt, "completion_tokens": completion}, price_for(model, overrides))
    return CostEstimate(len(batch) * samples, prompt, completion, cost, model, purpose,
                        reasks=len(batch) * samples * reasks_per_chat)
