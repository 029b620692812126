"""BM25 sparse vectors: term-frequency saturation, length normalisation, stable ids."""

from rag_eval.rag.sparse import K1, document_vector, query_vector, term_id, tokenize


def test_tokenize_lowercases_and_drops_stop_words():
    assert tokenize("The Qdrant engine and THE vectors") == ["qdrant", "engine", "vectors"]


def test_term_ids_are_stable_and_shared_by_query_and_document():
    doc = document_vector("qdrant qdrant vectors")
    query = query_vector("Qdrant?")
    assert query.indices == [term_id("qdrant")]
    assert set(query.indices) <= set(doc.indices)
    assert query.values == [1.0]


def test_tf_saturates_and_longer_documents_weigh_less():
    one = dict(zip(*[document_vector("qdrant").indices, document_vector("qdrant").values]))
    many = document_vector("qdrant " * 50)
    assert many.values[0] > next(iter(one.values()))
    assert many.values[0] < K1 + 1  # saturation bound
    short = document_vector("qdrant engine")
    long = document_vector("qdrant engine " + " ".join(f"filler{i}" for i in range(300)))
    qid = term_id("qdrant")
    def w(v):
        return v.values[v.indices.index(qid)]

    assert w(short) > w(long)


def test_empty_text_gives_empty_vector():
    assert document_vector("the and of").indices == []
    assert query_vector("").indices == []
