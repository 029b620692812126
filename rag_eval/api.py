"""The Python API: what ``import rag_eval`` offers a notebook or a script.

::

    import rag_eval

    result = rag_eval.evaluate(df)                 # a DataFrame, a list of dicts, a file, a datasets.Dataset
                                                    # (ragas's and deepeval's column names work as they are)
    result.to_pandas()                              # one row per item: id, status, TRACe, reasons
    result.summary                                  # means with 95% intervals, coverage, statuses, judge error
    result.gate(fail_under={"adherence": 0.9})      # the CLI's --fail-under, as a GateResult
    result.save("nightly")                          # into the run store: the dashboard shows it

A thin caller of the one engine, so the results equal ``rag-eval judge`` on the same rows
field for field (``tests/runs/test_paths_agree.py``): the rows go through
:class:`~rag_eval.runs.sources.RowsSource` (the CLI's row schema and its per-row messages
naming source, row and field: a bad row is an item with status ``invalid_input``, the
good ones still go through), the judge is :func:`rag_eval.judges.factory.build_judge`'s,
the loop is :func:`rag_eval.runs.engine.evaluate`, each record is
:func:`rag_eval.runs.records.build_record`'s, the gate is :mod:`rag_eval.metrics.gate`'s
and a saved evaluation goes through :class:`~rag_eval.runs.sinks.StoreSink`, as every
stored run does. Nothing here computes a metric.
"""

from __future__ import annotations

import asyncio
import html
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_eval.metrics.registry import TRACE_SCORES, Metric

if TYPE_CHECKING:
    import pandas as pd

    from rag_eval.metrics.gate import GateResult, MetricStat
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.ask import AskResult
    from rag_eval.runs.estimate import RunEstimate
    from rag_eval.runs.store import RunStore
    from rag_eval.runs.summary import EvaluationSummary
    from rag_eval.schema import ItemRecord

__all__ = ["Comparison", "Evaluation", "Summary", "aevaluate", "ask", "compare", "evaluate", "load_run"]

DEFAULT_NAME = "python-api"


def _per_item(metrics: Iterable[str | Path | Metric] | str | Path | Metric | None) -> list[str] | None:
    """The per-item metrics the engine computes: those of ``metrics``, or (None) every
    installed one, as ``rag-eval judge`` without ``--metrics``. ``metrics`` holds any name
    ``rag-eval metrics list`` shows, a :class:`~rag_eval.metrics.registry.Metric`
    (registered, as ``@rag_eval.metric`` does) or a rubric file (registered, as ``--metrics
    politeness.yaml`` does); ValueError naming every unknown name, before any row is judged.
    The judge's TRACe scores, answer correctness and retrieval metrics are computed
    whenever a row allows."""
    from dataclasses import replace

    from rag_eval.metrics.registry import BUILT_IN, METRICS

    if metrics is None:
        return None
    given = [metrics] if isinstance(metrics, (str, Path, Metric)) else list(metrics)
    names = []
    for one in given:
        if isinstance(one, Metric):
            if METRICS.find(one.name) != one:  # a new declaration: registered as @rag_eval.metric does
                METRICS.register(one if one.origin != BUILT_IN else replace(one, origin="python"))
            names.append(one.name)
        elif isinstance(one, Path) or str(one).endswith((".yaml", ".yml")):
            from rag_eval.judges.rubric import RubricError, register_rubric

            try:
                names.append(register_rubric(one))
            except (RubricError, OSError) as err:
                raise ValueError(f"metrics: {err}") from None
        else:
            names.append(str(one))
    unknown = [n for n in names if METRICS.find(n) is None]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(map(repr, unknown))}; installed (rag-eval metrics list): "
                         f"{', '.join(METRICS.names())}; or give a Metric or a rubric's .yaml file")
    per_item = {m.name for m in METRICS.per_item()}
    return [n for n in dict.fromkeys(names) if n in per_item]


# ---------------------------------------------------------------- the input
def _rows_source(data: Any, column_map: Mapping[str, str] | None = None, language: str | None = None) -> Any:
    """A :class:`~rag_eval.runs.sources.RowsSource` of ``data``: a path is read as the CLI
    reads it (streamed, any format it takes); a DataFrame, a ``datasets.Dataset`` or an
    iterable of dicts row by row (row numbers count from 1 in the order given). The
    input's shape is checked first (:func:`_check_shape`). ``language`` (normalized): each
    row's that names none, as its own ``language`` column would."""
    from rag_eval.datasets.io import iter_raw
    from rag_eval.runs.sources import RowsSource

    column_map = dict(column_map or {})

    if isinstance(data, (str, Path)):
        _check_shape(str(data), ((n, _renamed(r, column_map)) for n, r in iter_raw(data)), column_map)
        if not column_map:
            return RowsSource(path=data, language=language)
        return RowsSource([(n, _renamed(r, column_map)) for n, r in iter_raw(data)], label=str(data),
                          language=language)
    label, rows = _rows_of(data)
    # a DataFrame's columns are its header's (a column of nulls included): checked as a row 0
    header = [(0, dict.fromkeys(map(str, data.columns)))] if label == "DataFrame" and rows else []
    pairs = [(n, _renamed(r, column_map)) for n, r in [*header, *enumerate(rows, start=1)]]
    _check_shape(label, pairs, column_map)
    return RowsSource(pairs[len(header):], label=label, language=language)


def _check_shape(label: str, rows: Any, column_map: Mapping[str, str]) -> None:
    """Raise one ValueError before any row is judged: the verdict every path gives an input
    (:func:`rag_eval.datasets.validate.shape_issue`: unreadable, no rows, a required column
    missing, named with the names it is accepted under), with how to name your own columns
    (``column_map`` maps a field to your column: ``{"question": "prompt"}``)."""
    from rag_eval.datasets.schema import JUDGED_ROW_COLUMNS, JUDGED_ROW_REQUIRED
    from rag_eval.datasets.validate import shape_issue

    fields = ("id", *JUDGED_ROW_COLUMNS, "metadata")
    wrong = [k for k in column_map if k not in fields]
    if wrong:
        raise ValueError(f"column_map maps a field to your column, e.g. {{'question': 'prompt'}}; "
                         f"{', '.join(map(repr, wrong))} is not a field (fields: {', '.join(fields)})")
    if column_map:  # a mapped column no row has (its field then absent from every renamed row)
        rows = list(rows)
        found = {str(k) for _, r in rows if isinstance(r, Mapping) for k in r}
        absent = [column for field, column in column_map.items() if field not in found]
        if absent and rows:
            raise ValueError(f"column_map: {label} has no column {', '.join(map(repr, absent))} "
                             f"(its columns: {', '.join(sorted(found - set(column_map))) or 'none'})")
    issue = shape_issue(label, rows, JUDGED_ROW_REQUIRED)
    if issue is not None:
        hint = "; name yours with column_map={'<field>': '<your column>'}" if "missing column" in issue.message else ""
        raise ValueError(issue.reason + hint)


def _renamed(row: Any, column_map: Mapping[str, str]) -> Any:
    """``row`` with each mapped column under its field's name (the mapped one wins)."""
    if not isinstance(row, Mapping):
        return row
    mapped = set(column_map.values())
    return {**{k: v for k, v in row.items() if k not in mapped},
            **{name: row[column] for name, column in column_map.items() if column in row}}


def _rows_of(data: Any) -> tuple[str, list[Any]]:
    from rag_eval.io.rows import plain_row

    if hasattr(data, "to_dict") and hasattr(data, "columns") and hasattr(data, "iloc"):  # a pandas DataFrame
        cells = data.astype(object).where(data.notna(), None)  # pd.NA, NaT and NaN are absent, as in a file
        return "DataFrame", [plain_row(r) for r in cells.to_dict(orient="records")]
    if hasattr(data, "column_names") and hasattr(data, "features"):  # a Hugging Face datasets.Dataset
        return "Dataset", [plain_row(r) for r in data]
    if isinstance(data, Mapping):
        raise TypeError("data: give rows (a DataFrame, a list of dicts, a datasets.Dataset) or a file path, "
                        "not one dict")
    if not isinstance(data, Iterable):
        raise TypeError(f"data: expected a file path, a DataFrame, a list of dicts or a datasets.Dataset, "
                        f"got {type(data).__name__}")
    return "rows", [plain_row(r) if isinstance(r, Mapping) else r for r in data]


# ---------------------------------------------------------------- the judge and the configuration
def _judge(judge: Any, options: Mapping[str, Any]) -> Any:
    """A judge name goes through the one factory (``options``: its kind's options, e.g. the
    ``llm`` judge's ``model``, ``base_url``, ``samples``; ``rag-eval judges list``), checked
    before any row; a judge object is used as given."""
    if not isinstance(judge, str):
        if options:
            raise ValueError("judge_options apply to a judge name, not to a judge object")
        return judge

    from rag_eval.judges.factory import build_judge

    return build_judge(judge, options=dict(options) or None)


def _language(language: str | None) -> str | None:
    """The caller's ``language`` as the package writes it (``zh-Hans`` is ``zh``), or a
    ValueError before any row is judged when it is no language code."""
    from rag_eval.text.language import language_code

    if language is None:
        return None
    try:
        return language_code(language)
    except ValueError as error:
        raise ValueError(f"language={error}") from None


def _config(judge: Any, mode: Any, name: str | None, options: Mapping[str, Any] | None = None,
            language: str | None = None) -> RagConfig:
    """The configuration a saved run records: the judge it used (its kind as the judge-kind
    registry knows it from the judge's name, a plugin's ``options``), the scoring mode
    (no retrieval or generation: the rows carry their responses) and the caller's language."""
    from rag_eval.judges.kinds import JUDGE_KINDS
    from rag_eval.llm.config import LLMConfig
    from rag_eval.rag.config import JudgeConfig, RagConfig

    judge_name = str(getattr(judge, "name", type(judge).__name__))
    declared = JUDGE_KINDS.find(judge_name)  # "llm:gpt-4o-mini" -> llm, "overlap:0.4" -> a plugin's overlap
    # a judge object of no registered kind is recorded under its own name (its expected error: unknown)
    kind = declared.name if declared is not None else re.sub(r"[^A-Za-z0-9_-]+", "-", judge_name.split(":")[0]) or "judge"
    calibration = getattr(judge, "calibration", None)
    llm = getattr(judge, "config", None)
    settings: dict[str, Any] = {"kind": kind}
    if options:
        settings["options"] = dict(options)
    if declared is not None and declared.calibrated and calibration:
        settings["calibration"] = str(calibration["name"]) if isinstance(calibration, Mapping) else str(calibration)
    if isinstance(llm, LLMConfig):  # a judge on an LLM endpoint records which
        settings.update(model=llm.model, base_url=llm.base_url)
    return RagConfig(name=name or DEFAULT_NAME, judge=JudgeConfig(**settings), scoring_mode=mode, language=language)


# ---------------------------------------------------------------- progress
def _progress(progress: bool | Callable[[int, int], None], label: str) -> tuple[Callable[[int, int], None] | None,
                                                                              Callable[[], None]]:
    """``(update(done, total), close())``: a progress bar, a caller's own function, or
    nothing. In Jupyter the notebook bar needs ipywidgets (``tqdm.auto`` warns without it),
    so it is used only when ipywidgets can be imported; else tqdm's text bar, which a
    notebook shows as text."""
    if callable(progress):
        return progress, lambda: None
    if not progress:
        return None, lambda: None
    from importlib.util import find_spec

    if find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    bars: list[Any] = []  # drawn at the first update, with its total: no "0row [00:00, ?row/s]" line before

    def update(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total or None, unit="row", desc=label, file=sys.stderr))
        bar = bars[0]
        if total and bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    def close() -> None:
        for bar in bars:
            bar.close()

    return update, close


# ---------------------------------------------------------------- results
def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{_fmt(low)}, {_fmt(high)}]"


def _stat_text(stat: MetricStat) -> str:
    """``0.4172 [0.38, 0.45] (n=20)``; without an interval, why: ``0.4172 (n=1: too few rows for an
    interval)``, ``n/a (n=0: no row has a value)``, never ``[n/a, n/a]`` with no reason."""
    from rag_eval.metrics.aggregate import MIN_ROWS_FOR_INTERVAL

    if stat.mean is None:
        return f"n/a (n={stat.n}: no row has a value)"
    if stat.ci_low is None or stat.ci_high is None:
        why = "too few rows for an interval" if stat.n < MIN_ROWS_FOR_INTERVAL else "no interval"
        return f"{_fmt(stat.mean, 4)} (n={stat.n}: {why})"
    return f"{_fmt(stat.mean, 4)} [{_fmt(stat.ci_low, 4)}, {_fmt(stat.ci_high, 4)}] (n={stat.n})"


def _html_table(caption: str, header: Sequence[str], rows: Iterable[Sequence[Any]], note: str = "") -> str:
    """A compact HTML table (what Jupyter shows for a result), every cell escaped."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    foot = f"<p><small>{html.escape(note)}</small></p>" if note else ""
    return (f"<div><p><b>{html.escape(caption)}</b></p><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{foot}</div>")


@dataclass(frozen=True, slots=True)
class Summary:
    """An evaluation at a glance: counts per status, coverage (usable items / all items;
    failed items never enter a mean), each metric's mean with its 95% bootstrap interval
    over the usable items (the numbers the gate reads), tokens and cost, and the judge's
    expected error (how far its labels are from a human's, as measured; ``source``
    ``unknown`` when nothing measured it)."""

    n_items: int
    n_usable: int
    coverage: float | None
    counts: dict[str, int]
    metrics: dict[str, MetricStat]
    expected_judge_error: dict[str, Any]
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    errors: list[str] = field(default_factory=list)
    cancelled: bool = False
    #: per language (``{"zh": {"n_items", "n_scored", "coverage", "trace": {metric: {mean, ci_low, ...}}}}``):
    #: a figure that holds in one language may not in another
    by_language: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def means(self) -> dict[str, float | None]:
        return {name: stat.mean for name, stat in self.metrics.items()}

    def to_pandas(self) -> pd.DataFrame:
        """One row per metric: mean, 95% interval, rows it is defined on."""
        import pandas as pd

        return pd.DataFrame([{"metric": name, "mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n}
                             for name, s in self.metrics.items()])

    @property
    def headline(self) -> str:
        """``9/10 items usable (coverage 0.900); ok: 9, invalid_input: 1``"""
        return (f"{self.n_usable}/{self.n_items} items usable (coverage {_fmt(self.coverage)}); "
                + ", ".join(f"{k}: {v}" for k, v in self.counts.items()))

    def languages_frame(self) -> pd.DataFrame:
        """One row per language: its items, usable items, coverage and each TRACe score's mean
        and 95% interval (the run's summary broken down by language)."""
        import pandas as pd

        return pd.DataFrame([{"language": language, "n_items": part["n_items"], "n_usable": part["n_scored"],
                              "coverage": part["coverage"],
                              **{f"{m}{suffix}": (s or {}).get(key) for m, s in part.get("trace", {}).items()
                                 for suffix, key in (("", "mean"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high"))}}
                             for language, part in self.by_language.items()])

    def __str__(self) -> str:
        from rag_eval.runs.summary import language_lines

        lines = [self.headline]
        lines += [f"  {name}: {_stat_text(s)}" for name, s in self.metrics.items()]
        lines += language_lines({"by_language": self.by_language})
        lines.append(f"judge error: {self.expected_judge_error.get('basis', 'unknown')}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        """One line: coverage and the TRACe means (``print(summary)`` gives every metric)."""
        means = ", ".join(f"{n} {_fmt(s.mean)}" for n, s in self.metrics.items() if n in TRACE_SCORES)
        return f"<Summary: {self.headline}; {means}>"

    def _repr_html_(self, title: str = "") -> str:
        """Jupyter's view: each metric's mean with its 95% interval and the items it rests on."""
        return _html_table(title + self.headline, ("metric", "mean", "95% interval", "n"),
                           ((name, _fmt(s.mean), _interval(s.ci_low, s.ci_high), s.n)
                            for name, s in self.metrics.items()),
                           f"judge error: {self.expected_judge_error.get('basis', 'unknown')}")


class Evaluation:
    """What :func:`evaluate` (or :func:`load_run`) gives: one result per input row, in
    input order, each with an explicit status. ``records`` are the engine's records
    (None for a loaded run); ``rows`` the flat rows ``rag-eval judge`` writes, field for
    field (a loaded run's are rebuilt from the store); ``run_id`` is set once saved."""

    def __init__(self, rows: list[dict[str, Any]], engine_summary: EvaluationSummary, expected_error: dict[str, Any],
                 *, records: list[ItemRecord] | None = None, source: Any = None,
                 config: RagConfig | None = None, run_id: str | None = None, store: RunStore | None = None) -> None:
        self.rows = rows
        self.records = records
        self.run_id = run_id
        self._engine_summary = engine_summary
        self._expected_error = expected_error
        self._source, self._config, self._store = source, config, store

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        s = self._engine_summary
        saved = f", run {self.run_id}" if self.run_id else ""
        return f"<Evaluation: {s.n_usable}/{s.n_items} items usable{saved}>"

    def _repr_html_(self) -> str:
        """Jupyter's view: the summary's table (``to_pandas()`` has the items)."""
        return self.summary._repr_html_(f"Evaluation{f' (run {self.run_id})' if self.run_id else ''}: ")

    # -------------------------------------------------------------- tables
    def to_pandas(self) -> pd.DataFrame:
        """One row per item, in input order: the one flat row every output has
        (:func:`rag_eval.runs.records.item_row`: ``id``, ``language``, ``status``, ``error``,
        the TRACe scores and report fields, every other metric computed, ``metric_errors``,
        the judge's labels and explanations...). A failed item keeps its row, its scores
        empty (never 0). ``rows`` has every field ``rag-eval judge`` writes."""
        import pandas as pd

        from rag_eval.runs.records import row_columns

        columns = row_columns(self.rows)
        return pd.DataFrame([{c: r.get(c) for c in columns} for r in self.rows], columns=columns)

    # -------------------------------------------------------------- summary and gate
    @cached_property
    def summary(self) -> Summary:
        from rag_eval.runs.summary import gate_inputs

        s = self._engine_summary
        return Summary(n_items=s.n_items, n_usable=s.n_usable, coverage=s.coverage, counts=dict(s.counts),
                       metrics=gate_inputs(s)[0], expected_judge_error=self._expected_error, tokens=dict(s.tokens),
                       cost_usd=s.cost_usd, errors=list(s.errors), cancelled=s.cancelled,
                       by_language=dict(s.stored.get("by_language") or {}))

    def gate(self, fail_under: str | Sequence[str] | Mapping[str, float] | None = None, *,
             fail_over: str | Sequence[str] | Mapping[str, float] | None = None, basis: str = "mean",
             min_coverage: float | None = None, junit: str | Path | None = None,
             junit_rows: bool = False) -> GateResult:
        """The CLI's gate (``--fail-under``, ``--fail-under-ci``, ``--min-coverage``,
        ``--junit``): each threshold against the metric's mean (``basis="lower"``: the
        lower bound of its 95% interval); failed items fail it unless ``min_coverage`` is
        given. ``fail_under``: ``"adherence=0.9,context_relevance=0.4"``, a list of such,
        or ``{"adherence": 0.9}``; ``fail_over`` (``--fail-over``) the same for metrics where
        lower is better (ValueError for a threshold on the wrong side of a registered
        metric). Returns the :class:`~rag_eval.metrics.gate.GateResult` (``.passed``,
        ``.failures``, ``.table()``); raises nothing for a failed gate."""
        from rag_eval.metrics.gate import check_directions, evaluate_gate, junit_suite, parse_thresholds
        from rag_eval.runs.summary import gate_inputs

        thresholds = []
        for given, at_most in ((fail_under, False), (fail_over, True)):
            if isinstance(given, Mapping):
                given = [f"{metric}={value}" for metric, value in given.items()]
            thresholds.extend(parse_thresholds(given or None, at_most=at_most))
        check_directions(thresholds)
        s = self._engine_summary
        stats, cases = gate_inputs(s)
        result = evaluate_gate(stats, thresholds, rows_given=s.n_items, rows_usable=s.n_usable, basis=basis,
                               min_coverage=min_coverage)
        if junit is not None:
            Path(junit).parent.mkdir(parents=True, exist_ok=True)
            junit_suite(result, cases if junit_rows else (), thresholds).write(str(junit))
        return result

    # -------------------------------------------------------------- the run store
    def save(self, name: str | None = None, *, store: RunStore | str | Path | None = None) -> str:
        """Store the evaluation as a run (the dashboard's Runs and Compare pages show it)
        and return its id. ``store``: a :class:`~rag_eval.runs.store.RunStore`, or its
        location (a folder, a SQLite file or a database URL); default the workbench's own."""
        if self.run_id is not None:
            return self.run_id
        if self.records is None or self._source is None or self._config is None:
            raise ValueError("nothing to save: this evaluation holds no records")
        from rag_eval.runs.sinks import StoreSink

        run_store = _store(store)
        config = self._config if name is None else self._config.model_copy(update={"name": name})
        sink = StoreSink(run_store, config, name=name or config.name)
        sink.open(self._source.describe())
        try:
            for record in self.records:
                sink.write(record)
        except BaseException as err:
            sink.close("failed", error=f"{type(err).__name__}: {err}")
            raise
        sink.close("cancelled" if self._engine_summary.cancelled else "finished")
        self.run_id, self._store = sink.run_id, run_store
        return str(self.run_id)

    def _stored_items(self) -> list[dict[str, Any]]:
        if self.run_id is not None and self._store is not None:
            return list(self._store.items(self.run_id))
        from rag_eval.runs.records import to_store

        return [to_store(r) for r in self.records or ()]


def _store(store: RunStore | str | Path | None) -> RunStore:
    from rag_eval.runs.store import RunStore

    return store if isinstance(store, RunStore) else RunStore(store)


def evaluate(
    data: Any,
    judge: Any = "local",
    metrics: Iterable[str | Path | Metric] | str | Path | Metric | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    concurrency: int | None = None,
    store: RunStore | str | Path | None = None,
    name: str | None = None,
    progress: bool | Callable[[int, int], None] = True,
    mode: str | None = None,
    judge_options: Mapping[str, Any] | None = None,
    language: str | None = None,
) -> Evaluation:
    """Judge every row of ``data`` and score it, as ``rag-eval judge`` does.

    ``data``: a file path (``.jsonl``, ``.json``, ``.csv``, ``.parquet``), a pandas
    DataFrame, a list of dicts or a Hugging Face ``datasets.Dataset``; columns as the
    CLI's rows: ``question``, ``documents`` (a list of texts), ``response``, optional
    ``id`` and ``reference_answer``, each also under ragas's names (``user_input``,
    ``retrieved_contexts``, ``response``, ``reference``) and deepeval's (``input``,
    ``retrieval_context``, ``actual_output``, ``expected_output``); ``column_map`` names
    your own: ``{"question": "prompt"}``. ``judge``: ``"local"`` (offline), ``"llm"``
    (the OpenAI-compatible endpoint of the environment), ``"local:NAME"`` (a stored
    calibration), a plugin's kind, or a judge object. ``judge_options``: the kind's
    options (``rag-eval judges list``; e.g. the ``llm`` judge's ``model``, ``base_url``,
    ``samples``), checked before any row: an unknown one is named with the allowed ones.
    ``metrics``: the per-item metrics to compute besides the judge's (names ``rag-eval
    metrics list`` shows, :class:`Metric` s, rubric ``.yaml`` files; default: every
    installed one). ``concurrency``: items judged at once (default: the judge's).
    ``store`` or ``name``: also save the run (see :meth:`Evaluation.save`). ``progress``:
    a progress bar, False, or ``fn(done, total)``.
    ``mode``: the TRACe formulas (default the CLI's). ``language``: the language (ISO 639-1,
    e.g. ``"ja"``) of every row that does not name its own in a ``language`` column (a row's
    own wins, as with ``RagConfig.language``); the rows are split, tokenized and judged in it,
    and the summary's ``by_language`` counts them under it. Default: detected per row.

    Raises ValueError before any row is judged when a required column is missing (one
    message naming each and the names it is accepted under), a metric or a judge option
    is unknown or ``language`` is no language code; ``FileFormatError`` when the file cannot be read,
    :class:`~rag_eval.judges.base.JudgeUsageError` when the judge cannot be built. A bad
    row never raises: it is an item with status ``invalid_input``."""
    from rag_eval.judges.base import ManagedJudge
    from rag_eval.judges.expected_error import expected_judge_error
    from rag_eval.metrics.trace import DEFAULT_MODE
    from rag_eval.runs.engine import RunHooks
    from rag_eval.runs.engine import evaluate as run_engine
    from rag_eval.runs.records import to_file_row
    from rag_eval.runs.row_cache import RowCache
    from rag_eval.runs.sinks import MemorySink
    from rag_eval.schema import ScoringMode

    wanted = _per_item(metrics)
    scoring = ScoringMode(mode) if mode is not None else DEFAULT_MODE
    given = _language(language)
    source = _rows_source(data, column_map, given)  # its columns checked before the judge is built
    the_judge = _judge(judge, judge_options or {})
    source.row_cache = RowCache.for_judge(the_judge)
    config = _config(the_judge, scoring, name, judge_options if isinstance(judge, str) else None, given)
    sink = MemorySink()
    update, close = _progress(progress, str(getattr(the_judge, "name", "judge")))
    try:
        summary = run_engine(source, the_judge, sink, config=config, hooks=RunHooks(progress=update),
                             concurrency=concurrency, metrics=wanted)
    finally:
        close()
        if isinstance(judge, str) and isinstance(the_judge, ManagedJudge):
            the_judge.close()  # a judge built here (Ray workers, clients) is ours to close
    result = Evaluation([to_file_row(r) for r in sink.records],
                        summary, expected_judge_error(the_judge), records=sink.records, source=source, config=config)
    if store is not None or name is not None:
        result.save(name, store=store)
    return result


async def aevaluate(data: Any, judge: Any = "local", metrics: Any = None, **options: Any) -> Evaluation:
    """:func:`evaluate` for a caller already inside an event loop (a notebook cell with
    ``await``, an async service): the evaluation runs in a worker thread, so the engine's
    own loop (the LLM judge's async client) never nests in the caller's, and the caller's
    loop stays free meanwhile. Same arguments, same result."""
    return await asyncio.to_thread(evaluate, data, judge, metrics, **options)


def estimate(data: Any, judge: str = "local", metrics: Any = None, *,
             column_map: Mapping[str, str] | None = None, judge_options: Mapping[str, Any] | None = None) -> RunEstimate:
    """What :func:`evaluate` with the same arguments would send, without sending or judging
    anything: the rows it would judge (the usable ones), its requests by purpose (judge
    calls with their samples, the LLM judge's answer match, rubric metrics), their
    estimated tokens and cost (``None`` when a model has no price), and whether the judge
    calls a network. The estimate of ``rag-eval judge --dry-run`` and the Batch page
    (:mod:`rag_eval.runs.estimate`); ``.lines()`` says it in their words."""
    from rag_eval.judges.factory import judge_spec
    from rag_eval.runs.engine import item_metrics
    from rag_eval.runs.estimate import estimate_run

    spec = judge_spec(judge, options=dict(judge_options or {}) or None)
    return estimate_run(_rows_source(data, column_map), spec, item_metrics(_per_item(metrics)))


# ---------------------------------------------------------------- stored runs
def load_run(name: str, *, store: RunStore | str | Path | None = None) -> Evaluation:
    """A stored run (its id, a unique id prefix or a unique name) as an
    :class:`Evaluation`: ``to_pandas()``, ``summary`` and ``gate()`` as for a fresh one.
    :class:`~rag_eval.runs.store.RunNotFound` when no run (or more than one) matches."""
    from rag_eval.judges.expected_error import for_run
    from rag_eval.runs.summary import summarize_records

    run_store = _store(store)
    run = run_store.get_run(name)
    items = run_store.items(run["id"])
    summary = summarize_records(items, run_id=run["id"], cancelled=run.get("status") == "cancelled")
    from rag_eval.runs.records import item_rows

    return Evaluation(item_rows(items), summary, for_run(run), run_id=run["id"], store=run_store)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two or more runs side by side, as the Compare page and ``rag-eval compare`` show
    them: each metric's mean with its 95% interval and coverage per run (``metrics``),
    paired differences against the first run over items scored in both (``paired``), the
    items that changed most (``differences``); retrieval metrics at one cut-off ``k``
    every run reaches (``cutoffs``: the choosable ones; ``left_out``: not comparable)."""

    runs: list[str]
    metrics: list[dict[str, Any]]
    paired: list[dict[str, Any]]
    differences: list[dict[str, Any]]
    k: int | None
    cutoffs: list[int]
    left_out: list[str]

    def to_pandas(self) -> pd.DataFrame:
        """The paired differences (run − baseline), one row per metric and run."""
        import pandas as pd

        return pd.DataFrame(self.paired)

    def __repr__(self) -> str:
        at = f" at k={self.k}" if self.k is not None else ""
        return f"<Comparison: {' vs '.join(self.runs)}{at}; {len({m['metric'] for m in self.metrics})} metrics>"

    def _repr_html_(self) -> str:
        """Jupyter's view: per metric, each run's mean with its 95% interval and coverage,
        and each later run's paired difference from the first."""
        by_metric: dict[str, dict[str, dict[str, Any]]] = {}
        for row in self.metrics:
            by_metric.setdefault(row["metric"], {})[row["run"]] = row
        paired = {(p["metric"], p["run"]): p for p in self.paired}
        header = ["metric", *(f"{run} (coverage)" for run in self.runs),
                  *(f"{run} − {self.runs[0]}" for run in self.runs[1:])]

        def cell(stat: Mapping[str, Any] | None) -> str:
            if not stat or stat.get("mean") is None:
                return "n/a"
            return f"{_fmt(stat['mean'])} {_interval(stat.get('ci_low'), stat.get('ci_high'))} ({_fmt(stat.get('coverage'), 2)})"

        def diff(p: Mapping[str, Any] | None) -> str:
            if not p or p.get("mean_difference") is None:
                return "n/a"
            return f"{p['mean_difference']:+.3f} {_interval(p.get('ci_low'), p.get('ci_high'))} (n={p['n_pairs']})"

        rows = [[metric, *(cell(runs.get(run)) for run in self.runs),
                 *(diff(paired.get((metric, run))) for run in self.runs[1:])] for metric, runs in by_metric.items()]
        note = f"retrieval at k={self.k}" if self.k is not None else ""
        if self.left_out:
            note += ("; " if note else "") + f"not comparable: {', '.join(self.left_out)}"
        return _html_table(f"Comparison of {len(self.runs)} runs: mean [95% interval] (coverage)", header, rows, note)


def compare(a: Evaluation | str, b: Evaluation | str, *more: Evaluation | str, k: int | None = None,
            store: RunStore | str | Path | None = None) -> Comparison:
    """Compare runs (stored run names or ids, or :class:`Evaluation` s, saved or not)
    against the first, at the common cut-off the Compare page uses
    (:func:`rag_eval.runs.compare.compare_at_cutoff`; ``k``: another cut-off every run reaches)."""
    from rag_eval.runs.compare import compare_at_cutoff

    run_store: RunStore | None = None
    items_by_run: dict[str, list[dict[str, Any]]] = {}
    for n, run in enumerate((a, b, *more)):
        if isinstance(run, Evaluation):
            key = run.run_id or f"evaluation-{n + 1}"
            items = run._stored_items()
        else:
            run_store = run_store or _store(store)
            key = run_store.resolve_run_id(run)
            items = list(run_store.items(key))
        if key in items_by_run:
            raise ValueError(f"run {key} given twice")
        items_by_run[key] = items
    result = compare_at_cutoff(items_by_run, k)
    return Comparison(runs=list(items_by_run), metrics=result["metrics"], paired=result["paired"],
                      differences=result["differences"], k=result.get("k"), cutoffs=list(result.get("cutoffs") or []),
                      left_out=list(result.get("left_out") or []))


# ---------------------------------------------------------------- one question
def ask(question: str, config: RagConfig | str | Path | None = None, *, collection: str = "demo",
        judge: bool = True) -> AskResult:
    """Answer ``question`` with the RAG system of ``config`` (a
    :class:`~rag_eval.rag.config.RagConfig`, a YAML file, or None for the offline default)
    from ``collection`` (``"demo"``: the packaged demo corpus, built on first use), then
    judge and score the answer, as ``rag-eval ask`` does."""
    from rag_eval.rag.config import RagConfig, default_config
    from rag_eval.runs.ask import ask as ask_question

    rag_config = (default_config() if config is None else config if isinstance(config, RagConfig)
                  else RagConfig.from_yaml(Path(config)))
    if collection == "demo":
        from rag_eval.demo import ensure_demo_collection

        ensure_demo_collection(rag_config)
    return ask_question(question, collection, rag_config, evaluate=judge)
