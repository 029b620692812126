"""Benchmark of the local judge: quality leave-one-subset-out, speed and memory.

Prints markdown tables:

1. speed, against the target of 25 rows/s on 2 cores (issue 18), on RAGBench
   validation rows interleaved across the seven subsets:
   - the library call ``LocalJudge().judge(items)`` with a cold embedding cache
     (embedding + features + models + labels), rows/s, CPU ms per row and the ratio
     to the target, plus the peak resident memory of this process (ru_maxrss);
   - end to end: ``rag-eval judge FILE --judge local --out OUT`` on the same rows as
     a .jsonl file, in a new process (start-up, reading, sentence splitting, judging,
     scoring, writing), rows/s of wall time, CPU ms per row and the ratio;
   - the ceiling with every embedding cached (features, heads and labels only);
2. quality: for each of the seven subsets, a model trained on the other six (plus
   emanual train unless emanual is the held-out subset) is scored on the held-out
   subset's validation split: hallucination AUROC (label = not adherent,
   score = 1 - adherence_probability) and RMSE of context relevance, utilization and
   completeness, computed with ``score_item(..., "clean")`` like a user's run;
3. the lexical-novelty baseline's AUROC beside the judge's, per held-out subset and
   pooled over every held-out row (``--quality-only`` skips the speed table);
4. with ``--profile``, where the CPU goes: reading, start-up, embedding (and how many
   texts per row reach the encoder), features, heads and labels, each stage timed
   alone over the same rows, the way the judge runs them (pipeline steps of 16 rows,
   one cache for the whole file).

Usage::

    nice -n 10 .venv/bin/python -m bench.bench_local_judge            # full (~10 min cold)
    nice -n 10 .venv/bin/python -m bench.bench_local_judge --quick    # 40 rows per split
    .venv/bin/python -m bench.bench_local_judge --speed-only          # the speed table alone (~1 min, idle machine)
    .venv/bin/python -m bench.bench_local_judge --speed-only --speed-rows 1515 --profile   # issue 35's figures

``--cache DIR`` reuses precomputed embeddings (``<name>.json`` texts + ``<name>.npy``
vectors, see ``scripts/train_local_judge.py --cache``); texts missing from it
are embedded on the fly, so the figures do not depend on the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from harness.judge_training import (
    DEFAULT_SEED,
    SUBSETS,
    ArrayEmbedder,
    auroc_difference,
    build_dataset,
    leave_one_subset_out,
    load_ragbench,
    pooled_auroc,
)
from rag_eval.config import shared_data_dir
from rag_eval.judges.encoder import JudgeEncoder
from rag_eval.judges.local import LocalJudge
from rag_eval.text.sentences import item_from_row

REFERENCES = [  # RAGBench paper, test splits, mean over subsets
    ("GPT-3.5 judge (paper)", 0.556, 0.190, 0.126),
    ("RAGAS (paper)", 0.601, 0.206, None),
    ("TruLens (paper)", 0.593, 0.651, None),
    ("DeBERTa 400M fine-tuned (paper)", 0.792, 0.178, 0.117),
    ("target", 0.80, 0.15, 0.10),
]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


TARGET_ROWS_PER_S = 100.0  # issue 35 (25 before, issue 18): the local judge on 2 cores, mixed RAGBench rows


def bench_speed(rows: list[dict], n: int) -> dict[str, float]:
    """Rows/s of the judge end to end, cold cache, on ``n`` rows mixed across subsets."""
    items = [item_from_row(r) for r in rows[:n]]
    judge = LocalJudge()  # its own encoder, as a user gets it
    judge.judge(items[:2])  # load the model weights outside the timing
    judge.embedder.clear()
    rss_before = _peak_rss_mb()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    results = judge.judge(items)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    ok = sum(r.status.value == "ok" for r in results)
    peak = _peak_rss_mb()
    # Features + heads + labels only: a judge whose cache holds every text of the sample
    # (the default cache is bounded, so a large sample would not stay cached).
    warm_items = items[:200]
    warm_judge = LocalJudge(embedder=JudgeEncoder(cache_size=10**6))
    warm_judge.judge(warm_items)
    t1 = time.perf_counter()
    warm_judge.judge(warm_items)
    warm = time.perf_counter() - t1
    return {"rows": len(items), "ok": ok, "seconds": elapsed, "rows_per_s": len(items) / elapsed,
            "cpu_ms_per_row": 1000 * cpu / len(items),
            "peak_rss_mb": peak, "rss_before_mb": rss_before, "judge": judge.name,
            "warm_rows_per_s": len(warm_items) / warm}


def _json_row(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))


def _machine_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy (``/proc/stat``): what counts a command's
    worker processes too (they are not its children: a fork server starts them)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def bench_cli(rows: list[dict], n: int, workers: int | None = None) -> dict[str, float]:
    """``rag-eval judge FILE --judge local`` in a new process on ``n`` mixed rows: wall
    time from process start to exit, and the child's CPU time. The encoder is already
    exported (``bench_speed`` ran first, in the same data directory)."""
    with tempfile.TemporaryDirectory(prefix="bench-local-judge-") as tmp:
        src, out = Path(tmp) / "rows.jsonl", Path(tmp) / "judged.jsonl"
        src.write_text("".join(_json_row(r) + "\n" for r in rows[:n]), encoding="utf-8")
        log = Path(tmp) / "stderr.txt"
        t0 = time.perf_counter()
        with log.open("w", encoding="utf-8") as err:
            machine0 = _machine_cpu_s()
            proc = subprocess.Popen([sys.executable, "-m", "rag_eval.cli", "judge", str(src), "--judge", "local",
                                     *(["--workers", str(workers)] if workers else []),
                                     "--out", str(out)], stdout=subprocess.DEVNULL, stderr=err,
                                    cwd=Path(__file__).resolve().parents[1])
            # this child's own usage: RUSAGE_CHILDREN's peak is the largest child so far (the model's export)
            _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        machine = _machine_cpu_s() - machine0
        peak_child_mb = usage.ru_maxrss / 1024  # KiB on Linux
        code = proc.returncode = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"rag-eval judge failed ({code}): {log.read_text(encoding='utf-8')[-2000:]}")
        written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    cpu = usage.ru_utime + usage.ru_stime
    return {"rows": len(written), "ok": sum(r.get("status") == "ok" for r in written), "seconds": elapsed,
            "rows_per_s": len(written) / elapsed, "cpu_ms_per_row": 1000 * cpu / max(len(written), 1),
            "machine_cpu_ms_per_row": 1000 * machine / max(len(written), 1),
            "peak_rss_mb": peak_child_mb}


def _interleave(rows: list[dict]) -> list[dict]:
    """Validation rows of all subsets interleaved, so a speed sample mixes domains."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r["_split"] == "validation":
            by.setdefault(r["_subset"], []).append(r)
    out = []
    for i in range(max(len(v) for v in by.values())):
        out.extend(v[i] for v in by.values() if i < len(v))
    return out


def _fmt(x: float | None) -> str:
    return "" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 rows per split, 40 rows for speed")
    parser.add_argument("--data", type=Path, default=None, help="shared data dir (default: rag_eval.config)")
    parser.add_argument("--cache", type=Path, default=None, help="embedding cache dir (read; texts not in it are embedded)")
    parser.add_argument("--speed-rows", type=int, default=None)
    parser.add_argument("--speed-only", action="store_true", help="the speed table only, no quality run")
    parser.add_argument("--quality-only", action="store_true", help="the quality tables only, no speed run")
    parser.add_argument("--profile", action="store_true", help="also time each stage of the judge alone (speed runs)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)

    data = args.data or shared_data_dir()
    limit = 40 if args.quick else None
    rows = load_ragbench(data, SUBSETS, include_emanual_train=True, limit=limit)
    n_speed = args.speed_rows or (40 if args.quick else 300)

    if not args.quality_only:
        _speed_tables(rows, n_speed)
        if args.profile:
            _profile_table(_interleave(rows)[:n_speed])
    if args.speed_only:
        return 0
    return _quality_tables(rows, args)


def _speed_tables(rows: list[dict], n_speed: int) -> None:
    mixed = _interleave(rows)
    speed = bench_speed(mixed, n_speed)
    cli = bench_cli(mixed, n_speed)  # the command's default: one process per core
    one = bench_cli(mixed, n_speed, workers=1)
    load = os.getloadavg()[0]
    print(f"## Local judge speed ({os.cpu_count()} cores, mixed RAGBench validation rows, cold embedding cache)\n")
    print(f"load average (1 min) after the runs: {load:.1f}"
          + (" (the machine was shared: wall-clock figures are low; CPU ms/row holds)" if load > 2.5 else "") + "\n")
    print(f"| {speed['judge']} | rows | ok | seconds | rows/s | CPU ms/row | target rows/s | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| library: `LocalJudge().judge(items)` | {speed['rows']} | {speed['ok']} | {speed['seconds']:.1f} | "
          f"{speed['rows_per_s']:.1f} | {speed['cpu_ms_per_row']:.1f} | {TARGET_ROWS_PER_S:.0f} | "
          f"{speed['rows_per_s'] / TARGET_ROWS_PER_S:.2f} |")
    for label, run in (("end to end: `rag-eval judge FILE --judge local` (new process; one per core)", cli),
                       ("the same with `--workers 1` (one process)", one)):
        print(f"| {label} | {run['rows']} | {run['ok']} | {run['seconds']:.1f} | {run['rows_per_s']:.1f} | "
              f"{run['machine_cpu_ms_per_row']:.1f} | {TARGET_ROWS_PER_S:.0f} | "
              f"{run['rows_per_s'] / TARGET_ROWS_PER_S:.2f} |")
    print(f"| ceiling: every embedding cached (features, heads, labels) | 200 |  |  | "
          f"{speed['warm_rows_per_s']:.0f} |  |  |  |\n")
    print("End to end, CPU ms/row is the whole machine's busy CPU during the command (its worker processes are "
          "not its children).\n")
    print(f"peak RSS of the library run: {speed['peak_rss_mb']:.0f} MB; of the `rag-eval judge` process (without its "
          f"worker processes): {cli['peak_rss_mb']:.0f} MB (ru_maxrss: a forked child starts from this process's own peak, so this is "
          "an upper bound; /usr/bin/time -v gives the command's alone)\n", flush=True)


def _profile_table(rows: list[dict]) -> None:
    """CPU seconds of each stage alone, in one process, over ``rows`` as the judge runs
    them: steps of PIPELINE_ROWS rows, one cold encoder cache for the whole file."""
    from rag_eval.judges.local import PIPELINE_ROWS, embed_items, featurize_items, judged_texts, labels_from_features

    cpu = time.process_time
    t0 = cpu()
    items = [item_from_row(json.loads(_json_row(r))) for r in rows]
    stages = {"read rows + sentence keys (`item_from_row`)": cpu() - t0}
    t0 = cpu()
    judge = LocalJudge()
    judge.embedder.encode(["warm up"])
    judge.embedder.clear()
    stages["start-up: model JSON, the encoder loaded, first call"] = cpu() - t0
    embed = feats = labels = 0.0
    encoded = 0
    cache = judge.embedder.cache
    for start in range(0, len(items), PIPELINE_ROWS):
        step = items[start:start + PIPELINE_ROWS]
        encoded += sum(text not in cache for text in judged_texts(step))
        t0 = cpu()
        embedded = embed_items(step, judge.embedder)
        embed += cpu() - t0
        t0 = cpu()
        row_feats = featurize_items(step, None, embedded)
        feats += cpu() - t0
        t0 = cpu()
        for item, f in zip(step, row_feats):
            if not isinstance(f, str):
                labels_from_features(item, f, judge.model)
        labels += cpu() - t0
    stages["embedding (tokenise, encode, pool)"] = embed
    stages["features (`row_features`)"] = feats
    stages["heads + labels (`labels_from_features`)"] = labels
    n, total = len(items), sum(stages.values())
    print(f"## Where the CPU goes ({n} rows, one process, load {os.getloadavg()[0]:.1f}; "
          f"{encoded / n:.1f} texts per row reached the encoder)\n")
    print("| stage | CPU s | CPU ms/row | share |")
    print("|---|---:|---:|---:|")
    for name, seconds in stages.items():
        print(f"| {name} | {seconds:.1f} | {1000 * seconds / n:.1f} | {100 * seconds / total:.0f}% |")
    print(f"| **total** | {total:.1f} | {1000 * total / n:.1f} | 100% |\n", flush=True)


def _quality_tables(rows: list[dict], args: argparse.Namespace) -> int:
    fallback = JudgeEncoder(cache_size=50_000)
    embedder = ArrayEmbedder.from_cache(args.cache, fallback=fallback)
    t0 = time.perf_counter()
    ds = build_dataset(rows, embedder)
    build_s = time.perf_counter() - t0
    results = leave_one_subset_out(ds, seed=args.seed)

    print(f"## Leave-one-subset-out ({len(ds.items)} rows, {len(ds.skipped)} skipped; seed {args.seed};"
          f" features built in {build_s:.0f}s)\n")
    print("| held-out subset | test rows | hallucination AUROC | relevance RMSE | utilization RMSE | completeness RMSE "
          "| flagged / truly hallucinated | F1 (hallucinated) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {int(r['rows'])} | {_fmt(r['auroc'])} | {_fmt(r['rmse_relevance'])} | "
              f"{_fmt(r['rmse_utilization'])} | {_fmt(r['rmse_completeness'])} | "
              f"{r['flagged_rate']:.2f} / {r['hallucinated_rate']:.2f} | {_fmt(r['f1_hallucinated'])} |")
    keys = ("auroc", "rmse_relevance", "rmse_utilization", "rmse_completeness", "flagged_rate", "hallucinated_rate",
            "f1_hallucinated")
    mean = {k: float(np.nanmean([r[k] for r in results.values()])) for k in keys}
    print(f"| **mean** | {sum(int(r['rows']) for r in results.values())} | **{_fmt(mean['auroc'])}** | "
          f"**{_fmt(mean['rmse_relevance'])}** | **{_fmt(mean['rmse_utilization'])}** | "
          f"**{_fmt(mean['rmse_completeness'])}** | {mean['flagged_rate']:.2f} / {mean['hallucinated_rate']:.2f} | "
          f"{_fmt(mean['f1_hallucinated'])} |")
    base = {k: float(np.mean([r[f"baseline_rmse_{k}"] for r in results.values()]))
            for k in ("relevance", "utilization", "completeness")}
    print(f"| training-mean baseline (mean) |  | 0.500 | {_fmt(base['relevance'])} | {_fmt(base['utilization'])} | "
          f"{_fmt(base['completeness'])} |")
    for name, auroc, rel, util in REFERENCES:
        print(f"| {name} |  | {_fmt(auroc)} | {_fmt(rel)} | {_fmt(util)} |  |")
    print("\n## Hallucination AUROC: the judge against the lexical-novelty baseline (held-out subsets)\n")
    print("Baseline: the share of the response's content words (lower-cased, stop words dropped) that appear "
          "nowhere in its documents; it has no parameters. The judge: trained without the subset.\n")
    print("| held-out subset | test rows | judge AUROC | lexical baseline AUROC | judge ahead | lead [95% paired "
          "bootstrap] |")
    print("|---|---|---|---|---|---|")

    def lead(pooled: dict) -> str:
        lead = auroc_difference(pooled["hallucinated"], pooled["judge"], pooled["lexical"], n_boot=2000)
        if lead.value is None or lead.ci_low is None or lead.ci_high is None:
            return f"{_fmt(lead.value)} ({lead.reason})"
        return f"{lead.value:+.3f} [{lead.ci_low:+.3f}, {lead.ci_high:+.3f}]"

    for name, r in results.items():
        print(f"| {name} | {int(r['rows'])} | {_fmt(r['auroc'])} | {_fmt(r['auroc_lexical'])} | "
              f"{'yes' if r['auroc'] > r['auroc_lexical'] else '**no**'} | {lead(r['pooled'])} |")
    ahead = sum(r["auroc"] > r["auroc_lexical"] for r in results.values())
    print(f"| **mean of subsets** | | {_fmt(mean['auroc'])} | "
          f"{_fmt(float(np.nanmean([r['auroc_lexical'] for r in results.values()])))} | {ahead} of {len(results)} | |")
    everything = {k: [v for r in results.values() for v in r["pooled"][k]] for k in ("hallucinated", "judge", "lexical")}
    print(f"| **pooled** (every held-out row; 7 models) | {sum(int(r['rows']) for r in results.values())} | "
          f"{_fmt(pooled_auroc(results))} | {_fmt(pooled_auroc(results, 'lexical'))} | | {lead(everything)} |")
    print("\n## Calibration on the held-out subset (expected calibration error, 10 bins; Brier score)\n")
    print("| held-out subset | ECE P(grounded) | Brier P(grounded) | ECE P(supported) per sentence | "
          "ECE P(relevant) per sentence |")
    print("|---|---|---|---|---|")
    cal = ("ece_grounded", "brier_grounded", "ece_supported", "ece_relevant")
    for name, r in results.items():
        print(f"| {name} | " + " | ".join(_fmt(r[k]) for k in cal) + " |")
    print("| **mean** | " + " | ".join(_fmt(float(np.mean([r[k] for r in results.values()]))) for k in cal) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
