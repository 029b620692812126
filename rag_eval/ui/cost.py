"""A dry-run cost estimate for a batch before it starts, from the LLM pricing table.

The local judge and the extractive generator cost nothing; for an LLM judge the
estimate counts the text the judge will read (question, keyed documents, response)
with ``rag_eval.llm.pricing`` and an expected answer size per response sentence.
It is a floor: prompts add instructions and re-asks are not included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rag_eval.judges.kinds import JUDGE_KINDS
from rag_eval.llm.config import LLMConfig
from rag_eval.llm.pricing import CostEstimate, estimate_from_prompt_tokens, estimate_message_tokens
from rag_eval.rag.config import RagConfig

COMPLETION_TOKENS_PER_ITEM = 350  # a labelled JSON answer for a few response sentences
CONTEXT_CHARS_PER_QUESTION = 5 * 1000  # a RAG item: top-k chunks of ~1000 characters


def is_free(config: RagConfig) -> bool:
    """Nothing is paid for: the local judge and the extractive generator."""
    return not JUDGE_KINDS.uses_llm(config.judge.kind) and config.generator.kind == "extractive"


def estimate_batch(texts: Sequence[str], config: RagConfig, llm: LLMConfig | None = None) -> CostEstimate | None:
    """``None`` when nothing is paid for (local judge and extractive generator). ``llm``
    is the LLM configuration the run will use (its model when the run's configuration
    names none, and its price table, ``RAG_EVAL_LLM_PRICES``); by default the one the
    environment configures."""
    if is_free(config):
        return None
    return estimate_from_tokens([text_tokens(text) for text in texts], config, llm)


def estimate_from_tokens(tokens: Sequence[int], config: RagConfig,
                         llm: LLMConfig | None = None) -> CostEstimate | None:
    """:func:`estimate_batch` from each row's :func:`text_tokens` (a page keeps the counts
    of a dataset, not its texts)."""
    if is_free(config):
        return None
    llm = llm or LLMConfig.from_settings()
    model = (config.judge.model if config.judge.kind == "llm" else config.generator.model) or llm.model
    calls_per_item = JUDGE_KINDS.uses_llm(config.judge.kind) + (config.generator.kind == "openai")
    return estimate_from_prompt_tokens(tokens, model, COMPLETION_TOKENS_PER_ITEM, llm.prices,
                                       samples=max(1, calls_per_item))


def text_tokens(text: str) -> int:
    """Estimated prompt tokens of the chat that sends ``text`` (an :func:`item_text`)."""
    return estimate_message_tokens([{"role": "user", "content": text}])


def item_text(row: dict[str, Any]) -> str:
    """What a judge reads for a row: question, contexts (or a RAG context budget) and response."""
    docs = row.get("documents") or row.get("contexts") or []
    docs_text = "\n".join(str(d) for d in docs) if isinstance(docs, list) else str(docs)
    if not docs_text:
        docs_text = "x" * CONTEXT_CHARS_PER_QUESTION
    return f"{row.get('question', '')}\n{docs_text}\n{row.get('response') or row.get('answer') or ''}"
