"""The ``rag-eval`` command line: one click group, one module per command group. Each command parses
options, calls one library function and echoes the result; exit codes are :mod:`rag_eval.cli.exits`'s.
"""

from __future__ import annotations

import click

from rag_eval.cli import datasets, html_report, ingest, judge, labels, pipeline, plugins, scoring, traces
from rag_eval.cli.exits import ExitCodeGroup


@click.group(cls=ExitCodeGroup)
@click.version_option(package_name="rag-eval")
def cli() -> None:
    """RAG evaluation workbench: TRACe metrics, judges, a Qdrant RAG pipeline and runs."""


for _module in (scoring, judge, ingest, pipeline, datasets, html_report, labels, traces, plugins):
    _module.register(cli)
