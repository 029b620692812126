"""Answer generation from retrieved chunks.

``extractive`` (the offline default) answers with whole retrieved sentences, verbatim,
the most similar to the question first (at most ``max_sentences``, about 600 characters),
each citing its key; its output is labelled ``extractive`` everywhere so
nobody mistakes it for a model's answer. ``openai`` sends a named prompt template to any
OpenAI-compatible chat endpoint through :mod:`rag_eval.llm` (same settings, retries,
cache and cost accounting as the LLM judge). Generation never raises for a provider
problem: the :class:`Generation` carries ``status="error"`` and the reason.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rag_eval.config import redact, setting
from rag_eval.rag.config import GeneratorConfig
from rag_eval.rag.retrieve import RetrievedChunk
from rag_eval.text.keys import document_key
from rag_eval.text.sentences import split_sentences

NO_CONTEXT_ANSWER = "I could not find any relevant context to answer this question."
EXTRACTIVE_MODEL = "extractive:all-MiniLM-L6-v2"
EXTRACTIVE_MAX_CHARS = 600


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A named chat prompt. ``{context}`` and ``{question}`` are filled in; with
    ``keyed_context`` every context sentence is shown with its RAGBench key so the model
    can cite it."""

    name: str
    system: str
    user: str
    keyed_context: bool = False


TEMPLATES: dict[str, PromptTemplate] = {
    t.name: t
    for t in (
        # RAGBench generated its responses with this basic prompt shape.
        PromptTemplate(
            name="ragbench_basic",
            system="",
            user="Use the following pieces of context to answer the question.\n\n{context}\n\nQuestion: {question}",
        ),
        PromptTemplate(
            name="cite_sentences",
            system="You answer questions using only the numbered context sentences you are given.",
            user=(
                "Context sentences, each with its key in square brackets:\n\n{context}\n\n"
                "Question: {question}\n\n"
                "Answer in a few sentences using only the context. End every sentence of your answer with "
                "the keys of the context sentences that support it, e.g. [0a][1c]. If the context does not "
                "contain the answer, say that you do not know."
            ),
            keyed_context=True,
        ),
        PromptTemplate(
            name="concise",
            system="You are a careful assistant. Answer only from the given context.",
            user=(
                "Context:\n{context}\n\nQuestion: {question}\n\n"
                "Answer in at most three sentences. If the context does not contain the answer, say so."
            ),
        ),
    )
}

_CITATION = re.compile(r"\s*\[(\d+[a-z]+(?:\s*[,;]\s*\d+[a-z]+)*)\]")


@dataclass(slots=True)
class Generation:
    text: str
    kind: str
    model: str
    prompt_template: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    status: str = "ok"  # ok | error
    error: str | None = None
    finish_reason: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    latency_s: float | None = None
    citations: list[list[str]] = field(default_factory=list)  # per answer sentence (cite_sentences, extractive)
    sentences: list[str] = field(default_factory=list)  # the answer's sentences, when the generator chose them

    @property
    def extractive(self) -> bool:
        return self.kind == "extractive"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def get_template(name: str) -> PromptTemplate:
    if name not in TEMPLATES:
        raise ValueError(f"unknown prompt template {name!r} (available: {', '.join(sorted(TEMPLATES))})")
    return TEMPLATES[name]


def render_context(chunks: Sequence[RetrievedChunk], keyed: bool) -> str:
    """The context block: documents separated by blank lines, or keyed sentences."""
    if not keyed:
        return "\n\n".join(f"Document {i + 1}:\n{c.text}" for i, c in enumerate(chunks))
    lines: list[str] = []
    for d, chunk in enumerate(chunks):
        lines.extend(f"[{document_key(d, i)}] {s}" for i, s in enumerate(chunk_sentences(chunk)))
        lines.append("")
    return "\n".join(lines).strip()


def build_messages(question: str, chunks: Sequence[RetrievedChunk], template: PromptTemplate) -> list[dict[str, str]]:
    user = template.user.format(context=render_context(chunks, template.keyed_context), question=question)
    messages = [{"role": "system", "content": template.system}] if template.system else []
    return messages + [{"role": "user", "content": user}]


def strip_citations(text: str) -> tuple[str, list[list[str]]]:
    """The answer without ``[0a][1c]`` markers, and the keys cited in each sentence."""
    cited = []
    for sentence, _, _ in split_sentences(text):
        keys = [k.strip() for group in _CITATION.findall(sentence) for k in re.split(r"[,;]", group)]
        cited.append(keys)
    return _CITATION.sub("", text).strip(), cited


def chunk_sentences(chunk: RetrievedChunk) -> list[str]:
    """A retrieved chunk's sentences: the ones ingestion recorded, else split here."""
    if chunk.sentences:
        return [chunk.text[a:b].strip() for a, b in chunk.sentences if chunk.text[a:b].strip()]
    return [s for s, _, _ in split_sentences(chunk.text)]


@dataclass(frozen=True, slots=True)
class ExtractiveAnswer:
    sentences: list[str]
    keys: list[str]

    @property
    def text(self) -> str:
        return " ".join(self.sentences) if self.sentences else NO_CONTEXT_ANSWER


def extractive_answer(
    question: str, chunks: Sequence[RetrievedChunk], max_sentences: int, embed,
    max_chars: int = EXTRACTIVE_MAX_CHARS,
) -> ExtractiveAnswer:
    """Whole retrieved sentences, verbatim, most similar to the question first (cosine
    of normalised embeddings), at most ``max_sentences`` of them and about ``max_chars``
    characters (the best one always, even when longer), each with its key (``0a``: the
    first chunk's first sentence). Headings and sentences repeated across chunks are
    skipped. ``embed(texts)`` returns normalised vectors."""
    candidates: list[tuple[str, str]] = []
    seen: set[str] = set()
    for d, chunk in enumerate(chunks):
        for i, sentence in enumerate(chunk_sentences(chunk)):
            if sentence not in seen and sentence not in chunk.heading_path and sentence not in chunk.headings:
                seen.add(sentence)
                candidates.append((document_key(d, i), sentence))
    if not candidates:
        return ExtractiveAnswer([], [])
    vectors = embed([question] + [s for _, s in candidates])
    similarity = vectors[1:] @ vectors[0]
    chosen: list[tuple[str, str]] = []
    used = 0
    for i in np.argsort(-similarity, kind="stable"):
        key, sentence = candidates[int(i)]
        if len(chosen) >= max_sentences:
            break
        if chosen and used + len(sentence) > max_chars:
            continue
        chosen.append((key, sentence))
        used += len(sentence) + 1
    return ExtractiveAnswer([s for _, s in chosen], [k for k, _ in chosen])


def generate_extractive(question: str, chunks: Sequence[RetrievedChunk], config: GeneratorConfig) -> Generation:
    started = time.perf_counter()
    answer = extractive_answer(question, chunks, config.max_sentences, _extractive_embedder().encode)
    return Generation(text=answer.text, kind="extractive", model=EXTRACTIVE_MODEL,
                      latency_s=time.perf_counter() - started, finish_reason="stop",
                      citations=[[k] for k in answer.keys], sentences=list(answer.sentences))


_EMBEDDER = None


def _extractive_embedder():
    global _EMBEDDER
    if _EMBEDDER is None:
        from rag_eval.encoders.embedder import Embedder

        _EMBEDDER = Embedder()
    return _EMBEDDER


def _llm_config(config: GeneratorConfig):
    from rag_eval.llm.config import LLMConfig

    return LLMConfig.from_settings(model=config.model, base_url=config.base_url, api_key_env=config.api_key_env,
                                   temperature=config.temperature, max_tokens=config.max_tokens)


def endpoint_configured(config: GeneratorConfig) -> bool:
    """Whether an OpenAI-compatible endpoint is configured (a base URL or a key)."""
    try:
        llm = _llm_config(config)
    except ValueError:
        return False
    return bool(llm.base_url or llm.has_key())


def _from_completion(completion, template: PromptTemplate, base: dict[str, Any], model: str) -> Generation:
    text = (completion.text or "").strip()
    citations: list[list[str]] = []
    if template.keyed_context:
        text, citations = strip_citations(text)
    generation = Generation(
        text=text, finish_reason=completion.finish_reason, tokens=dict(completion.usage or {}),
        cost_usd=completion.cost_usd, latency_s=completion.latency_s, citations=citations, **base,
    )
    generation.model = completion.model or model
    if not text:
        reason = f"refused: {completion.refusal}" if completion.refusal else f"finish_reason={completion.finish_reason}"
        generation.status, generation.error = "error", f"empty answer ({reason})"
    return generation


def _failed(err: BaseException, config: GeneratorConfig, base: dict[str, Any], latency: float | None = None) -> Generation:
    return Generation(text="", status="error", error=redact(f"{type(err).__name__}: {err}", setting(config.api_key_env)),
                      latency_s=latency, **base)


def _base(config: GeneratorConfig, template: PromptTemplate, model: str) -> dict[str, Any]:
    return dict(kind="openai", model=model, prompt_template=template.name,
                temperature=config.temperature, max_tokens=config.max_tokens)


def generate_openai_many(
    questions: Sequence[str], chunk_lists: Sequence[Sequence[RetrievedChunk]], config: GeneratorConfig, client=None
) -> list[Generation]:
    """Answers from the chat endpoint, requests sent concurrently (the client's limiter
    and retries apply); one :class:`Generation` per question, failures included."""
    from rag_eval.llm.client import LLMClient  # the same client the LLM judge uses

    template = get_template(config.prompt_template)
    try:
        client = client or LLMClient(_llm_config(config))
    except Exception as err:  # bad settings: every item fails with the reason
        return [_failed(err, config, _base(config, template, config.model or "")) for _ in questions]
    model = getattr(getattr(client, "config", None), "model", None) or config.model or ""
    base = _base(config, template, model)
    batch = [build_messages(q, chunks, template) for q, chunks in zip(questions, chunk_lists)]
    results = client.complete_many(batch, temperature=config.temperature, max_tokens=config.max_tokens)
    return [
        _failed(r, config, base) if isinstance(r, BaseException) else _from_completion(r, template, base, model)
        for r in results
    ]


def generate_many(
    questions: Sequence[str], chunk_lists: Sequence[Sequence[RetrievedChunk]], config: GeneratorConfig, client=None
) -> list[Generation]:
    """Answers by ``config.kind``, one per question (concurrent requests for the chat
    endpoint). An ``openai`` generator with no endpoint configured (no base URL, no key)
    answers extractively instead, and its results say ``extractive``."""
    if config.kind == "openai" and (client is not None or endpoint_configured(config)):
        return generate_openai_many(questions, chunk_lists, config, client)
    return [generate_extractive(q, chunks, config) for q, chunks in zip(questions, chunk_lists)]
