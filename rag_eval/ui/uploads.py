"""Uploaded files, named the way the user named them.

Uploads are written under the data directory (:func:`save`) so the library can
read them as files; every message about them names the user's file, never the server
path it was saved to."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_eval.config import data_dir


def save(files: list[Any], *subfolder: str) -> dict[Path, str]:
    """Write the uploads under ``data_dir()/uploads/<subfolder...>`` (names flattened, so an
    upload cannot escape the folder); returns {server path: the user's file name}, in upload order."""
    folder = data_dir().joinpath("uploads", *subfolder)
    folder.mkdir(parents=True, exist_ok=True)
    saved = {}
    for upload in files:
        name = Path(str(upload.name).replace("\\", "/")).name
        saved[folder / name] = name
        (folder / name).write_bytes(upload.getvalue())
    return saved


def user_names(text: str, names: Mapping[Path, str]) -> str:
    """``text`` with every saved path replaced by the user's file name."""
    for path, name in sorted(names.items(), key=lambda kv: len(str(kv[0])), reverse=True):
        text = text.replace(str(path), name)
    return text


def renamed(problems: Iterable[Any], names: Mapping[Path, str]) -> list[Any]:
    """Issues / RowErrors (dataclasses with ``file`` and ``message``) naming the user's files."""
    by_path = {str(p): n for p, n in names.items()}
    out = []
    for problem in problems:
        changes = {"file": by_path.get(str(problem.file), user_names(str(problem.file), names))}
        if hasattr(problem, "message"):
            changes["message"] = user_names(str(problem.message), names)
        out.append(dataclasses.replace(problem, **changes))
    return out


def not_ingestible(name: str, accepted: Sequence[str]) -> str | None:
    """Why the Corpus page cannot ingest the file ``name`` (None when its type is one of
    ``accepted``): a table of rows is a dataset, evaluated elsewhere, not documents."""
    from rag_eval.io.rows import SUPPORTED_SUFFIXES as ROW_SUFFIXES

    suffix = Path(name).suffix.lower()
    if suffix in accepted:
        return None
    where = ("; a table of rows is a dataset: import it on Datasets, or evaluate it on Batch"
             if suffix in ROW_SUFFIXES else "")
    return (f"{name}: {suffix + ' files' if suffix else 'a file without a type'} cannot be ingested "
            f"(a collection takes {', '.join(accepted)}){where}")
