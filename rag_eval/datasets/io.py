"""Read and write dataset files (JSONL, JSON, CSV, Parquet) losslessly, on top of
:mod:`rag_eval.io.rows` (every format read row by row, bad rows reported).

- **CSV** cells hold text: a value that is not a plain string is written as JSON, and a
  string that would read back as JSON (``"123"``, ``"true"``, ``"[x]"``) JSON-quoted; an
  empty cell means "absent"; a hand-written cell that is not valid JSON is text.
- **Parquet** stores lists of strings natively; a column of objects (or mixed types) is
  stored as JSON text, named in the file's schema metadata (structs would add missing keys
  as nulls, which changes the rows).

Loading validates every row against :class:`DatasetRow`; a row that fails comes back as
issues naming file, row and field, never dropped silently.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rag_eval.datasets.schema import QUESTION_REQUIRED, DatasetRow
from rag_eval.datasets.validate import Issue, Severity, check_rows, issues_from_validation_error, shape_issue
from rag_eval.io.rows import RowError, iter_rows, write_rows

JSON_COLUMNS_KEY = b"rag_eval.json_columns"


@dataclass(slots=True)
class LoadResult:
    """Valid rows (in file order), the file and row number each came from, and every issue
    found (including rows that could not be loaded, with the reason). What reading a
    dataset file and importing one both return."""

    rows: list[DatasetRow] = field(default_factory=list)
    origins: list[tuple[str, int]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity is Severity.ERROR]

    @property
    def left_out(self) -> list[Issue]:
        """The first error of each input row (or whole file: row 0) that did not become a
        row. A row kept despite an error (an empty context list) is not in it."""
        kept = set(self.origins)
        first: dict[tuple[str, int], Issue] = {}
        for issue in self.errors:
            if (issue.file, issue.row) not in kept:
                first.setdefault((issue.file, issue.row), issue)
        return list(first.values())

    def outcome(self, saved_as: str, shown: int = 3) -> str:
        """The one message an import ends with: what was kept (as ``saved_as``), how many
        rows (or files) were left out and the first reasons; or that nothing was saved, and why."""
        left = self.left_out
        reasons = "; ".join(i.reason for i in left[:shown]) + (f"; and {len(left) - shown} more" if len(left) > shown else "")
        rows, files = sum(1 for i in left if i.row), sum(1 for i in left if not i.row)
        what = " and ".join(_count(n, word) for n, word in ((rows, "row"), (files, "file")) if n)
        if not self.rows:
            return f"Nothing was saved: left out {what}: {reasons}." if left else "Nothing was saved: the file(s) hold no row."
        kept = f"Saved {_count(len(self.rows), 'row')} as {saved_as}"
        return f"{kept}; left out {what}: {reasons}." if left else kept + "."

def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ---------------------------------------------------------------- CSV cell codec
def _looks_like_json(text: str) -> bool:
    try:
        json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return False
    return True


def encode_csv_value(value: Any) -> str | None:
    """A value as CSV cell text (``None`` means an empty cell / absent)."""
    if value is None:
        return None
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if (value == "" or _looks_like_json(value.strip())) else value
    return json.dumps(value, ensure_ascii=False)


def decode_csv_value(value: Any) -> Any:
    """Inverse of :func:`encode_csv_value` for one cell as read by ``rows.py``
    (which already decoded cells starting with ``[`` or ``{``)."""
    if not isinstance(value, str):
        return value
    if value == "":
        return None
    try:
        return json.loads(value)
    except (json.JSONDecodeError, ValueError):
        return value


# ---------------------------------------------------------------- Parquet codec
def _has_dict(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_dict(v) for v in value)
    return False


def _write_parquet(records: list[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = list(dict.fromkeys(k for r in records for k in r))
    arrays, json_columns = {}, []
    for name in columns:
        values = [r.get(name) for r in records]
        array = None
        if not any(_has_dict(v) for v in values):
            try:
                array = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                array = None
        if array is None:
            json_columns.append(name)
            array = pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values], pa.string())
        arrays[name] = array
    table = pa.table(arrays) if arrays else pa.table({"id": pa.array([], pa.string())})
    table = table.replace_schema_metadata({JSON_COLUMNS_KEY: json.dumps(json_columns).encode()})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def _parquet_json_columns(path: Path) -> set[str]:
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except Exception:  # unreadable files are reported by iter_rows
        return set()
    raw = meta.get(JSON_COLUMNS_KEY)
    return set(json.loads(raw)) if raw else set()


# ---------------------------------------------------------------- raw rows
def iter_raw(path: str | Path) -> Iterable[tuple[int, dict[str, Any] | RowError]]:
    """``(row_number, plain dict | RowError)`` with this module's CSV/Parquet
    encodings undone and ``None`` values dropped (absent and null are the same)."""
    path = Path(path)
    suffix = path.suffix.lower()
    json_cols = _parquet_json_columns(path) if suffix == ".parquet" and path.exists() else set()
    for number, row in iter_rows(path):
        if isinstance(row, RowError):
            yield number, row
            continue
        out = {}
        for key, value in row.items():
            if suffix == ".csv":
                value = decode_csv_value(value)
            elif key in json_cols and isinstance(value, str):
                try:
                    value = json.loads(value)
                except json.JSONDecodeError:
                    yield number, RowError(str(path), number, key, "column is marked JSON but the cell is not valid JSON")
                    break
            if value is not None:
                out[key] = value
        else:
            yield number, out


def good_rows(path: str | Path, issues: list[Issue]) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_raw`'s usable rows; each unreadable one becomes an error in ``issues``
    (in file order, as it is met)."""
    for number, row in iter_raw(path):
        if isinstance(row, RowError):
            issues.append(Issue.from_row_error(row))
        else:
            yield number, row


def finish_rows(result: LoadResult, numbered: list[tuple[int, dict[str, Any], str]]) -> LoadResult:
    """Check every record (duplicate ids across files included), then build the rows;
    a record the schema rejects becomes issues (not already reported by the checks)."""
    by_file: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for number, record, file in numbered:
        by_file[file].append((number, record))
    for file, rows in by_file.items():
        result.issues.extend(check_rows(rows, file))
    first: dict[str, tuple[str, int]] = {}
    for number, record, file in numbered:  # duplicates across files
        rid = str(record.get("id"))
        if rid in first and first[rid][0] != file:
            result.issues.append(Issue(file, number, "id", f"duplicate id '{rid}' (first at {first[rid][0]} row {first[rid][1]})"))
        first.setdefault(rid, (file, number))
    reported = {(i.file, i.row, i.field) for i in result.issues if i.severity is Severity.ERROR}
    for number, record, file in numbered:
        try:
            result.rows.append(DatasetRow.model_validate(record))
        except ValidationError as err:
            result.issues.extend(i for i in issues_from_validation_error(err, file, number)
                                 if (i.file, i.row, i.field) not in reported)
            continue
        result.origins.append((file, number))
    return result


def check_file(path: str | Path, required: Mapping[str, Sequence[str]] = QUESTION_REQUIRED) -> Issue | None:
    """:func:`~rag_eval.datasets.validate.shape_issue` of the file at ``path`` (read as far
    as its required columns are found): the one file-level verdict of every path."""
    return shape_issue(str(path), iter_raw(path), required)


def load_dataset(path: str | Path) -> LoadResult:
    """Every row of ``path`` validated as a :class:`DatasetRow`, with every problem as
    an issue. A file that cannot be used as a whole (unreadable, no rows, no question
    column: :func:`check_file`) is one file-level issue, said once, not on every row."""
    path = Path(path)
    name = str(path)
    result = LoadResult()
    whole = check_file(path)
    if whole is not None:
        result.issues.append(whole)
        return result
    raw_rows = list(good_rows(path, result.issues))
    finish_rows(result, [(number, _with_id(raw, number, name, result.issues), name) for number, raw in raw_rows])
    result.issues.sort(key=lambda i: (i.row, i.field or ""))
    return result


def load_datasets(paths: Sequence[str | Path]) -> LoadResult:
    """Every file of ``paths`` through :func:`load_dataset`, in order, as one result. A row
    whose id an earlier row (of any file) already has is reported and left out."""
    merged = LoadResult()
    seen: dict[str, str] = {}
    for path in paths:
        result = load_dataset(path)
        merged.issues.extend(result.issues)
        for row, origin in zip(result.rows, result.origins):
            if row.id in seen:
                merged.issues.append(Issue(origin[0], origin[1], "id", f"duplicate id '{row.id}' (first in {seen[row.id]})"))
                continue
            seen[row.id] = str(path)
            merged.rows.append(row)
            merged.origins.append(origin)
    return merged


def _with_id(raw: dict[str, Any], number: int, file: str, issues: list[Issue]) -> dict[str, Any]:
    """A row without an id gets ``row-<number>`` (reported), so it is not rejected."""
    if raw.get("id") not in (None, ""):
        return raw
    issues.append(Issue(file, number, "id", f"no id; using 'row-{number}'", Severity.WARNING))
    return {**raw, "id": f"row-{number}"}


def write_dataset(rows: Sequence[DatasetRow | dict[str, Any]], path: str | Path) -> Path:
    """Write rows as ``.jsonl``, ``.json``, ``.csv`` or ``.parquet`` (by suffix)."""
    path = Path(path)
    records = [r.to_record() if isinstance(r, DatasetRow) else {k: v for k, v in r.items() if v is not None} for r in rows]
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        _write_parquet(records, path)
        return path
    if suffix == ".csv":
        records = [{k: encode_csv_value(v) for k, v in r.items()} for r in records]
    return write_rows(records, path)  # an unknown suffix: FileFormatError


def validate_file(path: str | Path) -> list[Issue]:
    """Every issue of a dataset file; an unreadable file gives one file-level issue."""
    return load_dataset(path).issues
