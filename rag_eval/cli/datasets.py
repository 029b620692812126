"""``rag-eval dataset import|validate|convert|fingerprint|show`` and ``rag-eval synth``.

Each command parses options, calls one library function from ``rag_eval.datasets``
and echoes; problems are printed one per line with file, row and field.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_eval.cli.exits import RowsFailed, check_input
from rag_eval.cli.options import CommandOptions, takes

if TYPE_CHECKING:
    from rag_eval.datasets.schema import QueryType


def _echo_issues(issues, limit: int | None = None) -> None:
    shown = issues if limit is None else issues[:limit]
    for issue in shown:
        click.echo(str(issue), err=True)
    if limit is not None and len(issues) > limit:
        click.echo(f"... and {len(issues) - limit} more issues (run 'rag-eval dataset validate' for all)", err=True)


def _load(path: str):
    """The dataset at ``path``; exit 2 when it cannot be used as a whole (the one check)."""
    from rag_eval.datasets.io import load_dataset

    check_input(path)
    return load_dataset(path)


@click.group("dataset")
def dataset() -> None:
    """Golden datasets: import, validate, convert, fingerprint, show."""


@dataset.command("import")
@click.argument("kind", type=click.Choice(["ragbench", "beir", "csv"]))
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="Output .jsonl/.csv/.parquet/.json")
@click.option("--prefix-subset", is_flag=True, help="ragbench: ids become <subset>-<id> (ids repeat across subsets).")
@click.option("--min-score", type=int, default=1, show_default=True, help="beir: lowest qrels score that counts as relevant.")
def import_cmd(kind: str, paths: tuple[str, ...], out: str, prefix_subset: bool, min_score: int) -> None:
    """Import KIND (ragbench | beir | csv) from PATHS into one dataset file.

    beir takes the collection folder (corpus.jsonl, queries.jsonl, qrels/*.tsv) or the files."""
    from rag_eval.datasets.fingerprint import fingerprint, short_fingerprint
    from rag_eval.datasets.importers import import_dataset
    from rag_eval.datasets.io import write_dataset
    from rag_eval.io.rows import SUPPORTED_SUFFIXES, FileFormatError

    for path in paths:  # a row file that is unreadable or empty: exit 2 before anything is written
        if Path(path).is_file() and Path(path).suffix.lower() in SUPPORTED_SUFFIXES:
            check_input(path, {})
    by_kind: dict[str, dict[str, Any]] = {"ragbench": {"prefix_subset": prefix_subset}, "beir": {"min_score": min_score}}
    options = by_kind.get(kind, {})
    try:
        result = import_dataset(kind, paths, **options)
        if not result.rows:
            _echo_issues(result.issues)
            raise RowsFailed("no rows could be imported")
        write_dataset(result.rows, out)
    except (ValueError, FileFormatError) as err:
        raise click.ClickException(str(err)) from err
    _echo_issues(result.issues, limit=50)
    errors = len(result.errors)
    click.echo(f"imported {len(result.rows)} rows into {out} ({errors} errors, "
               f"{len(result.issues) - errors} warnings); fingerprint {short_fingerprint(fingerprint(result.rows))}")
    _fail_on_rejected(result)


def _fail_on_rejected(result) -> None:
    """Exit 1 (count on stderr) when rows were rejected, after the good rows were written."""
    rejected = len(result.left_out)  # rows (or whole files) read but not kept
    if rejected:
        click.echo(f"{rejected} row(s) rejected; the {len(result.rows)} good rows were written", err=True)
        raise click.exceptions.Exit(1)


@dataset.command("validate")
@click.argument("path", type=click.Path(dir_okay=False))
def validate_cmd(path: str) -> None:
    """Print every problem of a dataset file; exit 1 when there are errors."""
    from rag_eval.datasets.io import validate_file
    from rag_eval.datasets.validate import summarize_issues

    check_input(path)  # unreadable, no rows, no question column: exit 2, said once
    issues = validate_file(path)
    for issue in issues:
        click.echo(str(issue))
    counts = summarize_issues(issues)
    click.echo(f"{path}: {counts['error']} errors, {counts['warning']} warnings")
    if counts["error"]:
        raise click.exceptions.Exit(1)


@dataset.command("convert")
@click.argument("src", type=click.Path(dir_okay=False))
@click.argument("dst", type=click.Path(dir_okay=False))
def convert_cmd(src: str, dst: str) -> None:
    """Convert between .jsonl, .json, .csv and .parquet (rows that fail the schema are reported, not written)."""
    from rag_eval.datasets.io import write_dataset
    from rag_eval.io.rows import FileFormatError

    result = _load(src)
    _echo_issues(result.issues, limit=50)
    if not result.rows:
        raise RowsFailed(f"{src}: no valid rows to convert")
    try:
        write_dataset(result.rows, dst)
    except FileFormatError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"wrote {len(result.rows)} rows to {dst}")
    _fail_on_rejected(result)


@dataset.command("fingerprint")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--short", is_flag=True, help="Print the 12-digit display form.")
def fingerprint_cmd(path: str, short: bool) -> None:
    """Print the content hash of a dataset (same rows -> same hash, in any format or order)."""
    from rag_eval.datasets.fingerprint import fingerprint, short_fingerprint

    result = _load(path)
    rejected = len(result.left_out)
    if rejected:
        _echo_issues(result.errors)
        raise RowsFailed(f"{path}: {rejected} rows fail the schema; fix them before fingerprinting")
    value = fingerprint(result.rows)
    click.echo(short_fingerprint(value) if short else value)


@dataset.command("show")
@click.argument("path", type=click.Path(dir_okay=False))
def show_cmd(path: str) -> None:
    """Summarise a dataset: rows, provenance, question types, what ground truth it has."""
    from rag_eval.datasets.fingerprint import fingerprint, short_fingerprint

    result = _load(path)
    rows = result.rows
    click.echo(f"file         {path}")
    click.echo(f"rows         {len(rows)} loaded, {len(result.left_out)} rejected, "
               f"{len(result.errors)} errors, {len(result.issues) - len(result.errors)} warnings")
    click.echo(f"fingerprint  {short_fingerprint(fingerprint(rows))}")
    for label, counter in (
        ("provenance", Counter(r.provenance.value for r in rows)),
        ("query type", Counter(r.metadata.query_type or "-" for r in rows)),
        ("domain", Counter(r.metadata.domain or "-" for r in rows)),
    ):
        click.echo(f"{label:<12} " + ", ".join(f"{k} {v}" for k, v in counter.most_common(8)))
    have = {
        "reference answers": sum(bool(r.reference_answers) for r in rows),
        "negative answers": sum(bool(r.negative_answers) for r in rows),
        "gold contexts": sum(bool(r.gold_contexts or r.gold_pointers) for r in rows),
        "gold doc ids": sum(bool(r.gold_doc_ids) for r in rows),
        "response + documents": sum(r.response is not None and bool(r.documents) for r in rows),
        "RAGBench labels": sum(r.all_relevant_sentence_keys is not None for r in rows),
    }
    for name, count in have.items():
        click.echo(f"  with {name:<22} {count}/{len(rows)}")


def _types(values: tuple[str, ...]) -> tuple[QueryType, ...]:
    from rag_eval.datasets.schema import QueryType

    names = [t.strip() for v in values for t in v.split(",") if t.strip()]
    known = [t.value for t in QueryType]
    unknown = [t for t in names if t.replace("-", "_") not in known]
    if unknown:
        raise click.BadParameter(f"unknown type(s) {', '.join(unknown)}; choose from {', '.join(known)}", param_hint="--types")
    return tuple(QueryType(t.replace("-", "_")) for t in names) or tuple(QueryType)


def _answer_judge(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``auto``, ``none`` or a kind of the judge-kind registry (``local:NAME`` too)."""
    from rag_eval.cli.judge import judge_kind_option
    from rag_eval.synth.generate import AUTO_JUDGE, NO_JUDGE

    return value if value in (AUTO_JUDGE, NO_JUDGE) else str(judge_kind_option(ctx, param, value))


@dataclass(frozen=True)
class SynthCommand(CommandOptions):
    """What ``rag-eval synth`` was asked."""

    collection: str
    n: int
    out: str
    types: tuple[str, ...]
    model: str | None
    base_url: str | None
    api_key_env: str | None
    few_shot: str | None
    negatives: bool
    seed: int
    judge_kind: str
    dedupe_threshold: float
    dropped_path: str | None


@click.command("synth")
@click.option("--collection", required=True, help="Qdrant collection to sample chunks from.")
@click.option("-n", "n", type=click.IntRange(min=1), required=True, help="Questions to generate (before filtering).")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Kept rows (.jsonl/.csv/.parquet/.json).")
@click.option("--types", multiple=True, help="Comma-separated: simple, multi_hop, comparison, distracting, unanswerable (default: all).")
@click.option("--model", default=None, help="LLM model (default: RAG_EVAL_LLM_MODEL or the client default).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL (default: RAG_EVAL_LLM_BASE_URL / OPENAI_BASE_URL).")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key.")
@click.option("--few-shot", "few_shot", type=click.Path(exists=True, dir_okay=False), help="Golden dataset whose questions set the style.")
@click.option("--negatives", is_flag=True, help="Also write a plausible but wrong answer per question.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--judge", "judge_kind", default="auto", show_default=True, callback=_answer_judge,
              help="Answerability check: auto (the LLM judge when an LLM is configured, else the local judge), "
                   "any judge kind (`rag-eval judges list`), or none.")
@click.option("--dedupe-threshold", type=click.FloatRange(0, 1, min_open=True), default=0.9, show_default=True,
              help="Cosine at or above which a question is a near-duplicate.")
@click.option("--dropped", "dropped_path", type=click.Path(dir_okay=False), default=None,
              help="Where dropped tasks and reasons go (default: <out stem>.dropped.jsonl).")
@takes(SynthCommand)
def synth_cmd(command: SynthCommand) -> None:
    """Generate a synthetic dataset from a collection; every row is provenance 'synthetic'."""
    from rag_eval.datasets.io import write_dataset
    from rag_eval.io.rows import write_rows
    from rag_eval.llm.config import LLMConfig
    from rag_eval.llm.errors import LLMError
    from rag_eval.rag.store import CollectionNotFound, QdrantUnavailable
    from rag_eval.synth import SynthOptions, make_answer_judge, synthesize_from_collection

    golden = ()
    if command.few_shot:
        loaded = _load(command.few_shot)
        if not loaded.rows:
            raise click.ClickException(f"{command.few_shot}: no valid rows for few-shot examples")
        golden = tuple(loaded.rows)
    n, out = command.n, command.out
    try:
        llm = LLMConfig.from_settings(model=command.model, base_url=command.base_url, api_key_env=command.api_key_env)
        options = SynthOptions(n=n, types=_types(command.types), seed=command.seed, negatives=command.negatives,
                               few_shot=golden, dedupe_threshold=command.dedupe_threshold)
        judge = make_answer_judge(command.judge_kind, llm)
        with click.progressbar(length=n, label="generating", file=sys.stderr) as bar:
            def progress(done: int, total: int) -> None:
                bar.update(done - bar.pos)

            result = synthesize_from_collection(command.collection, options, llm, judge=judge, progress=progress)
    except (CollectionNotFound, QdrantUnavailable, LLMError, ValueError) as err:
        raise click.ClickException(str(err)) from err
    write_dataset(result.rows, out)
    dropped_path = command.dropped_path or str(Path(out).with_name(Path(out).stem + ".dropped.jsonl"))
    write_rows([d.to_dict() for d in result.dropped], dropped_path)
    summary = result.summary()
    click.echo(f"kept {summary['kept']} of {summary['requested']} -> {out} (provenance: synthetic)")
    by_type = ", ".join(f"{k} {v}" for k, v in sorted(summary["kept_by_type"].items())) or "-"
    click.echo(f"  kept by type: {by_type}")
    by_stage = ", ".join(f"{k} {v}" for k, v in sorted(summary["dropped_by_stage"].items())) or "none"
    click.echo(f"  dropped: {by_stage} -> {dropped_path}")
    cost = "unknown" if summary["cost_usd"] is None else f"${summary['cost_usd']:.4f}"
    click.echo(f"  tokens: {summary['tokens'].get('total_tokens', 0)}, cost {cost}, cached replies {summary['cached_replies']}")


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(dataset)
    group.add_command(synth_cmd)
