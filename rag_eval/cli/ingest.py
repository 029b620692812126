"""``rag-eval ingest``: files and folders into a Qdrant collection, file by file.

Every file gets its own line (ingested with n chunks, unchanged and skipped, or failed
with the reason); one failed file never stops the others. Exit 1 only when some file
failed (the summary names them), 2 for a usage error (no such path, nothing supported
to ingest, a bad configuration), 3 when Qdrant is unreachable (rag_eval.cli.exits).
"""

from __future__ import annotations

from pathlib import Path

import click

from rag_eval.cli.exits import RowsFailed
from rag_eval.cli.pipeline import _load_config, _progress_bar, _table, _user_errors, config_option


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--collection", "-c", help="Collection name (default: <first path name>--<embedder>).")
@config_option
@click.option("--chunking", type=click.Choice(["sentence", "tokens", "document"]), help="Override the chunking strategy.")
@click.option("--chunk-size", type=click.IntRange(min=1), help="Override the chunk size (characters, or tokens).")
@click.option("--chunk-overlap", type=click.IntRange(min=0), help="Override the chunk overlap.")
@_user_errors
def ingest(paths, collection, config_path, chunking, chunk_size, chunk_overlap) -> None:
    """Ingest files and folders (.txt .md .pdf .html, BEIR corpus.jsonl) into a Qdrant collection.

    Each file is reported on its own: ingested (with its chunks), unchanged (already
    there, skipped) or failed (with the reason); a failed file never stops the others.
    Re-ingesting unchanged files adds nothing; a changed file replaces its chunks."""
    from rag_eval.rag.ingest import ingest_paths
    from rag_eval.rag.loaders import SUPPORTED_SUFFIXES, discover_files
    from rag_eval.rag.store import default_collection_name

    files, missing = discover_files(list(paths))
    if not files:  # nothing at all to ingest is a usage error, not a failed file
        reason = "; ".join(missing) or f"no supported files ({', '.join(SUPPORTED_SUFFIXES)}) in {', '.join(paths)}"
        raise click.ClickException(reason)
    config = _load_config(config_path, {"chunking.strategy": chunking, "chunking.size": chunk_size,
                                        "chunking.overlap": chunk_overlap})
    collection = collection or default_collection_name(Path(paths[0]).stem, config.embedder)
    update, close = _progress_bar(f"ingest → {collection}", "file")
    try:
        report = ingest_paths(list(paths), collection, config, progress=update)
    finally:
        close()
    rows = [(Path(f.path).name, f.status, f.chunks, f.documents, f.added, f.replaced, f.unchanged)
            for f in report.files]
    click.echo(_table(["file", "status", "chunks", "documents", "added", "replaced", "unchanged"], rows))
    click.echo(f"\nCollection '{collection}': {report.summary()}; {report.documents_added} documents added, "
               f"{report.documents_replaced} replaced, {report.documents_unchanged} unchanged; "
               f"{report.chunks_deleted} old chunks deleted in {report.seconds:.1f}s "
               f"({report.chunks_per_second:.1f} chunks/s)")
    if report.languages:
        total = sum(report.languages.values())
        click.echo("Languages (chunks): " + ", ".join(f"{code} {n / total:.0%}" for code, n in report.languages.items()))
    if report.language_note:
        click.echo(f"note: {report.language_note}")
    for problem in report.errors:
        click.echo(f"error: {problem}", err=True)
    if report.warning:
        click.echo(f"warning: {report.warning}", err=True)
    if report.failed:
        names = ", ".join(Path(f.path).name for f in report.failed)
        rest = "; the other files were ingested" if len(report.failed) < len(report.files) else ""
        raise RowsFailed(f"{len(report.failed)} of {len(report.files)} file(s) could not be ingested: {names} "
                         f"(reasons above){rest}")


def register(group: click.Group) -> None:
    """Add this module's command to the top-level group."""
    group.add_command(ingest)
