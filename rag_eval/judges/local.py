"""The local judge: RAGBench-schema labels on the CPU, offline, with no API key.

How it works, per batch of items:

1. embed the question, every document sentence and every response sentence with
   the judge's encoder (:mod:`rag_eval.judges.encoder`: the packaged
   all-MiniLM-L6-v2's embedding layer, mean-pooled; each distinct text once while
   the cache keeps it, truncated to :data:`MAX_CHARS`, and on its own, so its vector
   does not depend on the rest of the batch);
2. compute the features of :mod:`rag_eval.judges.features`;
3. apply seven small learned models (plain JSON weights, no pickle): P(relevant) and
   P(utilized) per document sentence, P(supported) per response sentence, and per
   row, from aggregates of those: P(the response is grounded), the relevance and
   utilization rates, and completeness;
4. turn probabilities into RAGBench labels. A response sentence is unsupported below
   the model's calibrated ``support_threshold``. The utilized set is the best match of
   every supported sentence plus the most probable other sentences up to
   ``round(rate * N)``, with the rate from the row-level head (this beats a 0.5
   threshold on RMSE because utilized sentences are a minority and probabilities
   rarely pass 0.5); the relevant set is the utilized one plus the most probable
   others up to its own rate. So the labels are consistent by construction
   (:mod:`rag_eval.judges.consistency`).

Items are processed in chunks so a batch of thousands of rows runs in bounded memory;
within a chunk, the next 16 rows are embedded while one step's features are computed.
With ``workers > 1`` (the command line's default: one per core), worker processes judge
part of every chunk: the features are Python, so one process is bound by its GIL to about
1.3 cores; each process labels a row exactly as any other does.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rag_eval.judges.base import BATCH_ROWS, ProgressCallback, item_language, unreadable
from rag_eval.judges.consistency import make_consistent
from rag_eval.judges.encoder import ENCODER_LANGUAGES, JUDGE_ENCODER, EncoderSpec, word_vectors
from rag_eval.judges.features import DOC_FEATURES, RESP_FEATURES, RowFeatures, row_features
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels, SentenceSupport

MODEL_DIR = Path(__file__).parent / "local_model"
MODEL_FILE = "model.json"
MAX_CHARS = 600  # ~128 word pieces; longer sentences are embedded by their start
CHUNK_SIZE = BATCH_ROWS  # items per call of the judge's batch (progress and cancellation are checked between batches)
PIPELINE_ROWS = 16  # items embedded together while the previous ones are featurised
SUPPORT_THRESHOLD = 0.5  # default P(supported) cut; a trained model stores its own calibrated one


# --------------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class LogisticHead:
    """Standardise, then a linear model: ``z = ((x - mean) / scale) @ coef + b``;
    ``sigmoid(z)`` for a probability (``link="logistic"``) or ``z`` clipped to
    [0, 1] for a proportion (``link="identity"``)."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    link: str = "logistic"

    def predict(self, x: np.ndarray) -> np.ndarray:
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ValueError(f"expected {len(self.features)} features, got shape {x.shape}")
        z = ((x - self.mean) / self.scale) @ self.coef + self.intercept
        if self.link == "identity":
            return np.clip(z, 0.0, 1.0)
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), **{k: [float(v) for v in getattr(self, k)] for k in _VECTORS},
                "intercept": float(self.intercept), "link": self.link}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LogisticHead:
        return cls(features=tuple(d["features"]), **{k: np.asarray(d[k], dtype=np.float64) for k in _VECTORS},
                   intercept=float(d["intercept"]), link=str(d.get("link", "logistic")))


_VECTORS = ("mean", "scale", "coef")  # a head's arrays, stored as lists of numbers


#: Inputs of the sentence-level support head (``local:2.3.0``): only the sentence's
#: *evidence* (how much of it the documents contain, by embedding and by words, numbers,
#: names and dates), not where it sits, how long it is or how many sentences the response
#: has. Those context features describe a domain more than a sentence: with them the head
#: learns the six training domains' base rates and ranks worse on the seventh (leave one
#: domain out, sentence AUROC 0.683 with all of RESP_FEATURES, 0.69-0.70 with the evidence).
SUPPORT_FEATURES = (
    "max_cos", "recall_context", "recall_best", "recall_top3", "bigram_recall_context",
    "best_sentence_recall", "novel_content_frac",
    "numbers_missing_frac", "names_missing_frac", "dates_missing", "capitals_missing_frac", "novel_evidence",
)
SUPPORT_COLUMNS = tuple(RESP_FEATURES.index(name) for name in SUPPORT_FEATURES)

#: Row-level features of the row-support head: P(grounded) from the sentences' P(supported) alone.
ROW_SUPPORT_FEATURES = ("min_p_support", "mean_p_support", "log_prod_p_support")

#: Inputs of the adherence head, the judge's P(grounded): the row-support head's logit and
#: the lexical-novelty baseline of issue 29 (the share of the response's content words that
#: no document contains). Training fixes the two standardised inputs' weights as equal and
#: fits only the scale and intercept (Platt scaling), because a learned weight follows the
#: training domains' base rates (see docs/local-judge.md).
ADHERENCE_FEATURES = ("row_support_logit", "resp_novel_content_frac")
_NOVELTY_COLUMN = RESP_FEATURES.index("resp_novel_content_frac")


def support_inputs(resp: np.ndarray) -> np.ndarray:
    """The columns of response-sentence features the support head reads."""
    return resp[:, SUPPORT_COLUMNS]


def row_support_features(p_support: np.ndarray) -> np.ndarray:
    """One row of :data:`ROW_SUPPORT_FEATURES` from a row's P(supported) per sentence."""
    p = np.clip(p_support, 1e-6, 1 - 1e-6)
    return np.array([p.min(), p.mean(), np.log(p).sum()], dtype=np.float64)


def logit(p: float | np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=np.float64), 1e-9, 1 - 1e-9)
    return np.log(q / (1 - q))


def adherence_features(resp: np.ndarray, row_support_p: float) -> np.ndarray:
    """One row of :data:`ADHERENCE_FEATURES`."""
    return np.array([float(logit(row_support_p)), float(resp[0, _NOVELTY_COLUMN])], dtype=np.float64)


#: Row-level features of the completeness head (share of relevant sentences used).
COMPLETENESS_FEATURES = (
    "util_over_rel", "mean_p_rel", "mean_p_util", "max_p_util", "log_n_doc", "log_n_response",
    "resp_recall_context", "mean_max_cos",
)


def completeness_features(resp: np.ndarray, p_rel: np.ndarray, p_util: np.ndarray) -> np.ndarray:
    """One row of :data:`COMPLETENESS_FEATURES` from the sentence-level probabilities."""
    col = {name: i for i, name in enumerate(RESP_FEATURES)}
    return np.array([
        min(p_util.sum() / max(p_rel.sum(), 1e-6), 3.0), p_rel.mean(), p_util.mean(), p_util.max(),
        np.log1p(len(p_rel)), resp[0, col["log_n_response"]], resp[0, col["resp_recall_context"]],
        resp[:, col["max_cos"]].mean(),
    ], dtype=np.float64)


#: Row-level features of the relevance-rate and utilization-rate heads, from one
#: sentence-level head's probabilities ``p`` and the row's document features.
RATE_FEATURES = (
    "mean_p", "p90", "max_p", "log_n_doc", "mean_q_cos", "max_q_cos", "mean_r_cos", "log_n_response",
)


def rate_features(doc: np.ndarray, resp: np.ndarray, p: np.ndarray) -> np.ndarray:
    """One row of :data:`RATE_FEATURES`. The rate heads turn sentence probabilities
    into the share of sentences to label, calibrated per row rather than per sentence."""
    dcol = {name: i for i, name in enumerate(DOC_FEATURES)}
    rcol = {name: i for i, name in enumerate(RESP_FEATURES)}
    return np.array([
        p.mean(), np.quantile(p, 0.9), p.max(), np.log1p(len(p)),
        doc[:, dcol["q_cos"]].mean(), doc[:, dcol["q_cos"]].max(), doc[:, dcol["r_cos"]].mean(),
        resp[0, rcol["log_n_response"]],
    ], dtype=np.float64)


#: Each head of :class:`LocalModel` (its field) and the features it was trained on.
HEAD_FEATURES = {"relevance": DOC_FEATURES, "utilization": DOC_FEATURES, "support": SUPPORT_FEATURES,
                 "row_support": ROW_SUPPORT_FEATURES, "adherence": ADHERENCE_FEATURES,
                 "completeness": COMPLETENESS_FEATURES, "relevance_rate": RATE_FEATURES, "utilization_rate": RATE_FEATURES}
HEADS = tuple(HEAD_FEATURES)


@dataclass(frozen=True, slots=True)
class LocalModel:
    """The eight heads plus metadata, as stored in ``local_model/model.json``."""

    version: str
    relevance: LogisticHead
    utilization: LogisticHead
    support: LogisticHead
    row_support: LogisticHead
    adherence: LogisticHead
    completeness: LogisticHead
    relevance_rate: LogisticHead
    utilization_rate: LogisticHead
    metadata: dict[str, Any]
    encoder: EncoderSpec = JUDGE_ENCODER
    #: A response sentence is unsupported when P(supported) is below this. Calibrated in
    #: training so the share of responses with an unsupported sentence matches the
    #: training base rate (0.5 marks too few: unsupported sentences are rare).
    support_threshold: float = SUPPORT_THRESHOLD

    @classmethod
    def load(cls, path: str | Path | None = None) -> LocalModel:
        """Read the JSON artifact (plain numbers, so loading runs no code)."""
        path = Path(path) if path is not None else MODEL_DIR / MODEL_FILE
        if path.is_dir():
            path = path / MODEL_FILE
        if not path.exists():
            raise FileNotFoundError(f"local judge model not found: {path}")
        data = json.loads(path.read_text(encoding="utf-8"))
        heads = data["heads"]
        missing = [name for name in HEADS if name not in heads]
        if missing:
            raise ValueError(f"local judge model {path} lacks head(s) {', '.join(missing)} (an older model "
                             "format); retrain with scripts/train_local_judge.py")
        model = cls(
            version=str(data["version"]),
            **{name: LogisticHead.from_dict(heads[name]) for name in HEADS},
            metadata=dict(data.get("metadata", {})),
            encoder=EncoderSpec.from_dict(data.get("encoder"), JUDGE_ENCODER),
            support_threshold=float(data.get("support_threshold", SUPPORT_THRESHOLD)),
        )
        model._check()
        return model

    def _check(self) -> None:
        for name, expected in HEAD_FEATURES.items():
            if getattr(self, name).features != tuple(expected):
                raise ValueError(
                    f"model head '{name}' was trained on other features; retrain with scripts/train_local_judge.py"
                )

    def p_supported(self, resp: np.ndarray) -> np.ndarray:
        """P(supported) of every response sentence (rows of ``resp``, RESP_FEATURES)."""
        return self.support.predict(support_inputs(resp))

    def p_grounded(self, resp: np.ndarray, p_support: np.ndarray) -> float:
        """P(grounded) of a row: the row-support head on the sentences' P(supported),
        blended with the row's lexical novelty by the adherence head."""
        row_p = float(self.row_support.predict(row_support_features(p_support)[None, :])[0])
        return float(self.adherence.predict(adherence_features(resp, row_p)[None, :])[0])

    def quality_note(self) -> str | None:
        """How far to trust this model, from the held-out figures stored at training
        (``scripts/train_local_judge.py --evaluate``); None if it carries none."""
        mean = (self.metadata.get("held_out_quality") or {}).get("mean")
        if not mean:
            return None
        return (f"local:{self.version} on RAGBench domains it was not trained on: hallucination AUROC "
                f"{mean['auroc']:.2f}, relevance RMSE {mean['rmse_relevance']:.2f}, utilization RMSE "
                f"{mean['rmse_utilization']:.2f}. A triage signal; use an LLM judge for decisions.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "heads": {name: getattr(self, name).to_dict() for name in HEADS},
            "encoder": self.encoder.to_dict(),
            "support_threshold": self.support_threshold,
            "metadata": self.metadata,
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        if path.is_dir() or not path.suffix:
            path.mkdir(parents=True, exist_ok=True)
            path = path / MODEL_FILE
        path.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return path


# ------------------------------------------------------------------- featurisation


def _clip(text: str) -> str:
    return text[:MAX_CHARS]


#: What :func:`embed_items` returns: each distinct (clipped) text's row in the vectors.
Embedded = tuple[dict[str, int], np.ndarray]


class Unreadable(str):
    """Why the judge cannot read an item (what :func:`featurize_items` returns for it):
    the item ends ``unsupported_language``, not ``invalid_input``."""


def _encoder_reads(language: str) -> bool:
    """Whether the encoder's similarities are used for ``language`` (its own languages, and
    text too short to tell, as before languages were known); any other language's come
    from :func:`~rag_eval.judges.encoder.word_vectors`."""
    from rag_eval.text.language import UNKNOWN

    return language in ENCODER_LANGUAGES or language == UNKNOWN


def judged_texts(items: Sequence[EvalItem]) -> list[str]:
    """The distinct texts the judge embeds for ``items`` (question, document and
    response sentences of every item it can judge in a language its encoder reads,
    clipped), in first-seen order."""
    texts: list[str] = []
    for item in items:
        if item.documents and any(item.documents) and item.response_sentences and _encoder_reads(item_language(item)):
            texts.append(_clip(item.question))
            texts.extend(_clip(s.text) for doc in item.documents for s in doc)
            texts.extend(_clip(s.text) for s in item.response_sentences)
    return list(dict.fromkeys(texts))


def embed_items(items: Sequence[EvalItem], embedder) -> Embedded:
    """One ``encode`` call for every distinct text of ``items``."""
    unique = judged_texts(items)
    vectors = embedder.encode(unique) if unique else np.zeros((0, 1), dtype=np.float32)
    return {t: i for i, t in enumerate(unique)}, vectors


def featurize_items(items: Sequence[EvalItem], embedder, embedded: Embedded | None = None) -> list[RowFeatures | str]:
    """Features per item, or the reason the item cannot be judged. One ``encode``
    call for the whole chunk, so repeated texts are embedded once (or none, when the
    caller embedded them already: ``embedded`` from :func:`embed_items`)."""
    index, vectors = embedded if embedded is not None else embed_items(items, embedder)

    def vecs(strings: list[str]) -> np.ndarray:
        return vectors[[index[_clip(s)] for s in strings]]

    out: list[RowFeatures | str] = []
    for item in items:
        doc_texts = [[s.text for s in doc] for doc in item.documents]
        flat = [t for doc in doc_texts for t in doc]
        resp = [s.text for s in item.response_sentences]
        if not flat:
            out.append("the item has no document sentences")
            continue
        if not resp:
            out.append("the item has no response sentences")
            continue
        language = item_language(item)
        reason = unreadable(item, language, LocalJudge.languages)
        if reason is not None:
            out.append(Unreadable(reason))
            continue
        if _encoder_reads(language):
            q_vec, doc_vecs, resp_vecs = vecs([item.question])[0], vecs(flat), vecs(resp)
        else:
            both = word_vectors([item.question, *flat, *resp], language)
            q_vec, doc_vecs, resp_vecs = both[0], both[1:len(flat) + 1], both[len(flat) + 1:]
        out.append(row_features(item.question, doc_texts, resp, q_vec, doc_vecs, resp_vecs, language))
    return out


# ------------------------------------------------------------------------- labels


def _top_with(keys: list[str], p: np.ndarray, rate: float, required: set[str]) -> list[str]:
    """Every ``required`` key, then the most probable others until there are
    ``round(rate * N)`` keys (more only when ``required`` alone is more), in document order."""
    k = int(round(rate * len(p)))
    chosen = {key for key in keys if key in required}
    for i in np.argsort(-p, kind="stable"):
        if len(chosen) >= k:
            break
        chosen.add(keys[int(i)])
    return [key for key in keys if key in chosen]


def _supporting(keys: list[str], sims: np.ndarray, limit: int = 3, margin: float = 0.08) -> list[int]:
    """Indices of the best-matching document sentences: the best one, plus up to
    ``limit - 1`` more within ``margin`` cosine of it."""
    order = np.argsort(-sims, kind="stable")[:limit]
    best = sims[order[0]]
    return [int(j) for j in order if sims[j] >= best - margin]


def _explain(sim_best: float, best_key: str, missing_numbers: list[str], missing_names: list[str]) -> str:
    parts = [f"max similarity {sim_best:.2f} to {best_key}"]
    if missing_numbers:
        parts.append(f"numbers {', '.join(missing_numbers[:5])} missing from context")
    if missing_names:
        parts.append(f"names {', '.join(missing_names[:5])} missing from context")
    return "; ".join(parts)


def labels_from_features(item: EvalItem, feats: RowFeatures, model: LocalModel) -> Labels:
    """RAGBench labels plus probabilities for one item."""
    doc_keys = item.document_keys
    resp_keys = item.response_keys
    p_rel = model.relevance.predict(feats.doc)
    p_util = model.utilization.predict(feats.doc)
    p_sup = model.p_supported(feats.resp)
    p_row = model.p_grounded(feats.resp, p_sup)

    rel_rate = float(model.relevance_rate.predict(rate_features(feats.doc, feats.resp, p_rel)[None, :])[0])
    util_rate = float(model.utilization_rate.predict(rate_features(feats.doc, feats.resp, p_util)[None, :])[0])
    c_hat = float(model.completeness.predict(completeness_features(feats.resp, p_rel, p_util)[None, :])[0])
    candidates = [_supporting(doc_keys, feats.resp_doc_sim[i]) for i in range(len(resp_keys))]
    supported = [bool(p >= model.support_threshold) for p in p_sup]
    # Consistent by construction (judges.consistency): the best match of every supported
    # sentence is utilized, then the most probable others up to the utilization rate;
    # the utilized keys are relevant, then the most probable others up to the relevance
    # rate. Forcing in all three candidates per sentence instead would push both rates
    # past their heads' estimates (held-out RMSE 0.200 / 0.156 against 0.189 / 0.123).
    utilized = _top_with(doc_keys, p_util, util_rate, {doc_keys[c[0]] for c, ok in zip(candidates, supported) if ok})
    relevant = _top_with(doc_keys, p_rel, rel_rate, set(utilized))
    used = set(utilized)

    support = []
    unsupported = []
    for i, key in enumerate(resp_keys):
        sims, idx, ok = feats.resp_doc_sim[i], candidates[i], supported[i]
        if not ok:
            unsupported.append(key)
        else:  # a supported sentence names the utilized ones among its candidates (the best always is)
            idx = [j for j in idx if j == idx[0] or doc_keys[j] in used]
        support.append(SentenceSupport(
            response_sentence_key=key,
            supporting_sentence_keys=[doc_keys[j] for j in idx],
            fully_supported=ok,
            explanation=_explain(float(sims[idx[0]]), doc_keys[idx[0]], feats.missing_numbers[i],
                                 feats.missing_names[i]),
            probability=round(float(p_sup[i]), 4),
        ))
    labels = Labels(
        all_relevant_sentence_keys=relevant,
        all_utilized_sentence_keys=utilized,
        sentence_support_information=support,
        unsupported_response_sentence_keys=unsupported,
        overall_supported=not unsupported,
        relevance_explanation=(f"local judge: estimated relevance {rel_rate:.2f} and utilization {util_rate:.2f} "
                               f"of {len(doc_keys)} document sentences; completeness {c_hat:.2f}"),
        overall_supported_explanation=f"local judge: P(grounded) = {p_row:.2f}; " + (
            f"sentences {', '.join(unsupported)} look unsupported" if unsupported
            else "every response sentence looks supported"),
        relevance_probabilities={k: round(float(v), 4) for k, v in zip(doc_keys, p_rel)},
        utilization_probabilities={k: round(float(v), 4) for k, v in zip(doc_keys, p_util)},
        support_probabilities={k: round(float(v), 4) for k, v in zip(resp_keys, p_sup)},
        adherence_probability=round(p_row, 6),
    )
    # Supported sentences' supporting keys are utilized, utilized keys relevant: the
    # labels are built that way above; this adds nothing (a test checks it) and guards it.
    return make_consistent(item, labels)[0]


# -------------------------------------------------------------------------- judge


def _timed_embed(items: Sequence[EvalItem], embedder) -> tuple[Embedded, float]:
    t0 = time.perf_counter()
    embedded = embed_items(items, embedder)
    return embedded, time.perf_counter() - t0


class LocalJudge:
    """A :class:`~rag_eval.judges.base.Judge` that needs no network and no key.

    ``model_path`` defaults to the committed artifact; ``embedder`` defaults to the
    encoder the heads were trained on (:class:`~rag_eval.judges.encoder.JudgeEncoder`,
    the packaged MiniLM cut and quantised as ``model.json`` says) with a bounded cache.
    Anything with ``encode(texts) -> normalised array`` works, e.g. for tests.
    """

    #: Languages it reads: every one whose words ``rag_eval.text.words`` counts (None);
    #: an item with no such word ends ``unsupported_language``.
    languages: frozenset[str] | None = None

    def __init__(self, model_path: str | Path | None = None, embedder=None, chunk_size: int = CHUNK_SIZE,
                 calibration: str | dict[str, Any] | None = None, workers: int = 1,
                 worker_judge: Callable[[], Any] | None = None):
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if workers > 1 and worker_judge is None:
            raise ValueError("workers > 1 needs worker_judge, how a worker process builds this judge: "
                             "build_judge('local', workers=N) passes it")
        self.model = LocalModel.load(model_path)
        self.name = f"local:{self.model.version}"
        self.calibration: dict[str, Any] | None = None
        if calibration is not None:  # a name under $RAG_EVAL_HOME/calibrations, or the loaded JSON
            from rag_eval.judges.calibration import apply_calibration, load_calibration

            cal = load_calibration(calibration) if isinstance(calibration, str) else dict(calibration)
            base = cal.get("base_version")
            if base is not None and str(base) != self.model.version:
                # Its intercept shifts were fitted against another model's heads.
                raise ValueError(
                    f"calibration '{cal.get('name')}' was fitted on local:{base}, not on local:{self.model.version}; "
                    "fit it again with `rag-eval calibrate LABELLED --name NAME --force`")
            self.model = apply_calibration(self.model, cal["fitted"])
            self.calibration = {"name": cal.get("name"), "sha256": cal.get("sha256"),
                                "base_version": cal.get("base_version")}
            self.name = f"local:{self.model.version}+{cal.get('name')}"
        self.chunk_size = chunk_size
        self._embedder = embedder
        # Worker processes judge part of every batch (a process has one GIL, and features are
        # Python): only with the judge's own encoder, which a worker can build for itself.
        self.workers = workers if embedder is None else 1
        self._worker_judge = worker_judge  # picklable: the judge factory's builder and this judge's spec
        self._pool: Any = None

    @property
    def embedder(self):
        if self._embedder is None:
            from rag_eval.judges.encoder import JudgeEncoder

            self._embedder = JudgeEncoder(self.model.encoder, cache_size=20_000)
        return self._embedder

    def start(self) -> None:
        """Load the encoder before the first row (``evaluate`` calls this before it reports
        progress): the embedding layer's weights and the tokenizer (~0.1 s), or, for a model
        that names a transformer encoder, its ONNX export and sessions (~19 s cold), which a
        progress bar can then call "warming up the judge" instead of an unexplained 0/N.
        Later calls cost one cached lookup. A failing encoder is left to the rows: each
        gets its status (embedding failed), none is lost. (Worker processes, with
        ``workers > 1``, start with the first full batch: see :meth:`judge`.)"""
        with contextlib.suppress(Exception):  # reported per row by judge()
            self.embedder.encode(["warm-up"])

    def close(self, wait: bool = True) -> None:
        """Stop the worker processes, if any; the encoder stays loaded for the next run
        of this judge (and :meth:`start` starts workers again). With :meth:`start` it makes
        this a :class:`~rag_eval.judges.base.ManagedJudge`, which is how ``evaluate`` knows
        to warm it up before the first row."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)

    def judge(
        self,
        items: Sequence[EvalItem],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> list[JudgeResult]:
        results: list[JudgeResult] = []
        total = len(items)
        for start in range(0, total, self.chunk_size):
            chunk = items[start:start + self.chunk_size]
            if cancel is not None and cancel.is_set():
                results.extend(self._result(it, JudgeStatus.CANCELLED, error="cancelled before judging")
                               for it in chunk)
                continue
            if self._pool is None and self.workers > 1 and len(chunk) >= 2 * PIPELINE_ROWS:
                # The first full batch is judged here while the workers start (a fresh
                # interpreter each, through a fork server: none of this process's threads
                # or state is copied); a smaller input never pays for them.
                try:
                    self._pool = _start_workers(self.workers - 1, self._worker_judge)
                except Exception:  # noqa: BLE001 - e.g. no working sem_open: everything is judged here
                    self.workers = 1
                results.extend(self._judge_chunk(chunk))
            elif self._pool is not None:
                results.extend(self._judge_shared(chunk))
            else:
                results.extend(self._judge_chunk(chunk))
            if progress is not None:
                progress(len(results), total)
        if progress is not None and total == 0:
            progress(0, 0)
        return results

    def _judge_shared(self, chunk: Sequence[EvalItem]) -> list[JudgeResult]:
        """The chunk split in contiguous parts: the first ones judged by the worker
        processes while this process judges the last. A row gets the same labels in any
        process (each text is embedded alone, the model is the same file). A part whose
        worker fails (a crash, a broken pool) is judged here: no row is lost."""
        # An equal part for every process: this one also reads rows and writes records, but
        # its part of 64 rows measured fastest at a half with two processes (0.5-0.65 tried).
        far = len(chunk) * (self.workers - 1) // self.workers
        if far < PIPELINE_ROWS:  # too small to be worth the hand-over
            return self._judge_chunk(chunk)
        n = self.workers - 1
        bounds = [round(far * k / n) for k in range(n + 1)]
        parts = [chunk[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
        try:
            futures = [self._pool.submit(_judge_in_worker, list(part)) for part in parts]
        except Exception:  # noqa: BLE001 - a pool that cannot take work: judge here
            self._give_up_workers()
            return self._judge_chunk(chunk)
        out: list[JudgeResult] = []
        here = self._judge_chunk(chunk[far:])
        for part, future in zip(parts, futures):
            try:
                out.extend(future.result())
            except Exception:  # noqa: BLE001 - a worker that died: its rows are judged here
                self._give_up_workers()
                out.extend(self._judge_chunk(part))
        return out + here

    def _give_up_workers(self) -> None:
        """After a worker failed (killed, out of memory): the rest is judged in this process,
        without starting workers again (a crash that repeats would cost a start per batch)."""
        self.workers = 1
        self.close(wait=False)

    def _judge_chunk(self, chunk: Sequence[EvalItem]) -> list[JudgeResult]:
        """The chunk in steps of :data:`PIPELINE_ROWS` rows: while the features and
        labels of one step are computed here, a helper thread embeds the next step's
        texts, so the encoder's workers are not idle meanwhile. What a row gets does not
        depend on the steps (each text is embedded alone)."""
        embedder = self.embedder
        steps = [chunk[i:i + PIPELINE_ROWS] for i in range(0, len(chunk), PIPELINE_ROWS)]
        if len(steps) == 1:
            return self._judge_step(steps[0], lambda: _timed_embed(steps[0], embedder))
        from concurrent.futures import ThreadPoolExecutor

        out: list[JudgeResult] = []
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-eval-judge-embed") as pool:
            ahead = pool.submit(_timed_embed, steps[0], embedder)
            for k, step in enumerate(steps):
                current = ahead
                if k + 1 < len(steps):  # queued behind the current step: starts as soon as it is embedded
                    ahead = pool.submit(_timed_embed, steps[k + 1], embedder)
                out.extend(self._judge_step(step, current.result))
        return out

    def _judge_step(self, step: Sequence[EvalItem], embedded: Callable[[], tuple[Embedded, float]]) -> list[JudgeResult]:
        try:
            vectors, embed_s = embedded()
            t0 = time.perf_counter()
            feats = featurize_items(step, None, vectors)
        except Exception as err:  # a broken embedder must not lose the rows
            return [self._result(it, JudgeStatus.PROVIDER_ERROR, error=f"embedding failed: {err}") for it in step]
        per_item = (embed_s + time.perf_counter() - t0) / max(len(step), 1)
        out = []
        for item, f in zip(step, feats):
            if isinstance(f, str):
                status = JudgeStatus.UNSUPPORTED_LANGUAGE if isinstance(f, Unreadable) else JudgeStatus.INVALID_INPUT
                out.append(self._result(item, status, error=f))
                continue
            t1 = time.perf_counter()
            try:
                labels = labels_from_features(item, f, self.model)
            except (ValueError, IndexError, FloatingPointError) as err:
                out.append(self._result(item, JudgeStatus.INVALID_INPUT, error=str(err)))
                continue
            out.append(self._result(item, JudgeStatus.OK, labels=labels,
                                    latency=per_item + time.perf_counter() - t1))
        return out

    def _result(self, item: EvalItem, status: JudgeStatus, labels: Labels | None = None,
                error: str | None = None, latency: float | None = None) -> JudgeResult:
        return JudgeResult(
            id=item.id, status=status, labels=labels, error=error,
            latency_s=None if latency is None else round(latency, 6),
            judge=self.name, cost_usd=0.0 if status is JudgeStatus.OK else None,
            extra={"judge_kind": "local", "model_version": self.model.version,
                   **({"calibration": self.calibration} if self.calibration else {})},
        )


# ---------------------------------------------------------------- worker processes

_worker_judge: LocalJudge | None = None  # in a worker process: the judge it runs


def _start_workers(n: int, build: Any) -> Any:
    """``n`` worker processes, each building the same judge once with ``build`` (the judge
    factory's builder and spec: model and calibration); a task is queued at once so they
    start loading at once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("forkserver"),
                               initializer=_init_worker, initargs=(build,))
    for _ in range(n):
        pool.submit(_worker_ready)
    return pool


def _init_worker(build: Callable[[], Any]) -> None:
    global _worker_judge
    import signal

    # Ctrl-C reaches every process of the terminal's group: the command's handler cancels
    # the run (the rows not yet judged end `cancelled`) and closes the pool; a worker
    # interrupted mid-batch would instead fail that batch.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    judge = build()
    if not isinstance(judge, LocalJudge):
        raise TypeError(f"a local judge's worker got a {type(judge).__name__}")
    judge.start()
    _worker_judge = judge


def _worker_ready() -> bool:
    return _worker_judge is not None


def _judge_in_worker(items: list[EvalItem]) -> list[JudgeResult]:
    if _worker_judge is None:
        raise RuntimeError("the local judge's worker process was not initialised")
    return _worker_judge._judge_chunk(items)
