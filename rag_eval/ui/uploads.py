"""Uploaded files, named the way the user named them.

Uploads are written under the data directory (``data.save_uploads``) so the library can
read them as files; every message about them names the user's file, never the server
path it was saved to."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rag_eval.ui import data


def save(files: list[Any], *subfolder: str) -> dict[Path, str]:
    """Save the uploads; returns {server path: the user's file name}, in upload order."""
    paths = data.save_uploads(files, *subfolder)
    return {path: Path(str(upload.name).replace("\\", "/")).name for path, upload in zip(paths, files)}


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
