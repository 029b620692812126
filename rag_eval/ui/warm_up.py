"""Warm a freshly started dashboard server before its first visitor.

The first visit to a page on a freshly started server used to cost about 1.5 s of server
CPU that no later visit pays (``bench/bench_page_load.py --at-size``): importing pandas,
pyarrow, SQLAlchemy, the charting library and the modules the pages import, building the
first chart (Plotly's figure then; now Altair's first Vega-Lite spec), converting the
first table to Arrow, opening the run store and reading the newest run, Streamlit's check
on the first element drawn; a second run of the page while Streamlit found out that the
dashboard uses ``st.navigation``; a full garbage collection over all of that after each run.
Nobody is waiting while a server starts, so ``app.py``'s lifespan calls :func:`warm_up`
before the server listens and the first visitor meets a warm server.

Only what every visit of a page needs anyway is loaded: the imports at the top of the page
scripts (Qdrant's client included: Ask, Corpus and Batch's default view need it), never
the ones pages keep inside functions (the embedder's ONNX Runtime, scikit-learn, the
judges), so a server's memory stays what its first visits would make it. Each step is
best effort: a failure is logged by its kind and the step's name and never stops the
server.

What takes tens of seconds is prepared after that, in a background thread, while the server
already answers (:func:`prepare_in_background`): the demo collection Ask opens on (27 s on a
fresh server, which the first question used to wait for, and eight visitors arriving together
each waited for) and the local judge's encoder (its embedding layer, ~0.1 s; a judge with a
transformer encoder, ~19 s of Batch's first run). A visitor who
comes before they are ready waits for the same build, never a second one.
"""

from __future__ import annotations

import ast
import gc
import importlib
import logging
import threading
import time
import types
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)


def page_imports(scripts: Iterable[Path]) -> list[str]:
    """Modules the scripts import at module level, in first-seen order.

    ``from package import name`` yields ``package.name`` as well as ``package``: the name
    may be a submodule (``from rag_eval.ui import charts``); :func:`import_modules` skips
    it when it is not."""
    names: list[str] = []
    for script in scripts:
        for node in ast.parse(script.read_text(encoding="utf-8"), filename=str(script)).body:
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module != "__future__":
                names.append(node.module)
                names.extend(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return list(dict.fromkeys(names))


def import_modules(names: Iterable[str]) -> int:
    """Import each module that exists; the number imported. A dotted name whose last part
    is an attribute of its parent, not a submodule, is skipped."""
    imported = 0
    for name in names:
        parent, _, last = name.rpartition(".")
        if parent:
            try:
                owner = importlib.import_module(parent)
            except ImportError:
                continue
            if hasattr(owner, last) and not isinstance(getattr(owner, last), types.ModuleType):
                continue  # a function, class or constant, already loaded with its module
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        imported += 1
    return imported


def dashboard_scripts(root: Path) -> list[Path]:
    """The navigation script and every page script under ``root``."""
    return [root / "dashboard.py", *sorted((root / "pages").glob("*.py"))]


def _first_chart() -> None:
    """Altair loads its Vega-Lite schema and validators on the first chart it turns into a
    spec: build one of the dashboard's charts and convert it as ``st.altair_chart`` does
    (Streamlit's converter, which also registers its Arrow data transformer)."""
    import pandas as pd

    from rag_eval.ui import charts
    from rag_eval.ui.streamlit_compat import altair_spec

    table = pd.DataFrame({"run": ["a"], "metric": ["completeness"], "mean": [0.5], "ci_low": [0.4], "ci_high": [0.6]})
    altair_spec(charts.metric_bars(table, {}))


def _first_table() -> None:
    """pandas → Arrow, as st.dataframe converts a table (pyarrow's pandas bridge loads lazily)."""
    import pandas as pd
    import pyarrow as pa

    frame = pd.DataFrame({"run": ["a"], "score": [0.5], "n": [1], "when": [pd.Timestamp("2026-01-01")]})
    sink = pa.BufferOutputStream()
    table = pa.Table.from_pandas(frame)
    with pa.RecordBatchStreamWriter(sink, table.schema) as writer:
        writer.write_table(table)


def _run_store() -> None:
    """Open the configured run store once and list its runs, through the dashboard's own
    cached readers, so the first page reads them from the cache."""
    from rag_eval.ui import data

    data.list_runs()


def _newest_run() -> None:
    """The newest run is the one Runs opens on and Batch shows when a run finishes: its
    items' fields those two pages read go into the readers' cache (kept ``ITEMS_TTL``)."""
    from rag_eval.ui import data

    runs = data.list_runs()
    if runs:
        newest = runs[0]
        data.run_item_fields(data.where(), newest["id"], data.run_stamp(newest), data.SCORE_FIELDS)
        data.results_table(data.where(), newest["id"], data.run_stamp(newest))  # Batch's table of its items


def _first_element() -> None:
    """The first element any script draws in a process makes Streamlit check whether it
    runs in a Python REPL (``delta_generator._maybe_print_use_warning``: ``inspect.stack()``,
    reading the source file of every frame), 0.1 s of the first visit here. Done now, in
    the server (the runtime exists, so it warns of nothing); a later Streamlit without
    the function only skips this step."""
    from rag_eval.ui.streamlit_compat import run_repl_check

    run_repl_check()


def _navigation_mode() -> None:
    """The dashboard navigates with ``st.navigation``. Streamlit learns that from the first
    script run and, until then, treats the ``pages/`` folder as its legacy multipage mode,
    which made the first visit run twice (``state.ensure_app_runs``); told now, it runs once."""
    from rag_eval.ui.streamlit_compat import leave_legacy_pages_mode

    leave_legacy_pages_mode(before_first_run=True)


def _freeze_heap() -> None:
    """Streamlit runs a full garbage collection after every script run
    (``runner.postScriptGC``), holding the interpreter lock: with the imports above that
    walks about 220,000 objects, 0.13–0.15 s per run here, more in a busy server, after
    every click of every visitor. ``gc.freeze`` moves everything alive now out of the
    collector's view (the modules and caches live as long as the server; reference
    counting still frees them), so each collection walks only what the runs create."""
    gc.collect()
    gc.freeze()


def warm_up(root: Path) -> dict[str, float]:
    """Run every warm-up step; seconds per step (a failed step is logged and left out)."""
    steps: list[tuple[str, Callable[[], object]]] = [
        ("page imports", lambda: import_modules(page_imports(dashboard_scripts(root)))),
        ("first chart", _first_chart),
        ("first table", _first_table),
        ("run store", _run_store),
        ("newest run", _newest_run),
        ("first element", _first_element),
        ("navigation mode", _navigation_mode),
        ("heap frozen", _freeze_heap),  # last: it keeps what the steps above loaded out of every collection
    ]
    return _run_steps("warm-up", steps, 2)


def _run_steps(what: str, steps: Iterable[tuple[str, Callable[[], object]]], digits: int) -> dict[str, float]:
    """Seconds per step. A failed step is logged by its kind and left out: a cold first visit
    beats a server that does not start, and the visitor's page builds what was not prepared."""
    timings: dict[str, float] = {}
    for name, step in steps:
        start = time.perf_counter()
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - see the docstring
            log.warning("dashboard %s: %s skipped (%s)", what, name, type(exc).__name__)
            continue
        timings[name] = time.perf_counter() - start
    log.info("dashboard %s: %s", what, ", ".join(f"{name} {seconds:.{digits}f} s" for name, seconds in timings.items()))
    return timings


# -- before the first visitor, off the server's start: what takes tens of seconds ------------
def _demo_collection() -> None:
    """The demo collection Ask opens on (27 s of embedding on a fresh server, which the first
    visitor's first question used to wait for), through the dashboard's own one-build lock."""
    from rag_eval.rag.store import lease
    from rag_eval.ui import data

    with lease():  # the embedded store is released when the build ends (a command may use it)
        data.ensure_demo()


def _local_judge() -> None:
    """The local judge's encoder: the packaged model's embedding layer (~0.1 s), or for a
    model that names a transformer encoder its ONNX export and sessions (~19 s that Batch's
    first run and Ask's first answer used to pay). The process keeps it, so the judge a page
    builds later finds it ready."""
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.config import JudgeConfig

    judge = build_judge(JudgeConfig(kind="local"))
    start = getattr(judge, "start", None)  # LocalJudge.start loads the encoder (not part of the Judge protocol)
    if start is not None:
        start()


def prepare(steps: tuple[str, ...] = ("demo collection", "local judge")) -> dict[str, float]:
    """Load the judge's model and build the demo collection; seconds per step (a failed
    step is logged by its kind and left to the first visitor, as before)."""
    known: dict[str, Callable[[], object]] = {"local judge": _local_judge, "demo collection": _demo_collection}
    return _run_steps("preparation", ((name, known[name]) for name in steps), 1)


#: ``RAG_EVAL_PREPARE``: when the server prepares the judge and the demo collection
PREPARE_MODES = ("before", "background", "off")


def prepare_mode() -> str:
    """``before``: the server prepares them before it listens, so its first visitor never
    waits (a public deployment: nobody is looking while a Space starts, and it shows
    "Starting" until the port answers); ``background``: right after it listens (a
    developer wants the server now); ``off``: the first visitor's page builds them.
    ``RAG_EVAL_PREPARE`` chooses; unset, a locked dashboard
    (:func:`rag_eval.llm.policy.load_policy`) prepares ``before``, any other
    ``background``. An unknown value is logged and read as unset."""
    from rag_eval.config import setting
    from rag_eval.llm.policy import load_policy

    value = (setting("RAG_EVAL_PREPARE") or "").strip().lower()
    if value in PREPARE_MODES:
        return value
    if value:
        log.warning("RAG_EVAL_PREPARE=%r is not one of %s; using the default", value, ", ".join(PREPARE_MODES))
    return "before" if load_policy().locked else "background"


def prepare_at_start() -> threading.Thread | None:
    """What ``app.py`` runs when the server starts, after :func:`warm_up`, as
    :func:`prepare_mode` says: :func:`prepare` now, in a thread, or not at all."""
    mode = prepare_mode()
    if mode == "before":
        prepare()
        return None
    return prepare_in_background() if mode == "background" else None


def prepare_in_background() -> threading.Thread:
    """:func:`prepare` in a daemon thread, started by ``app.py`` once the quick warm-up is
    done: the server listens at once (the Overview and Runs need neither), and the judge and
    the demo collection are ready tens of seconds later, before a first visitor asks."""
    thread = threading.Thread(target=prepare, name="rag-eval-prepare", daemon=True)
    thread.start()
    return thread
