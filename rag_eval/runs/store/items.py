"""A run's items: one JSON record each, written by upsert (a resumed run replaces a failed
item) and read whole or as a few fields picked out by the database."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import JSON, Text, cast, func, literal, select, text, tuple_
from sqlalchemy.sql import ColumnElement

from rag_eval.runs.store.database import Database
from rag_eval.runs.store.redaction import clean, dumps, store_secrets
from rag_eval.runs.store.tables import items, now

_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
#: ids per ``IN (…)`` list: one query per this many runs or items
IDS_PER_QUERY = 500


def _field_tree(fields: Sequence[str]) -> dict[str, Any]:
    """``["a.b", "a.c", "d"]`` → ``{"a": {"b": None, "c": None}, "d": None}``."""
    tree: dict[str, Any] = {}
    for field in fields:
        if not _FIELD.fullmatch(field):
            raise ValueError(f"not an item field: {field!r}")
        node = tree
        parts = field.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = None
    return tree


def _key(name: str) -> ColumnElement[Any]:
    return cast(literal(name), Text)


def _projection(db: Database, run_id: str, fields: Sequence[str], after: tuple[int, str] | None = None,
                limit: int | None = None) -> Any:
    """A query of the run's items, in dataset order, each as the JSON text of the object
    of ``fields`` (SQLite's ``json_extract``, PostgreSQL's ``json_extract_path``), its
    position and id; ``after`` (position, item id) and ``limit``: one page of them."""
    tree = _field_tree(fields)
    if db.backend == "postgresql" and all(child is None for child in tree.values()):
        return _top_level_projection(run_id, list(tree), after, limit)
    where = [items.c.run_id == run_id]
    if after is not None:
        where.append(tuple_(items.c.position, items.c.id) > tuple_(literal(after[0]), literal(after[1])))
    if db.backend == "postgresql":
        # parse each record once, then pick from it; PostgreSQL's JSON parser refuses an
        # escaped NUL anywhere in the text, so it reads as U+FFFD (same length, still valid JSON)
        inner = (select(items.c.position, items.c.id,
                        cast(func.replace(items.c.record_json, literal("\\u0000"), literal("\\ufffd")), JSON).label("j"))
                 .where(*where).order_by(items.c.position, items.c.id))
        parsed = (inner.limit(limit) if limit is not None else inner).subquery("parsed")

        def pg(node: dict[str, Any], path: list[str]) -> ColumnElement[Any]:
            args: list[Any] = []
            for key, child in node.items():
                here = [*path, key]
                value = pg(child, here) if child is not None else func.json_extract_path(parsed.c.j, *map(_key, here))
                args += [_key(key), value]
            return func.json_build_object(*args)

        return select(cast(pg(tree, []), Text), parsed.c.position, parsed.c.id).order_by(
            parsed.c.position, parsed.c.id)

    def lite(node: dict[str, Any], path: list[str]) -> ColumnElement[Any]:
        args: list[Any] = []
        for key, child in node.items():
            here = [*path, key]
            value = lite(child, here) if child is not None else func.json_extract(items.c.record_json,
                                                                                  literal("$." + ".".join(here)))
            args += [literal(key), value]
        return func.json_object(*args)

    query = select(lite(tree, []), items.c.position, items.c.id).where(*where).order_by(
        items.c.position, items.c.id)
    return query.limit(limit) if limit is not None else query


def _top_level_projection(run_id: str, fields: list[str], after: tuple[int, str] | None, limit: int | None) -> Any:
    """PostgreSQL, top-level fields only (a stored run's summary reads 14 of them): the same
    rows as the general projection, each record parsed once by ``json_each``. Every
    ``json_extract_path`` on a ``json`` value parses the record's text again, once per
    field, which made a run's summary cost the server ~0.4 ms per item (docs/benchmarks.md,
    a million items). Missing fields come back as null, in ``fields`` order, as there."""
    page = "AND (position, id) > (:after_position, :after_id)" if after is not None else ""
    statement = text(f"""
        SELECT CAST((SELECT json_object_agg(f.key, e.value ORDER BY f.n)
                     FROM unnest(CAST(:fields AS text[])) WITH ORDINALITY AS f(key, n)
                     LEFT JOIN json_each(q.j) AS e ON e.key = f.key) AS text), q.position, q.id
        FROM (SELECT position, id,
                     CAST(replace(record_json, '\\u0000', '\\ufffd') AS json) AS j
              FROM items WHERE run_id = :run_id {page}
              ORDER BY position, id {"LIMIT :limit" if limit is not None else ""}) AS q
        ORDER BY q.position, q.id""")
    params: dict[str, Any] = {"run_id": run_id, "fields": fields}
    if after is not None:
        params.update(after_position=after[0], after_id=after[1])
    if limit is not None:
        params["limit"] = limit
    return statement.bindparams(**params)


def read_items(db: Database, run_id: str, fields: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The run's item records in dataset order, whole or only ``fields`` (see :meth:`ItemQueries.items`)."""
    if not fields:
        query = (select(items.c.record_json).where(items.c.run_id == run_id)
                 .order_by(items.c.position, items.c.id))
    else:
        query = _projection(db, run_id, fields)
    return [json.loads(r[0]) for r in db.read(query)]


#: items per query when a run's items are read page by page
PAGE_ITEMS = 1_000


def iter_items(db: Database, run_id: str, fields: Sequence[str] | None = None,
               page: int = PAGE_ITEMS) -> Iterator[dict[str, Any]]:
    """The run's item records in dataset order, as :func:`read_items`, read ``page`` at a
    time (keyset pagination on the position index, one short read each), so a run of
    a million items is summarized or exported in flat memory."""
    after: tuple[int, str] | None = None
    while True:
        if fields:
            query = _projection(db, run_id, fields, after, page)
        else:
            where = [items.c.run_id == run_id]
            if after is not None:
                where.append(tuple_(items.c.position, items.c.id) > tuple_(literal(after[0]), literal(after[1])))
            query = (select(items.c.record_json, items.c.position, items.c.id).where(*where)
                     .order_by(items.c.position, items.c.id).limit(page))
        rows = db.read(query)
        for row in rows:
            yield json.loads(row[0])
        if len(rows) < page:
            return
        after = (int(rows[-1][1]), str(rows[-1][2]))


def stored_rows(run_id: str, records: Sequence[dict[str, Any]], secrets: Sequence[str]) -> list[dict[str, Any]]:
    """The ``items`` table's rows for ``records``: the record as redacted JSON beside the
    columns the store filters and orders by."""
    stamp = now()
    return [{"run_id": run_id, "id": str(r["id"]), "position": int(r.get("position", 0)),
             "status": str(r["status"]), "error": clean(str(r["error"]), secrets) if r.get("error") else None,
             "question": clean(r.get("question"), secrets), "record_json": dumps(r, secrets),
             "updated_at": stamp} for r in records]


#: The columns a write replaces when the item is already stored (all but the key).
_REPLACED = tuple(c.name for c in items.columns if not c.primary_key)
_COLUMNS = tuple(c.name for c in items.columns)


@functools.cache
def _upsert(backend: str) -> Any:
    """``INSERT … ON CONFLICT (run_id, id) DO UPDATE``, in the backend's dialect.
    Built once per backend: building it costs more than writing a batch of items."""
    from sqlalchemy.dialects import postgresql, sqlite

    statement: Any = postgresql.insert(items) if backend == "postgresql" else sqlite.insert(items)
    return statement.on_conflict_do_update(index_elements=[items.c.run_id, items.c.id],
                                           set_={name: statement.excluded[name] for name in _REPLACED})


def _copy_upsert(conn: Any, rows: list[dict[str, Any]]) -> None:
    """PostgreSQL: ``COPY`` the rows into a transaction-local staging table, then one
    ``INSERT … SELECT … ON CONFLICT`` into ``items``. The same effect as the upsert run
    once per row (what ``executemany`` does), at ~30 µs less client CPU per item
    (docs/benchmarks.md, bench_store_writes). One statement cannot touch a row twice,
    so of two rows with one key only the last is sent: the same outcome as upserting
    both in order."""
    last = {(r["run_id"], r["id"]): r for r in rows}
    names = ", ".join(_COLUMNS)
    with conn.connection.driver_connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE IF NOT EXISTS incoming_items (LIKE items INCLUDING DEFAULTS) "
                       "ON COMMIT DELETE ROWS")
        with cursor.copy(f"COPY incoming_items ({names}) FROM STDIN") as copy:
            for row in last.values():
                copy.write_row([row[c] for c in _COLUMNS])
        cursor.execute(f"INSERT INTO items ({names}) SELECT {names} FROM incoming_items "
                       "ON CONFLICT (run_id, id) DO UPDATE SET "
                       + ", ".join(f"{c} = excluded.{c}" for c in _REPLACED))


class ItemQueries:
    """The item methods of :class:`~rag_eval.runs.store.RunStore`."""

    db: Database
    _password: str | None

    def add_items(self, run_id: str, records: Sequence[dict[str, Any]]) -> None:
        """Insert or replace item records in one transaction (each needs ``id``, ``status``;
        ``position`` keeps dataset order). Replacing lets a resumed run retry a failed item."""
        self.write_encoded_items(self.encode_items(run_id, records))

    def encode_items(self, run_id: str, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The table rows of ``records`` (redacted JSON and columns): the CPU half of
        :meth:`add_items`, which a writer can do while the previous batch is in the
        database (:class:`~rag_eval.runs.sinks.StoreSink`)."""
        for record in records:
            for key in ("id", "status"):
                if record.get(key) in (None, ""):
                    raise ValueError(f"item record needs '{key}'")
        return stored_rows(run_id, records, store_secrets([self._password])) if records else []

    def write_encoded_items(self, rows: list[dict[str, Any]]) -> None:
        """Upsert rows from :meth:`encode_items` in one transaction: the database half of
        :meth:`add_items` (the client mostly waits, without the GIL). PostgreSQL gets them
        by ``COPY`` (:func:`_copy_upsert`), SQLite by one upsert per row."""
        if not rows:
            return
        if self.db.backend == "postgresql":
            with self.db.transaction(write=True) as conn:
                _copy_upsert(conn, rows)
        else:
            self.db.write(_upsert(self.db.backend), rows)

    def items(self, run_id: str, fields: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The run's item records in dataset order. ``fields`` (top-level keys, or dotted
        paths such as ``item.response_sentences``) keeps only those parts of each record,
        picked out by the database, so a page that needs the scores of 2,000 items does
        not decode their documents; a field a record lacks comes back as None."""
        return read_items(self.db, run_id, fields)

    def iter_items(self, run_id: str, fields: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
        """As :meth:`items`, read a page at a time (:func:`iter_items`): for runs of any size."""
        return iter_items(self.db, run_id, fields)

    def item(self, run_id: str, item_id: str) -> dict[str, Any] | None:
        """One item's whole record, or None."""
        rows = self.db.read(select(items.c.record_json).where(items.c.run_id == run_id,
                                                              items.c.id == str(item_id)))
        return json.loads(rows[0][0]) if rows else None

    def item_statuses(self, run_id: str) -> dict[str, str]:
        rows = self.db.read(select(items.c.id, items.c.status).where(items.c.run_id == run_id))
        return {r[0]: r[1] for r in rows}

    def items_with_ids(self, item_ids: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
        """``(run_id, record)`` of every stored item, in any run, whose id is in ``item_ids``."""
        ids = sorted({str(i) for i in item_ids})
        out: list[tuple[str, dict[str, Any]]] = []
        for start in range(0, len(ids), IDS_PER_QUERY):
            part = ids[start:start + IDS_PER_QUERY]
            rows = self.db.read(select(items.c.run_id, items.c.record_json).where(items.c.id.in_(part)))
            out.extend((r[0], json.loads(r[1])) for r in rows)
        return out
