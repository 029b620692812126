"""Human label sets (``rag_eval.labels``): appended, never overwritten, beside the judge's
labels of the items."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, insert, select

from rag_eval.runs.store.database import Database
from rag_eval.runs.store.redaction import dumps, store_secrets
from rag_eval.runs.store.tables import human_labels, now


class HumanLabelQueries:
    """The human-label methods of :class:`~rag_eval.runs.store.RunStore`."""

    db: Database
    _password: str | None

    def add_human_labels(self, run_id: str, item_id: str, reviewer: str, record: dict[str, Any],
                         created_at: str | None = None) -> int:
        """Append one human label set; earlier saves stay as history. Returns its id."""
        if not str(reviewer).strip():
            raise ValueError("a human label set needs a reviewer name")
        statement = insert(human_labels).values(
            run_id=run_id, item_id=str(item_id), reviewer=str(reviewer).strip(), created_at=created_at or now(),
            record_json=dumps(record, store_secrets([self._password]))).returning(human_labels.c.id)
        return int(self.db.insert_returning(statement))

    def human_labels(self, run_id: str, reviewer: str | None = None, latest: bool = True) -> list[dict[str, Any]]:
        """The run's human label sets (``latest``: the last save per item and reviewer),
        each as its record plus ``id``, ``run_id``, ``item_id``, ``reviewer``, ``created_at``."""
        t = human_labels
        query = select(t.c.id, t.c.run_id, t.c.item_id, t.c.reviewer, t.c.created_at, t.c.record_json).where(
            t.c.run_id == run_id)
        if reviewer is not None:
            query = query.where(t.c.reviewer == reviewer)
        if latest:
            last = select(func.max(t.c.id)).where(t.c.run_id == run_id).group_by(t.c.item_id, t.c.reviewer)
            query = query.where(t.c.id.in_(last))
        rows = self.db.read(query.order_by(t.c.item_id, t.c.reviewer, t.c.id))
        return [{**json.loads(r[5]), "id": r[0], "run_id": r[1], "item_id": r[2], "reviewer": r[3],
                 "created_at": r[4]} for r in rows]
