"""An item's id is ``id`` everywhere: the ``items`` column and the key in each stored record
(both were ``item_id``). A label set keeps ``item_id``: there it names the item it labels.

Revision ID: 0007
Revises: 0006
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_PAGE = 1000


def _rename_record_key(old: str, new: str) -> None:
    """Rewrite each stored record's ``old`` key as ``new`` (same place, same value), a page
    at a time in key order, so a store of a million items never sits in memory."""
    conn = op.get_bind()
    # the column is already renamed: it bears the new name
    items = sa.table("items", sa.column("run_id"), sa.column(new), sa.column("record_json"))
    after: tuple[str, str] | None = None
    while True:
        query = sa.select(items.c.run_id, items.c[new], items.c.record_json).order_by(items.c.run_id, items.c[new])
        if after is not None:
            query = query.where(sa.tuple_(items.c.run_id, items.c[new]) > sa.tuple_(*after))
        rows = conn.execute(query.limit(_PAGE)).all()
        changed = []
        for run_id, key, text in rows:
            record = json.loads(text)
            if isinstance(record, dict) and old in record:
                record = {new if k == old else k: v for k, v in record.items()}
                changed.append({"r": run_id, "k": key, "j": json.dumps(record, ensure_ascii=False, default=str)})
        if changed:
            conn.execute(items.update().where(items.c.run_id == sa.bindparam("r"), items.c[new] == sa.bindparam("k"))
                         .values(record_json=sa.bindparam("j")), changed)
        if len(rows) < _PAGE:
            return
        after = (rows[-1][0], rows[-1][1])


def upgrade() -> None:
    op.alter_column("items", "item_id", new_column_name="id")
    _rename_record_key("item_id", "id")


def downgrade() -> None:
    op.alter_column("items", "id", new_column_name="item_id")
    _rename_record_key("id", "item_id")
