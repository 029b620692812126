"""What ``rag-eval``'s exit codes mean, in one place: :data:`EXIT_CODES` is the README's table
(``tests/cli/test_exit_code_table.py`` holds the two equal and runs every command against it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

#: code -> what it means, word for word the README's "Exit codes" table
EXIT_CODES: dict[int, str] = {
    0: "every row ok (or coverage at least `--min-coverage`)",
    1: ("some rows failed or the gate failed: coverage below `--min-coverage` (`run`, `judge`: default 1.0, any "
        "failed row; `agreement`: share of truth ids with a prediction, default 0), `ask` refused or failed, "
        "`dataset validate` found errors, `dataset import/convert` rejected rows (the good rows are still written); "
        "counts on stderr"),
    2: ("usage or input error: a bad option, an unreadable or empty file (\"no rows\"), a CSV quoting/format error "
        "(its line named), a required column missing (named with the names it is accepted under), an unknown run or "
        "collection, an invalid configuration, a judge that cannot be built (`--ray` without `rag-eval[ray]`, an "
        "unknown calibration, a missing model); one line on stderr, nothing was run and no run was created"),
    3: ("a service is unavailable: Qdrant, the run-store database or the Ray cluster unreachable, or the embedded "
        "store busy in another process (retry)"),
    130: "interrupted (Ctrl-C): finished items are stored; `--resume` continues",
}


class InputError(click.ClickException):
    """The command's input cannot be used (file, option value, run, collection...)."""

    exit_code = 2


class RowsFailed(click.ClickException):
    """Some rows (files, items) failed; the others went through."""

    exit_code = 1


class Unavailable(click.ClickException):
    """A service the command needs is unreachable or busy."""

    exit_code = 3


class Interrupted(click.ClickException):
    exit_code = 130


class ExitCodeGroup(click.Group):
    """A group whose plain ``ClickException`` (a user's input error) exits 2, not 1,
    so 1 always means "rows failed". Subclasses keep their own code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as err:
            if type(err) is click.ClickException:
                raise InputError(err.message) from None
            raise


def gate(n_ok: int, n_total: int, min_coverage: float = 1.0, what: str = "rows",
         statuses: Mapping[str, int] | None = None, verb: str = "failed") -> None:
    """Exit 1 (counts on stderr) when fewer than ``min_coverage`` of ``n_total`` succeeded."""
    coverage = n_ok / n_total if n_total else 1.0
    if coverage >= min_coverage:
        return
    failed = ", ".join(f"{k}={v}" for k, v in (statuses or {}).items() if v)
    click.echo(f"{n_total - n_ok} of {n_total} {what} {verb} (coverage {coverage:.0%}, required "
               f"{min_coverage:.0%}){': ' + failed if failed else ''}", err=True)
    raise click.exceptions.Exit(RowsFailed.exit_code)


def check_input(path: Any, required: Mapping[str, Any] | None = None) -> None:
    """Exit 2 with the one file-level verdict (:func:`rag_eval.datasets.io.check_file`: unreadable,
    a CSV quoting error, no rows, a required column missing, named with the names it is accepted
    under) before anything is created. ``required``: field -> accepted column names (default: a
    question)."""
    from rag_eval.datasets.io import check_file

    issue = check_file(path) if required is None else check_file(path, required)
    if issue is not None:
        raise InputError(issue.reason)
