"""The local judge's encoder: the packaged MiniLM's embedding layer (``local:2.4.0``), or
its first layers exported offline, cut, int8 (``local:2.3.0`` and older)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from rag_eval.judges.encoder import (
    JUDGE_ENCODER,
    THREE_LAYER_INT8,
    EncoderSpec,
    JudgeEncoder,
    encode_each,
    encode_texts,
    encoder_path,
)
from rag_eval.judges.local import MODEL_DIR, LocalJudge

SPECS = pytest.mark.parametrize("spec", [JUDGE_ENCODER, THREE_LAYER_INT8], ids=["embedding-layer", "3-layer-int8"])


def test_exports_from_the_packaged_model_into_the_data_dir(rag_eval_home):
    path = encoder_path(THREE_LAYER_INT8)
    assert path.exists() and path.suffix == ".onnx"
    assert path.parent.resolve() == (rag_eval_home / "models").resolve()
    # no part-file of this process's export is left (the folder is shared by the run's workers,
    # so another worker's export may be under way in it: its part-files carry its own pid)
    mine = f"*.{os.getpid()}"
    assert not list(path.parent.glob(f"{mine}.tmp.onnx")) and not list(path.parent.glob(f"{mine}.float.onnx"))


def test_the_embedding_layer_encoder_needs_no_export(rag_eval_home):
    before = set((rag_eval_home / "models").glob("*.onnx"))  # the fixture may bring exported models
    vectors = encode_each(["Press and hold the power button.", ""], JUDGE_ENCODER)
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert set((rag_eval_home / "models").glob("*.onnx")) == before
    assert JUDGE_ENCODER.static and JUDGE_ENCODER.to_dict()["runtime"] == "numpy"
    with pytest.raises(ValueError, match="nothing to quantise"):
        encode_each(["x"], EncoderSpec(layers=0, quantization=THREE_LAYER_INT8.quantization))


def test_the_embedding_layer_is_minilms_own():
    """numpy's vectors are what the packaged model's embedding module computes (torch,
    eval mode), mean-pooled over the word pieces and normalised."""
    torch = pytest.importorskip("torch")
    from transformers import AutoModel

    from rag_eval.encoders.onnx import _tokenizer
    from rag_eval.encoders.packaged import packaged_minilm_path

    texts = ["How do I reset the television to factory settings?", "Ünïcödé, numbers 1,000 and (brackets).",
             "word " * 300]
    model = AutoModel.from_pretrained(str(packaged_minilm_path())).eval()
    expected = []
    for text in texts:
        ids = torch.tensor([_tokenizer(256, pad=False).encode(text).ids])
        with torch.no_grad():
            pooled = model.embeddings(input_ids=ids)[0].mean(dim=0)
        expected.append((pooled / pooled.norm()).numpy())
    assert np.allclose(encode_each(texts, JUDGE_ENCODER), np.stack(expected), atol=2e-6)


@SPECS
def test_vectors_are_normalised_and_do_not_depend_on_batch_order(spec):
    texts = ["The fridge door alarm beeps after two minutes.", "Press and hold the power button.", "x" * 900, ""]
    vectors = encode_texts(texts, spec)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    again = encode_texts(list(reversed(texts)), spec)[::-1]
    assert np.allclose(vectors, again, atol=1e-4)


@SPECS
def test_each_text_gets_its_own_vector_whatever_the_batch_and_workers(spec):
    """The judge's encoder runs every text alone: a text's vector is bit-identical
    alone, among other texts, in another order and with one or two workers, and
    equals a batch of one through encode_texts."""
    texts = [f"Sentence number {i} about {'the fridge door ' * (i % 7)}alarms." for i in range(40)]
    texts += ["x" * 900, "", "Press and hold the power button."]
    together = encode_each(texts, spec, workers=2)
    assert together.shape == (len(texts), 384) and together.dtype == np.float32
    assert np.array_equal(encode_each(texts[::-1], spec, workers=1)[::-1], together)
    for i in (0, 17, len(texts) - 3, len(texts) - 1):
        assert np.array_equal(encode_each([texts[i]], spec)[0], together[i])
        assert np.array_equal(encode_texts([texts[i]], spec, batch_size=1)[0], together[i])
    assert encode_each([], spec).shape == (0, 384)


@SPECS
def test_similar_sentences_are_closer_than_unrelated_ones(spec):
    a, b, c = encode_texts([
        "How do I reset the television to factory settings?",
        "To restore the TV's factory defaults, open Settings and choose Reset.",
        "The virus spreads mainly through respiratory droplets.",
    ], spec)
    assert a @ b > a @ c + 0.1


def test_cache_returns_the_same_vectors_and_is_bounded():
    enc = JudgeEncoder(cache_size=3)
    first = enc.encode(["one", "two", "one"])
    assert np.allclose(first[0], first[2])
    enc.encode(["three", "four"])  # would exceed the bound: cache is reset, not grown
    assert len(enc.cache) <= 3
    assert enc.encode([]).shape == (0, 384)


def test_the_committed_model_names_the_encoder_it_was_trained_on():
    meta = json.loads((MODEL_DIR / "model.json").read_text())
    assert EncoderSpec.from_dict(meta["encoder"]) == JUDGE_ENCODER
    judge = LocalJudge()
    assert isinstance(judge.embedder, JudgeEncoder) and judge.embedder.spec == judge.model.encoder


def _encode_in_child(texts: list[str]) -> list[list[float]]:
    return encode_each(texts, THREE_LAYER_INT8, workers=2).tolist()


def test_a_forked_process_gets_its_own_encoder_workers():
    """The worker threads belong to the process that started them: a child forked after
    the parent encoded (e.g. a multiprocessing pool) starts its own instead of waiting forever."""
    import multiprocessing

    texts = [f"Sentence {i} about the power button." for i in range(20)]
    here = encode_each(texts, THREE_LAYER_INT8, workers=2)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        there = np.asarray(pool.apply_async(_encode_in_child, (texts,)).get(timeout=300), dtype=np.float32)
    assert np.array_equal(here, there)
