"""``rag-eval report RUN [RUN ...] --out report.html``: one self-contained HTML report.

Wiring only: resolve the runs in the store, call :func:`rag_eval.report.html.write_report`.
"""

from __future__ import annotations

from pathlib import Path

import click

from rag_eval.report.defaults import DEFAULT_WORST


@click.command("report")
@click.argument("run_refs", metavar="RUN [RUN ...]", nargs=-1, required=True)
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="The HTML file to write.")
@click.option("--worst", type=click.IntRange(min=0), default=DEFAULT_WORST, show_default=True,
              help="Support maps of this many lowest-scoring (and failed) rows per run.")
@click.option("--db", type=click.Path(dir_okay=False), help="Run store (default: RAG_EVAL_DB or <data dir>/runs.sqlite).")
def report_command(run_refs: tuple[str, ...], out: Path, worst: int, db: str | None) -> None:
    """Write one self-contained HTML report of the stored RUN(s) (id, id prefix or name):
    metrics with 95% intervals, distributions, RMSE bands, agreement with ground truth,
    diagnosis, cost and latency, the worst rows' support maps and, for several runs,
    their comparison (the first run is the baseline). The file needs no network to open."""
    from rag_eval.report.html import write_report
    from rag_eval.runs.store import RunNotFound, RunStore

    store = RunStore(db) if db else RunStore()
    try:
        path = write_report(store, list(run_refs), out, worst=worst)
    except (RunNotFound, ValueError, OSError) as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()
    click.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(run_refs)} run(s))")


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(report_command)
