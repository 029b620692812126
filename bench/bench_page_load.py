"""Dashboard time to interactive, measured on this machine.

1. Server: ``streamlit run app.py`` on loopback with a fresh RAG_EVAL_HOME; time from
   process launch until ``/_stcore/health`` answers.
2. Browser: headless Chromium (DevTools protocol) opens the main page; time from
   navigation until the main heading is in the DOM and until the overview's last
   section is rendered (= interactive). The first visit is cold (the script's imports
   run in the server for the first time); later visits are warm.
3. AppTest: first run of every page in a fresh AppTest (in-process, no browser).

Prints markdown tables. Usage: ``HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_page_load.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from pathlib import Path

from rag_eval.ui import browser
from rag_eval.ui.constants import ALL_PAGES, APP_TITLE, OVERVIEW_READY_TEXT


def one_server(repeat_warm: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"health": [], "cold_heading": [], "cold_ready": [], "warm_heading": [], "warm_ready": []}
    with tempfile.TemporaryDirectory(prefix="rag-eval-bench-") as home:
        with browser.streamlit_server(Path(home)) as server:
            healthy = browser.wait_healthy(server.url, process=server.process)
            out["health"].append(healthy - server.started)
            for visit in range(1 + repeat_warm):
                load = browser.load_page(server.url, APP_TITLE, OVERVIEW_READY_TEXT)
                if load.ready_s is None or load.heading_s is None:
                    raise SystemExit(f"page never became ready; server log:\n{server.log()[-2000:]}")
                kind = "cold" if visit == 0 else "warm"
                out[f"{kind}_heading"].append(load.heading_s)
                out[f"{kind}_ready"].append(load.ready_s)
    return out


def apptest_pages() -> list[tuple[str, float]]:
    from streamlit.testing.v1 import AppTest

    rows = []
    with tempfile.TemporaryDirectory(prefix="rag-eval-bench-") as home:
        os.environ["RAG_EVAL_HOME"] = home
        app = str(browser.PROJECT_ROOT / "app.py")
        for page in ALL_PAGES:
            at = AppTest.from_file(app, default_timeout=300)
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):  # the model package prints on import
                at.run()
                if page != ALL_PAGES[0]:
                    at.switch_page(page).run()
            elapsed = time.perf_counter() - start
            status = "exception" if at.exception else ("error shown" if at.error else "ok")
            rows.append((page, elapsed, status))
    return rows


def fmt(values: list[float]) -> str:
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh servers to start (cold visits)")
    parser.add_argument("--warm", type=int, default=2, help="warm visits per server")
    args = parser.parse_args()
    if browser.find_chromium() is None:
        raise SystemExit("no chromium binary: install Debian's 'chromium' (make browser-deps)")
    totals: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for key, values in one_server(args.warm).items():
            totals.setdefault(key, []).extend(values)
    cold_tti = [h + r for h, r in zip(totals["health"], totals["cold_ready"])]
    load = os.getloadavg()[0]
    print(f"## Dashboard time to interactive ({args.repeat} fresh servers, {args.warm} warm visits each; seconds)\n")
    print(f"Machine: {os.cpu_count()} cores, load average {load:.1f} at the end of the measurement.\n")
    print("| measure | seconds: median (min, max) |")
    print("|---|---|")
    print(f"| server launch → /_stcore/health ok | {fmt(totals['health'])} |")
    print(f"| cold first visit: navigation → main heading | {fmt(totals['cold_heading'])} |")
    print(f"| cold first visit: navigation → overview fully rendered | {fmt(totals['cold_ready'])} |")
    print(f"| **cold: server launch → interactive (health + render)** | **{fmt(cold_tti)}** |")
    print(f"| warm visit: navigation → main heading | {fmt(totals['warm_heading'])} |")
    print(f"| warm visit: navigation → overview fully rendered | {fmt(totals['warm_ready'])} |")
    print("\n## AppTest first run per page (fresh AppTest each, one process; seconds)\n")
    print("| page | first run | result |")
    print("|---|---|---|")
    for page, elapsed, status in apptest_pages():
        print(f"| {page} | {elapsed:.2f} | {status} |")


if __name__ == "__main__":
    main()
