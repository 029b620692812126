"""The README's exit-code table is :data:`rag_eval.cli.exits.EXIT_CODES`, and every command
keeps it (issue 46, items 5-7): a bad option is 2 on every command; an empty file is 2
("no rows") on every command that reads rows, with nothing written; broken CSV quoting is
2 naming the line and saying it is a quoting/format error, in the same words on every path;
a missing column is 2 naming it once with the names it is accepted under, and no run is
stored. The Python API raises the same message as a ValueError."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import rag_eval
from rag_eval.cli import cli
from rag_eval.cli.exits import EXIT_CODES, InputError, Interrupted, RowsFailed, Unavailable
from tests.conftest import PROJECT_ROOT

MISSING = "id,question,response\n1,What?,Yes\n2,Why?,No\n3,How?,So\n"
BROKEN = ('id,question,documents,response\n1,How do I turn it on?,"[""Press power.""]",Press power\n'
          '2,"Broken quote,"["Turn on"]",Hold it\n3,Ok?,"[""a""]",b\n')
QUOTING = "broken.csv: line 3: CSV quoting/format error"
NO_ROWS = "no rows (the file is empty or holds only a header)"


def test_the_readme_table_is_the_declared_one():
    section = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8").split("### Exit codes", 1)[1].split("###")[0]
    table = {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.+) \|$", section, re.M)}
    assert table == EXIT_CODES
    assert {0, RowsFailed.exit_code, InputError.exit_code, Unavailable.exit_code, Interrupted.exit_code} == set(table)


def _leaves(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            out += _leaves(command, (*path, name))
        else:
            out.append((*path, name))
    return out


def test_a_bad_option_is_2_on_every_command():
    runner = CliRunner()
    commands = _leaves(cli)
    assert len(commands) > 20
    for command in commands:
        result = runner.invoke(cli, [*command, "--no-such-option"])
        assert result.exit_code == 2, (command, result.output)


# Every command that reads a file of rows, with {} standing for the file.
ROW_COMMANDS = [
    ["judge", "{}", "--judge", "lexical", "--out", "{out}"],
    ["judge", "{}", "--dry-run"],
    ["score", "{}", "--out", "{out}"],
    ["run", "{}", "--judge-only", "--db", "{db}"],
    ["run", "{}", "--db", "{db}"],
    ["dataset", "validate", "{}"],
    ["dataset", "convert", "{}", "{out}"],
    ["dataset", "fingerprint", "{}"],
    ["dataset", "show", "{}"],
    ["dataset", "import", "csv", "{}", "--out", "{out}"],
    ["dataset", "import", "ragbench", "{}", "--out", "{out}"],
    ["agreement", "{}", "{}"],
    ["retrieval", "{}", "{}"],
    ["traces", "import", "{}", "--out", "{out}"],
]


def _invoke(args: list[str], path: Path, tmp_path: Path):
    filled = [a.format(out=tmp_path / "out.jsonl", db=tmp_path / "runs.db") if a != "{}" else str(path) for a in args]
    return CliRunner().invoke(cli, filled)


@pytest.mark.parametrize("args", ROW_COMMANDS, ids=lambda a: " ".join(x for x in a if "{" not in x))
def test_an_empty_file_is_2_no_rows_and_nothing_is_written(args, tmp_path, rag_eval_home):
    empty = tmp_path / ("empty.csv" if "csv" in args else "empty.jsonl")
    empty.write_bytes(b"")
    result = _invoke(args, empty, tmp_path)
    assert result.exit_code == 2, result.output
    assert f"{empty}: {NO_ROWS}" in result.output
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "runs.db").exists()


@pytest.mark.parametrize("args", [a for a in ROW_COMMANDS if a[:2] not in (["retrieval", "{}"],)],
                         ids=lambda a: " ".join(x for x in a if "{" not in x))
def test_broken_quoting_is_2_naming_the_line_in_the_same_words(args, tmp_path, rag_eval_home):
    broken = tmp_path / "broken.csv"
    broken.write_text(BROKEN, encoding="utf-8")
    result = _invoke(args, broken, tmp_path)
    assert result.exit_code == 2, result.output
    assert f"{tmp_path}/{QUOTING}" in result.output and "field" not in result.output


@pytest.mark.parametrize("args", [["judge", "{}", "--judge", "lexical", "--out", "{out}"], ["judge", "{}", "--dry-run"],
                                  ["run", "{}", "--judge-only", "--db", "{db}"]], ids=["judge", "dry-run", "run"])
def test_a_missing_column_is_named_once_and_no_run_is_stored(args, tmp_path, rag_eval_home):
    path = tmp_path / "missing.csv"
    path.write_text(MISSING, encoding="utf-8")
    result = _invoke(args, path, tmp_path)
    assert result.exit_code == 2, result.output
    said = "missing column 'documents' (or contexts, retrieved_contexts, retrieval_context, documents_sentences)"
    assert result.output.count(said) == 1 and "row 2" not in result.output
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "runs.db").exists()


def test_the_api_raises_the_same_verdicts(tmp_path):
    empty, broken, missing = tmp_path / "empty.csv", tmp_path / "broken.csv", tmp_path / "missing.csv"
    empty.write_bytes(b"")
    broken.write_text(BROKEN, encoding="utf-8")
    missing.write_text(MISSING, encoding="utf-8")
    for path, said in ((empty, f"{empty}: {NO_ROWS}"), (broken, f"{tmp_path}/{QUOTING}"),
                       (missing, f"{missing}: missing column 'documents' (or contexts,")):
        for call in (rag_eval.evaluate, rag_eval.estimate):
            with pytest.raises(ValueError) as err:
                call(path, judge="lexical")
            assert str(err.value).startswith(said), str(err.value)
    with pytest.raises(ValueError, match="no rows"):
        rag_eval.evaluate([], judge="lexical", progress=False)
