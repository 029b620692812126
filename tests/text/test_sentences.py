from rag_eval.text.sentences import item_from_row, item_from_texts, split_sentences


def test_split_keeps_offsets_into_original_text():
    text = "Dr. Smith went to Washington.  He arrived at 5 p.m. on Monday! Was it late?"
    spans = split_sentences(text)
    assert len(spans) == 3
    for sentence, start, end in spans:
        assert text[start:end] == sentence
    assert spans[0][0].startswith("Dr. Smith")


def test_split_empty_text():
    assert split_sentences("") == []
    assert split_sentences("   \n") == []


def test_item_from_texts_keys_documents_and_response():
    item = item_from_texts("q1", "Who?", ["Alpha is first. Beta is second.", "Gamma."], "Alpha. Gamma.")
    assert item.document_keys == ["0a", "0b", "1a"]
    assert item.response_keys == ["a", "b"]
    assert item.documents[0][1].text == "Beta is second."


def test_item_from_row_uses_presplit_sentences(ragbench_rows):
    row = ragbench_rows[0]
    item = item_from_row(row)
    assert item.id == row["id"]
    assert item.document_keys == [pair[0] for doc in row["documents_sentences"] for pair in doc]
    assert item.response_keys == [pair[0] for pair in row["response_sentences"]]
