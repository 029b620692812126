"""The judge interface shared by the LLM judge and the local judge.

A judge takes :class:`~rag_eval.schema.EvalItem` objects and returns one
:class:`~rag_eval.schema.JudgeResult` per item, in the same order, each with an
explicit status. A judge never raises for a bad item: the failure is the result.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rag_eval.schema import EvalItem, JudgeResult

if TYPE_CHECKING:
    from rag_eval.llm.config import LLMConfig

ProgressCallback = Callable[[int, int], None]  # (done, total)
# Rows per call of a batch judge: the local judge's own batch, a Ray task, the streaming
# executor's batch for a judge without ``judge_one``. One constant: a Ray worker then embeds
# exactly what one process would, and progress/cancel are checked between batches everywhere.
BATCH_ROWS = 64
#: The local judge's processes on the command line when not told (``--workers``): one per
#: core, at most this many. Each is a Python process with its own GIL (the judge's features
#: are Python) and ~180 MB; the dashboard and the Python API use one unless asked.
LOCAL_WORKERS_MAX = 4


def local_workers() -> int:
    """The command line's default number of local-judge processes (see :data:`LOCAL_WORKERS_MAX`)."""
    import os

    return max(1, min(os.cpu_count() or 1, LOCAL_WORKERS_MAX))


@runtime_checkable
class Judge(Protocol):
    """Anything with a ``name`` (recorded with every result, e.g. ``"local:2.0.0"``
    or ``"llm:gpt-4o-mini"``) and a ``judge`` method."""

    name: str

    def judge(
        self,
        items: Sequence[EvalItem],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> list[JudgeResult]:
        """One result per item, in input order. When ``cancel`` is set, items not
        yet judged end with status ``cancelled``."""
        ...


@runtime_checkable
class ManagedJudge(Judge, Protocol):
    """A judge that connects before the first item (Ray: an unreachable cluster fails
    before a run exists) and lets go of what it holds afterwards."""

    def start(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class PooledClient(Protocol):
    """An LLM client whose connections a whole stream of rows can share:
    ``session()`` opens (or reuses) the running event loop's session, closed when its
    outermost user exits (:class:`~rag_eval.llm.client.LLMClient`)."""

    def session(self) -> AbstractAsyncContextManager[Any]: ...


@runtime_checkable
class ClientJudge(Judge, Protocol):
    """A judge that sends its rows through an LLM client (the LLM judge): the streaming
    executor opens the client's session once for every row instead of once per row."""

    client: PooledClient


@runtime_checkable
class PromptJudge(Judge, Protocol):
    """A judge that asks an LLM endpoint with a prompt of its own (the LLM judge): what
    :class:`~rag_eval.runs.row_cache.RowCache` keys a judged row on, so a change of
    endpoint, prompt or sampling is a miss and an identical rerun a hit."""

    config: LLMConfig
    prompt_id: str
    samples: int
    consistency_check: bool
    sample_temperature: float

    def messages_for(self, item: EvalItem) -> list[dict[str, str]]:
        """The chat messages the judge would send for ``item`` (nothing is sent)."""
        ...


#: Letters outside ASCII, and ASCII letters: what decides that a text reads the English way.
_OTHER_LETTER = re.compile(r"[^\W\d_A-Za-z]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
#: At most this share of a text's letters outside ASCII ("café", "Pokémon" in English).
_MOSTLY_ASCII = 0.02


def item_language(item: EvalItem) -> str:
    """The item's language: the one it carries (given or detected when it was built), else
    detected from its response and question (:data:`rag_eval.text.language.UNKNOWN` when
    they hold no letter). Text whose letters are (almost) all ASCII is read as English
    without asking the detector (its model costs ~0.5 s to load and ~1 ms a text, against
    ~10 ms a row for the whole local judge): the judges' English path, which reads
    Indonesian, Swahili, Finnish and German as well (``bench/bench_language_judges.py``)."""
    if item.language:
        return item.language
    from rag_eval.text.language import UNKNOWN, language_of

    response = item.response or " ".join(s.text for s in item.response_sentences)
    text = f"{response} {item.question}"
    ascii_letters = len(_ASCII_LETTER.findall(text))
    other = len(_OTHER_LETTER.findall(text)) if not text.isascii() else 0
    if other <= _MOSTLY_ASCII * ascii_letters:
        return "en" if ascii_letters else UNKNOWN
    return language_of(response, item.question)


def unreadable(item: EvalItem, language: str, languages: frozenset[str] | None = None) -> str | None:
    """Why a judge that reads ``languages`` (None: every language whose words
    :mod:`rag_eval.text.words` counts) cannot read ``item`` in ``language``, or None when it
    can. A judge ends such an item ``unsupported_language`` with this reason: a text it
    cannot read is never "supported" for finding nothing to contradict."""
    from rag_eval.text.language import UNKNOWN
    from rag_eval.text.words import word_tuple

    named = "undetected language" if language == UNKNOWN else f"language '{language}'"
    if languages is not None and language not in languages:
        return f"this judge does not read {named} (it reads {', '.join(sorted(languages))})"
    if not any(word_tuple(s.text) for s in item.response_sentences):
        return f"no word this judge can read in the response ({named})"
    if not any(word_tuple(s.text) for doc in item.documents for s in doc):
        return f"no word this judge can read in the documents ({named})"
    return None


# -- what build_judge (rag_eval.judges.factory) builds from: plain, picklable data ----------
class JudgeUsageError(ValueError):
    """The judge asked for cannot be built (a usage error: nothing was run)."""


@dataclass(frozen=True, slots=True)
class RaySpec:
    """Where to spread the judge: ``address`` of a Ray cluster (``auto``,
    ``ray://host:10001``) or None for a local Ray instance with ``workers`` CPUs."""

    address: str | None = None
    workers: int = 2


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """Everything that decides which judge labels the rows (picklable: a Ray actor
    receives it and builds the very same judge).

    ``calibration`` is a stored calibration's name, or its loaded JSON (what Ray actors
    get, so a remote worker needs no file). ``llm`` is a ready ``LLMConfig``; without it
    the LLM judge's settings come from the environment overridden by the fields here."""

    kind: str = "local"
    calibration: Any = None  # str | dict | None
    model_path: str | None = None
    llm: Any = None  # LLMConfig | None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    prompt_id: str | None = None
    concurrency: int | None = None
    samples: int = 1
    consistency_check: bool = False
    options: Any = None  # a plugin kind's options (dict), validated by its JudgeKind's model
    workers: int | None = None  # the local judge's processes (None: one, this process)
