"""The Batch page's dataset: read once per source, checked once per content.

Every widget interaction reruns the page. An unchanged upload or saved dataset is not
saved and read again: its rows stay in session state (one dataset per session, the one
on screen). The row check (``prepare_row``, or ``parse_row`` for a RAG run), the count of
rows holding a response and the estimate of what a run sends are cached
(``st.cache_data``, a few entries) on a digest of the content, so a click that does not
change the dataset costs nothing per row. A changed file, mode or label is checked again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from rag_eval.datasets.io import iter_raw
from rag_eval.io.rows import FileFormatError, RowError
from rag_eval.runs import prepare
from rag_eval.ui import data, settings, uploads

JUDGE, RAG = "judge", "rag"  # what the rows are checked for: judging given responses, or running the RAG system
LOADED = "batch.loaded"  # session state: (source key, LoadedDataset) of the dataset on screen
CHECK_ENTRIES = 8  # datasets x modes whose check results stay cached (problems only, not rows)


@dataclass(frozen=True)
class LoadedDataset:
    label: str  # what problems and runs name it by (the user's file name)
    rows: list[tuple[int, Any]]  # (row number, row or RowError)
    fingerprint: str  # digest of the content the rows were read from
    problem: str | None = None  # why the file cannot be read at all (naming the user's file)


def digest(content: bytes) -> str:
    return hashlib.blake2b(content, digest_size=16).hexdigest()


def builtin(label: str, rows: Sequence[dict[str, Any]]) -> LoadedDataset:
    """A packaged dataset (demo questions, labelled sample): small, fingerprinted by its rows."""
    content = json.dumps(list(rows), sort_keys=True, default=str).encode("utf-8")
    return LoadedDataset(label, list(enumerate(rows, start=1)), digest(content))


def _held(key: Hashable, read: Callable[[], LoadedDataset]) -> LoadedDataset:
    """The dataset read for ``key`` on an earlier rerun of this session, or ``read()``."""
    held = st.session_state.get(LOADED)
    if held is not None and held[0] == key:
        return held[1]
    st.session_state[LOADED] = None  # the previous dataset is let go before the next is read
    dataset = read()
    st.session_state[LOADED] = (key, dataset)
    return dataset


def forget() -> None:
    """Let go of the rows held for the page (the upload was removed)."""
    st.session_state[LOADED] = None


def _named(pairs: Any, saved: dict[Path, str]) -> list[tuple[int, Any]]:
    """Read errors naming the user's file, not the server path."""
    return [(n, uploads.renamed([v], saved)[0] if isinstance(v, RowError) else v) for n, v in pairs]


def saved_dataset(name: str) -> LoadedDataset:
    """A dataset the Datasets page saved; read again only when its file changes."""
    path = data.datasets_dir() / f"{name}.jsonl"
    try:
        stat = path.stat()
        key: Hashable = ("saved", str(path), stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = ("saved", str(path), None, None)

    def read() -> LoadedDataset:
        saved = {path: f"{name}.jsonl"}  # problems name the file, not its path
        rows = _named(iter_raw(path), saved)
        return LoadedDataset(name, rows, digest(path.read_bytes()))

    return _held(key, read)


def uploaded(upload: Any, *subfolder: str) -> LoadedDataset:
    """An uploaded file, saved under ``subfolder`` and read on the first rerun that sees
    this upload only; one that cannot be read has no rows and its ``problem``."""
    key = ("upload", upload.file_id, upload.name, upload.size)

    def read() -> LoadedDataset:
        saved = uploads.save([upload], *subfolder)  # messages name the user's file, not the server path
        try:
            rows = _named(iter_raw(*saved), saved)
        except (FileFormatError, ValueError) as err:  # a CSV quoting error, not UTF-8...: said as every path says it
            return LoadedDataset(upload.name, [], digest(upload.getvalue()), uploads.user_names(str(err), saved))
        return LoadedDataset(upload.name, rows, digest(upload.getvalue()))

    return _held(key, read)


def shape_problem(dataset: LoadedDataset, mode: str) -> str | None:
    """The file's one verdict in ``mode`` (:func:`rag_eval.datasets.validate.shape_issue`, as
    the CLI and the API give it): unreadable, no rows, or a required column missing (named
    once with the names it is accepted under); None when the rows can be checked one by one."""
    from rag_eval.datasets.schema import JUDGED_ROW_REQUIRED, QUESTION_REQUIRED
    from rag_eval.datasets.validate import shape_issue

    if dataset.problem:
        return dataset.problem
    issue = shape_issue(dataset.label, dataset.rows, JUDGED_ROW_REQUIRED if mode == JUDGE else QUESTION_REQUIRED)
    return None if issue is None else issue.reason


#: a cached function hashes a dataset by its content's digest and its name (which problems
#: name), never by its rows
_BY_CONTENT: dict[str | type[Any], Callable[[Any], Any]] = {
    LoadedDataset: lambda dataset: (dataset.fingerprint, dataset.label)}


@st.cache_data(max_entries=CHECK_ENTRIES, show_spinner="Checking the rows…", hash_funcs=_BY_CONTENT)
def _problems(dataset: LoadedDataset, mode: str) -> list[tuple[int, int, str]]:
    """(position, row number, problem) of every row not usable in ``mode``."""
    problems = []
    for position, (number, value) in enumerate(dataset.rows):
        error: RowError | str | None
        if mode == JUDGE:
            error = prepare.prepare_row(value, number, dataset.label).error
        else:
            from rag_eval.runs import sources  # the RAG pipeline loads when a RAG dataset is checked

            error = sources.parse_row(value, number, dataset.label, position).error
        if error:
            problems.append((position, number, str(error)))
    return problems


def check(dataset: LoadedDataset, mode: str, limit: int | None = None) -> tuple[int, pd.DataFrame]:
    """Of the first ``limit`` rows (all by default): how many are usable in ``mode``, and a
    table (row, problem naming the file, the row and the field) of the others."""
    limit = len(dataset.rows) if limit is None else min(limit, len(dataset.rows))
    found = _problems(dataset, mode)
    problems = [{"row": number, "problem": text} for position, number, text in found if position < limit]
    return limit - len(problems), pd.DataFrame(problems, columns=["row", "problem"])


def default_run_name(label: str, kind: str) -> str:
    """``demo-questions-dense-k5`` for the demo questions run densely at k = 5; a dataset whose
    name already ends with the kind (one saved from such a run) keeps its name, not
    ``…-dense-k5-dense-k5``."""
    stem = label.split(".")[0].strip().replace(" ", "-")
    return stem if stem == kind or stem.endswith(f"-{kind}") else f"{stem}-{kind}".strip("-")


def usable_note(usable: int, chosen: int, total: int) -> str:
    """The Batch page's line on the rows it will run: how many of the chosen are usable, and what
    becomes of the others only when there are others."""
    of = f" ({chosen} of the dataset's {total} chosen)" if chosen < total else " (all rows)"
    others = chosen - usable
    fate = ("" if others == 0 else "; the other row is kept" if others == 1 else f"; the other {others} rows are kept")
    return f"**{usable} of {chosen}** rows are usable{of}{fate}" + (
        " and reported with status `invalid_input`." if others else ".")


@st.cache_data(max_entries=CHECK_ENTRIES, show_spinner=False, hash_funcs=_BY_CONTENT)
def judged_rows(dataset: LoadedDataset) -> int:
    """How many rows hold a response to judge (the page offers judging first when most do)."""
    return sum(1 for _, v in dataset.rows if isinstance(v, dict) and prepare.has_response(v))


@st.cache_data(max_entries=CHECK_ENTRIES, show_spinner="Estimating what the run sends…", hash_funcs=_BY_CONTENT)
def _estimate(dataset: LoadedDataset, mode: str, limit: int, config_json: str, llm_json: str, collection: str | None,
              metrics: tuple[str, ...]) -> Any:
    from rag_eval.judges.factory import judge_spec
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.engine import item_metrics
    from rag_eval.runs.estimate import estimate_run
    from rag_eval.runs.sources import RagSource, RowsSource

    config = RagConfig.model_validate_json(config_json)
    rows = dataset.rows[:limit]
    source = (RowsSource(rows, label=dataset.label, language=config.language) if mode == JUDGE
              else RagSource(rows, config, collection or "", label=dataset.label))
    return estimate_run(source, judge_spec(config.judge, llm=settings.llm_from_json(llm_json)), item_metrics(metrics))


def estimate(dataset: LoadedDataset, mode: str, limit: int, config: Any, collection: str | None = None) -> Any:
    """What running the first ``limit`` rows in ``mode`` with ``config`` sends
    (:func:`rag_eval.runs.estimate.estimate_run`, the estimate of ``rag-eval judge --dry-run``),
    computed once per dataset, mode, row count and settings."""
    from rag_eval.runs.engine import item_metrics

    metrics = tuple(m.name for m in item_metrics(None))
    return _estimate(dataset, mode, limit, config.model_dump_json(), settings.llm_json_for(config.judge), collection,
                     metrics)
