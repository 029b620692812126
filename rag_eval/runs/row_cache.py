"""A row-level cache in front of the LLM judge, so an identical rerun is cheap.

The LLM client's cache is keyed on the request, and building the request (splitting the row
into keyed sentences) costs far more than the cached answer. This cache is keyed on the raw
row plus everything that shapes the judgement (judge, endpoint, prompt text, sampling) and
holds the keyed sentences with the judge's result: a hit splits and sends nothing, and is
scored again with the current TRACe code. Only usable results are stored, so a failed row is
asked again; ``--no-cache`` (``use_cache=False``) bypasses it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from rag_eval.datasets.schema import JUDGED_ROW_COLUMNS, PRESPLIT_COLUMNS
from rag_eval.judges.base import Judge, PromptJudge
from rag_eval.llm.cache import LLMCache, cache_key
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels, Sentence

ROW_CACHE_FORMAT = "judged-row-3"  # 2: the result's id is `id` (was `item_id`); 3: items split by language, carry it
#: what a row's judgement depends on: its id, and its question, response and documents under any accepted name
ROW_FIELDS = ("id", *(n for f in ("question", "response", "documents") for n in JUDGED_ROW_COLUMNS[f]),
              *PRESPLIT_COLUMNS.values())


class RowCache:
    """Cached (item sentences, judge result) per raw row, for one LLM judge set-up."""

    def __init__(self, directory: str | Path, judge: PromptJudge) -> None:
        self.store = LLMCache(Path(directory) / "rows")
        config = judge.config
        probe = judge.messages_for(EvalItem("probe", "q", [[Sentence("0a", "d")]], [Sentence("a", "r")]))
        self.identity = {
            "format": ROW_CACHE_FORMAT,
            "judge": judge.name,
            "endpoint": config.endpoint(),
            "prompt_id": judge.prompt_id,
            "prompt": hashlib.sha256(json.dumps(probe, sort_keys=True).encode("utf-8")).hexdigest(),
            "params": {"temperature": config.temperature, "max_tokens": config.max_tokens,
                       "json_mode": config.json_mode, "samples": judge.samples,
                       "consistency_check": judge.consistency_check,
                       "sample_temperature": judge.sample_temperature},
        }
        self.hits = 0

    @classmethod
    def for_judge(cls, judge: Judge | None) -> RowCache | None:
        """A row cache for ``judge`` when it asks an LLM with a prompt of its own
        (:class:`~rag_eval.judges.base.PromptJudge`) and its cache is on, else None."""
        if not isinstance(judge, PromptJudge) or not judge.config.use_cache:
            return None
        return cls(judge.config.resolved_cache_dir(), judge)

    def key(self, row: dict[str, Any], item_id: str) -> str:
        fields = {name: row.get(name) for name in ROW_FIELDS if row.get(name) is not None}
        fields["id"] = item_id
        return cache_key({**self.identity, "row": fields})

    def get(self, key: str) -> tuple[EvalItem, JudgeResult] | None:
        value = self.store.get(key)
        if value is None or value.get("format") != ROW_CACHE_FORMAT:
            return None
        try:
            item = _item_from(value["item"])
            result = _result_from(value["result"])
        except (KeyError, TypeError, ValueError):
            return None  # an unreadable entry is a miss
        result.extra = {**result.extra, "cache_hits": max(1, int(result.extra.get("calls", 1) or 1)),
                        "cost_usd_spent": 0.0, "row_cache": True}
        self.hits += 1
        return item, result

    def put(self, key: str, item: EvalItem, result: JudgeResult) -> None:
        if not result.status.usable or result.labels is None:
            return
        self.store.put(key, {"format": ROW_CACHE_FORMAT, "item": _item_dict(item), "result": _result_dict(result)})


def _sentences(pairs: list[list[Any]]) -> list[Sentence]:
    return [Sentence(str(k), str(t), int(a), int(b)) for k, t, a, b in pairs]


def _item_dict(item: EvalItem) -> dict[str, Any]:
    return {
        "id": item.id, "question": item.question, "response": item.response,
        "document_texts": item.document_texts,
        "documents": [[[s.key, s.text, s.start, s.end] for s in doc] for doc in item.documents],
        "response_sentences": [[s.key, s.text, s.start, s.end] for s in item.response_sentences],
        "language": item.language,
    }


def _item_from(d: dict[str, Any]) -> EvalItem:
    return EvalItem(
        id=str(d["id"]), question=str(d["question"]), response=str(d["response"]),
        document_texts=[str(t) for t in d["document_texts"]],
        documents=[_sentences(doc) for doc in d["documents"]],
        response_sentences=_sentences(d["response_sentences"]), language=str(d.get("language") or ""),
    )


def _result_dict(result: JudgeResult) -> dict[str, Any]:
    """``result.to_dict()`` without dataclasses.asdict's deep copy (a hot path)."""
    return {
        "id": result.id, "status": result.status.value,
        "labels": result.labels.to_dict() if result.labels is not None else None,
        "error": result.error, "raw": result.raw, "tokens": dict(result.tokens), "cost_usd": result.cost_usd,
        "latency_s": result.latency_s, "judge": result.judge, "prompt_id": result.prompt_id,
        "extra": json.loads(json.dumps(result.extra, default=str)),
    }


def _result_from(d: dict[str, Any]) -> JudgeResult:
    return JudgeResult(
        id=str(d["id"]), status=JudgeStatus(d["status"]),
        labels=Labels.from_dict(d["labels"]) if d.get("labels") is not None else None,
        error=d.get("error"), raw=d.get("raw"), tokens=dict(d.get("tokens") or {}), cost_usd=d.get("cost_usd"),
        latency_s=d.get("latency_s"), judge=str(d.get("judge") or ""), prompt_id=d.get("prompt_id"),
        extra=dict(d.get("extra") or {}),
    )
