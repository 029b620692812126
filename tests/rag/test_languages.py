"""Language at ingest and retrieval that fits it (issue 47): each chunk's language is
detected and stored, the collection records its languages, the default (``auto``) mode
reads a language the embedder does not cover with BM25 over that language's words, and a
collection whose BM25 terms came from an older tokenizer is refused, never mixed."""

import json

import pytest

from rag_eval.rag.config import default_config
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.retrieve import UNCOVERED_MODE, resolve_mode, retrieve
from rag_eval.rag.store import (
    META_KEY,
    CollectionMismatch,
    collection_metadata,
    iter_chunks,
    list_collections,
    open_qdrant,
)

ZH = {  # a small manual in Chinese, no spaces between words
    "reset": "按住电源键十秒钟。电视将重新启动并恢复出厂设置。",
    "wifi": "打开设置菜单，选择网络，然后输入无线网络的密码。连接成功后图标会变成绿色。",
    "remote": "遥控器需要两节七号电池。如果遥控器没有反应，请更换电池并对准电视的接收器。",
    "sound": "如果电视没有声音，请检查静音按钮，并确认音量不是零。外接音箱需要在菜单中选择音频输出。",
}
QUESTIONS = {"reset": "怎样恢复出厂设置？", "wifi": "无线网络的密码在哪里输入？",
             "remote": "遥控器用什么电池？", "sound": "电视没有声音怎么办？"}


@pytest.fixture
def chinese(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": k, "text": v}, ensure_ascii=False) + "\n" for k, v in ZH.items()),
                      encoding="utf-8")
    return ingest_paths([corpus], "zh-manual", default_config())


def test_each_chunk_and_the_collection_know_their_language(chinese):
    assert chinese.languages == {"zh": len(ZH)}
    assert {c["language"] for c in iter_chunks("zh-manual")} == {"zh"}
    meta = collection_metadata(open_qdrant(), "zh-manual")
    assert meta["languages"] == {"zh": len(ZH)} and meta["embedder_languages"] == ["en"]
    [info] = list_collections()
    assert info.languages == ["zh"]
    # ingest (CLI) and the Corpus page say the English embedder does not cover it, and what retrieval does
    for note in (chinese.language_note, info.extra["language_note"]):
        assert "mostly in zh" in note and "does not cover" in note and "BM25" in note and "multilingual" in note


def test_the_default_retrieval_reads_the_language_the_embedder_cannot(chinese):
    config = default_config()
    meta = collection_metadata(open_qdrant(), "zh-manual")
    assert resolve_mode(config, meta) == UNCOVERED_MODE
    for doc_id, question in QUESTIONS.items():
        chunks = retrieve(question, "zh-manual", config)
        assert chunks[0].doc_id == doc_id, question
        assert chunks[0].language == "zh"
    # a multilingual embedder (declared to cover Chinese) would be used densely
    declared = config.with_changes(**{"embedder.languages": ["en", "zh"]})
    assert resolve_mode(declared, meta) == "dense"


def test_an_english_collection_keeps_dense_retrieval(corpus_dir):
    report = ingest_paths([corpus_dir], "docs", default_config())
    assert report.language_note is None and set(report.languages) == {"en"}
    meta = collection_metadata(open_qdrant(), "docs")
    assert resolve_mode(default_config(), meta) == "dense"
    question = "Which vector database is written in Rust?"
    dense = default_config().with_changes(**{"retrieval.mode": "dense"})
    assert retrieve(question, "docs", default_config()) == retrieve(question, "docs", dense)


def test_a_corpus_row_names_its_language(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "a", "text": "Ok.", "language": "de"}) + "\n", encoding="utf-8")
    assert ingest_paths([corpus], "given", default_config()).languages == {"de": 1}


def test_a_collection_of_an_older_tokenizer_is_refused_never_mixed(corpus_dir):
    ingest_paths([corpus_dir], "old", default_config())
    client = open_qdrant()
    meta = collection_metadata(client, "old")
    client.update_collection("old", metadata={META_KEY: {**meta, "sparse": "bm25-murmur3-v1"}})
    for mode in ("bm25", "hybrid"):
        with pytest.raises(CollectionMismatch, match="older tokenizer.*ingest its files again into a new collection"):
            retrieve("vector database", "old", default_config().with_changes(**{"retrieval.mode": mode}))
    with pytest.raises(CollectionMismatch, match="older tokenizer"):
        ingest_paths([corpus_dir], "old", default_config())
    assert retrieve("vector database", "old", default_config())  # English: dense, its vectors are unaffected


def test_a_run_records_the_mode_auto_ran_in_and_says_it(chinese, tmp_path):
    """``auto`` is decided by the collection, so a stored run says what it ran: the Runs and
    Compare pages name it ``auto (bm25)``, and two auto runs that retrieved differently differ."""
    from rag_eval.runs.compare import run_configuration, run_diff
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.sources import RagSource
    from rag_eval.runs.store import RunStore
    from tests.runs.conftest import OverlapJudge

    store, config = RunStore(tmp_path / "runs.sqlite"), default_config()
    rows = [{"id": doc_id, "question": question} for doc_id, question in QUESTIONS.items()]
    run_id = evaluate(RagSource(rows, config, "zh-manual"), OverlapJudge(), StoreSink(store, config),
                      config=config).run_id
    run = store.get_run(run_id)
    assert run["config"]["retrieval"]["mode"] == "auto" and run["meta"]["retrieval_mode"] == UNCOVERED_MODE
    assert run_configuration(run).startswith(f"auto ({UNCOVERED_MODE}) top-{config.retrieval.k} · ")
    dense = {**run, "meta": {**run["meta"], "retrieval_mode": "dense"}}
    assert {"path": "retrieval.mode", "before": "auto (dense)", "after": f"auto ({UNCOVERED_MODE})"} in run_diff(dense, run)
    # the CLI says it as the pages do: `runs show`, and `compare`'s line of what changed
    from click.testing import CliRunner

    from rag_eval.cli import cli

    forced = config.with_changes(**{"retrieval.mode": "dense"})
    other = evaluate(RagSource(rows, forced, "zh-manual"), OverlapJudge(), StoreSink(store, forced),
                     config=forced).run_id
    shown = CliRunner().invoke(cli, ["runs", "show", run_id, "--db", str(store.path)])
    assert f"what it did: {run_configuration(run)}" in shown.output
    compared = CliRunner().invoke(cli, ["compare", run_id, other, "--db", str(store.path)])
    assert f"retrieval.mode: auto ({UNCOVERED_MODE}) → dense" in compared.output, compared.output
