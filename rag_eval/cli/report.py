"""Plain-text renderings of an :class:`~rag_eval.runs.ask.AskResult` for the
terminal: retrieved chunks, the answer, the four TRACe metrics and the support map.
Pure functions returning strings, so the CLI only echoes them and tests read them."""

from __future__ import annotations

import textwrap

from rag_eval.display.support_map import support_map_text
from rag_eval.metrics.registry import TRACE_METRICS

WIDTH = 100


def _verbatim(text: str, indent: str = "     ") -> str:
    """The text as it is: its own line breaks kept (code stays code), long lines wrapped
    at spaces only, never rebuilt from tokens."""
    out: list[str] = []
    for line in text.split("\n"):
        wrapped = textwrap.wrap(line, WIDTH - len(indent), break_long_words=False, break_on_hyphens=False,
                                drop_whitespace=True) if len(line) > WIDTH - len(indent) else [line]
        out.extend(indent + w for w in wrapped or [""])
    return "\n".join(out)


def format_chunks(chunks) -> str:
    lines = []
    for rank, c in enumerate(chunks, start=1):
        where = c.location if hasattr(c, "location") else c.source
        lines.append(f"{rank}. [{c.score:.3f}] {where} #{c.chunk_index}")
        lines.append(_verbatim(c.text))
    return "\n".join(lines) if lines else "(no chunks retrieved)"


def format_scores(scores) -> str:
    if scores is None:
        return "(not scored)"
    values = scores.metric_values()
    parts = [f"{name} {'n/a' if values[name] is None else f'{values[name]:.3f}'}" for name in TRACE_METRICS]
    text = "  ".join(parts) + f"  (adherence score {scores.adherence_score:.3f}, mode {scores.mode})"
    if scores.diagnostics.get("completeness_vacuous"):
        text += "\n  completeness is vacuous: the judge found no relevant sentence, so there is nothing to cover"
    repairs = scores.diagnostics.get("label_repairs")
    if repairs:
        added = ", ".join(f"{k.replace('_', ' ')}: {' '.join(map(str, v))}" for k, v in repairs.items())
        text += f"\n  labels repaired for consistency ({added})"
    return text


def format_ask_result(result, show_support_map: bool = True) -> str:
    g = result.generation
    label = "extractive answer (no LLM configured: the retrieved sentences closest to the question, verbatim)" if g.extractive \
        else f"answer from {g.model} (template {g.prompt_template})"
    out = ["Retrieved chunks:", format_chunks(result.chunks), "", f"Answer [{label}]:"]
    if g.status != "ok":
        out.append(f"(generation failed: {g.error})")
    elif g.sentences and len(g.citations) == len(g.sentences):  # whole source sentences, each with its key
        out.extend(_verbatim(f"{s} [{']['.join(keys)}]", "  ") for s, keys in zip(g.sentences, g.citations))
    else:
        out.append(_verbatim(g.text, ""))
    out.append("")
    jr = result.judge_result
    if result.judge_error:
        out.append(f"Not judged: {result.judge_error}")
    if jr is not None:
        out.append(f"Judge {jr.judge}: {jr.status.value}" + (f" ({jr.error})" if jr.error else ""))
        out.append("TRACe: " + format_scores(result.scores))
        fields = result.report_fields()
        if fields["average"] is not None:
            from rag_eval.metrics.report_fields import rmse_band

            out.append(f"average {fields['average']:.3f} · rmse_aggregation {fields['rmse_aggregation']:.3f} "
                       f"({rmse_band(fields['rmse_aggregation'])}) · sentences fully / partially / unsupported "
                       f"{fields['fully_supported_sentences']} / {fields['partially_supported_sentences']} / "
                       f"{fields['unsupported_sentences']}")
        if show_support_map:
            out += ["", support_map_text(result.item, jr.labels)]
    return "\n".join(out)
