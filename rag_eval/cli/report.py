"""Plain-text renderings of an :class:`~rag_eval.runs.ask.AskResult` for the
terminal: retrieved chunks, the answer, the four TRACe metrics and the support map.
Pure functions returning strings, so the CLI only echoes them and tests read them."""

from __future__ import annotations

import textwrap

from rag_eval.schema import METRIC_NAMES, EvalItem, Labels
from rag_eval.text.keys import normalize_key

WIDTH = 100


def _short(text: str, width: int = WIDTH) -> str:
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder=" …")


def format_chunks(chunks) -> str:
    lines = []
    for rank, c in enumerate(chunks, start=1):
        lines.append(f"{rank}. [{c.score:.3f}] {c.doc_id} #{c.chunk_index} ({c.source})")
        lines.append(textwrap.indent(textwrap.fill(" ".join(c.text.split()), WIDTH - 5), "     "))
    return "\n".join(lines) if lines else "(no chunks retrieved)"


def support_map_text(item: EvalItem, labels: Labels | None) -> str:
    """Each response sentence with its support status and supporting keys, then each
    document sentence marked R (relevant), U (utilized), RU (both) or '-'."""
    if labels is None:
        return "(no labels: the judgement failed)"
    unsupported = {normalize_key(k) for k in labels.unsupported_response_sentence_keys}
    support = {normalize_key(s.response_sentence_key): s for s in labels.sentence_support_information}
    relevant = {normalize_key(k) for k in labels.all_relevant_sentence_keys}
    utilized = {normalize_key(k) for k in labels.all_utilized_sentence_keys}
    lines = ["Response sentences:"]
    for s in item.response_sentences:
        info = support.get(s.key)
        mark = "✗ unsupported" if s.key in unsupported else "✓ supported"
        keys = f" by {', '.join(info.supporting_sentence_keys)}" if info and info.supporting_sentence_keys else ""
        lines.append(f"  [{s.key}] {mark}{keys}: {_short(s.text, WIDTH - 30)}")
    lines.append("Document sentences (R relevant, U utilized):")
    for d, doc in enumerate(item.documents):
        lines.append(f"  document {d}:")
        for s in doc:
            tag = ("R" if s.key in relevant else "") + ("U" if s.key in utilized else "")
            lines.append(f"    {tag or '-':>2} [{s.key}] {_short(s.text, WIDTH - 14)}")
    return "\n".join(lines)


def format_scores(scores) -> str:
    if scores is None:
        return "(not scored)"
    values = scores.metric_values()
    parts = [f"{name} {'n/a' if values[name] is None else f'{values[name]:.3f}'}" for name in METRIC_NAMES]
    return "  ".join(parts) + f"  (adherence score {scores.adherence_score:.3f}, mode {scores.mode})"


def format_ask_result(result, show_support_map: bool = True) -> str:
    g = result.generation
    label = "extractive answer (no LLM configured: retrieved sentences closest to the question)" if g.extractive \
        else f"answer from {g.model} (template {g.prompt_template})"
    out = ["Retrieved chunks:", format_chunks(result.chunks), "", f"Answer [{label}]:"]
    out.append(textwrap.fill(g.text, WIDTH) if g.status == "ok" else f"(generation failed: {g.error})")
    out.append("")
    jr = result.judge_result
    if result.judge_error:
        out.append(f"Not judged: {result.judge_error}")
    if jr is not None:
        out.append(f"Judge {jr.judge}: {jr.status.value}" + (f" ({jr.error})" if jr.error else ""))
        out.append("TRACe: " + format_scores(result.scores))
        if show_support_map:
            out += ["", support_map_text(result.item, jr.labels)]
    return "\n".join(out)
