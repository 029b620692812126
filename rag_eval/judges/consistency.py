"""Labels that agree with themselves.

A judge's three label sets are not independent: a response sentence is supported *by*
document sentences, which the response therefore uses; a sentence the response uses
is relevant to the question. RAGBench's own GPT-4 labels follow this (a supported
sentence's supporting keys are utilized in 98% of rows). :func:`make_consistent`
enforces it:

1. the supporting keys of every supported response sentence are utilized;
2. every utilized key is relevant (utilized ⊆ relevant).

So a row with a supported response never reports relevance 0. Only keys of the item's
documents are added. The local judge applies this as part of producing labels; the LLM
judge applies it as a repair, and what was added is recorded in the row
(``JudgeResult.extra["label_repairs"]``, then the scores' diagnostics).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rag_eval.schema import EvalItem, Labels


def make_consistent(item: EvalItem, labels: Labels) -> tuple[Labels, dict[str, Any]]:
    """Consistent labels, and what had to be added (empty when nothing)."""
    known = set(item.document_keys)
    unsupported = set(labels.unsupported_response_sentence_keys)
    utilized = list(labels.all_utilized_sentence_keys)
    relevant = list(labels.all_relevant_sentence_keys)
    used, rel = set(utilized), set(relevant)
    added_utilized: list[str] = []
    supported_without_keys: list[str] = []
    for support in labels.sentence_support_information:
        supported = support.fully_supported is True or (
            support.fully_supported is None and support.response_sentence_key not in unsupported)
        if not supported:
            continue
        keys = [k for k in support.supporting_sentence_keys if k in known]
        if not keys and support.supporting_sentence_keys == []:
            supported_without_keys.append(support.response_sentence_key)
        for key in keys:
            if key not in used:
                used.add(key)
                utilized.append(key)
                added_utilized.append(key)
    added_relevant = []
    for key in utilized:
        if key not in rel and key in known:
            rel.add(key)
            relevant.append(key)
            added_relevant.append(key)
    repairs: dict[str, Any] = {name: keys for name, keys in (("utilized_added", added_utilized), ("relevant_added",
                               added_relevant), ("supported_without_keys", supported_without_keys)) if keys}
    if not added_utilized and not added_relevant:
        return labels, repairs
    order = {k: i for i, k in enumerate(item.document_keys)}
    return replace(
        labels,
        all_utilized_sentence_keys=sorted(utilized, key=lambda k: order.get(k, len(order))),
        all_relevant_sentence_keys=sorted(relevant, key=lambda k: order.get(k, len(order))),
    ), repairs
