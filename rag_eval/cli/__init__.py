"""The ``rag-eval`` command line: one click group, one module per command group.

Each command parses options, calls one library function and echoes the result;
user errors raise ``click.ClickException`` (exit code 1, clean message).
"""

from __future__ import annotations

import click

from rag_eval.cli import datasets, html_report, judge, labels, pipeline, scoring


@click.group()
@click.version_option(package_name="rag-eval")
def cli() -> None:
    """RAG evaluation workbench: TRACe metrics, judges, a Qdrant RAG pipeline and runs."""


for _module in (scoring, judge, pipeline, datasets, html_report, labels):
    _module.register(cli)
