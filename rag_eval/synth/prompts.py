"""The prompts that ask an LLM for one synthetic question (system + user messages)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from rag_eval.datasets.schema import CANNOT_ANSWER, DatasetRow, QueryType
from rag_eval.synth.plan import Task

PROMPT_ID = "synth-v1"

SYSTEM_PROMPT = (
    "You write questions for evaluating a retrieval-augmented question answering system. "
    "Use only the passages you are given, never outside knowledge. "
    "Reply with one JSON object and nothing else."
)

TYPE_INSTRUCTIONS = {
    QueryType.SIMPLE: (
        "Write one factual question that passage C1 answers with a fact it states. "
        "The answer must be short and fully supported by C1."
    ),
    QueryType.MULTI_HOP: (
        "Write one question whose answer needs facts from both C1 and C2 (for example, a fact in one "
        "passage identifies what the other passage tells about). Neither passage alone may be enough. "
        "Cite both passages."
    ),
    QueryType.COMPARISON: (
        "Write one question that compares something described in C1 with something described in C2 "
        "(which is larger, earlier, different, shared...). The answer must follow from the two passages. "
        "Cite both passages."
    ),
    QueryType.DISTRACTING: (
        "C1 answers the question; C2 is on a similar topic but does not contain the answer. Write one "
        "question answered by C1 alone, phrased so that C2 also looks relevant. Cite only C1."
    ),
    QueryType.UNANSWERABLE: (
        "Write one question on the topic of C1 that a user could plausibly ask but that the passage does "
        f"not answer (the information is absent from it). The answer must be exactly \"{CANNOT_ANSWER}\" "
        "and supporting_chunks must be empty."
    ),
}


def _reply_schema(negatives: bool, qtype: QueryType) -> str:
    fields = {
        "question": "the question, as a user would type it",
        "answer": CANNOT_ANSWER if qtype is QueryType.UNANSWERABLE else "the reference answer, from the passages only",
        "supporting_chunks": "[] " if qtype is QueryType.UNANSWERABLE else "[labels of the passages that support the answer, e.g. \"C1\"]",
        "difficulty": "easy | medium | hard",
    }
    if negatives:
        fields["negative_answer"] = (
            "a plausible but wrong answer that the passages do not support (same form and length as a real answer)"
        )
    return "{" + ", ".join(f'"{k}": <{v}>' for k, v in fields.items()) + "}"


def few_shot_examples(rows: Sequence[DatasetRow], k: int, rng: random.Random) -> list[DatasetRow]:
    """Up to ``k`` golden rows as style examples, preferring rows with a reference answer."""
    pool = sorted(rows, key=lambda r: (not r.reference_answers, r.id))
    with_answer = [r for r in pool if r.reference_answers] or pool
    return rng.sample(with_answer, min(k, len(with_answer)))


def build_messages(
    task: Task, negatives: bool = False, examples: Sequence[DatasetRow] = (), max_chunk_chars: int = 2000
) -> list[dict[str, str]]:
    """The chat messages for one task (system + user)."""
    parts = [TYPE_INSTRUCTIONS[task.query_type]]
    if examples:
        lines = ["Match the style and length of these questions from real users:"]
        for ex in examples:
            lines.append(f"- Q: {ex.question}")
            if ex.reference_answer and task.query_type is not QueryType.UNANSWERABLE:
                lines.append(f"  A: {ex.reference_answer[:300]}")
        parts.append("\n".join(lines))
    passages = []
    for label, chunk in task.labels.items():
        title = f" ({chunk.title})" if chunk.title else ""
        passages.append(f"[{label}]{title}\n{chunk.text[:max_chunk_chars]}")
    parts.append("Passages:\n\n" + "\n\n".join(passages))
    parts.append("Reply with JSON: " + _reply_schema(negatives, task.query_type))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]
