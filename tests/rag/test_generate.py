"""Generation: the offline extractive generator, and the OpenAI-compatible generator
against the local test server (real HTTP on loopback)."""

from rag_eval.rag.config import GeneratorConfig
from rag_eval.rag.generate import (
    NO_CONTEXT_ANSWER,
    TEMPLATES,
    build_messages,
    generate_many,
    strip_citations,
)
from rag_eval.rag.retrieve import RetrievedChunk


def generate_one(question, chunks, config, client=None):
    return generate_many([question], [chunks], config, client)[0]


def chunk(text, i=0):
    return RetrievedChunk(id=f"c{i}", text=text, score=1.0 - i / 10, doc_id=f"d{i}", source="s", chunk_index=0)


CHUNKS = [
    chunk("Cats sleep a lot. The Eiffel Tower is in Paris.", 0),
    chunk("Paris is the capital of France. Dogs bark.", 1),
]


def test_extractive_answers_with_whole_cited_sentences_most_relevant_first():
    g = generate_one("What is the capital of France?", CHUNKS, GeneratorConfig(max_sentences=2))
    assert g.kind == "extractive" and g.extractive and g.status == "ok" and g.model.startswith("extractive")
    assert g.sentences == ["Paris is the capital of France.", "The Eiffel Tower is in Paris."]  # by relevance
    assert g.citations == [["1a"], ["0b"]]  # each sentence cites its key
    assert g.text == " ".join(g.sentences)


def test_extractive_answer_is_bounded():
    long = chunk(" ".join(f"Paris fact number {i} is about the capital of France and more words here." for i in range(30)), 0)
    g = generate_one("What is the capital of France?", [long], GeneratorConfig(max_sentences=10))
    assert 1 <= len(g.sentences) <= 10 and len(g.text) <= 600 + 100
    assert all(s in long.text for s in g.sentences)


def test_extractive_without_context():
    assert generate_one("Anything?", [], GeneratorConfig()).text == NO_CONTEXT_ANSWER


def test_openai_kind_without_endpoint_falls_back_to_extractive(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAG_EVAL_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    g = generate_one("What is the capital of France?", CHUNKS, GeneratorConfig(kind="openai"))
    assert g.kind == "extractive"


def test_ragbench_prompt_and_answer_from_the_server(openai_server):
    openai_server.enqueue("Paris is the capital of France.")
    config = GeneratorConfig(kind="openai", model="test-model", base_url=openai_server.base_url,
                             prompt_template="ragbench_basic", temperature=0.3, max_tokens=64)
    g = generate_one("What is the capital of France?", CHUNKS, config)
    assert g.status == "ok" and g.kind == "openai" and g.text == "Paris is the capital of France."
    assert (g.prompt_template, g.temperature, g.max_tokens) == ("ragbench_basic", 0.3, 64)
    body = openai_server.requests[-1]
    assert body["model"] == "test-model" and body["temperature"] == 0.3 and body["max_tokens"] == 64
    prompt = body["messages"][-1]["content"]
    assert prompt.startswith("Use the following pieces of context to answer the question.")
    assert "Dogs bark." in prompt and "Question: What is the capital of France?" in prompt


def test_cite_template_keys_context_and_strips_citations(openai_server):
    openai_server.enqueue("Paris is the capital of France [1a]. The tower is there [0b][1a].")
    config = GeneratorConfig(kind="openai", model="m", base_url=openai_server.base_url, prompt_template="cite_sentences")
    g = generate_one("Capital?", CHUNKS, config)
    assert g.text == "Paris is the capital of France. The tower is there."
    assert g.citations == [["1a"], ["0b", "1a"]]
    assert "[1a] Paris is the capital of France." in openai_server.requests[-1]["messages"][-1]["content"]


def test_provider_failure_is_a_status_not_an_exception(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "fake.secret-generation-key")
    openai_server.set_handler(lambda request: {"status": 400, "content": "bad request"})
    config = GeneratorConfig(kind="openai", model="m", base_url=openai_server.base_url)
    results = generate_many(["q1", "q2"], [CHUNKS, CHUNKS], config)
    assert [r.status for r in results] == ["error", "error"]
    assert all(r.error and "fake.secret-generation-key" not in r.error for r in results)


def test_strip_citations_and_templates():
    assert strip_citations("A [0a, 1b]. B.") == ("A. B.", [["0a", "1b"], []])
    assert {"ragbench_basic", "cite_sentences"} <= set(TEMPLATES)
    messages = build_messages("Q?", CHUNKS, TEMPLATES["cite_sentences"])
    assert messages[0]["role"] == "system" and "[0a] Cats sleep a lot." in messages[1]["content"]
