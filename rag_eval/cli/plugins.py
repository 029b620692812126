"""``rag-eval metrics list`` and ``rag-eval judges list``: what is installed and where it
came from (built in, or the plugin distribution that declared it), and the plugins that
failed to load, one line each."""

from __future__ import annotations

import json

import click


def _plugin_errors(errors: list) -> None:
    for error in errors:
        click.echo(error.line(), err=True)


@click.group("metrics")
def metrics_group() -> None:
    """The metric registry: built-in metrics and plugins' (entry point group rag_eval.metrics)."""


@metrics_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per metric.")
def metrics_list(as_json: bool) -> None:
    """Every registered metric: name, family, direction, what it needs and where it came from."""
    from rag_eval.metrics.registry import METRICS

    declared = list(METRICS)
    if as_json:
        for m in declared:
            click.echo(json.dumps({"name": m.name, "label": m.label, "family": m.family,
                                   "higher_is_better": m.higher_is_better, "range": list(m.range),
                                   "needs": sorted(m.needs), "origin": m.origin, "help": m.help}))
    else:
        rows = [(m.name, m.family, "higher" if m.higher_is_better else "lower", ",".join(sorted(m.needs)), m.origin,
                 m.label) for m in declared]
        header = ("name", "family", "better", "needs", "from", "label")
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            click.echo("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
    _plugin_errors(METRICS.plugin_errors)


@metrics_group.command("add")
@click.argument("rubric", type=click.Path(exists=True, dir_okay=False))
@click.option("--samples", type=click.IntRange(1, 20), default=None,
              help="Samplings averaged per item (their spread is stored as NAME.spread); default: the file's, else 1.")
def metrics_add(rubric: str, samples: int | None) -> None:
    """Install a rubric metric (a YAML file: name, criteria, steps, inputs, score_range;
    docs/rubrics.md). Scored by the LLM endpoint of the environment on every later judge,
    run, Batch page and Python API evaluation, like a plugin's metric."""
    from rag_eval.judges.rubric import RubricError, install_rubric, load_rubric

    try:
        target = install_rubric(rubric, samples)
    except RubricError as err:
        raise click.UsageError(str(err)) from None
    declared = load_rubric(target)
    click.echo(f"installed rubric '{declared.name}' ({declared.readable_label}, {declared.score_range[0]}-"
               f"{declared.score_range[1]}, {declared.samples} sample(s)) as {target.name}; "
               f"use it with --metrics {declared.name}")


@click.group("judges")
def judges_group() -> None:
    """The judge kinds: built-in and plugins' (entry point group rag_eval.judges)."""


@judges_group.command("list")
def judges_list() -> None:
    """Every judge kind: name, where it runs, its options and where it came from."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    for kind in JUDGE_KINDS:
        options = ", ".join(kind.option_names()) or "-"
        runs = "calls a network" if kind.calls_network else "this machine"
        click.echo(f"{kind.name}  [{runs}]  options: {options}  from: {kind.origin}  {kind.help}".rstrip())
    _plugin_errors(JUDGE_KINDS.plugin_errors)


def register(group: click.Group) -> None:
    group.add_command(metrics_group)
    group.add_command(judges_group)
