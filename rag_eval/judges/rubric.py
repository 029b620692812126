"""Rubric metrics: criteria a user writes in YAML, scored by any OpenAI-compatible LLM (G-Eval).

A team measures what it cares about ("is the answer polite", "does it cite the manual")
without code: a YAML file names the metric, states the criteria, optionally the evaluation
steps, the inputs the judge reads and a score range::

    name: politeness
    label: Politeness
    criteria: The response is courteous and never blames the user.
    steps:
      - Read the response.
      - Note any rude, curt or blaming phrase.
    inputs: [question, response]
    score_range: [1, 5]
    samples: 1          # optional: samplings averaged per item

The score comes through the LLM judge's client (:class:`rag_eval.llm.client.LLMClient`):
retries, the cache, cost, statuses and the secrets rules are the judge's. The judge answers
with the score alone on its first line and a one-sentence reason on the second. Where the
endpoint returns token log-probabilities, the score is G-Eval's probability-weighted mean
over the score tokens (Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4 with Better
Human Alignment", section 2.3): it separates answers the parsed integer would tie, and it is
what the paper measured to agree best with people. Otherwise the parsed integer is the
score. ``samples`` > 1 averages that many samplings (each its own cached call) and reports
their spread. An item whose answer holds no score in range, or whose calls all fail, has no
value and a reason (never a silent 0).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rag_eval.llm.config import LLMConfig

if TYPE_CHECKING:  # the client (openai, httpx) loads when a rubric first scores, not when it registers
    from rag_eval.llm.client import Completion, LLMClient

#: Alternatives asked for per answer token (OpenAI's maximum is 20; 10 covers a 1-10 scale).
TOP_LOGPROBS = 10
#: Below this share of probability on score tokens the weighted mean is not trusted.
MIN_SCORE_MASS = 0.5
#: Expected answer size for dry runs: the score on one line, a one-sentence reason on the next.
EXPECTED_ANSWER_TOKENS = 30
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_INTEGER = re.compile(r"-?\d+")


class RubricError(ValueError):
    """A rubric file that cannot be used (the message names the file and the field)."""


class Rubric(BaseModel):
    """One rubric metric, as its YAML file declares it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    criteria: str = Field(min_length=1)
    label: str = ""
    steps: tuple[str, ...] = ()
    inputs: tuple[Literal["question", "response", "documents", "reference"], ...] = ("question", "response")
    score_range: tuple[int, int] = (1, 5)
    higher_is_better: bool = True
    help: str = ""
    samples: int = Field(default=1, ge=1, le=20)  # samplings averaged per item (their spread is reported)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError("a metric name is lower-case letters, digits and '_', starting with a letter")
        return value

    @model_validator(mode="after")
    def _range(self) -> Rubric:
        low, high = self.score_range
        if not low < high or high - low > 20:
            raise ValueError("score_range is [low, high] with low < high and at most 21 scores")
        if "response" not in self.inputs and "documents" not in self.inputs:
            raise ValueError("inputs must include the response or the documents: there is nothing to judge")
        return self

    @property
    def readable_label(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()


def load_rubric(path: str | Path) -> Rubric:
    """The rubric of a YAML file; :class:`RubricError` names the file and the field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise RubricError(f"{path.name}: cannot read the rubric: {err}") from None
    if not isinstance(data, dict):
        raise RubricError(f"{path.name}: a rubric is a YAML mapping (name, criteria, ...)")
    try:
        return Rubric.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(f"field '{'.'.join(map(str, e['loc'])) or 'rubric'}': {e['msg']}" for e in err.errors())
        raise RubricError(f"{path.name}: {problems}") from None


def rubric_messages(rubric: Rubric, item: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat that asks for one item's score: the criteria and steps, then the inputs the
    rubric reads, then the answer format (score alone on the first line: the token whose
    log-probabilities G-Eval weighs)."""
    low, high = rubric.score_range
    steps = "".join(f"\n{i}. {s}" for i, s in enumerate(rubric.steps, 1))
    system = (f"You are a careful evaluator. You score one metric, {rubric.readable_label}, on a scale from "
              f"{low} (worst) to {high} (best).\n\nCriteria: {rubric.criteria.strip()}"
              + (f"\n\nEvaluation steps:{steps}" if steps else ""))
    parts = []
    for name in rubric.inputs:
        value = item.get(name)
        if name == "documents":
            docs = [str(d) for d in (value or [])]
            parts.append("Documents:\n" + ("\n\n".join(f"[{i}] {d}" for i, d in enumerate(docs, 1)) or "(none)"))
        else:
            parts.append(f"{name.capitalize()}:\n{value if value not in (None, '') else '(none)'}")
    user = ("\n\n".join(parts) + f"\n\nAnswer with the score alone (an integer from {low} to {high}) on the first "
            "line, then one sentence giving the reason on the second line.")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_score(text: str, score_range: tuple[int, int]) -> tuple[int | None, str]:
    """``(score, reason)`` from an answer: the first integer of its first non-empty line when
    it lies in range (else None), and the rest as the reason."""
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    if not lines:
        return None, ""
    match = _INTEGER.search(lines[0])
    value = int(match.group()) if match else None
    if value is not None and not score_range[0] <= value <= score_range[1]:
        value = None
    reason = " ".join(lines[1:]) if len(lines) > 1 else lines[0]
    return value, reason


def weighted_score(logprobs: Mapping[str, float] | None, score_range: tuple[int, int]) -> float | None:
    """G-Eval's score: sum of p(s) * s over the score tokens s of the first answer token,
    renormalised over them; None when the endpoint gave no log-probabilities or the score
    tokens hold less than :data:`MIN_SCORE_MASS` of the probability."""
    if not logprobs:
        return None
    mass: dict[int, float] = {}
    for token, logprob in logprobs.items():
        text = token.strip()
        if _INTEGER.fullmatch(text) and score_range[0] <= int(text) <= score_range[1]:
            mass[int(text)] = mass.get(int(text), 0.0) + math.exp(logprob)
    total = sum(mass.values())
    if total < MIN_SCORE_MASS:
        return None
    return sum(score * p for score, p in mass.items()) / total


@dataclass(slots=True)
class RubricScore:
    """One item's rubric result: ``value`` (None with ``error`` when none could be had)."""

    value: float | None
    reason: str = ""
    method: str = ""  # "logprobs" (G-Eval's weighted mean) or "parsed"
    samples: list[float] = field(default_factory=list)
    spread: float | None = None  # population standard deviation over the samples (samples > 1)
    error: str | None = None
    cost_usd: float | None = None
    tokens: int = 0


def _combine(rubric: Rubric, completions: Sequence[Completion | BaseException]) -> RubricScore:
    values, reasons, methods, failures = [], [], [], []
    cost, tokens = 0.0, 0
    priced = False
    for answer in completions:
        if isinstance(answer, BaseException):  # the client's LLMError (redacted) or another failure
            failures.append(str(answer) or type(answer).__name__)
            continue
        if answer.cost_usd is not None:
            cost, priced = cost + answer.cost_usd, True
        tokens += int(answer.usage.get("total_tokens", 0))
        if answer.refusal:
            failures.append(f"the judge refused: {answer.refusal}")
            continue
        parsed, reason = parse_score(answer.text, rubric.score_range)
        weighted = weighted_score(answer.first_token_logprobs, rubric.score_range)
        if weighted is None and parsed is None:
            low, high = rubric.score_range
            failures.append(f"no score from {low} to {high} in the judge's answer")
            continue
        values.append(weighted if weighted is not None else float(parsed))  # type: ignore[arg-type]
        methods.append("logprobs" if weighted is not None else "parsed")
        reasons.append(reason)
    if not values:
        return RubricScore(None, error="; ".join(dict.fromkeys(failures)) or "no answer", cost_usd=cost if priced else None,
                           tokens=tokens)
    return RubricScore(
        value=statistics.fmean(values), reason=reasons[0], method="+".join(dict.fromkeys(methods)), samples=values,
        spread=statistics.pstdev(values) if len(values) > 1 else None, cost_usd=cost if priced else None, tokens=tokens)


class RubricScorer:
    """Scores items on one rubric through the LLM judge's client (one request per item and
    sample, concurrently within the client's limits)."""

    def __init__(self, rubric: Rubric, llm: LLMConfig, samples: int = 1, client: LLMClient | None = None) -> None:
        if samples < 1:
            raise ValueError("samples must be at least 1")
        from rag_eval.llm.client import LLMClient

        self.rubric = rubric
        self.samples = samples
        self.client = client or LLMClient(llm)

    def score_many(self, items: Sequence[Mapping[str, Any]], progress: Callable[[int, int], None] | None = None
                   ) -> list[RubricScore]:
        """One :class:`RubricScore` per item, in order; a failed call is that item's error."""
        temperature = None if self.samples == 1 else max(self.client.config.temperature, 0.7)
        jobs = [(i, k) for i in range(len(items)) for k in range(self.samples)]
        rubric_text = self.rubric.model_dump_json()  # in every cache key: an edited rubric is asked again

        async def one(job: tuple[int, int]) -> Completion:
            i, k = job
            return await self.client.complete(rubric_messages(self.rubric, items[i]), temperature=temperature,
                                              cache_namespace=f"rubric:{rubric_text}:sample{k}", top_logprobs=TOP_LOGPROBS)

        answers = self.client.map(one, jobs, progress)
        by_item: list[list[Completion | BaseException]] = [[] for _ in items]
        for (i, _), answer in zip(jobs, answers, strict=True):
            by_item[i].append(answer)
        return [_combine(self.rubric, answers_of_item) for answers_of_item in by_item]


# ---------------------------------------------------------------- rubrics as registered metrics
def rubrics_dir() -> Path:
    """Where ``rag-eval metrics add`` keeps rubrics (``<data dir>/rubrics``)."""
    from rag_eval.config import data_dir

    return data_dir() / "rubrics"


def rubric_metric(rubric: Rubric, llm: LLMConfig | None = None, samples: int | None = None, origin: str = "rubric") -> Any:
    """The rubric as a registry metric (family ``custom``): computed per item by the engine
    for every entry point, stored, summarised, gated and exported like any plugin metric.
    One sampling gives the score; ``samples`` > 1 gives ``NAME.mean`` and ``NAME.spread``;
    the judge's reason is stored with it (the record's ``metric_reasons``).
    An item without a score fails this metric with the judge's reason (never a 0). The
    endpoint is ``llm``, else the environment's (``RAG_EVAL_LLM_MODEL``, ``_BASE_URL``, key)."""
    from rag_eval.metrics.registry import Explained, Metric, MetricItem

    samples = samples or rubric.samples
    state: dict[str, RubricScorer] = {}

    def compute(item: MetricItem) -> Explained:
        scorer = state.get("scorer")
        if scorer is None:
            scorer = state["scorer"] = RubricScorer(rubric, llm or LLMConfig.from_settings(), samples=samples)
        [result] = scorer.score_many([{"id": item.id, **_inputs(item)}])
        if result.value is None:
            raise RubricError(result.error or "no score")
        if samples == 1:
            return Explained(result.value, result.reason)
        return Explained({"mean": result.value, "spread": float(result.spread or 0.0)}, result.reason)

    needs = {"llm", *(n for n in rubric.inputs if n in ("response", "documents", "reference"))}

    def estimate(items: Sequence[MetricItem]) -> Any:
        """What scoring ``items`` sends (for :mod:`rag_eval.runs.estimate`): one chat per item
        holding the rubric's inputs, ``samples`` times."""
        from rag_eval.llm.pricing import dry_run_estimate

        config = llm or LLMConfig.from_settings()
        chats = [rubric_messages(rubric, _inputs(i)) for i in items if all(getattr(i, n) for n in needs - {"llm"})]
        return dry_run_estimate(chats, config.model, EXPECTED_ANSWER_TOKENS, config.prices, samples=samples,
                                purpose=rubric.name)

    compute.estimate = estimate  # type: ignore[attr-defined]  # a metric that calls a network says what it sends
    low, high = rubric.score_range
    return Metric(name=rubric.name, label=rubric.readable_label, family="custom",
                  higher_is_better=rubric.higher_is_better, range=(float(low), float(high)), needs=frozenset(needs),
                  compute=compute, help=rubric.help or rubric.criteria.strip(), origin=origin)


def _inputs(item: Any) -> dict[str, Any]:
    """What a rubric may read of a :class:`~rag_eval.metrics.registry.MetricItem`."""
    return {"question": item.question, "response": item.response, "documents": list(item.documents),
            "reference": item.reference}


def register_rubric(source: str | Path | Rubric, samples: int | None = None, llm: LLMConfig | None = None) -> str:
    """Register a rubric (a YAML path or a :class:`Rubric`) as a metric; returns its name.
    A rubric registered again (edited, or another sample count) replaces its declaration."""
    from rag_eval.metrics.registry import METRICS

    rubric = source if isinstance(source, Rubric) else load_rubric(source)
    origin = f"rubric {Path(source).name}" if not isinstance(source, Rubric) else "rubric"
    known = METRICS.find(rubric.name)
    if known is not None and not known.origin.startswith("rubric"):
        raise RubricError(f"a rubric cannot be named {rubric.name!r}: a metric of that name exists ({known.origin})")
    METRICS.unregister(rubric.name)
    METRICS.register(rubric_metric(rubric, llm=llm, samples=samples, origin=origin))
    return rubric.name


def install_rubric(path: str | Path, samples: int | None = None) -> Path:
    """Check a rubric file and keep a copy among the installed rubrics (registered in every
    later process through the registry's own plugin, :mod:`rag_eval.judges.rubric_plugin`); ``samples``
    overrides the file's."""
    rubric = load_rubric(path)
    if samples is not None:
        rubric = Rubric.model_validate({**rubric.model_dump(), "samples": samples})
    folder = rubrics_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{rubric.name}.yaml"
    target.write_text(yaml.safe_dump(rubric.model_dump(mode="json"), sort_keys=False, allow_unicode=True),
                      encoding="utf-8")
    return target


_seen_folders: dict[str, tuple[tuple[str, int], ...]] = {}


def refresh_installed_rubrics() -> None:
    """Have the metric registry read the installed rubrics again when the rubrics folder
    changed since this process last looked (a dashboard started before ``rag-eval metrics
    add``): the registry's entry points are loaded again, ``RUBRICS`` of
    :mod:`rag_eval.judges.rubric_plugin` with them. An unchanged folder costs one listing."""
    from rag_eval.metrics.registry import METRICS

    folder = rubrics_dir()
    listing = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*.y*ml"))) if folder.is_dir() else ()
    if _seen_folders.get(str(folder)) == listing:
        return
    METRICS.reload_plugins()
    _seen_folders[str(folder)] = listing


def installed_rubrics() -> list[Any]:
    """The installed rubrics as metrics (what this package's own plugin in group
    ``rag_eval.metrics`` hands the registry). A rubric file that cannot be read is one line
    among the registry's plugin errors; the others still load."""
    from rag_eval.metrics.registry import METRICS
    from rag_eval.plugins import PluginError

    folder = rubrics_dir()
    metrics = []
    for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
        try:
            metrics.append(rubric_metric(load_rubric(path), origin=f"rubric {path.name}"))
        except RubricError as err:
            METRICS.plugin_errors.append(PluginError(f"rubric {path.name}", "rag-eval", str(err)))
    return metrics
