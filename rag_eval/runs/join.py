"""Joining rows on id, with one rule for repeated ids everywhere rows are joined (``rag-eval agreement``,
Compare, the run store).

RAGBench repeats ids (in emanual every id appears twice: one question, two responses). A repeated id is
not an error: its k-th occurrence on one side pairs with its k-th on the other (a run stores the k-th
occurrence as ``id#k``, so Compare pairs runs the same way). Only when both sides hold an id a different
number of times is the pairing ambiguous; then the join is refused, naming the ids.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


class RepeatedIdMismatch(ValueError):
    """Both sides repeat an id a different number of times."""


def occurrence_keys(ids: Sequence[str]) -> list[str]:
    """``ids`` with the k-th (k >= 2) occurrence of a repeated id written ``id#k``."""
    seen: Counter[str] = Counter()
    out = []
    for i in ids:
        seen[i] += 1
        out.append(i if seen[i] == 1 else f"{i}#{seen[i]}")
    return out


_OCCURRENCE = re.compile(r"^(.*)#([2-9]|[1-9]\d+)$")


def base_ids(ids: Sequence[str]) -> list[str]:
    """``ids`` with an occurrence key ``id#k`` (k >= 2) read back as ``id`` when ``id``
    itself is among ``ids``: a judge's or a run's output writes the k-th occurrence of a
    repeated id that way, and must still pair with the input file it came from, which
    repeats the bare id (RAGBench's emanual, or the shared sample's '52'). An id that
    merely contains '#' (``doc#3`` with no ``doc`` beside it) is left as it is."""
    present = set(ids)
    out = []
    for i in ids:
        m = _OCCURRENCE.match(i)
        out.append(m.group(1) if m and m.group(1) in present else i)
    return out


@dataclass(slots=True)
class Joined:
    """Aligned values: ``left[i]`` and ``right[i]`` belong to ``keys[i]`` (None where a
    side lacks that occurrence)."""

    keys: list[str] = field(default_factory=list)
    left: list[Any] = field(default_factory=list)
    right: list[Any] = field(default_factory=list)
    only_left: list[str] = field(default_factory=list)
    only_right: list[str] = field(default_factory=list)
    repeated: dict[str, int] = field(default_factory=dict)  # id -> occurrences, on both sides

    @property
    def repeated_note(self) -> str | None:
        """What the summary says about repeated ids, or None when there were none."""
        if not self.repeated:
            return None
        rows = sum(self.repeated.values())
        return (f"{len(self.repeated)} id(s) repeat in both files ({rows} rows); the k-th occurrence in one file "
                "was paired with the k-th in the other")


def join_by_id(left: Sequence[tuple[str, Any]], right: Sequence[tuple[str, Any]],
               left_name: str = "left", right_name: str = "right") -> Joined:
    """Pair ``(id, value)`` rows of two sides on id, in order of first appearance. Raises
    :class:`RepeatedIdMismatch` naming every id both sides hold a different number of
    times (more than once on at least one side). Rows already keyed ``id#k`` (an output
    of rag-eval) count as the k-th occurrence of ``id`` (:func:`base_ids`)."""
    left = list(zip(base_ids([i for i, _ in left]), (v for _, v in left)))
    right = list(zip(base_ids([i for i, _ in right]), (v for _, v in right)))
    left_counts = Counter(i for i, _ in left)
    right_counts = Counter(i for i, _ in right)
    mismatched = [i for i in dict.fromkeys([*left_counts, *right_counts])
                  if left_counts[i] and right_counts[i] and left_counts[i] != right_counts[i]]
    if mismatched:
        shown = ", ".join(f"{i!r} ({left_counts[i]} in {left_name}, {right_counts[i]} in {right_name})"
                          for i in mismatched[:20])
        more = f" and {len(mismatched) - 20} more" if len(mismatched) > 20 else ""
        raise RepeatedIdMismatch(f"ids repeated a different number of times, so their rows cannot be paired: {shown}{more}")
    left_by_key = dict(zip(occurrence_keys([i for i, _ in left]), (v for _, v in left)))
    right_by_key = dict(zip(occurrence_keys([i for i, _ in right]), (v for _, v in right)))
    out = Joined(repeated={i: n for i, n in left_counts.items() if n > 1 and right_counts[i] == n})
    for key in dict.fromkeys([*left_by_key, *right_by_key]):
        out.keys.append(key)
        out.left.append(left_by_key.get(key))
        out.right.append(right_by_key.get(key))
        if key not in right_by_key:
            out.only_left.append(key)
        elif key not in left_by_key:
            out.only_right.append(key)
    return out
