"""Batch throughput: 400 generated assets through the local pool and a Dask LocalCluster.

Prints, measured in one run on this machine:
- in-process baseline: ``usdgrip.validate`` called in a loop (files/s);
- local pool with 1 and 2 worker processes (files/s, speed-up of 2 over 1);
- the batch layer's per-file overhead: (1-worker wall time - baseline time) / files,
  which includes starting the worker, hashing, pickling and the pipes;
- the same through a Dask LocalCluster with 1 and 2 worker processes (cluster
  start-up reported apart, not counted in the throughput).

Targets (issue 7): 2 workers >= 1.7x 1 worker; overhead < 30 ms per file.
Run: ``.venv/bin/python bench/bench_batch.py [--files 400]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import usdgrip
from usdgrip.batch import DaskExecutor, run_batch

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = ("gripper.usda", "tote.usda", "mug.usda")


def write_assets(root: Path, count: int) -> None:
    """``count`` files cycling through the examples, in 20 folders."""
    sources = [(REPO / "examples" / name).read_text() for name in EXAMPLES]
    for i in range(count):
        folder = root / f"set_{i % 20:02d}"
        folder.mkdir(exist_ok=True)
        # A comment makes every file's content (and sha256) unique.
        text = sources[i % len(sources)].replace("#usda 1.0", f"#usda 1.0\n# asset {i}", 1)
        (folder / f"asset_{i:04d}.usda").write_text(text)


def time_in_process(files: list[Path]) -> float:
    usdgrip.validate(files[0])  # warm-up: imports, rule registry
    start = time.perf_counter()
    for file in files:
        usdgrip.validate(file)
    return time.perf_counter() - start


def time_batch(root: Path, **options) -> tuple[float, dict]:
    start = time.perf_counter()
    result = run_batch(root, **options)
    elapsed = time.perf_counter() - start
    assert result.summary["files"] == result.summary["ran"], result.summary
    assert result.summary["errors"] == 0, result.summary
    return elapsed, result.summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask figures")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="usdgrip-bench-batch-"))
    try:
        write_assets(root, args.files)
        files = sorted(root.rglob("*.usda"))
        n = len(files)
        print(f"{n} assets (copies of {', '.join(EXAMPLES)}), {os.cpu_count()} CPUs")
        inproc = time_in_process(files)
        print(f"in-process usdgrip.validate loop   {n / inproc:8.1f} files/s  ({inproc:.2f} s)")
        one, _ = time_batch(root, jobs=1)
        two, _ = time_batch(root, jobs=2)
        print(f"local pool, 1 worker               {n / one:8.1f} files/s  ({one:.2f} s)")
        print(f"local pool, 2 workers              {n / two:8.1f} files/s  ({two:.2f} s)")
        print(f"  speed-up 2 vs 1 worker           {one / two:8.2f}x   (target >= 1.7x)")
        overhead = (one - inproc) / n * 1000
        print(f"  batch overhead per file          {overhead:8.2f} ms  (target < 30 ms)")
        if not args.no_dask:
            from distributed import LocalCluster

            dask_times = {}
            for workers in (1, 2):
                start = time.perf_counter()
                cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=50,
                )
                executor = DaskExecutor(scheduler=cluster.scheduler_address)
                executor.start()
                started = time.perf_counter() - start
                try:
                    # The first run starts each worker's sandbox process; measure the second.
                    time_batch(root, executor=executor)
                    elapsed, _ = time_batch(root, executor=executor)
                finally:
                    executor.close()
                    cluster.close()
                dask_times[workers] = elapsed
                print(
                    f"dask LocalCluster, {workers} worker{'s' if workers > 1 else ' '}       "
                    f"{n / elapsed:8.1f} files/s  ({elapsed:.2f} s; cluster start {started:.1f} s)"
                )
            print(f"  speed-up 2 vs 1 worker           {dask_times[1] / dask_times[2]:8.2f}x")
            overhead = (dask_times[1] - inproc) / n * 1000
            print(f"  dask overhead per file           {overhead:8.2f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
