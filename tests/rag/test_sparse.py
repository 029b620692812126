"""BM25 sparse vectors: terms of every language, term-frequency saturation, length
normalisation, stable ids, and a tokenizer version a collection records."""

from rag_eval.rag.sparse import K1, SPARSE_VERSION, document_vector, query_vector, term_id, tokenize
from rag_eval.text.words import TOKENIZER_VERSION


def test_tokenize_lowercases_drops_stop_words_and_cuts_words_to_their_stem():
    assert tokenize("The Qdrant engine and THE vectors") == ["qdrant", "engine", "vector"]
    assert tokenize("Straße ändern", "de")[:2] == ["strass", "ändern"]  # then their character 3-grams
    assert "#^st" in tokenize("Straße ändern", "de") and not any(t.startswith("#") for t in tokenize("Straße ändern"))


def test_words_of_scripts_without_spaces_and_with_vowel_signs_are_terms():
    # issue 47: `\w\w+` read a Chinese sentence as one token and Devanagari as "नमस"
    terms = tokenize("按住电源键十秒钟。", "zh")
    assert terms[:7] == ["按住", "住电", "电源", "源键", "键十", "十秒", "秒钟"]  # the words: character bigrams
    assert {"#电", "#源", "#电源键", "#十秒钟"} <= set(terms[7:])  # then each Han character and the 3-grams
    assert {"#เปิด", "#เครื่"} <= set(tokenize("เปิดเครื่อง", "th"))  # 3-grams of grapheme clusters (no Han here)
    assert tokenize("नमस्ते दुनिया हिन्दी भाषा", "hi")[:2] == ["नमस्ते", "दुनिया"]
    assert tokenize("서울의 인구는", "ko") == ["서울", "울의", "인구", "구는"]  # Hangul words: syllable bigrams
    assert tokenize("столица", "ru")[0] == tokenize("столицы", "ru")[0] == "столиц"  # case endings meet
    assert len(set(tokenize("столица", "ru")) & set(tokenize("столицы", "ru"))) >= 5  # and most 3-grams


def test_a_question_meets_its_passage_in_chinese():
    passage = document_vector("按住电源键十秒钟。电视将重新启动。", "zh")
    query = query_vector("电视怎么重新启动?", "zh")
    assert set(query.indices) & set(passage.indices)


def test_the_sparse_version_names_the_tokenizer():
    assert TOKENIZER_VERSION in SPARSE_VERSION and SPARSE_VERSION != "bm25-murmur3-v1"


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
