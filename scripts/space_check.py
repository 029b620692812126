"""Build and start the Hugging Face Space on this machine, the way the platform does.

A Streamlit Space installs ``requirements.txt`` alone (not this package, not the dev
requirements) on the ``python_version`` and ``sdk_version`` of the README front matter,
runs as a non-root user with a fresh home, serves on port 7860 and sees the repository
as files it does not own. This script reproduces that:

1. a virtual environment from ``requirements.txt`` alone on the pinned Python minor
   (``pythonX.Y -m venv``); it is kept under ``$RAG_EVAL_SPACE_CACHE``
   (default ``/var/tmp/rag-eval-space-check``) keyed on the requirements, the Streamlit and
   the Python version, so an unchanged build is reused (``--fresh`` rebuilds it);
2. a read-only copy of the repository (tracked and untracked-but-not-ignored files);
3. a non-root user (``rag-eval-space``, created with ``useradd`` when running as root) with a
   fresh, empty ``HOME`` and ``SPACE_ID`` set, no API key, no ``RAG_EVAL_HOME``;
4. ``streamlit run app.py --server.port 7860 --server.headless true`` (another free port if
   7860 is taken, said so);
5. every page loaded in headless Chromium (DevTools protocol, ``harness.browser``):
   heading rendered, script idle, no exception or error element, no "Traceback";
   then a question asked on the Ask page until its TRACe scores show.

Prints the cold start (server launch to the first interactive page), the time to the
first answer on Ask, the server's peak memory and the disk used. Exit code 0 when every
page passed, 1 on any failure, 0 with a "skipped:" line when Chromium or the pinned
Python is not on this machine (``make browser-deps`` installs Chromium).

Usage: ``make space-check`` or ``.venv/bin/python scripts/space_check.py [--fresh] [--keep]``
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import browser  # noqa: E402  (stdlib only at import; websockets when a tab opens)
from rag_eval.ui.constants import ALL_PAGES, APP_TITLE, OVERVIEW_READY_TEXT  # noqa: E402

SPACE_PORT = 7860
SPACE_USER = "rag-eval-space"
CACHE = Path(os.environ.get("RAG_EVAL_SPACE_CACHE", "/var/tmp/rag-eval-space-check"))
STAMP = ".space-check-complete"
# The h1 of every page (st.title), by page script.
HEADINGS = {
    "pages/overview.py": APP_TITLE,
    "pages/ask.py": "Ask",
    "pages/support_map.py": "Sentence support map",
    "pages/batch.py": "Batch evaluation",
    "pages/runs.py": "Runs and trends",
    "pages/compare.py": "Compare runs",
    "pages/judges.py": "Judges",
    "pages/datasets.py": "Datasets",
    "pages/corpus.py": "Corpus",
    "pages/settings.py": "Settings",
}
PAGE_TIMEOUT_S = 300.0  # per attempt; a Space builds the demo collection before it listens (RAG_EVAL_PREPARE)
ANSWER_TIMEOUT_S = 600.0  # the first answer exports the local judge's ONNX model
# With no key set, the Overview says it runs the offline demo and where runs are kept.
OVERVIEW_NOTES = ("Offline demo", "on this Space's ephemeral disk")
SETTLE_S = 1.5  # the script must stay idle this long before a page counts as ready
# Environment variables of this machine the Space process keeps (OpenBLAS needs these here).
PASS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "TZ")

MAIN_TEXT_JS = "(document.querySelector('[data-testid=stMain]') || {innerText: ''}).innerText"
RUNNING_JS = ("!!document.querySelector('[data-testid=stStatusWidgetRunningIcon],"
              "[data-testid=stStatusWidgetRunningManIcon],[data-testid=stSpinner]')")
ERROR_JS = "!!document.querySelector('[data-testid=stException],[data-testid=stAlertContentError]')"
HEADING_JS = "Array.from(document.querySelectorAll('[data-testid=stMain] h1')).some(h => h.innerText.includes(%s))"
H3_JS = "Array.from(document.querySelectorAll('[data-testid=stMain] h3')).some(h => h.innerText.includes(%s))"


class CheckFailed(Exception):
    """The Space would not build, start or render: the message says where."""


@dataclass
class Figures:
    build_s: float | None = None
    build_reused: bool = False
    health_s: float | None = None
    cold_start_s: float | None = None
    ask_page_s: float | None = None
    first_answer_s: float | None = None
    peak_rss_mb: float | None = None
    disk_mb: dict[str, float] = field(default_factory=dict)
    pages: dict[str, float] = field(default_factory=dict)
    actions: dict[str, float] = field(default_factory=dict)
    port: int = SPACE_PORT
    user: str = ""


# ---------------------------------------------------------------- front matter and build
def front_matter() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise CheckFailed("README.md has no front matter")
    meta = yaml.safe_load(text.split("---\n", 2)[1])
    for key in ("python_version", "sdk_version"):
        if not meta.get(key):
            raise CheckFailed(f"README front matter does not pin {key}")
    return meta


def pinned_python(version: str, user: tuple[int, int, str] | None) -> str | None:
    """A ``pythonX.Y`` of the pinned minor that the Space's user can run (a venv runs its
    base interpreter in place, so one under root's home will not do), or None."""
    candidates = [shutil.which(f"python{version}"), f"/usr/local/bin/python{version}", f"/usr/bin/python{version}"]
    run_as = {"user": user[0], "group": user[1], "extra_groups": []} if user else {}
    for candidate in dict.fromkeys(c for c in candidates if c and Path(c).is_file()):
        try:
            out = subprocess.run([candidate, "-c", "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, check=False, cwd="/", timeout=60,
                                 env={"PATH": "/usr/bin:/bin"}, **run_as)  # type: ignore[call-overload]
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip() == str(version):
            return candidate
    return None


def build_key(python: str, meta: dict) -> str:
    digest = hashlib.sha256()
    digest.update((ROOT / "requirements.txt").read_bytes())
    version = subprocess.run([python, "-VV"], capture_output=True, text=True, check=True).stdout
    digest.update(f"{version}|{meta['sdk_version']}".encode())
    return digest.hexdigest()[:12]


def build_venv(python: str, meta: dict, fresh: bool, figures: Figures) -> Path:
    """The Space's environment: requirements.txt plus the sdk_version of Streamlit, nothing else."""
    CACHE.mkdir(parents=True, exist_ok=True)
    os.chmod(CACHE, 0o755)
    venv = CACHE / f"venv-{build_key(python, meta)}"
    if (venv / STAMP).is_file() and not fresh:
        figures.build_reused = True
        print(f"environment: reusing {venv} (same requirements.txt, Python and Streamlit; --fresh rebuilds)")
        return venv
    for old in CACHE.glob("venv-*"):  # one build at a time on disk
        shutil.rmtree(old, ignore_errors=True)
    log = CACHE / "build.log"
    print(f"environment: building {venv} from requirements.txt alone with {python} (log: {log})", flush=True)
    start = time.perf_counter()
    with open(log, "wb") as out:
        steps = [
            [python, "-m", "venv", str(venv)],
            [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
             "-r", str(ROOT / "requirements.txt"), f"streamlit=={meta['sdk_version']}"],
        ]
        for step in steps:
            # pip retries each download itself; one more try of the whole step rides out a registry hiccup
            if all(subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, check=False).returncode != 0
                   for _attempt in range(2)):
                tail = log.read_text(errors="replace")[-3000:]
                raise CheckFailed(f"the Space's environment does not build ({' '.join(step[:3])} ...):\n{tail}")
    figures.build_s = time.perf_counter() - start
    (venv / STAMP).write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return venv


def pip_check(venv: Path) -> None:
    """Every installed package's requirements are met (a lock that pip had to bend would show here)."""
    out = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "check", "--disable-pip-version-check"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise CheckFailed(f"pip check in the Space's environment:\n{out.stdout}{out.stderr}")
    print(f"environment: pip check clean ({out.stdout.strip()})", flush=True)


# ---------------------------------------------------------------- user, copy, home
def space_user() -> tuple[int, int, str] | None:
    """(uid, gid, name) of the non-root user the app runs as; None when not root (then the
    current user, already not root, runs it)."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(SPACE_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SPACE_USER],
                       check=True)
        entry = pwd.getpwnam(SPACE_USER)
    return entry.pw_uid, entry.pw_gid, SPACE_USER


def repository_files() -> list[str]:
    """What a clone of the Space repository holds: tracked files plus new, not-ignored ones."""
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, check=True)
    return sorted({p for p in out.stdout.decode().split("\0") if p and (ROOT / p).is_file()})


def read_only_copy(target: Path) -> None:
    for rel in repository_files():
        dst = target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst)
    for folder, _dirs, files in os.walk(target):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
        os.chmod(folder, 0o555)


def make_writable(path: Path) -> None:
    for folder, _dirs, _files in os.walk(path):
        os.chmod(folder, stat.S_IRWXU | os.stat(folder).st_mode)


def disk_mb(path: Path) -> float:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total / 1e6


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: TIME_WAIT is no obstacle
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# ---------------------------------------------------------------- server
@dataclass
class Space:
    process: subprocess.Popen
    url: str
    started: float
    log_path: Path

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]

    def peak_rss_mb(self) -> float | None:
        """VmHWM: the server process's peak resident memory so far."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None


@contextmanager
def start_space(venv: Path, app_dir: Path, home: Path, port: int, user: tuple[int, int, str] | None,
                log_path: Path) -> Iterator[Space]:
    env = {
        "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "SPACE_ID": "local/rag-eval-space-check",
        "SYSTEM": "spaces",
        **{k: os.environ[k] for k in PASS_ENV if k in os.environ},
    }
    cmd = [str(venv / "bin" / "streamlit"), "run", "app.py", "--server.port", str(port), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    run_as = {"user": user[0], "group": user[1], "extra_groups": []} if user else {}
    with open(log_path, "wb") as log:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, **run_as)  # type: ignore[call-overload]
    space = Space(proc, f"http://127.0.0.1:{port}", started, log_path)
    try:
        yield space
    finally:
        browser.stop_process(proc, timeout_s=20)


# ---------------------------------------------------------------- browser
def wait_for(tools: browser.DevTools, condition_js: str, timeout_s: float, space: Space) -> float | None:
    """Poll until ``condition_js`` holds and the script has been idle for SETTLE_S; returns
    when (``time.perf_counter()``) it first held, or None on timeout."""
    start = time.perf_counter()
    idle_since: float | None = None
    while time.perf_counter() - start < timeout_s:
        if space.process.poll() is not None:
            raise CheckFailed(f"the Space's server exited with code {space.process.returncode}:\n{space.log_tail()}")
        # An error element ends the wait too (check_dom then fails the page with its text).
        ok = bool(tools.evaluate(f"({condition_js}) || {ERROR_JS}")) and not tools.evaluate(RUNNING_JS)
        now = time.perf_counter()
        if ok:
            idle_since = idle_since or now
            if now - idle_since >= SETTLE_S:
                return idle_since
        else:
            idle_since = None
        time.sleep(0.1)
    return None


def check_dom(tools: browser.DevTools, where: str, space: Space) -> None:
    dom = str(tools.evaluate("document.documentElement.outerHTML") or "")
    markers = browser.page_errors(dom)
    if markers or "Traceback" in dom:
        text = str(tools.evaluate(MAIN_TEXT_JS) or "")[:2000]
        raise CheckFailed(f"{where}: error element on the page ({markers or 'Traceback'}):\n{text}\n"
                          f"server log:\n{space.log_tail()}")


def visit(tools: browser.DevTools, space: Space, page: str, ready_js: str) -> float:
    """Open a page (one retry with a reload when it does not settle in time) and check it."""
    url = space.url + ("/" if page == ALL_PAGES[0] else f"/{Path(page).stem}")
    first = time.perf_counter()
    for attempt in (1, 2):
        tools.call("Page.navigate", url=url)
        ready_at = wait_for(tools, ready_js, PAGE_TIMEOUT_S, space)
        if ready_at is not None:
            check_dom(tools, page, space)
            return ready_at - first
        print(f"  {page}: not ready after {PAGE_TIMEOUT_S:.0f}s (attempt {attempt})", flush=True)
    check_dom(tools, page, space)
    raise CheckFailed(f"{page} never became interactive; page text:\n{str(tools.evaluate(MAIN_TEXT_JS))[:2000]}\n"
                      f"server log:\n{space.log_tail()}")


def first_question() -> str:
    line = (ROOT / "rag_eval" / "demo" / "questions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return str(json.loads(line)["question"])


def ask_once(tools: browser.DevTools, space: Space) -> float:
    """Type the first demo question, press Ask, wait for the TRACe scores: seconds from the click."""
    focused = tools.evaluate("(() => { const el = document.querySelector('[data-testid=stMain] "
                             "input[aria-label=\"Question\"]'); if (!el) return false; el.focus(); return true; })()")
    if not focused:
        raise CheckFailed("Ask: no Question input on the page")
    tools.call("Input.insertText", text=first_question())
    for kind in ("keyDown", "keyUp"):
        tools.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                   **({"text": "\r"} if kind == "keyDown" else {}))
    if wait_for(tools, "true", 120, space) is None:
        raise CheckFailed("Ask: the page did not settle after typing the question")
    clicked = tools.evaluate("(() => { const b = Array.from(document.querySelectorAll('[data-testid=stMain] button'))"
                             ".find(b => b.innerText.trim() === 'Ask'); if (!b) return false; b.click(); return true; })()")
    if not clicked:
        raise CheckFailed("Ask: no Ask button on the page")
    pressed = time.perf_counter()
    answered_at = wait_for(tools, H3_JS % json.dumps("TRACe"), ANSWER_TIMEOUT_S, space)
    check_dom(tools, "Ask (answer)", space)
    if answered_at is None:
        raise CheckFailed(f"Ask: no answer after {ANSWER_TIMEOUT_S:.0f}s; page text:\n"
                          f"{str(tools.evaluate(MAIN_TEXT_JS))[:2000]}\nserver log:\n{space.log_tail()}")
    return answered_at - pressed


def screenshot(tools: browser.DevTools, shots: Path | None, name: str) -> None:
    if shots is not None:
        import base64

        data = tools.call("Page.captureScreenshot", format="png")["data"]
        (shots / f"{name}.png").write_bytes(base64.b64decode(data))


def check_overview_notes(tools: browser.DevTools) -> None:
    """No key in the environment: the Overview says it is the offline demo, and where runs go."""
    text = str(tools.evaluate(MAIN_TEXT_JS) or "")
    for expected in OVERVIEW_NOTES:
        if expected not in text:
            raise CheckFailed(f"the Overview page does not say {expected!r}; page text:\n{text[:2000]}")


def drive(tools: browser.DevTools, space: Space, figures: Figures, shots: Path | None = None) -> None:
    """Every page in turn (the browser was started before the server, so the cold start is the server's)."""
    figures.health_s = browser.wait_healthy(space.url, timeout_s=PAGE_TIMEOUT_S, process=space.process) - space.started
    print(f"server healthy after {figures.health_s:.1f}s", flush=True)
    for page in ALL_PAGES:
        heading = HEADING_JS % json.dumps(HEADINGS[page])
        ready_js = heading
        if page == ALL_PAGES[0]:
            ready_js = f"({heading}) && {MAIN_TEXT_JS}.includes({json.dumps(OVERVIEW_READY_TEXT)})"
        if page == "pages/ask.py":
            ready_js = f"({heading}) && !!document.querySelector('[data-testid=stMain] input[aria-label=\"Question\"]')"
        navigated = time.perf_counter()
        seconds = visit(tools, space, page, ready_js)
        figures.pages[page] = seconds
        if page == ALL_PAGES[0]:
            figures.cold_start_s = navigated + seconds - space.started
            check_overview_notes(tools)
        screenshot(tools, shots, Path(page).stem)
        print(f"  {page}: interactive in {seconds:.1f}s, no error element", flush=True)
        if page == "pages/ask.py":
            figures.ask_page_s = seconds
            figures.first_answer_s = ask_once(tools, space)
            screenshot(tools, shots, "ask-answer")
            print(f"  pages/ask.py: first answer {figures.first_answer_s:.1f}s after pressing Ask", flush=True)
    figures.peak_rss_mb = space.peak_rss_mb()


# ---------------------------------------------------------------- one main action of every page
# Real documents no one here wrote (tests/data/docs/ATTRIBUTION.md): a page of Debian's Python
# tutorial (python3.11-doc), a PDF specification and a Markdown page of pip's documentation.
DOCS = ROOT / "tests" / "data" / "docs"
UPLOADS = ("venv.html", "shared-mime-info-spec.pdf", "local-project-installs.md")
DOCS_COLLECTION = "space-check-docs"
DOCS_QUESTION = "How do I create a virtual environment?"
DOCS_MARKER = "tutorial-env"  # in venv.html's "python3 -m venv tutorial-env", in no other document
DATASET_FILE = ROOT / "rag_eval" / "demo" / "questions.jsonl"  # golden rows (the Datasets page's default kind)
DATASET_NAME = "space-check-rows"
BATCH_ROWS = 4
ACTION_TIMEOUT_S = 600.0
WARNING_JS = "Array.from(document.querySelectorAll('[data-testid=stAlertContentWarning]')).map(e => e.innerText)"
# The enabled button whose text is the label, or has it as one of its lines (a Material icon's name may come
# first: "download\n\nDownload report"), or starts with it (a shortcut hint may follow).
CLICK_JS = ("(() => {{ const all = Array.from(document.querySelectorAll('[data-testid=stMain] button')).filter(b => !b.disabled); "
            "const text = b => b.innerText.trim(); "
            "const b = all.find(b => text(b) === {label}) || all.find(b => text(b).split('\\n').some(l => l.trim() === {label})) "
            "|| all.find(b => text(b).startsWith({label})); "
            "if (!b) return false; b.click(); return true; }})()")


def settle(session: browser.BrowserSession, space: Space, where: str, condition_js: str = "true",
           timeout_s: float = ACTION_TIMEOUT_S) -> None:
    """Wait until ``condition_js`` holds with the script idle, then fail on any error element."""
    if wait_for(session.tools, condition_js, timeout_s, space) is None:
        raise CheckFailed(f"{where}: not done after {timeout_s:.0f}s; page text:\n{session.main_text()[:2000]}\n"
                          f"server log:\n{space.log_tail()}")
    check_dom(session.tools, where, space)


def text_js(text: str) -> str:
    return f"{MAIN_TEXT_JS}.includes({json.dumps(text)})"


def click(session: browser.BrowserSession, space: Space, label: str, where: str) -> None:
    """Click the enabled button labelled ``label`` (a shortcut hint after it is ignored); waits for it."""
    try:
        session.wait_for(CLICK_JS.format(label=json.dumps(label)), timeout_s=120)
    except TimeoutError:
        raise CheckFailed(f"{where}: no enabled button '{label}'; page text:\n{session.main_text()[:2000]}") from None


def open_page(session: browser.BrowserSession, space: Space, path: str, heading: str, ready_js: str = "true") -> None:
    session.tools.call("Page.navigate", url=f"{space.url}/{path}")
    settle(session, space, path, f"({HEADING_JS % json.dumps(heading)}) && ({ready_js})", PAGE_TIMEOUT_S)


def upload(session: browser.BrowserSession, files: list[Path], where: str) -> None:
    """Put ``files`` into the page's file uploader, as a user picking them in the file dialog."""
    try:
        session.wait_for("!!document.querySelector('[data-testid=stFileUploader] input[type=file]')", timeout_s=120)
    except TimeoutError:
        raise CheckFailed(f"{where}: no file uploader on the page:\n{session.main_text()[:2000]}") from None
    root = session.tools.call("DOM.getDocument", depth=-1, pierce=True)["root"]["nodeId"]
    node = session.tools.call("DOM.querySelector", nodeId=root,
                              selector="[data-testid=stFileUploader] input[type=file]").get("nodeId")
    if not node:
        raise CheckFailed(f"{where}: no file uploader on the page")
    session.tools.call("DOM.setFileInputFiles", nodeId=node, files=[str(f) for f in files])
    try:  # one chip per file (their names may be shortened with an ellipsis)
        session.wait_for(f"document.querySelectorAll('[data-testid=stFileChip]').length >= {len(files)}", timeout_s=120)
    except TimeoutError:
        raise CheckFailed(f"{where}: the uploader does not list {[f.name for f in files]}:\n{session.main_text()[:2000]}") from None


def choose(session: browser.BrowserSession, space: Space, label: str, option: str, where: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``: type it into its search box, press Enter."""
    focused = session.evaluate(
        "(() => { const box = Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stSelectbox]'))"
        f".find(b => (b.querySelector('label') || {{innerText: ''}}).innerText.trim() === {json.dumps(label)}); "
        "const input = box && box.querySelector('input'); if (!input) return false; "
        "input.focus(); input.select(); input.click(); return true; })()")
    if not focused:
        raise CheckFailed(f"{where}: no selectbox '{label}'")
    session.tools.call("Input.insertText", text=option)
    time.sleep(0.5)
    for kind in ("keyDown", "keyUp"):
        session.tools.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13)
    settle(session, space, f"{where} ({label}: {option})",
           f"Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stSelectbox] input[aria-label={json.dumps(label)}]'))"
           f".some(i => i.value === {json.dumps(option)})", 120)


def warnings_on_page(session: browser.BrowserSession) -> list[str]:
    return [str(w) for w in (session.evaluate(WARNING_JS) or [])]  # type: ignore[union-attr]


def act(session: browser.BrowserSession, space: Space, figures: Figures, work: Path, shots: Path | None) -> None:
    """One main action of every page, in the order a new user would take them."""
    def step(name: str, action) -> None:
        start = time.perf_counter()
        action()
        figures.actions[name] = time.perf_counter() - start
        screenshot(session.tools, shots, f"action-{name.split()[0].lower()}")
        print(f"  action {name}: done in {figures.actions[name]:.1f}s", flush=True)

    def corpus() -> None:
        open_page(session, space, "corpus", HEADINGS["pages/corpus.py"])
        upload(session, [DOCS / name for name in UPLOADS], "Corpus")
        session.type_into('[data-testid=stMain] input[aria-label="Collection"]', DOCS_COLLECTION)
        session.evaluate("document.activeElement && document.activeElement.blur()")
        settle(session, space, "Corpus (collection name)")
        click(session, space, "Ingest", "Corpus")
        settle(session, space, "Corpus (ingest)", text_js(f"'{DOCS_COLLECTION}': "))
        # the per-file summary: "'NAME': 3 file(s): 3 ingested (66 chunks), 0 unchanged (skipped), 0 failed; ..."
        added = re.search(rf"'{DOCS_COLLECTION}': \d+ file\(s\): (\d+) ingested \(\d+ chunks\), \d+ unchanged \(skipped\), 0 failed",
                          session.main_text())
        problems = warnings_on_page(session)
        if problems or not added or int(added.group(1)) < len(UPLOADS):
            raise CheckFailed(f"Corpus: not every file was ingested ({problems}):\n{session.main_text()[:2000]}")

    def ask_docs() -> None:
        open_page(session, space, "ask", HEADINGS["pages/ask.py"],
                  "!!document.querySelector('[data-testid=stMain] input[aria-label=\"Question\"]')")
        choose(session, space, "Collection", DOCS_COLLECTION, "Ask")
        session.type_into('[data-testid=stMain] input[aria-label="Question"]', DOCS_QUESTION)
        session.evaluate("document.activeElement && document.activeElement.blur()")
        settle(session, space, "Ask (question typed)")
        click(session, space, "Ask", "Ask")
        settle(session, space, "Ask (uploaded collection)", H3_JS % json.dumps("TRACe"))
        if DOCS_MARKER not in session.main_text():  # the support map shows the retrieved tutorial text
            raise CheckFailed(f"Ask: no chunk of {UPLOADS[0]} retrieved from '{DOCS_COLLECTION}':\n{session.main_text()[:2000]}")

    def batch(run: int) -> Callable[[], None]:
        def action() -> None:
            open_page(session, space, "batch", HEADINGS["pages/batch.py"], text_js("rows are usable"))
            session.type_into('[data-testid=stMain] input[aria-label^="Rows to evaluate"]', str(BATCH_ROWS - run))
            session.evaluate("document.activeElement && document.activeElement.blur()")
            settle(session, space, "Batch (rows)", text_js(f"{BATCH_ROWS - run} of {BATCH_ROWS - run} rows are usable"))
            click(session, space, "Run", "Batch")
            settle(session, space, "Batch (run)", text_js("Results ·"))
        return action

    def runs_report() -> None:
        downloads = work / "downloads"
        downloads.mkdir(exist_ok=True)
        try:
            session.tools.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
        except RuntimeError:
            session.tools.call("Page.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
        open_page(session, space, "runs?view=run", HEADINGS["pages/runs.py"], text_js("Download report"))
        click(session, space, "Download report", "Runs")
        deadline = time.perf_counter() + ACTION_TIMEOUT_S
        while time.perf_counter() < deadline:
            done = [f for f in downloads.glob("rag-eval-report-*.html") if f.stat().st_size > 0]
            if done and not list(downloads.glob("*.crdownload")):
                head = done[0].read_text(encoding="utf-8", errors="replace")[:3000].lower()
                if "<html" not in head:
                    raise CheckFailed(f"Runs: the downloaded report {done[0].name} is not an HTML page")
                return
            time.sleep(0.5)
        raise CheckFailed(f"Runs: no report downloaded after {ACTION_TIMEOUT_S:.0f}s ({list(downloads.iterdir())})")

    def compare() -> None:
        open_page(session, space, "compare", HEADINGS["pages/compare.py"], f"{browser.CHARTS_DRAWN_JS} >= 1")

    def judges() -> None:
        open_page(session, space, "judges", HEADINGS["pages/judges.py"], text_js("Review queue"))
        click(session, space, "Build queue", "Judges")
        settle(session, space, "Judges (queue)", text_js("queued row(s) left to review"))
        click(session, space, "Start reviewing", "Judges")
        settle(session, space, "Judges (review)", f"({HEADING_JS % json.dumps(HEADINGS['pages/support_map.py'])}) && "
               "!!document.querySelector('[data-testid=stMain] input[aria-label=\"Reviewer\"]')")
        session.type_into('[data-testid=stMain] input[aria-label="Reviewer"]', "space-check")
        session.evaluate("document.activeElement && document.activeElement.blur()")
        settle(session, space, "Judges (reviewer)", text_js("Save review"))
        click(session, space, "Save review", "Judges")
        settle(session, space, "Judges (save)", text_js("Saved space-check's labels"))

    def datasets() -> None:
        open_page(session, space, "datasets", HEADINGS["pages/datasets.py"], text_js("Import"))
        upload(session, [DATASET_FILE], "Datasets")
        # the page names the files the import will read once the upload's rerun is done: type after it
        settle(session, space, "Datasets (files)", text_js("The import reads 1 file(s)"))
        session.type_into('[data-testid=stMain] input[aria-label="Save as"]', DATASET_NAME)
        session.evaluate("document.activeElement && document.activeElement.blur()")
        settle(session, space, "Datasets (name)")
        click(session, space, "Import and save", "Datasets")
        settle(session, space, "Datasets (import)", text_js(f"as '{DATASET_NAME}'"))

    def settings_save() -> None:
        # Concurrency is a field of both modes (a Space's deployment mode offers the owner's models only)
        field = '[data-testid=stMain] input[aria-label="Concurrency"]'
        field_js = f"document.querySelector({json.dumps(field)})"
        open_page(session, space, "settings", HEADINGS["pages/settings.py"], f"!!{field_js}")
        wanted = "3" if session.evaluate(f"{field_js}.value") != "3" else "2"
        session.type_into(field, wanted)
        session.evaluate("document.activeElement && document.activeElement.blur()")
        click(session, space, "Save settings", "Settings")
        settle(session, space, "Settings (save)", f"{text_js('Saved for this session.')} && "
               f"location.search.includes({json.dumps('concurrency=' + wanted)})", 120)
        session.tools.call("Page.reload", ignoreCache=True)
        settle(session, space, "Settings (reload)",
               f"(() => {{ const e = {field_js}; return !!e && e.value === {json.dumps(wanted)}; }})()", PAGE_TIMEOUT_S)

    step("Corpus upload (HTML, PDF, Markdown)", corpus)
    step("Ask on the uploaded collection", ask_docs)
    step("Batch run", batch(0))
    step("Batch (second run, for Compare)", batch(1))
    step("Runs report download", runs_report)
    step("Compare", compare)
    step("Judges review and save", judges)
    step("Datasets import", datasets)
    step("Settings save and reload", settings_save)
    figures.peak_rss_mb = space.peak_rss_mb()


# ---------------------------------------------------------------- report
def report(figures: Figures, meta: dict) -> str:
    def fmt(value: float | None, unit: str = "s") -> str:
        return "n/a" if value is None else f"{value:.1f} {unit}"

    build = "reused (unchanged requirements)" if figures.build_reused else fmt(figures.build_s)
    lines = [
        (f"Space check: Python {meta['python_version']}, Streamlit {meta['sdk_version']}, port {figures.port}, "
         f"user {figures.user}, read-only repository, fresh HOME"),
        "",
        "| figure | value |",
        "|---|---:|",
        f"| environment build (requirements.txt alone) | {build} |",
        f"| server launch -> health endpoint | {fmt(figures.health_s)} |",
        f"| cold start: server launch -> first interactive page | {fmt(figures.cold_start_s)} |",
        f"| Ask page interactive (the demo collection was built before the server listened) | {fmt(figures.ask_page_s)} |",
        f"| time to first answer on Ask (press -> TRACe scores) | {fmt(figures.first_answer_s)} |",
        f"| server peak memory (VmHWM) | {fmt(figures.peak_rss_mb, 'MB')} |",
    ]
    lines += [f"| disk: {name} | {fmt(mb, 'MB')} |" for name, mb in figures.disk_mb.items()]
    lines += ["", "| page | interactive after (s) |", "|---|---:|"]
    lines += [f"| {page} | {seconds:.1f} |" for page, seconds in figures.pages.items()]
    lines += ["", "| action | done in (s) |", "|---|---:|"]
    lines += [f"| {name} | {seconds:.1f} |" for name, seconds in figures.actions.items()]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="Rebuild the environment even if requirements are unchanged.")
    parser.add_argument("--keep", action="store_true",
                        help="Keep the repository copy, HOME, server log and a screenshot of every page (path printed).")
    args = parser.parse_args()

    meta = front_matter()
    if browser.find_chromium() is None:
        print("skipped: no chromium binary on PATH (make browser-deps installs Debian's chromium)")
        return 0
    user = space_user()
    python = pinned_python(str(meta["python_version"]), user)
    if python is None:
        print(f"skipped: no python{meta['python_version']} with venv that the Space's user can run "
              f"(Debian: python{meta['python_version']}-venv)")
        return 0
    figures = Figures()
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one check at a time on a machine: they share the environment and port
        return run_check(python, meta, user, figures, args.fresh, args.keep)


def run_check(python: str, meta: dict, user: tuple[int, int, str] | None, figures: Figures, fresh: bool,
              keep: bool) -> int:
    try:
        venv = build_venv(python, meta, fresh, figures)
        pip_check(venv)
        figures.user = user[2] if user else f"{os.getuid()} (not root)"
        work = Path(tempfile.mkdtemp(prefix="rag-eval-space-"))
        os.chmod(work, 0o755)
        app_dir, home = work / "app", work / "home"
        try:
            app_dir.mkdir()
            read_only_copy(app_dir)
            home.mkdir(mode=0o700)
            if user:
                os.chown(home, user[0], user[1])
            if not port_free(SPACE_PORT):
                figures.port = browser.free_port()
                print(f"port {SPACE_PORT} is taken on this machine; serving on {figures.port} instead")
            with (browser.BrowserSession() as session,
                  start_space(venv, app_dir, home, figures.port, user, work / "streamlit.log") as space):
                drive(session.tools, space, figures, shots=work if keep else None)
                act(session, space, figures, work, shots=work if keep else None)
            figures.disk_mb = {"environment (venv)": disk_mb(venv), "repository copy": disk_mb(app_dir),
                               "HOME after the run (exported models, demo collection)": disk_mb(home)}
        finally:
            if keep:
                print(f"kept: {work}")
            else:
                make_writable(work)
                shutil.rmtree(work, ignore_errors=True)
    except (CheckFailed, TimeoutError, RuntimeError, OSError, subprocess.SubprocessError) as err:
        print(report(figures, meta))
        print(f"\nFAILED: {type(err).__name__}: {err}")
        return 1
    print(report(figures, meta))
    print("\nspace check passed: every page rendered without an error element, Ask answered and every page's "
          "main action worked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
