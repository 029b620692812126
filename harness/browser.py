"""Drive the real dashboard: ``streamlit run app.py`` on loopback and headless Chromium.

Shared by the browser test (``tests/ui/test_browser.py``) and the time-to-interactive
benchmark (``bench/bench_page_load.py``) so both measure and check the same thing:
the server a user starts, loaded by a real browser engine.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Markers of a failed page in Streamlit's DOM: an uncaught exception block or an st.error alert.
ERROR_MARKERS = ('data-testid="stException"', 'class="stException', 'data-testid="stAlertContentError"')


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome binary (``CHROMIUM`` env overrides), or None."""
    env = os.environ.get("CHROMIUM")
    if env and Path(env).is_file():
        return env
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    started: float  # time.perf_counter() when the process was launched
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def stop_process(proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """Terminate ``proc``, and kill it if it has not exited within ``timeout_s``."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def wait_healthy(url: str, timeout_s: float = 90.0, process: subprocess.Popen | None = None) -> float:
    """Poll ``/_stcore/health`` until it answers ``ok``; returns the perf_counter time."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the streamlit server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200 and resp.read().strip() == b"ok":
                    return time.perf_counter()
        except OSError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"no healthy streamlit server at {url} after {timeout_s:.0f}s")


@contextmanager
def streamlit_server(home: Path, port: int | None = None, extra_env: dict[str, str] | None = None,
                     script: str = "app.py") -> Iterator[Server]:
    """``streamlit run app.py`` (or another ``script``) on 127.0.0.1 with ``RAG_EVAL_HOME=home``;
    stopped on exit. The judge and the demo collection are prepared in the background
    (``RAG_EVAL_PREPARE=background``, unless ``extra_env`` says otherwise): a locked server
    would otherwise build them before it listens, and these servers are timed and tested
    on their pages."""
    port = port or free_port()
    env = {**os.environ, "RAG_EVAL_HOME": str(home), "HF_HUB_OFFLINE": "1", "RAG_EVAL_PREPARE": "background",
           **(extra_env or {})}
    if "OPENAI_API_KEY" not in (extra_env or {}):
        env.pop("OPENAI_API_KEY", None)  # the offline first visit, whatever the caller's shell holds
    log_path = Path(home) / "streamlit.log"
    cmd = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
    ]
    with open(log_path, "wb") as log:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield Server(proc, f"http://127.0.0.1:{port}", started, log_path)
    finally:
        stop_process(proc, timeout_s=15)


@dataclass
class PageLoad:
    """What one headless-Chromium visit saw."""

    ready_s: float | None  # navigation start -> main heading rendered and the script idle
    heading_s: float | None  # navigation start -> main heading in the DOM
    dom: str
    screenshot: Path | None


def _chromium_args(binary: str, profile: str) -> list[str]:
    return [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,1000",
        "--remote-debugging-port=0", "--remote-allow-origins=*", "about:blank",
    ]


def _devtools_port(profile: str, proc: subprocess.Popen, timeout_s: float) -> int:
    marker = Path(profile) / "DevToolsActivePort"
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with code {proc.returncode}")
        if marker.is_file():
            lines = marker.read_text().split()
            if lines:
                return int(lines[0])
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its DevTools port")


class DevTools:
    """The few Chrome DevTools Protocol calls we need, over the page's websocket."""

    def __init__(self, ws_url: str) -> None:
        from websockets.sync.client import connect

        self._open = contextlib.ExitStack()  # websockets 17 wants its connection entered as a context
        self._ws = self._open.enter_context(connect(ws_url, max_size=None, open_timeout=10))
        self._next = 0

    def call(self, method: str, **params: object) -> dict:
        self._next += 1
        msg_id = self._next
        self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self._ws.recv(timeout=60))
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise RuntimeError(f"DevTools {method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression: str) -> object:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def close(self) -> None:
        self._open.close()


# True once the page's h1 heading is rendered / once the text of its last section is shown.
HEADING_JS = "Array.from(document.querySelectorAll('h1')).some(h => h.innerText.includes(%s))"
READY_JS = "(document.querySelector('[data-testid=stMain]') || {innerText: ''}).innerText.includes(%s)"


def load_page(
    url: str, heading: str, ready_text: str, *, screenshot: Path | None = None, timeout_s: float = 120.0, settle_s: float = 0.5
) -> PageLoad:
    """Open ``url`` in headless Chromium and time it: when the ``heading`` h1 appears and
    when the page is ready (``ready_text``, from the page's last section, is shown). Returns the DOM
    and saves a screenshot when asked. Raises RuntimeError without a binary."""
    with chromium_tab() as tools:
        return _visit(tools, url, heading, ready_text, screenshot, timeout_s, settle_s)


@contextmanager
def chromium_tab(start_timeout_s: float = 60.0) -> Iterator[DevTools]:
    """A fresh headless Chromium (new empty profile) and a DevTools client on its tab;
    both closed on exit. Raises RuntimeError without a binary."""
    binary = find_chromium()
    if binary is None:
        raise RuntimeError("no chromium binary found (install Debian's 'chromium' package)")
    with tempfile.TemporaryDirectory(prefix="rag-eval-chromium-", ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen(_chromium_args(binary, profile), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            port = _devtools_port(profile, proc, timeout_s=start_timeout_s)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
                targets = [t for t in json.load(resp) if t.get("type") == "page"]
            tools = DevTools(targets[0]["webSocketDebuggerUrl"])
            try:
                yield tools
            finally:
                tools.close()
        finally:
            stop_process(proc)


def _visit(
    tools: DevTools, url: str, heading: str, ready_text: str, screenshot: Path | None, timeout_s: float, settle_s: float) -> PageLoad:
    quoted = json.dumps(heading)
    start = time.perf_counter()
    tools.call("Page.navigate", url=url)
    heading_s = ready_s = None
    while time.perf_counter() - start < timeout_s:
        if heading_s is None and tools.evaluate(HEADING_JS % quoted):
            heading_s = time.perf_counter() - start
        if heading_s is not None and tools.evaluate(READY_JS % json.dumps(ready_text)):
            ready_s = time.perf_counter() - start
            break
        time.sleep(0.05)
    time.sleep(settle_s)  # let the last frame paint before the screenshot
    dom = str(tools.evaluate("document.documentElement.outerHTML") or "")
    if screenshot is not None:
        data = tools.call("Page.captureScreenshot", format="png")["data"]
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.write_bytes(base64.b64decode(data))
    return PageLoad(ready_s, heading_s, dom, screenshot)


# True once the page's main area shows a table or a chart (its first content at size).
# A chart counts once Vega has drawn it (its SVG or canvas), not when its empty box appears.
CHART_DRAWN = "[data-testid=stVegaLiteChart] svg, [data-testid=stVegaLiteChart] canvas"
CONTENT_JS = ("!!(document.querySelector('[data-testid=stMain]') || document.body)"
              f".querySelector('[data-testid=stDataFrame], [data-testid=stTable], {CHART_DRAWN}')")
# A page without a table or chart (the Overview): its first figures count as its content.
METRIC_CONTENT_JS = ("!!(document.querySelector('[data-testid=stMain]') || document.body)"
                     ".querySelector('[data-testid=stMetric]')")


@dataclass
class PageTiming:
    """One visit, seconds from navigation: main heading in the DOM, first table or chart
    rendered (first content), the script finished (nothing left running); None: never."""

    heading_s: float | None
    content_s: float | None
    done_s: float | None
    errors: list[str]


def time_visit(tools: DevTools, url: str, heading: str, timeout_s: float = 180.0,
               content_js: str = CONTENT_JS) -> PageTiming:
    """Navigate the tab to ``url`` and time the heading, the first content and the end
    of the script run (the first of three polls in a row with the script not running,
    after the heading)."""
    quoted = json.dumps(heading)
    start = time.perf_counter()
    tools.call("Page.navigate", url=url)
    heading_s = content_s = done_s = None
    idle_polls = 0
    while time.perf_counter() - start < timeout_s:
        try:
            if heading_s is None and tools.evaluate(HEADING_JS % quoted):
                heading_s = time.perf_counter() - start
            if content_s is None and tools.evaluate(content_js):
                content_s = time.perf_counter() - start
            if heading_s is not None:
                idle_polls = 0 if tools.evaluate(RUNNING_JS) else idle_polls + 1
                if idle_polls == 1:
                    done_s = time.perf_counter() - start
                # done, and the first table or chart drawn (the browser loads their code lazily);
                # a page without any gives up 15 s after its script finished
                if idle_polls >= 3 and (content_s is not None or time.perf_counter() - start - (done_s or 0) > 15):
                    break
        except RuntimeError:  # the page is navigating: its context is gone for a moment
            pass
        time.sleep(0.05)
    dom = str(tools.evaluate("document.documentElement.outerHTML") or "")
    return PageTiming(heading_s, content_s, done_s if idle_polls >= 3 else None, page_errors(dom))


def page_errors(dom: str) -> list[str]:
    """The error markers found in a dumped DOM (empty when the page rendered cleanly)."""
    return [m for m in ERROR_MARKERS if m in dom]


class BrowserSession:
    """One headless Chromium kept open across several visits (a reload keeps the URL),
    driven over the DevTools protocol: navigate, poll a JavaScript condition, type into
    an input, click, reload, screenshot. Use as a context manager."""

    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        self.width, self.height = width, height
        self._profile: tempfile.TemporaryDirectory | None = None
        self._proc: subprocess.Popen | None = None
        self._tools: DevTools | None = None

    def __enter__(self) -> BrowserSession:
        binary = find_chromium()
        if binary is None:
            raise RuntimeError("no chromium binary found (install Debian's 'chromium' package)")
        self._profile = tempfile.TemporaryDirectory(prefix="rag-eval-chromium-", ignore_cleanup_errors=True)
        args = [a if not a.startswith("--window-size=") else f"--window-size={self.width},{self.height}"
                for a in _chromium_args(binary, self._profile.name)]
        self._proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = _devtools_port(self._profile.name, self._proc, timeout_s=60)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=20) as resp:
            targets = [t for t in json.load(resp) if t.get("type") == "page"]
        self._tools = DevTools(targets[0]["webSocketDebuggerUrl"])
        self._tools.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                         deviceScaleFactor=1, mobile=False)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._tools is not None:
            self._tools.close()
        if self._proc is not None:
            stop_process(self._proc)
        if self._profile is not None:
            self._profile.cleanup()

    @property
    def tools(self) -> DevTools:
        assert self._tools is not None, "use BrowserSession as a context manager"
        return self._tools

    def evaluate(self, expression: str) -> object:
        return self.tools.evaluate(expression)

    def wait_for(self, expression: str, timeout_s: float = 120.0, interval_s: float = 0.25) -> object:
        """Poll ``expression`` until it is truthy; returns its value (raises TimeoutError)."""
        deadline = time.perf_counter() + timeout_s
        while time.perf_counter() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError:  # the page is navigating: its context is gone for a moment
                value = None
            if value:
                return value
            time.sleep(interval_s)
        raise TimeoutError(f"still false after {timeout_s:.0f}s: {expression[:120]}")

    def idle(self, timeout_s: float = 120.0, quiet_s: float = 1.5) -> None:
        """Wait until Streamlit has no script running (no 'Running…' status) for ``quiet_s``."""
        deadline = time.perf_counter() + timeout_s
        quiet_since: float | None = None
        while time.perf_counter() < deadline:
            running = self.evaluate(RUNNING_JS)
            now = time.perf_counter()
            if running:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= quiet_s:
                return
            time.sleep(0.2)
        raise TimeoutError("the Streamlit script kept running")

    def goto(self, url: str, heading: str, timeout_s: float = 180.0) -> None:
        """Open ``url`` and wait for the page's h1 ``heading`` and for the script to finish."""
        self.tools.call("Page.navigate", url=url)
        self.wait_for(HEADING_JS % json.dumps(heading), timeout_s)
        self.idle(timeout_s)

    def reload(self, heading: str, timeout_s: float = 180.0) -> None:
        self.tools.call("Page.reload", ignoreCache=True)
        time.sleep(0.5)
        self.wait_for(HEADING_JS % json.dumps(heading), timeout_s)
        self.idle(timeout_s)

    def main_text(self) -> str:
        return str(self.evaluate("(document.querySelector('[data-testid=stMain]') || {innerText: ''}).innerText") or "")

    def type_into(self, selector: str, text: str) -> None:
        """Replace the value of the input matching ``selector`` as a user typing would."""
        found = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                              "if (!e) return false; e.focus(); e.select(); return true; })()")
        if not found:
            raise LookupError(f"no element {selector}")
        self.tools.call("Input.insertText", text=text)

    def click_button(self, label: str) -> None:
        """Click the first button whose text is ``label``."""
        self._click("button", label, "button")

    def click_tab(self, label: str) -> None:
        """Click the tab (``st.tabs``) whose text is ``label``."""
        self._click("[data-testid=stTab]", label, "tab")

    def _click(self, selector: str, label: str, kind: str) -> None:
        clicked = self.evaluate(
            f"(() => {{ const b = Array.from(document.querySelectorAll({json.dumps(selector)}))"
            f".find(b => b.innerText.trim() === {json.dumps(label)}); "
            "if (!b) return false; b.click(); return true; })()")
        if not clicked:
            raise LookupError(f"no {kind} '{label}'")

    def screenshot(self, path: Path, full_height: bool = False, max_height: int = 2400) -> Path:
        """A PNG of the viewport, or of the page's whole height (capped at ``max_height``):
        Streamlit scrolls inside its own container, so the window is made that tall first."""
        resized = False
        if full_height:
            measured = self.evaluate(
                "(() => { const m = document.querySelector('[data-testid=stMain]'); "
                "return m ? m.scrollHeight : document.body.scrollHeight; })()")
            height = int(measured) if isinstance(measured, (int, float)) else self.height
            height = max(self.height, min(max_height, height))
            if height > self.height:
                self.tools.call("Emulation.setDeviceMetricsOverride", width=self.width, height=height,
                                deviceScaleFactor=1, mobile=False)
                resized = True
                time.sleep(1.0)
                self.idle(60)  # charts re-layout to the new size
        try:
            data = self.tools.call("Page.captureScreenshot", format="png")["data"]
        finally:
            if resized:
                self.tools.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                                deviceScaleFactor=1, mobile=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


# True until Streamlit's app root says its script is not running (``data-test-script-state``
# is "initial" before the first run, "running" / "rerunRequested" while one is under way).
RUNNING_JS = ("(() => { const a = document.querySelector('[data-testid=stApp]'); "
              "return !a || !['notRunning', 'compilationError']"
              ".includes(a.getAttribute('data-test-script-state')); })()")
# Number of Vega-Lite charts Vega has drawn on the page.
CHARTS_DRAWN_JS = f"document.querySelectorAll('{CHART_DRAWN}').length"
# For each line Vega drew on the page (one path per series and panel, in SVG), the value of
# its field titled %s (json-quoted), read from the path's ARIA label ("field: value; …").
LINE_SERIES_JS = ("Array.from(document.querySelectorAll('[data-testid=stVegaLiteChart] "
                  "path[aria-roledescription=\"line mark\"]')).map(p => { const k = %s + ': '; "
                  "const f = (p.getAttribute('aria-label') || '').split('; ').find(x => x.startsWith(k)); "
                  "return f ? f.slice(k.length) : null; }).filter(n => n !== null)")
# Metric labels and values whose text is cut off (ellipsis: content wider than the box).
TRUNCATED_METRICS_JS = (
    "Array.from(document.querySelectorAll('[data-testid=stMetricLabel], [data-testid=stMetricValue]'))"
    ".flatMap(e => [e, ...e.querySelectorAll('*')])"
    ".filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== 'visible')"
    ".map(e => e.innerText)"
)


def _element_js(selector_js: str) -> str:
    """JavaScript that finds one element (``selector_js`` is an expression) and returns the
    centre of its first box (an inline element broken over lines has several), scrolled into
    view first; null when there is none."""
    return (f"(() => {{ const e = {selector_js}; if (!e) return null; e.scrollIntoView({{block: 'center'}}); "
            "const r = e.getClientRects()[0] || e.getBoundingClientRect(); "
            "return [r.x + r.width / 2, r.y + r.height / 2]; })()")


def widget_js(testid: str, label: str) -> str:
    """An expression for the Streamlit widget (``data-testid``) whose label reads ``label``."""
    return (f"Array.from(document.querySelectorAll('[data-testid={testid}]')).find(w => "
            f"(w.querySelector('[data-testid=stWidgetLabel]') || {{innerText: ''}}).innerText.trim() === {json.dumps(label)})")


def mouse_click(session: BrowserSession, selector_js: str, timeout_s: float = 60.0) -> None:
    """A real mouse click (pressed and released at the element's centre), as a person's:
    a select box's list opens on pointer events, not on a script's ``click()``."""
    point = session.wait_for(_element_js(selector_js), timeout_s)
    x, y = point  # type: ignore[misc]
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        session.tools.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def choose(session: BrowserSession, label: str, option_prefix: str, timeout_s: float = 60.0) -> None:
    """Pick the option starting with ``option_prefix`` in the select box labelled ``label``."""
    mouse_click(session, f"({widget_js('stSelectbox', label)} || {{querySelector: () => null}})"
                         ".querySelector('button[aria-haspopup=listbox]')", timeout_s)
    mouse_click(session, "Array.from(document.querySelectorAll('[role=option]'))"
                         f".find(o => o.innerText.trim().startsWith({json.dumps(option_prefix)}))", timeout_s)


def selectbox_value(session: BrowserSession, label: str) -> str:
    """What the select box labelled ``label`` shows as chosen (the text of its combo box)."""
    value = session.evaluate(f"(() => {{ const w = {widget_js('stSelectbox', label)}; if (!w) return null; "
                             "const v = w.querySelector('input[role=combobox]'); return v ? v.value : null; })()")
    return str(value or "").strip()
