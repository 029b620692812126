"""Every command of the ``rag-eval`` CLI as argument paths (the start-up test and benchmark
walk them)."""

from __future__ import annotations

import click


def command_paths(group: click.Group | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand of the CLI (``group``: default the whole CLI), as argument paths."""
    if group is None:
        from rag_eval.cli import cli

        group = cli
    paths: list[tuple[str, ...]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths += command_paths(command, (*prefix, name))
    return paths
