"""Batch judging on Ray in local mode with two workers: the same results as one
process (every field but latency), in input order; a killed worker loses no row;
without --ray nothing imports Ray."""

import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.judges.base import JudgeSpec
from rag_eval.judges.factory import build_from_spec
from rag_eval.judges.local import LocalJudge
from rag_eval.text.sentences import item_from_row
from tests.conftest import DATA_DIR, PROJECT_ROOT

ray = pytest.importorskip("ray", reason="ray is in requirements-dev.txt; install it to run the Ray tests")

from rag_eval.judges.ray import RayJudge, init_ray  # noqa: E402  (after the importorskip)

SHARED_ROWS = 12


@pytest.fixture(scope="module")
def module_home(tmp_path_factory, _session_models_dir):
    """A data dir for the module-scoped fixtures (set up before each test's own
    ``rag_eval_home``), sharing the session's exported encoder like every test's."""
    home = tmp_path_factory.mktemp("ray-home")
    (home / "models").symlink_to(_session_models_dir, target_is_directory=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAG_EVAL_HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def local_ray(module_home):
    init_ray(None, cpus=2)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def items(ragbench_rows, module_home):
    """The committed RAGBench rows, plus a few shared validation rows when the shared data is there."""
    from rag_eval.config import shared_data_dir

    rows = list(ragbench_rows)
    sample = shared_data_dir() / "ragbench" / "sample" / "ragbench_validation_sample.jsonl"
    if sample.is_file():
        with open(sample, encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()][:SHARED_ROWS]
    return [item_from_row(r, default_id=f"row-{i}") for i, r in enumerate(rows)]


@pytest.fixture(scope="module")
def one_process(items, module_home):
    return LocalJudge().judge(items)


def _fields(result) -> dict:
    return {k: getattr(result, k) for k in result.__slots__ if k != "latency_s"}


def test_two_workers_give_the_results_of_one_process(local_ray, items, one_process):
    seen = []
    with RayJudge(JudgeSpec(), build_from_spec, workers=2, chunk_rows=5) as judge:
        got = judge.judge(items, progress=lambda done, total: seen.append((done, total)))
        assert len(set(judge.worker_pids())) == 2
    assert [r.id for r in got] == [it.id for it in items]  # input order
    assert [_fields(r) for r in got] == [_fields(r) for r in one_process]
    assert all(r.status.value == "ok" for r in got) and seen[-1] == (len(items), len(items))


def test_a_killed_worker_loses_no_row(local_ray, items, one_process):
    with RayJudge(JudgeSpec(), build_from_spec, workers=2, chunk_rows=3) as judge:
        victim = judge.worker_pids()[0]
        killed = []

        def kill_once(done, total):
            if not killed:
                os.kill(victim, signal.SIGKILL)
                killed.append(done)

        got = judge.judge(items, progress=kill_once)
        assert victim not in judge.worker_pids()  # replaced
    assert killed and [r.id for r in got] == [it.id for it in items]
    assert [_fields(r) for r in got] == [_fields(r) for r in one_process]


def test_cli_judge_with_ray_writes_what_one_process_writes(local_ray, tmp_path):
    runner = CliRunner()
    src = DATA_DIR / "ragbench_sample.jsonl"
    plain, spread = tmp_path / "plain.jsonl", tmp_path / "ray.jsonl"
    assert runner.invoke(cli, ["judge", str(src), "--judge", "local", "--out", str(plain)]).exit_code == 0
    result = runner.invoke(cli, ["judge", str(src), "--judge", "local", "--out", str(spread), "--ray-workers", "2",
                                 "--ray"])
    assert result.exit_code == 0, result.output

    def rows(path):
        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            row.pop("latency_s", None)
            out.append(row)
        return out

    assert rows(spread) == rows(plain)


def test_without_ray_nothing_imports_ray(tmp_path):
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from rag_eval.cli import cli\n"
        f"r = CliRunner().invoke(cli, ['judge', {str(DATA_DIR / 'ragbench_sample.jsonl')!r}, '--judge', 'local',"
        f" '--out', {str(tmp_path / 'out.jsonl')!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=600, check=False, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_chunk_whose_worker_dies_twice_keeps_its_rows_as_provider_errors(local_ray, items):
    from tests.runs.ray_workers import CrashingWorker

    class Crashing(RayJudge):
        def _new_actor(self, ray_module):
            return ray_module.remote(num_cpus=1, max_restarts=0)(CrashingWorker).remote()

    with Crashing(JudgeSpec(), build_from_spec, workers=1, chunk_rows=len(items)) as judge:
        got = judge.judge(items[:4])
    assert [r.id for r in got] == [it.id for it in items[:4]]
    assert {r.status.value for r in got} == {"provider_error"}
    assert all("Ray worker failed" in r.error and "after 2 attempts" in r.error for r in got)


def test_cli_run_with_ray_stores_what_one_process_stores(local_ray, tmp_path, demo_questions):
    from rag_eval.rag.config import default_config
    from rag_eval.runs.store import RunStore

    dataset = tmp_path / "qs.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in demo_questions[:6]) + "\n", encoding="utf-8")
    config = tmp_path / "local.yaml"
    default_config("ray-check").to_yaml(config)
    runner = CliRunner()
    for name, extra in (("plain", []), ("spread", ["--ray-workers", "2", "--ray"])):
        result = runner.invoke(cli, ["run", str(dataset), "--config", str(config), "--name", name, *extra])
        assert result.exit_code == 0, result.output

    def items(name):
        store = RunStore()
        out = []
        for item in store.items(store.resolve_run_id(name)):
            item = {k: v for k, v in item.items() if k not in ("timings", "latency_s")}
            for part in ("labels", "generator"):  # their latencies differ from run to run
                item[part] = {k: v for k, v in (item.get(part) or {}).items() if k != "latency_s"}
            out.append(item)
        return out

    plain, spread = items("plain"), items("spread")
    differing = sorted({k for a, b in zip(plain, spread) for k in a if a.get(k) != b.get(k)})
    assert [i["status"] for i in spread] == ["ok"] * 6 and differing == [] and len(spread) == len(plain)


def test_cli_run_judge_only_with_ray_stores_what_one_process_stores(local_ray, tmp_path):
    from rag_eval.rag.config import default_config
    from rag_eval.runs.store import RunStore

    config = tmp_path / "local.yaml"
    default_config("ray-judge-only").to_yaml(config)
    src = str(DATA_DIR / "ragbench_sample.jsonl")
    runner = CliRunner()
    for name, extra in (("plain", []), ("spread", ["--ray-workers", "2", "--ray"])):
        result = runner.invoke(cli, ["run", src, "--judge-only", "--config", str(config), "--name", name, *extra])
        assert result.exit_code == 0, result.output

    def items(name):
        store = RunStore()
        return [{k: v for k, v in item.items() if k not in ("timings", "latency_s", "run_id")}
                for item in store.items(store.resolve_run_id(name))]

    plain, spread = items("plain"), items("spread")
    assert len(spread) == len(plain) > 0 and {i["status"] for i in spread} == {"ok"}
    assert spread == plain
