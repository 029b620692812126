"""The dashboard server warms up before its first visitor (``app.py``'s lifespan calls
``rag_eval.ui.warm_up.warm_up``), loading what the pages import at the top and no more.

No timing here (``bench/bench_page_load.py --at-size`` prints the figures): the checks run
in a fresh interpreter and read ``sys.modules`` and the log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rag_eval.ui.warm_up import dashboard_scripts, import_modules, page_imports

ROOT = Path(__file__).resolve().parents[2]

# What no page imports at its top: the pages load them inside functions, when they are used.
KEPT_LAZY = ("onnxruntime", "sklearn", "torch", "sentence_transformers", "openai", "ray", "trafilatura",
             # the HTML report's Plotly figures: the dashboard draws with Vega-Lite (Altair)
             "rag_eval.report.charts", "rag_eval.report.html", "plotly.subplots", "plotly.offline")

PROBE = """
import json, logging, sys
from pathlib import Path
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
from rag_eval.ui.warm_up import warm_up
steps = warm_up(Path(sys.argv[1]))
import gc
from streamlit import delta_generator
from streamlit.runtime.pages_manager import PagesManager
print(json.dumps({"steps": sorted(steps), "loaded": sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules),
                  "frozen": gc.get_freeze_count(), "pages_folder_mode": PagesManager.uses_pages_directory,
                  "first_element_checked": delta_generator._use_warning_has_been_displayed}))
"""


def run_warm_up(tmp_path: Path, **env: str) -> tuple[dict, str]:
    loaded = ("altair", "pandas", "pyarrow", "sqlalchemy", *KEPT_LAZY)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT), json.dumps(loaded)], cwd=ROOT, capture_output=True, text=True,
        timeout=300, check=True, env={**os.environ, "RAG_EVAL_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", **env})
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def test_page_imports_are_the_module_level_ones() -> None:
    names = page_imports(dashboard_scripts(ROOT))
    assert {"streamlit", "pandas", "rag_eval.ui.charts", "rag_eval.ui.data"} <= set(names)
    assert "__future__" not in names
    # pages/batch.py imports the engine inside a function, on purpose: not warmed
    assert "rag_eval.runs.engine" not in names


def test_import_modules_skips_names_that_are_not_modules() -> None:
    assert import_modules(["rag_eval.ui.constants", "rag_eval.ui.constants.PAGE_BATCH", "no_such_module_here"]) == 1


def test_warm_up_loads_what_the_pages_need_and_nothing_they_keep_lazy(tmp_path: Path) -> None:
    report, log = run_warm_up(tmp_path)
    assert report["steps"] == ["first chart", "first element", "first table", "heap frozen", "navigation mode",
                               "newest run", "page imports", "run store"]
    assert report["first_element_checked"]  # Streamlit's one-off REPL check is not left to the first visit
    assert {"altair", "pandas", "pyarrow", "sqlalchemy"} <= set(report["loaded"])
    # Streamlit itself imports plotly's figure classes when plotly is installed (its theme);
    # no Plotly figure module of ours, nor plotly's subplots or offline bundle, is loaded
    assert not set(report["loaded"]) & set(KEPT_LAZY)
    assert "dashboard warm-up: page imports" in log
    assert (tmp_path / "runs.sqlite").exists()  # the run store was opened where the pages will read it
    assert report["frozen"] > 100_000  # the imports are out of the collector's view
    assert report["pages_folder_mode"] is False  # the first visit runs dashboard.py's navigation, once


def test_a_failing_step_is_skipped_by_name_without_its_message(tmp_path: Path) -> None:
    """An unreachable run store must not stop the server, nor put its URL (and password) in the log."""
    password = "warm-up-pass-not-real-77"
    report, log = run_warm_up(tmp_path, RAG_EVAL_DB_URL=f"postgresql+psycopg://someone:{password}@127.0.0.1:1/nowhere")
    assert "run store" not in report["steps"] and "page imports" in report["steps"]
    assert "newest run" not in report["steps"]
    assert "run store skipped" in log
    assert password not in log and "127.0.0.1:1" not in log


def test_streamlit_run_app_serves_the_dashboard_through_the_warm_up() -> None:
    """``streamlit run app.py`` (here and on a Hugging Face Space) finds the st.App in app.py and
    runs dashboard.py under it; the browser tests drive that server."""
    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(ROOT / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app"
    assert 'st.App("dashboard.py"' in (ROOT / "app.py").read_text(encoding="utf-8")


PREPARE_PROBE = """
import json, threading
from rag_eval.ui import data, warm_up
builder = warm_up.prepare_in_background()  # what app.py starts when the server starts
visitors = []
def visit():
    visitors.append(data.ensure_demo())  # eight visitors arriving together, each opening Ask
threads = [threading.Thread(target=visit) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
builder.join()
from rag_eval.encoders import static
from rag_eval.rag.store import lease, list_collections
with lease():
    names = [c.name for c in list_collections()]
print(json.dumps({"added": [r.documents_added for r in visitors], "collections": names, "demo": data.DEMO_COLLECTION,
                  "encoder": static._layer is not None}))
"""


def test_the_judge_and_the_demo_collection_are_prepared_once_before_visitors(tmp_path: Path) -> None:
    """Issue 33: the first Ask on a fresh server built the demo collection (27 s) and eight
    visitors arriving together each waited. The server prepares it (and the local judge's
    encoder) in a background thread; visitors who come meanwhile wait for that one build,
    and none ingests the corpus again."""
    result = subprocess.run(
        [sys.executable, "-c", PREPARE_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=1800, check=True,
        env={**os.environ, "RAG_EVAL_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["demo"] in report["collections"]
    # the corpus was ingested once, by the server's build or by the first visitor it let in
    assert sum(1 for added in report["added"] if added) <= 1 and len(report["added"]) == 8
    assert report["encoder"]  # the judge's encoder (local:2.4.0: the embedding layer) loaded by the server


def test_a_public_deployment_prepares_before_it_listens_and_a_developer_server_after(monkeypatch) -> None:
    """Issue 33 item 10: on a Space (or RAG_EVAL_DEPLOYMENT=public) the first visitor must not
    wait for the demo collection, so the server builds it before it listens; a developer's
    server listens at once and builds it in the background; RAG_EVAL_PREPARE overrides both."""
    from rag_eval.ui import warm_up

    for name in ("SPACE_ID", "RAG_EVAL_DEPLOYMENT", "RAG_EVAL_PREPARE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert warm_up.prepare_mode() == "background"
    monkeypatch.setenv("SPACE_ID", "someone/rag-eval")
    assert warm_up.prepare_mode() == "before"
    monkeypatch.delenv("SPACE_ID")
    monkeypatch.setenv("RAG_EVAL_DEPLOYMENT", "public")
    assert warm_up.prepare_mode() == "before"
    monkeypatch.setenv("RAG_EVAL_PREPARE", "off")
    assert warm_up.prepare_mode() == "off"
    monkeypatch.setenv("RAG_EVAL_PREPARE", "sometimes")  # unknown: the default, with a warning
    assert warm_up.prepare_mode() == "before"

    calls: list[str] = []
    monkeypatch.setattr(warm_up, "prepare", lambda steps=(): calls.append("now") or {})
    monkeypatch.setattr(warm_up, "prepare_in_background", lambda: calls.append("thread"))
    for mode, expected in (("before", ["now"]), ("background", ["thread"]), ("off", [])):
        calls.clear()
        monkeypatch.setenv("RAG_EVAL_PREPARE", mode)
        warm_up.prepare_at_start()
        assert calls == expected, mode
