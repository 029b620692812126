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
from collections.abc import Callable, Iterator
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
        self.events: list[dict] = []  # the events of KEPT_EVENTS received so far, in order

    # Events kept for the caller (the browser's console, page errors, downloads); every
    # other event a domain sends while a call waits for its reply is dropped.
    KEPT_EVENTS = frozenset({"Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded",
                             "Page.downloadWillBegin", "Page.downloadProgress",
                             "Browser.downloadWillBegin", "Browser.downloadProgress"})

    def _keep(self, message: dict) -> None:
        if message.get("method") in self.KEPT_EVENTS:
            self.events.append(message)

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
            self._keep(reply)

    def drain(self) -> list[dict]:
        """Read the events waiting on the socket (kept ones join :attr:`events`); returns
        :attr:`events`."""
        while True:
            try:
                self._keep(json.loads(self._ws.recv(timeout=0.05)))
            except TimeoutError:
                return self.events

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


@contextmanager
def chromium_tabs(count: int, start_timeout_s: float = 60.0) -> Iterator[list[DevTools]]:
    """One fresh headless Chromium with ``count`` tabs, a DevTools client on each: to the
    server, each tab is a visitor of its own (its own websocket, its own Streamlit session),
    at a fraction of the memory of ``count`` browsers. None of the tabs is throttled as a
    background tab, and each gets focus and blur as the front one would."""
    binary = find_chromium()
    if binary is None:
        raise RuntimeError("no chromium binary found (install Debian's 'chromium' package)")
    with tempfile.TemporaryDirectory(prefix="rag-eval-chromium-", ignore_cleanup_errors=True) as profile:
        args = _chromium_args(binary, profile)
        args[1:1] = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                     "--disable-backgrounding-occluded-windows"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tabs: list[DevTools] = []
        try:
            port = _devtools_port(profile, proc, timeout_s=start_timeout_s)
            for _ in range(count):
                request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
                with urllib.request.urlopen(request, timeout=20) as resp:
                    tabs.append(DevTools(json.load(resp)["webSocketDebuggerUrl"]))
                tabs[-1].call("Emulation.setFocusEmulationEnabled", enabled=True)
            yield tabs
        finally:
            for tab in tabs:
                tab.close()
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
        """Wait until Streamlit has no script running (no 'Running…' status) for ``quiet_s``,
        then for its widgets to mount (see ``MOUNTING_JS``; at most ``MOUNT_WAIT_S`` more)."""
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
                with contextlib.suppress(TimeoutError):
                    self.wait_for(f"!({MOUNTING_JS})", min(MOUNT_WAIT_S, max(deadline - now, 0.5)), interval_s=0.1)
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

    # How long a click or typing waits for its element. Streamlit loads some widgets' code on
    # first use, so a widget can mount a moment after the script has ended and the text around
    # it is shown; a person would wait for it too.
    FIND_TIMEOUT_S = 60.0

    def _find_and(self, expression: str) -> bool:
        """Poll ``expression`` (which acts on the element and returns true once it is found)."""
        try:
            return bool(self.wait_for(expression, self.FIND_TIMEOUT_S))
        except TimeoutError:
            return False

    def type_into(self, selector: str, text: str) -> None:
        """Replace the value of the input matching ``selector`` as a user typing would."""
        if not self._find_and(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                              "if (!e) return false; e.focus(); e.select(); return true; })()"):
            raise LookupError(f"no element {selector}")
        self.tools.call("Input.insertText", text=text)

    def click_button(self, label: str) -> None:
        """Click the first button whose text is ``label``."""
        self._click("button", label, "button")

    def click_tab(self, label: str) -> None:
        """Click the tab (``st.tabs``) whose text is ``label``."""
        self._click("[data-testid=stTab]", label, "tab")

    def _click(self, selector: str, label: str, kind: str) -> None:
        if not self._find_and(
                f"(() => {{ const b = Array.from(document.querySelectorAll({json.dumps(selector)}))"
                f".find(b => b.innerText.trim() === {json.dumps(label)}); "
                "if (!b) return false; b.click(); return true; })()"):
            raise LookupError(f"no {kind} '{label}'")

    def watch_console(self) -> None:
        """Record the page's console from now on (``console.*`` calls, uncaught exceptions and
        the browser's own log entries): read them with :meth:`console_lines`."""
        self.tools.call("Runtime.enable")
        self.tools.call("Log.enable")

    def console_lines(self) -> list[str]:
        """What the page wrote to its console since :meth:`watch_console`, one line each:
        ``level: text`` (a ``console.warn`` of Vega reads ``warning: WARN …``)."""
        lines = []
        for event in self.tools.drain():
            params = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled":
                args = params.get("args", [])
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in args)
                lines.append(f"{params.get('type', 'log')}: {text}")
            elif event["method"] == "Log.entryAdded":
                entry = params.get("entry", {})
                lines.append(f"{entry.get('level', 'info')}: {entry.get('text', '')}")
            elif event["method"] == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                lines.append(f"exception: {details.get('exception', {}).get('description') or details.get('text', '')}")
        return lines

    def allow_downloads(self, folder: Path) -> None:
        """Save what the page downloads (a ``st.download_button``) into ``folder``, as a
        person's browser would (headless Chromium refuses downloads by default)."""
        folder.mkdir(parents=True, exist_ok=True)
        try:
            self.tools.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(folder),
                            eventsEnabled=True)
        except RuntimeError:  # an older Chromium: the page-level call
            self.tools.call("Page.setDownloadBehavior", behavior="allow", downloadPath=str(folder))

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
# True while an element's code is still loading: Streamlit loads a widget's code on first use and
# shows a skeleton in its place until then, on a busy machine for a second or more after the
# script has ended (seen: every input of Settings a skeleton for 0.7 s, the text around them shown).
MOUNTING_JS = "!!document.querySelector('[data-testid=stMain] [data-testid=stSkeleton], [data-testid=stSidebar] [data-testid=stSkeleton]')"
MOUNT_WAIT_S = 15.0  # bounded: a skeleton a page kept for good would cost each wait this much, never fail it
RUNNING_JS = ("(() => { const a = document.querySelector('[data-testid=stApp]'); "
              "return !a || !['notRunning', 'compilationError']"
              ".includes(a.getAttribute('data-test-script-state')); })()")
# Number of Vega-Lite charts Vega has drawn on the page.
CHARTS_DRAWN_JS = f"document.querySelectorAll('{CHART_DRAWN}').length"
# True once the page has charts and Vega has drawn every one of them. The script finishing
# does not mean that: each chart is embedded asynchronously after its element arrives, so
# a page read right after ``idle`` can hold three drawn trend panels and a fourth still empty.
ALL_CHARTS_DRAWN_JS = ("(() => { const c = document.querySelectorAll('[data-testid=stVegaLiteChart]'); "
                       "return c.length > 0 && Array.from(c).every(e => e.querySelector('svg, canvas') "
                       "&& e.querySelector('svg path, canvas')); })()")
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


SETTLE_S = 10.0  # how long a widget that mounted empty may take to show its value


def selectbox_value(session: BrowserSession, label: str) -> str:
    """What the select box labelled ``label`` shows as chosen (the text of its combo box)."""
    # Waited for: Streamlit can mount a widget about a second after the script ends and the text
    # around it is shown (its code loads on first use), empty at first and with its value a
    # moment later (seen on a busy machine). An empty box is returned only once it stays so.
    try:
        found = session.wait_for(f"(() => {{ const w = {widget_js('stSelectbox', label)}; if (!w) return null; "
                                 "const v = w.querySelector('input[role=combobox]'); return v && v.value; })()",
                                 SETTLE_S)
    except TimeoutError:
        return ""
    return str(found).strip()


# What a visitor can type into and press, for a walk over a page (the egress test): the
# visible, enabled text inputs and text areas of the page and its sidebar (not a select box's
# search box, a number, a file picker or a table's cell editor), and its visible, enabled
# buttons and tabs (not a select box's opener, a file picker's "Browse files", a table's
# toolbar, a number's steppers, a multiselect's chips, a help icon, a code block's copy button
# or the sidebar's collapse control: none of them sends anything anywhere).
_IN_APP = "[data-testid=stMain] {0}, [data-testid=stSidebar] {0}"
TEXT_FIELDS_JS = (
    f"Array.from(document.querySelectorAll('{_IN_APP.format('input')}, {_IN_APP.format('textarea')}')).filter(e => "
    "(e.tagName === 'TEXTAREA' || ['text', 'password', 'search', 'url', 'email'].includes(e.type)) "
    "&& e.getAttribute('role') !== 'combobox' && !e.disabled && !e.readOnly && e.getClientRects().length > 0 "
    "&& !e.closest('[data-testid=stFileUploader], [data-testid=stDataFrame], [data-testid=stNumberInput]'))")
BUTTONS_JS = (
    f"Array.from(document.querySelectorAll('{_IN_APP.format('button')}, {_IN_APP.format('[data-testid=stTab]')}'))"
    ".filter(b => !b.disabled && b.getAttribute('aria-disabled') !== 'true' && b.getClientRects().length > 0 "
    "&& b.getAttribute('aria-haspopup') !== 'listbox' && !/^(Help( for |$)|Copy to clipboard|Copied)/"
    ".test(b.getAttribute('aria-label') || b.innerText || '') "
    "&& !b.closest('[data-testid=stFileUploader], [data-testid=stElementToolbar], [data-testid=stDataFrame], "
    "[data-testid=stNumberInput], [data-testid=stMultiSelect], "
    "[data-testid=stSidebarHeader], [data-testid=stSidebarCollapseButton]'))")
_LABEL_JS = "(e.getAttribute('aria-label') || e.innerText || e.placeholder || e.dataset.testid || e.tagName).trim()"
FIELD_INFO_JS = f"{TEXT_FIELDS_JS}.map(e => ({{label: {_LABEL_JS}, value: e.value}}))"
BUTTON_INFO_JS = (f"{BUTTONS_JS}.map(e => ({{label: {_LABEL_JS}, "
                  "download: !!e.closest('[data-testid=stDownloadButton]')}))")
# Set the value of text field %d as React sees a person's typing (the native setter, then an
# input event); committed by the blur that follows in a separate call.
SET_FIELD_JS = ("(() => {{ const e = {fields}[{index}]; if (!e) return false; e.scrollIntoView({{block: 'center'}}); "
                "e.focus(); const proto = e.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype; "
                "Object.getOwnPropertyDescriptor(proto, 'value').set.call(e, {text}); "
                "e.dispatchEvent(new Event('input', {{bubbles: true}})); return true; }})()")
OPEN_EXPANDERS_JS = ("Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stExpander] details'))"
                     ".filter(d => !d.open).map(d => { d.querySelector('summary').click(); return 1; }).length")


def as_list(value: object) -> list:
    """A JavaScript array the page returned, as a list (empty for null or anything else)."""
    return list(value) if isinstance(value, list) else []


def _keyed(infos: list[dict]) -> list[tuple[str, dict]]:
    """Each widget with a key that stays the same across reruns: its label and the number of
    widgets with the same label before it (``Save as#1``)."""
    seen: dict[str, int] = {}
    keyed = []
    for info in infos:
        label = str(info.get("label") or "")
        keyed.append((f"{label}#{seen.get(label, 0)}", info))
        seen[label] = seen.get(label, 0) + 1
    return keyed


def settle(session: BrowserSession, timeout_s: float = 60.0) -> None:
    """Wait for the script to finish after an action; a page that keeps refreshing (a running
    job's progress) is left as it is after ``timeout_s``."""
    time.sleep(0.2)
    with contextlib.suppress(TimeoutError):
        session.idle(timeout_s, quiet_s=0.5)


def fill_text_fields(session: BrowserSession, text: str | Callable[[str], str], limit: int = 20,
                     timeout_s: float = 60.0) -> list[str]:
    """Type ``text`` (or ``text(label)``, by the field's label) into every visible text field
    (one at a time, committed by a blur, so fields that appear on the rerun are filled too);
    the keys of the fields filled."""
    value_for = text if callable(text) else (lambda _label: text)
    filled: list[str] = []
    for _ in range(limit):
        todo = [(i, key, value_for(str(info.get("label")))) for i, (key, info)
                in enumerate(_keyed(as_list(session.evaluate(FIELD_INFO_JS))))
                if info.get("value") != value_for(str(info.get("label"))) and key not in filled]
        if not todo:
            break
        index, key, value = todo[0]
        filled.append(key)
        if session.evaluate(SET_FIELD_JS.format(fields=TEXT_FIELDS_JS, index=index, text=json.dumps(value))):
            time.sleep(0.1)  # React applies the input before the blur commits it
            session.evaluate("document.activeElement && document.activeElement.blur()")
            settle(session, timeout_s)
    return filled


@dataclass
class Walk:
    """What a walk over one page did: the text fields filled, the buttons pressed (download
    buttons among them), the buttons that took the browser to another page."""

    filled: list[str]
    pressed: list[str]
    downloads: list[str]
    navigated: list[str]


def walk_page(session: BrowserSession, url: str, heading: str, text: str | Callable[[str], str], max_presses: int = 12,
              timeout_s: float = 120.0, press_last: tuple[str, ...] = ("Cancel",), linger_s: float = 10.0) -> Walk:
    """A visitor on ``url``: every expander opened, ``text`` typed into every text field (see
    :func:`fill_text_fields`), then
    every button and tab pressed once (fields filled again before each press: a rerun may have
    emptied or added some), at most ``max_presses``. Download buttons first (a button further
    down may lead away), then the page's order; a button labelled ``press_last`` (a run's
    Cancel) only when nothing else is left and it is still there after ``linger_s`` (a visitor
    waits for a short run; what a finished run offers comes first). A button that leads to
    another page is followed back (the browser's Back: the session keeps its state). Returns
    what was done."""
    session.goto(url, heading, timeout_s)
    walk = Walk([], [], [], [])
    path = str(session.evaluate("location.pathname"))
    lingered = False
    for _ in range(max_presses):
        if session.evaluate(OPEN_EXPANDERS_JS):
            settle(session, timeout_s)
        walk.filled += [k for k in fill_text_fields(session, text, timeout_s=timeout_s) if k not in walk.filled]
        buttons = _keyed(as_list(session.evaluate(BUTTON_INFO_JS)))
        todo = sorted(((i, key, info) for i, (key, info) in enumerate(buttons) if key not in walk.pressed),
                      key=lambda entry: (str(entry[2].get("label")) in press_last, not entry[2].get("download")))
        if not todo:
            break
        last_gone = f"!{BUTTON_INFO_JS}.some(b => {json.dumps(list(press_last))}.includes(b.label))"
        if str(todo[0][2].get("label")) in press_last and not lingered:
            lingered = True
            with contextlib.suppress(TimeoutError):
                session.wait_for(last_gone, linger_s, interval_s=1.0)
            settle(session, timeout_s)
            continue
        index, key, info = todo[0]
        walk.pressed.append(key)
        if info.get("download"):
            walk.downloads.append(key)
        session.evaluate(f"(() => {{ const b = {BUTTONS_JS}[{index}]; if (b) {{ b.scrollIntoView({{block: 'center'}}); "
                         "b.click(); } })()")
        settle(session, timeout_s)
        if str(info.get("label")) in press_last:  # a cancelled run ends after its current items: what it leaves
            with contextlib.suppress(TimeoutError):
                session.wait_for(last_gone, timeout_s, interval_s=1.0)
            settle(session, timeout_s)
        if str(session.evaluate("location.pathname")) != path:
            walk.navigated.append(key)
            session.tools.call("Runtime.evaluate", expression="history.back()")
            try:
                session.wait_for(f"location.pathname === {json.dumps(path)} && {HEADING_JS % json.dumps(heading)}",
                                 timeout_s=30)
                settle(session, timeout_s)
            except TimeoutError:
                session.goto(url, heading, timeout_s)
    return walk


# What a page's layout does wrong, in words (empty when nothing): the main area scrolls
# sideways; an element reaches past the right edge of its column (or of the main block), or
# holds content wider than its own box (an unbroken word, a wide fixed layout; not a table,
# whose grid scrolls inside its box); a chart drawn past its column. Hidden elements (a closed
# expander, another tab) are skipped.
LAYOUT_PROBLEMS_JS = """(() => {
  const problems = [];
  const main = document.querySelector('[data-testid=stMain]');
  if (main && main.scrollWidth > main.clientWidth + 1)
    problems.push('the page scrolls sideways by ' + (main.scrollWidth - main.clientWidth) + ' px');
  const edge = box => box.getBoundingClientRect().right - parseFloat(getComputedStyle(box).paddingRight || '0');
  const column = e => e.parentElement.closest('[data-testid=stColumn], [data-testid=stMainBlockContainer]');
  const name = e => { const inner = e.querySelector('[data-testid]');
    return (inner ? inner.dataset.testid : 'element') + ' "' + e.innerText.trim().slice(0, 40) + '"'; };
  document.querySelectorAll('[data-testid=stMain] [data-testid=stElementContainer]').forEach(e => {
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height) return;
    const box = column(e);
    if (box && r.right > edge(box) + 1) problems.push(name(e) + ' ends ' + Math.round(r.right - edge(box)) + ' px past its column');
    if (e.scrollWidth > e.clientWidth + 1 && !e.querySelector('[data-testid=stDataFrame]'))  // a grid scrolls itself
      problems.push(name(e) + ' holds content ' + (e.scrollWidth - e.clientWidth) + ' px wider than its box');
  });
  const charts = '[data-testid=stMain] [data-testid=stVegaLiteChart] ';
  document.querySelectorAll(charts + 'svg, ' + charts + 'canvas').forEach(c => {
    const r = c.getBoundingClientRect(); const box = column(c);
    if (r.width && box && r.right > edge(box) + 1)
      problems.push('a chart ends ' + Math.round(r.right - edge(box)) + ' px past its column');
  });
  return problems;
})()"""
