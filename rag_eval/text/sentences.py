"""Splitting text into keyed sentences with character offsets.

New text is split with pysbd (rule-based sentence boundary detection), keeping
offsets so the dashboard can highlight sentences in the original text. Rows that
already carry RAGBench's ``documents_sentences`` / ``response_sentences`` are used
as they are, so scores stay comparable with the dataset's own labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import pysbd

from rag_eval.schema import EvalItem, Sentence, _as_list
from rag_eval.text.keys import document_key, response_key


@lru_cache(maxsize=4)
def _segmenter(language: str) -> pysbd.Segmenter:
    return pysbd.Segmenter(language=language, clean=False, char_span=True)


def split_sentences(text: str, language: str = "en") -> list[tuple[str, int, int]]:
    """Sentences of ``text`` as (sentence, start, end) with ``text[start:end]`` being
    the sentence without its surrounding white space. Empty text gives []."""
    if not text or not text.strip():
        return []
    spans = []
    for span in _segmenter(language).segment(text):
        start, end = span.start, span.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((text[start:end], start, end))
    return spans


def key_document(text: str, doc_index: int) -> list[Sentence]:
    return [
        Sentence(document_key(doc_index, i), s, a, b)
        for i, (s, a, b) in enumerate(split_sentences(text))
    ]


def key_response(text: str) -> list[Sentence]:
    return [Sentence(response_key(i), s, a, b) for i, (s, a, b) in enumerate(split_sentences(text))]


def _pairs(value: Any) -> list[Sentence]:
    out = []
    for pair in _as_list(value):
        pair = _as_list(pair)
        if len(pair) >= 2:
            out.append(Sentence(str(pair[0]), str(pair[1])))
    return out


def item_from_texts(
    item_id: str, question: str, documents: Sequence[str], response: str, metadata: dict | None = None
) -> EvalItem:
    """An :class:`EvalItem` from raw question / document texts / response text."""
    docs = [str(d) for d in documents]
    return EvalItem(
        id=str(item_id),
        question=str(question),
        documents=[key_document(d, i) for i, d in enumerate(docs)],
        response_sentences=key_response(str(response or "")),
        response=str(response or ""),
        document_texts=docs,
        metadata=dict(metadata or {}),
    )


def item_from_row(row: dict[str, Any], default_id: str = "") -> EvalItem:
    """An :class:`EvalItem` from a RAGBench-format row. Pre-split sentences are used
    as given; otherwise ``documents`` and ``response`` are split here."""
    item_id = str(row.get("id") if row.get("id") is not None else default_id)
    question = str(row.get("question") or "")
    response = str(row.get("response") or "")
    doc_texts = [str(d) for d in _as_list(row.get("documents"))]
    if row.get("documents_sentences") is not None:
        documents = [_pairs(doc) for doc in _as_list(row["documents_sentences"])]
    else:
        documents = [key_document(d, i) for i, d in enumerate(doc_texts)]
    if row.get("response_sentences") is not None:
        response_sentences = _pairs(row["response_sentences"])
    else:
        response_sentences = key_response(response)
    if not doc_texts:
        doc_texts = [" ".join(s.text for s in doc) for doc in documents]
    if not response and response_sentences:
        response = " ".join(s.text for s in response_sentences)
    return EvalItem(
        id=item_id,
        question=question,
        documents=documents,
        response_sentences=response_sentences,
        response=response,
        document_texts=doc_texts,
        metadata={k: row[k] for k in ("dataset_name", "_subset") if k in row},
    )


def count_document_sentences(documents: Iterable[Sequence[Sentence]]) -> int:
    return sum(len(d) for d in documents)
