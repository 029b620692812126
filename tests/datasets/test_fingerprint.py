"""Fingerprints: same rows -> same hash in any format and order; any change -> new hash."""

import pytest

from rag_eval.datasets.fingerprint import fingerprint, short_fingerprint
from rag_eval.datasets.importers import import_ragbench
from rag_eval.datasets.io import load_dataset, write_dataset
from tests.conftest import DATA_DIR


@pytest.fixture(scope="module")
def rows():
    return import_ragbench([DATA_DIR / "ragbench_sample.jsonl"]).rows


def test_same_across_formats_and_order(rows, tmp_path):
    value = fingerprint(rows)
    assert value.startswith("sha256:") and len(value) == len("sha256:") + 64
    for fmt in ("jsonl", "csv", "parquet"):
        assert fingerprint(load_dataset(write_dataset(rows, tmp_path / f"d.{fmt}")).rows) == value
    assert fingerprint(list(reversed(rows))) == value


def test_any_change_changes_it(rows):
    value = fingerprint(rows)
    changed = [rows[0].model_copy(update={"question": rows[0].question + " "})] + rows[1:]
    assert fingerprint(changed) != value
    assert fingerprint(rows[1:]) != value
    assert fingerprint(rows + rows[:1]) != value  # a duplicated row counts


def test_plain_dicts_and_rows_agree(rows):
    assert fingerprint([r.to_record() for r in rows]) == fingerprint(rows)


def test_short_form():
    value = fingerprint([])
    assert short_fingerprint(value) == value[7:19]
    with pytest.raises(ValueError):
        short_fingerprint("md5:abc")
