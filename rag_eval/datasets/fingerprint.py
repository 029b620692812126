"""Dataset fingerprints: the content hash a run records to say which dataset version it evaluated.

The hash is over the rows' canonical JSON (keys sorted, ``None`` left out, :class:`DatasetRow`'s normal
form), each row hashed and the sorted row hashes hashed, so the same rows give the same fingerprint
whatever the file format and the row order, and any change to any value changes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

import numpy as np

from rag_eval.datasets.schema import DatasetRow

PREFIX = "sha256:"
SHORT_LENGTH = 12


def canonical_json(record: dict[str, Any]) -> str:
    """Compact JSON with sorted keys and ``None`` values left out at the top level."""
    clean = {k: v for k, v in record.items() if v is not None}
    return json.dumps(clean, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def row_hash(row: DatasetRow | dict[str, Any]) -> str:
    record = row.to_record() if isinstance(row, DatasetRow) else row
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def fingerprint(rows: Iterable[DatasetRow | dict[str, Any]]) -> str:
    """``sha256:<64 hex>`` over the rows, independent of their order and file format."""
    # the digests as 32 raw bytes each in one buffer (a million rows: 32 MB, not 110 MB of
    # str objects), sorted as fixed-width byte strings: the same order as their hex
    packed = bytearray()
    for r in rows:
        packed += bytes.fromhex(row_hash(r))
    total = hashlib.sha256()
    for digest in np.sort(np.frombuffer(bytes(packed), dtype="S32")) if packed else ():
        total.update(digest.ljust(32, b"\0").hex().encode("ascii"))
        total.update(b"\n")
    return PREFIX + total.hexdigest()


def short_fingerprint(value: str) -> str:
    """The first 12 hex digits, for display (``sha256:1a2b…`` -> ``1a2b3c4d5e6f``)."""
    if not value.startswith(PREFIX):
        raise ValueError(f"not a dataset fingerprint: {value!r}")
    return value[len(PREFIX): len(PREFIX) + SHORT_LENGTH]
