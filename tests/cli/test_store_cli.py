"""``rag-eval runs migrate --to URL`` and the commands on a PostgreSQL store
(``RAG_EVAL_DB_URL``), through click's CliRunner."""

from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.rag.config import default_config
from rag_eval.runs.store import RunStore


def _local_run(name: str) -> str:
    store = RunStore()  # the default SQLite file under RAG_EVAL_HOME
    run = store.create_run(default_config(name), name=name)
    for i in range(3):
        store.add_items(run, [{"id": f"i{i}", "position": i, "status": "ok", "scores": {"completeness": 1.0}}])
    store.finish_run(run)
    return run


def test_runs_migrate_copies_to_postgresql_idempotently_without_showing_the_password(pg_url, postgres_server,
                                                                                     monkeypatch):
    run = _local_run("team-run")
    runner = CliRunner()
    first = runner.invoke(cli, ["runs", "migrate", "--to", pg_url])
    assert first.exit_code == 0, first.output
    assert "| items | 3 | 3 | 3 | 0 |" in first.output and "verified" in first.output
    assert postgres_server.password not in first.output and "***" in first.output
    again = runner.invoke(cli, ["runs", "migrate", "--to", pg_url])
    assert again.exit_code == 0 and "| items | 3 | 0 | 3 | 0 |" in again.output
    monkeypatch.setenv("RAG_EVAL_DB_URL", pg_url)  # now the commands use the server
    listed = runner.invoke(cli, ["runs", "list"])
    assert listed.exit_code == 0 and run in listed.output and "team-run" in listed.output
    shown = runner.invoke(cli, ["runs", "show", "team-run", "--items"])
    assert shown.exit_code == 0 and "items: 3, scored: 3" in shown.output


def test_an_unreachable_store_is_a_clean_error_without_the_password():
    result = CliRunner().invoke(cli, ["runs", "list", "--db",
                                      "postgresql+psycopg://u:pw-not-real-77@127.0.0.1:1/x?connect_timeout=3"])
    assert result.exit_code == 3 and "cannot open the run store at postgresql+psycopg://u:***@127.0.0.1:1/x" \
        in result.output
    assert "pw-not-real-77" not in result.output and "Traceback" not in result.output
