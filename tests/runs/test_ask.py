"""ask(): retrieve -> generate -> judge -> score, with the retrieved chunks as the
judge's documents; and the text rendering the CLI prints."""

from rag_eval.cli.report import format_ask_result
from rag_eval.rag.config import default_config
from rag_eval.rag.ingest import ingest_paths
from rag_eval.runs.ask import ask
from tests.runs.conftest import OverlapJudge


def test_ask_judges_the_retrieved_chunks(corpus_dir):
    config = default_config().with_changes(**{"retrieval.k": 2})
    ingest_paths([corpus_dir], "docs", config)
    judge = OverlapJudge()
    result = ask("Which database is written in Rust?", "docs", config, judge=judge)
    assert len(result.chunks) == 2 and result.item.document_texts == [c.text for c in result.chunks]
    assert result.item.metadata["doc_ids"] == [c.doc_id for c in result.chunks]
    assert result.generation.extractive and result.judge_result.status.value == "ok"
    assert result.scores.adherence is True and 0 < result.scores.context_relevance <= 1
    assert {"retrieve_s", "generate_s", "judge_s", "total_s"} <= set(result.timings)
    text = format_ask_result(result)
    assert "extractive answer" in text and "Response sentences:" in text and "[a] ✓ supported" in text
    assert "R" in text.split("Document sentences")[1]
    # the original project's per-evaluation fields, in the JSON and the text
    fields = result.to_dict()
    assert fields["overall_supported"] is True and fields["unsupported_sentences"] == 0
    assert fields["fully_supported_sentences"] + fields["partially_supported_sentences"] == len(result.item.response_keys)
    assert 0 <= fields["average"] <= 1 and fields["rmse_aggregation"] >= 0
    assert "rmse_aggregation" in text and "sentences fully / partially / unsupported" in text


def test_ask_without_a_usable_judge_still_answers(corpus_dir, monkeypatch):
    config = default_config()
    ingest_paths([corpus_dir], "docs", config)

    def broken(_config, **_changes):
        from rag_eval.judges.factory import JudgeUsageError

        raise JudgeUsageError("local judge model not found")

    monkeypatch.setattr("rag_eval.judges.factory.build_judge", broken)
    result = ask("Do cats sleep?", "docs", config)
    assert result.answer and result.judge_result is None and result.scores is None
    assert result.judge_error == "judge unavailable: local judge model not found"
    assert "Not judged: judge unavailable" in format_ask_result(result)
