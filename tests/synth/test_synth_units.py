"""The pure steps of synthetic generation: sampling, planning, prompts, reply parsing,
checks, row building and the near-duplicate filter (with the real packaged MiniLM)."""

import random
from collections import Counter

import pytest

from rag_eval.datasets.schema import CANNOT_ANSWER, DatasetRow, QueryType
from rag_eval.schema import JudgeStatus
from rag_eval.synth.filters import drop_near_duplicates
from rag_eval.synth.parse import Candidate, candidate_row, check_candidate, parse_reply
from rag_eval.synth.plan import StoredChunk, SynthOptions, Task, plan_tasks, stratified_sample
from rag_eval.synth.prompts import build_messages


def chunks_of(doc: str, n: int) -> list[StoredChunk]:
    return [StoredChunk(id=f"{doc}-{i}", doc_id=doc, text=f"{doc} passage {i}.", source=f"{doc}.md", start=i * 10, end=i * 10 + 9)
            for i in range(n)]


CORPUS = chunks_of("big", 40) + chunks_of("small", 2) + chunks_of("mid", 5)


def test_stratified_sample_gives_every_document_a_turn():
    picked = stratified_sample(CORPUS, 6, random.Random(0))
    per_doc = Counter(c.doc_id for c in picked)
    assert per_doc == {"big": 2, "small": 2, "mid": 2}
    assert len({c.id for c in picked}) == 6
    assert len(stratified_sample(CORPUS, 500, random.Random(0))) == len(CORPUS)  # never repeats a chunk


def test_stratified_sample_is_seeded_and_rejects_empty():
    assert stratified_sample(CORPUS, 5, random.Random(3)) == stratified_sample(CORPUS, 5, random.Random(3))
    with pytest.raises(ValueError, match="no chunks"):
        stratified_sample([], 3, random.Random(0))


def _nearest_by_doc(chunk, k):  # a deterministic neighbour function: the other documents' first chunks
    return [c for c in CORPUS if c.doc_id != chunk.doc_id][:k]


def test_plan_cycles_types_and_pairs_two_chunk_types():
    options = SynthOptions(n=10, seed=1)
    tasks = plan_tasks(CORPUS, options, _nearest_by_doc, random.Random(1))
    assert [t.query_type for t in tasks] == list(QueryType) * 2
    for t in tasks:
        expected = 2 if t.query_type in (QueryType.MULTI_HOP, QueryType.COMPARISON, QueryType.DISTRACTING) else 1
        assert len(t.chunks) == expected
    distracting = next(t for t in tasks if t.query_type is QueryType.DISTRACTING)
    assert distracting.distractor == _nearest_by_doc(distracting.chunks[0], 1)[0]


def test_plan_without_partners_falls_back_to_simple():
    tasks = plan_tasks(chunks_of("only", 1), SynthOptions(n=3, types=("multi_hop",)), None, random.Random(0))
    assert [t.query_type for t in tasks] == [QueryType.SIMPLE] * 3


def test_messages_label_passages_and_carry_few_shot_and_negative_field():
    task = Task(0, QueryType.COMPARISON, (CORPUS[0], CORPUS[-1]))
    example = DatasetRow(id="g1", question="How do I reset the TV?", reference_answers=["Hold power 10 s."])
    system, user = build_messages(task, negatives=True, examples=[example])
    assert system["role"] == "system" and "only the passages" in system["content"]
    text = user["content"]
    assert "[C1]" in text and "[C2]" in text and CORPUS[0].text in text and CORPUS[-1].text in text
    assert "How do I reset the TV?" in text and "Hold power 10 s." in text
    assert '"negative_answer"' in text and "compares" in text
    assert '"negative_answer"' not in build_messages(task)[1]["content"]


TASK = Task(0, QueryType.SIMPLE, (CORPUS[0],))


@pytest.mark.parametrize("text,finish,status", [
    ('{"question": "Q?", "answer": "A", "supporting_chunks": ["C1"]}', "stop", JudgeStatus.OK),
    ('Sure! ```json\n{"question": "Q?", "answer": "A", "supporting_chunks": ["C1"]}\n```', "stop", JudgeStatus.REPAIRED),
    ("I cannot produce JSON today.", "stop", JudgeStatus.PARSE_ERROR),
    ('{"question": "Q?", "answ', "length", JudgeStatus.TRUNCATED),
    ('{"question": "Q?", "answer": "A", "supporting_chunks": ["C1"]}', "length", JudgeStatus.TRUNCATED),
    ("", "content_filter", JudgeStatus.REFUSED),
    ("[1, 2]", "stop", JudgeStatus.PARSE_ERROR),
])
def test_parse_reply_statuses(text, finish, status):
    assert parse_reply(TASK, text, finish).status is status


def test_parse_reply_normalises_labels():
    c = parse_reply(TASK, '{"question": " Q? ", "answer": "A", "supporting_chunks": "c1", "difficulty": "Hard"}')
    assert (c.question, c.support, c.difficulty) == ("Q?", ["C1"], "hard")


def _cand(qtype, support, answer="A", negative=None, chunks=(CORPUS[0], CORPUS[-1])):
    task = Task(0, qtype, chunks if qtype is not QueryType.SIMPLE else chunks[:1])
    return Candidate(task, JudgeStatus.OK, question="Q?", answer=answer, support=support, negative=negative)


@pytest.mark.parametrize("candidate,reason", [
    (_cand(QueryType.SIMPLE, ["C1"]), None),
    (_cand(QueryType.SIMPLE, ["C7"]), "cites chunk ids that were not given: C7"),
    (_cand(QueryType.SIMPLE, []), "cites no supporting chunk"),
    (_cand(QueryType.SIMPLE, ["C1"], answer=""), "has no answer"),
    (_cand(QueryType.MULTI_HOP, ["C1"]), "must cite both chunks"),
    (_cand(QueryType.MULTI_HOP, ["C1", "C2"]), None),
    (_cand(QueryType.DISTRACTING, ["C2"]), "must not be answered by the near-miss"),
    (_cand(QueryType.UNANSWERABLE, ["C9"], answer=""), None),
    (_cand(QueryType.SIMPLE, ["C1"], negative="a."), "negative answer equals"),
])
def test_check_candidate(candidate, reason):
    found = check_candidate(candidate)
    assert (found is None) if reason is None else (reason in found)


def test_candidate_row_is_synthetic_with_pointers():
    options = SynthOptions(n=1, negatives=True, collection="docs", model="m")
    row = candidate_row(_cand(QueryType.DISTRACTING, ["C1"], negative="B"), options)
    assert row.provenance.value == "synthetic" and row.id.startswith("syn-")
    assert row.gold_contexts == [CORPUS[0].text] and row.gold_doc_ids == ["big"]
    assert row.gold_pointers[0].chunk_id == CORPUS[0].id and row.gold_pointers[0].start == 0
    assert row.negative_answers == ["B"] and row.extras["distractor_chunk_ids"] == [CORPUS[-1].id]
    assert row.metadata.query_type == "distracting" and row.metadata.question_source == "synth:m"
    unanswerable = candidate_row(_cand(QueryType.UNANSWERABLE, [], answer="whatever"), options)
    assert unanswerable.reference_answers == [CANNOT_ANSWER] and unanswerable.gold_contexts == []


@pytest.fixture(scope="module")
def encode():
    from rag_eval.encoders.embedder import Embedder

    return Embedder().encode


def test_near_duplicates_dropped_with_reasons(encode):
    rows = [DatasetRow(id=str(i), question=q) for i, q in enumerate([
        "How do I turn on the television?", "How can I switch on the TV?", "What is the boiling point of water?",
        "How do I turn on the television ?"])]
    kept, dups = drop_near_duplicates(rows, encode, 0.85, reference_questions=["What temperature does water boil at?"])
    assert [r.id for r in kept] == ["0", "1"]  # a paraphrase (cosine ~0.85) is not a near-duplicate at 0.85
    reasons = {r.id: why for r, why in dups}
    assert reasons["3"].startswith("near-duplicate of 0 (cosine 1.000)")
    assert "few-shot example" in reasons["2"] and "water boil" in reasons["2"]


class ScriptedJudge:
    """A judge with scripted verdicts by response text (as llm's MockModel scripts replies)."""

    name = "scripted"

    def __init__(self, verdicts):
        self.verdicts = verdicts
        self.history = []

    def judge(self, items, progress=None, cancel=None):
        from rag_eval.schema import JudgeResult, Labels

        out = []
        for item in items:
            self.history.append(item)
            verdict = self.verdicts[item.response]
            if verdict is None:
                out.append(JudgeResult(item.id, JudgeStatus.PARSE_ERROR, error="bad reply"))
            else:
                keys = item.document_keys[:1] if verdict else []
                out.append(JudgeResult(item.id, JudgeStatus.OK, Labels(all_relevant_sentence_keys=keys or item.document_keys[:1],
                                                                      overall_supported=verdict)))
        return out


def test_answerability_filter_verdicts_and_inverted_check_for_unanswerable():
    from rag_eval.synth.filters import answerability_filter

    def row(i, qtype, answer, negative=None):
        return DatasetRow(id=i, question="Q?", reference_answers=[answer], gold_contexts=[] if qtype == "unanswerable" else ["Ctx."],
                          negative_answers=[negative] if negative else [], metadata={"query_type": qtype})

    rows = [row("ok", "simple", "yes"), row("bad", "simple", "no"), row("broken", "simple", "err"),
            row("u-answerable", "unanswerable", CANNOT_ANSWER, "tempting-true"),
            row("u-fine", "unanswerable", CANNOT_ANSWER, "tempting-false"),
            row("u-unchecked", "unanswerable", CANNOT_ANSWER)]
    judge = ScriptedJudge({"yes": True, "no": False, "err": None, "tempting-true": True, "tempting-false": False})
    topics = {"u-answerable": ["Topic text."], "u-fine": ["Topic text."], "u-unchecked": ["Topic text."]}
    kept, dropped = answerability_filter(rows, judge, topic_texts=topics)
    assert {r.id: r.metadata.answerability for r in kept} == {
        "ok": "checked by scripted", "u-fine": "checked by scripted", "u-unchecked": "not applicable"}
    reasons = {r.id: why for r, why in dropped}
    assert "do not support the answer" in reasons["bad"]
    assert "judge status parse_error (bad reply)" in reasons["broken"]
    assert "question is answerable" in reasons["u-answerable"]
    assert len(judge.history) == 5 and judge.history[3].document_texts == ["Topic text."]
