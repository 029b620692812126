"""The judges in languages other than English: they read the words of any script, and an
item with nothing they can read ends ``unsupported_language``, never "supported"."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.fake_answers import answer, prompt_keys
from rag_eval.judges import features as F
from rag_eval.judges.encoder import word_vectors
from rag_eval.judges.lexical import LexicalJudge
from rag_eval.judges.llm import LLMJudge
from rag_eval.judges.local import LocalJudge
from rag_eval.llm.config import LLMConfig
from rag_eval.schema import JudgeStatus
from rag_eval.text.sentences import item_from_texts

# The example: a Chinese answer with no support in its document.
ZH_DOC = "按住电源键十秒钟。电视将重新启动。"
ZH_QUESTION = "电视怎么重启？"
ZH_UNSUPPORTED = "拔掉电源插头并等待一个小时。然后致电客服。"
AR_DOC = "يعرض الأمر ls محتويات المجلد الحالي. يمكن استخدام الخيار -l لعرض تفاصيل كل ملف."
AR_QUESTION = "ماذا يفعل الأمر ls؟"
AR_INVENTED = "يقوم الأمر أيضًا بإعادة تشغيل الحاسوب كل ليلة."


@pytest.fixture(scope="module")
def local_judge() -> LocalJudge:
    return LocalJudge()


def test_words_of_any_script_are_counted():
    assert F.content_tokens("Ändere die Größe") == ["ändere", "die", "grösse"]  # not cut at umlauts
    assert F.content_tokens("Ändere die Größe", "de") == ["ändere", "grösse"]  # German stop words
    assert F.content_tokens("北京是首都") == ["北京", "京是", "是首", "首都"]  # character bigrams
    assert F.content_tokens("The viruses of the cities") == ["virus", "city"]  # English as before


def test_numbers_of_every_script_read_as_ascii():
    assert F.numbers("في عام ٢٠٢٠ كان ١٬٥ مليون") >= {"2020"}
    assert F.numbers("価格は３５００円") == {"3500"}
    assert F.dates("تأسست عام ١٩٩٨") == {"1998"}


def test_names_are_neutral_where_the_script_has_no_case():
    assert F.names_and_capitals("北京是中国的首都。") == (set(), set())
    names, capitals = F.names_and_capitals("Столица Франции — Париж.", "ru")
    assert "париж" in names and "столица" in capitals


def test_a_german_sentence_copied_word_for_word_misses_no_name(local_judge):
    doc = "Drücken Sie die Taste Ändern, um die Größe zu ändern. Der Fernseher startet neu."
    item = item_from_texts("de", "Wie ändere ich die Größe?", [doc], "Drücken Sie die Taste Ändern, um die Größe zu ändern.")
    result = local_judge.judge([item])[0]
    assert result.status is JudgeStatus.OK and result.labels.overall_supported
    assert "missing" not in result.labels.sentence_support_information[0].explanation


def test_lexical_judge_reads_chinese():
    supported = item_from_texts("a", ZH_QUESTION, [ZH_DOC], "按住电源键十秒钟。")
    invented = item_from_texts("b", ZH_QUESTION, [ZH_DOC], ZH_UNSUPPORTED)
    ok, bad = LexicalJudge().judge([supported, invented])
    assert ok.labels.adherence_probability == 1.0 and ok.labels.overall_supported
    assert bad.labels.adherence_probability < 0.2 and not bad.labels.overall_supported


@pytest.mark.parametrize(("question", "doc", "invented", "language"),
                         [(ZH_QUESTION, ZH_DOC, ZH_UNSUPPORTED, "zh"), (AR_QUESTION, AR_DOC, AR_INVENTED, "ar")])
def test_local_judge_does_not_call_an_invented_sentence_supported(local_judge, question, doc, invented, language):
    copied = item_from_texts("ok", question, [doc], doc)
    made_up = item_from_texts("bad", question, [doc], invented)
    ok, bad = local_judge.judge([copied, made_up])
    assert ok.labels.overall_supported and not bad.labels.overall_supported
    assert bad.labels.adherence_probability < 0.5 < ok.labels.adherence_probability


def test_word_vectors_put_unrelated_sentences_apart():
    v = word_vectors([AR_INVENTED, "يعرض الأمر ls محتويات المجلد الحالي.", "يعرض الأمر ls محتويات المجلد الحالي."], "ar")
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] < 0.3 and v[1] @ v[2] == pytest.approx(1.0, abs=1e-5)
    assert not word_vectors(["!!"], "ar").any()  # no word: similar to nothing


@pytest.mark.parametrize("judge", [LexicalJudge(), LocalJudge()], ids=["lexical", "local"])
def test_nothing_to_read_is_unsupported_language_never_supported(judge):
    emoji = item_from_texts("emoji", "?", [ZH_DOC], "👍👍")
    readable = item_from_texts("zh", ZH_QUESTION, [ZH_DOC], "按住电源键十秒钟。")
    unread, ok = judge.judge([emoji, readable])
    assert unread.status is JudgeStatus.UNSUPPORTED_LANGUAGE and not unread.status.usable
    assert unread.labels is None and "no word" in unread.error and "language" in unread.error
    assert ok.status is JudgeStatus.OK


def test_a_judge_that_declares_its_languages_refuses_the_others():
    class EnglishOnly(LexicalJudge):
        languages = frozenset({"en"})

    zh = item_from_texts("zh", ZH_QUESTION, [ZH_DOC], ZH_UNSUPPORTED)
    zh.language = "zh"
    result = EnglishOnly().judge([zh])[0]
    assert result.status is JudgeStatus.UNSUPPORTED_LANGUAGE and "'zh'" in result.error


@pytest.mark.parametrize(("question", "doc", "response"),
                         [(ZH_QUESTION, ZH_DOC, ZH_UNSUPPORTED), (AR_QUESTION, AR_DOC, AR_INVENTED)],
                         ids=["zh", "ar"])
def test_llm_judge_reads_any_language(openai_server, question, doc, response):
    """The prompt carries the text as written (not escaped), the keys come from the
    splitter, and an answer written in the row's language parses."""
    item = item_from_texts("row", question, [doc], response)

    def reply(body):
        doc_keys, resp_keys = prompt_keys(body)
        assert doc_keys == item.document_keys and resp_keys == item.response_keys
        labels = answer(body, unsupported=tuple(resp_keys))
        labels["overall_supported_explanation"] = response[:10] + " — " + doc[:10]
        return json.dumps(labels, ensure_ascii=False)

    openai_server.set_handler(reply)
    judge = LLMJudge(LLMConfig(model="test-model", base_url=openai_server.base_url, max_retries=2, timeout_s=5.0))
    result = judge.judge([item])[0]
    user = openai_server.requests[0]["messages"][1]["content"]
    assert json.dumps(doc.split("。")[0].split(".")[0], ensure_ascii=False)[:-1] in user
    assert result.status is JudgeStatus.OK
    assert result.labels.unsupported_response_sentence_keys == item.response_keys
    assert result.labels.overall_supported_explanation.startswith(response[:10])


def test_an_unreadable_row_counts_in_coverage_through_evaluate(rag_eval_home):
    from rag_eval import evaluate

    rows = [{"id": "zh", "question": ZH_QUESTION, "documents": [ZH_DOC], "response": ZH_UNSUPPORTED},
            {"id": "emoji", "question": "?", "documents": [ZH_DOC], "response": "👍👍"}]
    summary = evaluate(rows, judge="lexical", progress=False).summary
    assert "1/2 items usable (coverage 0.500); ok: 1, unsupported_language: 1" in str(summary)
    assert "adherence: 0.0000" in str(summary)  # the Chinese row, not supported; the emoji row in no mean
