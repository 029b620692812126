"""The Streamlit internals the dashboard relies on (rag_eval/ui/streamlit_compat.py) are
where that module expects them in the installed Streamlit. After an upgrade that moves
one, this fails naming each, so the pin is raised knowingly; the dashboard itself only
loses the optimisation (logged) and keeps serving pages."""

from __future__ import annotations

import ast
from pathlib import Path

from rag_eval.ui import streamlit_compat
from rag_eval.ui.streamlit_compat import (
    INDEX_HTML,
    JS_DIR,
    MODULE_IMPORT,
    PAGE_SCRIPT,
    TABLE_ELEMENT,
    _pages_manager,
    element_files,
    static_dir,
)

ROOT = Path(__file__).resolve().parents[2]


def moved_internals() -> list[str]:
    """One line per internal of streamlit_compat that the installed Streamlit no longer has
    where that module expects it; empty when all are in place."""
    problems: list[str] = []
    try:
        _pages_manager()
    except (ImportError, AttributeError) as err:
        problems.append(f"streamlit.runtime.pages_manager.PagesManager.uses_pages_directory: {err}")
    checks = (("streamlit.elements.vega_charts", "_convert_altair_to_vega_lite_spec"),
              ("streamlit.delta_generator", "_maybe_print_use_warning"))
    for module_name, name in checks:
        try:
            module = __import__(module_name, fromlist=[name])
        except ImportError as err:
            problems.append(f"{module_name}: {err}")
            continue
        if not callable(getattr(module, name, None)):
            problems.append(f"{module_name}.{name}: gone")
    import streamlit

    if not callable(getattr(streamlit, "App", None)):
        problems.append("streamlit.App (app.py's server with lifespan and middleware): gone")
    static = static_dir()
    try:
        index = (static / INDEX_HTML).read_text(encoding="utf-8")
    except OSError as err:
        problems.append(f"frontend {static / INDEX_HTML}: {err}")
        return problems
    if not PAGE_SCRIPT.search(index):
        problems.append(f"frontend {INDEX_HTML} no longer loads ./{JS_DIR}/*.js")
    for kind in ("js", "css"):
        found = element_files(static, TABLE_ELEMENT, kind)
        if len(found) != 1:
            problems.append(f"frontend {TABLE_ELEMENT}.*.{kind} under {static}: {len(found)} files, expected 1")
        elif kind == "js" and not MODULE_IMPORT.search(found[0].read_text(encoding="utf-8", errors="replace")):
            problems.append(f"frontend {found[0].name} imports no sibling module the way preload.py reads them")
    return problems


def test_every_streamlit_internal_the_dashboard_uses_is_in_place():
    moved = moved_internals()
    assert not moved, "Streamlit moved internals the dashboard uses:\n  " + "\n  ".join(moved)


def test_a_moved_pages_flag_is_logged_and_the_page_goes_on(monkeypatch, caplog):
    from streamlit.runtime import pages_manager

    monkeypatch.delattr(pages_manager.PagesManager, "uses_pages_directory")
    monkeypatch.setattr(streamlit_compat, "_warned", set())
    assert streamlit_compat.leave_legacy_pages_mode() is False
    assert "pages folder flag" in caplog.text
    assert any("uses_pages_directory" in line for line in moved_internals())


def _private_streamlit_uses(path: Path) -> list[str]:
    """``from streamlit… import _name`` and ``streamlit.<private module>`` imports in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "streamlit":
            if node.module != "streamlit" or any(a.name.startswith("_") for a in node.names):
                found.append(f"from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("streamlit.")]
    return found


def test_no_other_module_touches_streamlit_internals():
    """Pages, components and the server import ``streamlit`` (public API) only."""
    files = [*sorted((ROOT / "rag_eval").rglob("*.py")), *sorted((ROOT / "pages").glob("*.py")),
             ROOT / "app.py", ROOT / "dashboard.py"]
    offenders = {str(p.relative_to(ROOT)): uses for p in files
                 if p.name != "streamlit_compat.py" and (uses := _private_streamlit_uses(p))}
    assert offenders == {}
