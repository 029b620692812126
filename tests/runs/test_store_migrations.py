"""The run store's schema under Alembic: stores the pre-Alembic code made open, are
stamped and upgraded with their rows intact; the revisions build exactly the tables the
queries are written against, on SQLite and PostgreSQL; a later feature adds a revision."""

from __future__ import annotations

import sqlite3
import textwrap

import pytest
from sqlalchemy import inspect

from rag_eval.rag.config import default_config
from rag_eval.runs.store import SCHEMA_VERSION, RunStore, StoreUnavailable, migrate
from rag_eval.runs.store.tables import metadata
from tests.runs.legacy_store import LEGACY_STEPS, load_dump, make_legacy_store


def test_head_is_the_newest_script_and_matches_the_legacy_steps():
    assert migrate.head() == migrate.HEAD and SCHEMA_VERSION == int(migrate.HEAD)
    assert LEGACY_STEPS[-1][0] == 6 < SCHEMA_VERSION  # every old step has its revision; 0007 came after
    revisions = [s.revision for s in migrate.scripts().walk_revisions()]
    assert sorted(revisions) == [f"{v:04d}" for v in range(1, SCHEMA_VERSION + 1)]


def test_a_store_written_by_the_old_code_opens_with_its_rows(tmp_path):
    """tests/data/run_store_v6.sql: a store main's pre-Alembic code wrote through its API."""
    path = tmp_path / "old.sqlite"
    load_dump(path)
    store = RunStore(path)
    assert store.schema_version() == SCHEMA_VERSION and "alembic_version" in inspect(store.engine).get_table_names()
    finished = store.get_run("old-finished")
    assert finished["status"] == "finished" and finished["tags"] == ["baseline"] and finished["n_done"] == 3
    assert finished["summary"]["status_counts"] == {"ok": 2, "timeout": 1}
    # its summary kept TRACe under "metrics": it reads under the family's name, as a new one;
    # its items' records and the column said "item_id": revision 0007 renamed both "id"
    assert "metrics" not in finished["summary"] and "completeness" in finished["summary"]["trace"]
    assert [i["id"] for i in store.items(finished["id"])] == ["a", "b", "c"]
    assert store.items(finished["id"], ["scores.completeness"])[1] == {"scores": {"completeness": 0.5}}
    labels = store.human_labels(finished["id"])
    assert len(labels) == 1 and labels[0]["labels"]["all_relevant_sentence_keys"] == ["0a", "0b"]
    assert store.add_human_labels(finished["id"], "b", "ann", {"labels": {}}) == 3  # ids continue
    interrupted = store.get_run("old-interrupted")
    assert interrupted["status"] == "interrupted"  # its process is long gone
    store.claim_run(interrupted["id"])  # and it can be resumed
    store.add_items(interrupted["id"], [{"id": "b", "position": 1, "status": "ok"}])
    assert store.finish_run(interrupted["id"])["n_items"] == 2
    store.close()
    assert RunStore(path).schema_version() == SCHEMA_VERSION  # reopened: nothing applied twice


@pytest.mark.parametrize("version", [1, 2, 3, 5])
def test_an_old_store_at_any_step_is_stamped_and_upgraded(store_url, version):
    make_legacy_store(store_url, version)
    store = RunStore(store_url)
    assert store.schema_version() == SCHEMA_VERSION
    run = store.create_run(default_config(), name="new")
    store.add_items(run, [{"id": "a", "status": "ok"}])
    store.annotate_run(run, tags=["t"], note="n")
    assert store.get_run("new")["tags"] == ["t"]
    store.close()


def test_an_old_sqlite_store_with_a_running_run_is_resumable(tmp_path):
    path = tmp_path / "old.sqlite"
    make_legacy_store(path, 2, runs=(("20260101-000000-abcdef", "old", "running"),))  # as the sqlite3 version left it
    store = RunStore(path)
    run = store.get_run("old")
    assert run["id"] == "20260101-000000-abcdef" and run["owner"] is None
    store.claim_run(run["id"])  # a running run from before claims existed is resumable
    assert store.get_run("old")["owner"] == store.owner


def test_the_revisions_build_the_tables_the_queries_use(store_url):
    """tables.py and migrations/versions describe one schema: same columns, primary keys, indexes."""
    store = RunStore(store_url)
    found = inspect(store.engine)
    for table in metadata.sorted_tables:
        assert [c["name"] for c in found.get_columns(table.name)] == [c.name for c in table.columns], table.name
        assert found.get_pk_constraint(table.name)["constrained_columns"] == [c.name for c in table.primary_key]
        indexes = {i["name"]: i["column_names"] for i in found.get_indexes(table.name)}
        assert indexes == {i.name: [c.name for c in i.columns] for i in table.indexes}, table.name
    store.close()


def test_a_store_from_a_newer_version_is_refused_plainly(tmp_path):
    path = tmp_path / "newer.sqlite"
    RunStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE alembic_version SET version_num = '0999'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreUnavailable, match="0999.*upgrade rag-eval"):
        RunStore(path)


def test_a_revision_added_by_a_later_feature_runs_on_both_backends(store_url, tmp_path, monkeypatch):
    """How a later feature adds a table: one more revision file, written with ``alembic.op``."""
    extra = tmp_path / "versions"
    extra.mkdir()
    (extra / f"{SCHEMA_VERSION + 1:04d}_label_sets.py").write_text(textwrap.dedent(f'''
        import sqlalchemy as sa
        from alembic import op

        revision = "{SCHEMA_VERSION + 1:04d}"
        down_revision = "{SCHEMA_VERSION:04d}"
        branch_labels = None
        depends_on = None


        def upgrade():
            op.create_table("label_sets", sa.Column("id", sa.Integer, primary_key=True),
                            sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id")),
                            sa.Column("name", sa.Text, nullable=False, unique=True), sa.Column("weight", sa.Float))
            op.create_index("label_sets_run", "label_sets", ["run_id"])
    '''), encoding="utf-8")
    RunStore(store_url).close()  # a store at today's head first
    monkeypatch.setattr(migrate, "VERSION_LOCATIONS", [*migrate.VERSION_LOCATIONS, extra])
    store = RunStore(store_url)
    assert store.schema_version() == SCHEMA_VERSION + 1 and "label_sets" in inspect(store.engine).get_table_names()
    assert {"id", "run_id", "name", "weight"} == set(store.columns("label_sets"))
    store.close()
