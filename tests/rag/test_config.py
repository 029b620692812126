"""RagConfig: YAML round trip, a hash that ignores the name, clear validation errors."""

import pytest

from rag_eval.rag.config import RagConfig, default_config


def test_yaml_round_trip(tmp_path):
    config = default_config().with_changes(**{"retrieval.k": 2, "retrieval.mode": "hybrid"})
    path = tmp_path / "c.yaml"
    config.to_yaml(path)
    loaded = RagConfig.from_yaml(path)
    assert loaded == config
    assert loaded.config_hash == config.config_hash


def test_hash_ignores_name_but_not_settings():
    a = default_config("a")
    assert a.config_hash == default_config("b").config_hash
    assert a.config_hash != a.with_changes(**{"retrieval.k": 2}).config_hash
    assert hash(a) == hash(default_config("b"))
    assert a in {a}


def test_hashes_from_before_the_calibration_and_languages_fields_are_kept():
    """Stored runs group by hash: adding ``judge.calibration`` or ``embedder.languages``
    (unset) changes no hash. The default mode became ``auto`` (a different system on a
    collection the embedder cannot read), so a stored run of the old default (dense) keeps
    its hash and groups with runs that ask for dense, not with the new default."""
    dense = {"retrieval": {"mode": "dense"}}
    assert RagConfig.from_dict(dense).config_hash == "da6eee463d80"
    assert RagConfig.from_dict({**dense, "judge": {"kind": "llm", "model": "m"}}).config_hash == "c8eb724f454c"
    assert RagConfig().retrieval.mode == "auto" and RagConfig().config_hash != "da6eee463d80"


def test_embedder_declares_the_languages_it_covers():
    assert RagConfig().embedder.covered_languages == {"en"}  # the packaged all-MiniLM-L6-v2
    named = RagConfig.from_dict({"embedder": {"model": "/models/paraphrase-multilingual-MiniLM-L12-v2"}})
    assert named.embedder.covered_languages is None  # not known to be English only: every language
    declared = RagConfig.from_dict({"embedder": {"model": "my-model", "languages": ["DE", "fr"]}})
    assert declared.embedder.covered_languages == {"de", "fr"}
    assert declared.config_hash != RagConfig.from_dict({"embedder": {"model": "my-model"}}).config_hash


@pytest.mark.parametrize(
    "data, field",
    [
        ({"retrieval": {"k": 0}}, "retrieval.k"),
        ({"retrieval": {"mode": "magic"}}, "retrieval.mode"),
        ({"chunking": {"size": 100, "overlap": 100}}, "chunking"),
        ({"generator": {"kind": "extractive", "temperature": 5}}, "generator.temperature"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_bad_config_names_the_field(data, field):
    with pytest.raises(ValueError, match=field):
        RagConfig.from_dict(data, source="x.yaml")


def test_a_calibration_on_a_kind_that_takes_none_fails_before_any_row():
    """The kind declares whether it is calibrated (``JudgeKind.calibrated``): the one factory
    checks it when the judge is specified, before any row, whatever read the configuration."""
    from rag_eval.judges.base import JudgeUsageError
    from rag_eval.judges.factory import judge_spec

    config = RagConfig.from_dict({"judge": {"kind": "llm", "calibration": "mine"}}, source="x.yaml")
    with pytest.raises(JudgeUsageError, match="takes no calibration"):
        judge_spec(config.judge)


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ValueError, match="no such configuration file"):
        RagConfig.from_yaml(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("retrieval: [k: 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid YAML"):
        RagConfig.from_yaml(bad)
