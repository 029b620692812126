"""Row files: ``.jsonl``, ``.json``, ``.csv``, ``.parquet``.

Reading never stops at a bad row: each row comes back either as a dict or as a
:class:`RowError` naming the file, the 1-based line/row and the field, so the good
rows still go through and the bad ones are reported.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SUPPORTED_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


@dataclass(frozen=True, slots=True)
class RowError:
    """A problem with one row (``row`` is 1-based: the line of a JSONL/CSV data row, the
    index+1 of a JSON array element or Parquet row; 0 for the whole file)."""

    file: str
    row: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: row {self.row}" if self.row else self.file
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


class FileFormatError(ValueError):
    """The file as a whole cannot be read (unknown type, not UTF-8, not a table)."""


PARQUET_BATCH = 512


def json_problem(err: json.JSONDecodeError) -> str:
    """``invalid JSON (<reason> at column N)``; reasons that already end in "at" (e.g.
    "Unterminated string starting at") are not followed by a second "at"."""
    where = "column" if err.msg.rstrip().endswith(" at") else "at column"
    return f"invalid JSON ({err.msg} {where} {err.colno})"

def _plain(value: Any) -> Any:
    """Parquet/numpy values as plain Python (lists, floats, None for NaN)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def plain_row(row: Any) -> Any:
    """A row given in memory (a DataFrame's record, a ``datasets`` row) as the file
    readers give one: plain Python values, absent and null the same (None and NaN
    dropped). Anything but a mapping is returned as is (the caller reports it)."""
    if not isinstance(row, Mapping):
        return row
    return {str(k): v for k, value in row.items() if (v := _plain(value)) is not None}


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise FileFormatError(f"{path}: line {line}: not valid UTF-8 (byte {err.start}); save the file as UTF-8") from err


# Bytes that are not UTF-8 are kept as lone surrogates (U+DC80..U+DCFF) so the rest of
# the file still reads; the rows holding them are reported with the field they are in.
_BAD_BYTE = re.compile("[\udc80-\udcff]")


def _decode_lenient(path: Path) -> tuple[str, bool]:
    """The text of ``path`` and whether some bytes were not UTF-8 (kept as surrogates)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("utf-8-sig", errors="surrogateescape"), True


def _non_utf8_error(name: str, number: int, row: dict[str, Any], line: bool) -> RowError | None:
    """A RowError naming the first field (or key) whose text holds a non-UTF-8 byte
    (``line``: the row number is also the file's line number)."""
    for key, value in row.items():
        found = _BAD_BYTE.search(str(key)) or _BAD_BYTE.search(json.dumps(value, ensure_ascii=False, default=str))
        if found:
            byte = ord(found.group()) - 0xDC00
            where = f"line {number}, " if line else ""
            return RowError(name, number, str(key), f"not valid UTF-8 ({where}byte 0x{byte:02X}); save the file as UTF-8")
    return None


# CSV cells that hold lists or objects (documents, keys...) are JSON-encoded.
def _csv_cell(value: str) -> Any:
    text = value.strip()
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return value
    return value


def iter_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """Yield ``(row_number, row_or_error)`` for every row of ``path``.

    Raises :class:`FileFormatError` only when nothing in the file can be read.
    """
    path = Path(path)
    name = str(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise FileFormatError(f"{name}: unsupported file type '{suffix}' (use {', '.join(SUPPORTED_SUFFIXES)})")
    if not path.exists():
        raise FileFormatError(f"{name}: no such file")
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:  # read in record batches, so a long file never sits in memory whole
            batches = pq.ParquetFile(path).iter_batches(batch_size=PARQUET_BATCH)
            first = next(batches, None)
        except Exception as err:  # pyarrow raises several types for corrupt files
            raise FileFormatError(f"{name}: not a readable Parquet file ({err})") from err
        i = 0
        for batch in itertools.chain([first] if first is not None else [], batches):
            for row in batch.to_pylist():
                i += 1
                yield i, _plain(row)
        return
    if suffix == ".jsonl":
        yield from _iter_jsonl(path)
        return
    text, lenient = _decode_lenient(path)
    if lenient:
        for number, value in _iter_text_rows(name, suffix, text):
            bad = None if isinstance(value, RowError) else _non_utf8_error(name, number, value, suffix != ".json")
            yield number, bad or value
        return
    yield from _iter_text_rows(name, suffix, text)


def jsonl_row(name: str, lineno: int, line: str) -> dict[str, Any] | RowError:
    """One JSONL line's object, or the row's error (invalid JSON, or not an object)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as err:
        return RowError(name, lineno, None, json_problem(err))
    if not isinstance(value, dict):
        return RowError(name, lineno, None, f"expected a JSON object, got {type(value).__name__}")
    return value


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """Rows of a .jsonl file, read line by line (memory stays flat on long files). A
    line that is not UTF-8 is reported as that row's error; the rest still reads."""
    name = str(path)
    with path.open("rb") as fh:
        for lineno, data in enumerate(fh, start=1):
            if lineno == 1 and data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            try:
                line = data.decode("utf-8")
                lenient = False
            except UnicodeDecodeError:
                line = data.decode("utf-8", errors="surrogateescape")
                lenient = True
            if not line.strip():
                continue
            value = jsonl_row(name, lineno, line.rstrip("\r\n"))  # the line end is not part of the row
            if lenient and not isinstance(value, RowError):
                value = _non_utf8_error(name, lineno, value, True) or value
            yield lineno, value


def _iter_text_rows(name: str, suffix: str, text: str) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """Rows of the decoded text of a .json or .csv file (.jsonl is read line by line: :func:`_iter_jsonl`)."""
    if suffix == ".json":
        try:
            value = json.loads(text) if text.strip() else []
        except json.JSONDecodeError as err:
            raise FileFormatError(f"{name}: line {err.lineno}: invalid JSON ({err.msg})") from err
        if isinstance(value, dict):
            value = value.get("rows", value.get("data", [value]))
        if not isinstance(value, list):
            raise FileFormatError(f"{name}: expected a JSON array of objects")
        for i, item in enumerate(value, start=1):
            if isinstance(item, dict):
                yield i, item
            else:
                yield i, RowError(name, i, None, f"expected a JSON object, got {type(item).__name__}")
    else:  # .csv
        _check_csv_quoting(name, text)  # before any row: the rows after a broken quote are not the file's
        reader = csv.DictReader(io.StringIO(text))
        for row in reader:
            lineno = reader.line_num
            if None in row:  # more cells than header columns
                yield lineno, RowError(name, lineno, None, "more cells than header columns")
                continue
            yield lineno, {k: _csv_cell(v) if isinstance(v, str) else v for k, v in row.items() if k}


def csv_format_error(name: str, line: int, reason: str) -> FileFormatError:
    """The one message for a CSV that does not parse: the line, and that it is a quoting/format error."""
    return FileFormatError(f"{name}: line {line}: CSV quoting/format error ({reason}); a cell holding a comma, "
                           'a quote or a line break must be quoted whole, with each quote inside it doubled ("")')


def _check_csv_quoting(name: str, text: str) -> None:
    """Raise :func:`csv_format_error` at the line where the first unparseable row starts
    (a quote never closed, text after a closing quote). A lenient read would go on and
    shift the cells of every row after it, each then reported as a different wrong field."""
    reader = csv.reader(io.StringIO(text), strict=True)
    start = 1
    try:
        for _ in reader:
            start = reader.line_num + 1
    except csv.Error as err:
        raise csv_format_error(name, start, str(err)) from None


def read_rows(path: str | Path) -> tuple[list[tuple[int, dict[str, Any]]], list[RowError]]:
    """All rows of ``path``: ``([(row_number, row), ...], [errors])``."""
    rows: list[tuple[int, dict[str, Any]]] = []
    errors: list[RowError] = []
    for number, value in iter_rows(path):
        if isinstance(value, RowError):
            errors.append(value)
        else:
            rows.append((number, value))
    return rows, errors


def flat_cells(row: dict[str, Any]) -> dict[str, Any]:
    """A row as CSV (and an export's Parquet) holds it: a nested value (chunks, labels, id
    lists) as JSON text. JSONL keeps the values nested."""
    return {k: json.dumps(v, ensure_ascii=False, default=str) if isinstance(v, (list, dict)) else v
            for k, v in row.items()}


def write_rows(rows: Iterable[dict[str, Any]], path: str | Path) -> Path:
    """Write rows as ``.jsonl``, ``.json``, ``.csv`` (nested values JSON-encoded) or ``.parquet``."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:  # before anything is created
        raise FileFormatError(f"{path}: unsupported file type '{suffix}' (use {', '.join(SUPPORTED_SUFFIXES)})")
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    if suffix == ".jsonl":
        with path.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    elif suffix == ".json":
        path.write_text(json.dumps(rows, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    elif suffix == ".csv":
        columns = list(dict.fromkeys(k for row in rows for k in row))
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow(flat_cells(row))
    else:  # .parquet
        import pandas as pd

        pd.DataFrame(rows).to_parquet(path, index=False)
    return path
