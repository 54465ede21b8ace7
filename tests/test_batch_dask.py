"""usdgrip batch on a real Dask LocalCluster: same isolation, same rows as the local pool.

One cluster per module (starting one takes seconds); one more test lets the
CLI start its own LocalCluster.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from batch_hooks import (
    GOOD,
    HOOK_PARAMS,
    HOOKS,
    REPO,
    TIMEOUT,
    USDGRIP,
    normalize,
    write_library,
)

from usdgrip.batch import DaskExecutor, run_batch

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")


@pytest.fixture(scope="module")
def cluster():
    # The workers' environment carries the test hooks, as a real cluster's would carry
    # its configuration: the CLI test below cannot hand them over any other way.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("USDGRIP_TEST_CRASH_ON", HOOK_PARAMS["crash_on"])
        patch.setenv("USDGRIP_TEST_SLOW_ON", HOOK_PARAMS["slow_on"])
        # A task whose Dask worker dies fails at once (no retries on other workers).
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            local_cluster = distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
    with local_cluster:
        yield local_cluster


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    root = tmp_path_factory.mktemp("library")
    return root, write_library(root)


def test_dask_rows_are_identical_to_the_local_pool(cluster, library, tmp_path):
    root, expected = library
    executor = DaskExecutor(timeout=TIMEOUT, scheduler=cluster.scheduler_address)
    # Chunks of 4 files: the crash and the hang happen inside a chunk, whose other
    # files must still get their own rows from a fresh sandbox.
    chunked = DaskExecutor(timeout=TIMEOUT, scheduler=cluster.scheduler_address, chunk_size=4)
    try:
        on_dask = run_batch(root, HOOKS, params=HOOK_PARAMS, executor=executor)
        in_chunks = run_batch(root, HOOKS, params=HOOK_PARAMS, executor=chunked)
    finally:
        executor.close()
        chunked.close()
    local = run_batch(root, HOOKS, params=HOOK_PARAMS, jobs=2, timeout=TIMEOUT)
    assert {row["path"]: row["status"] for row in on_dask.rows} == expected
    assert normalize(on_dask.rows) == normalize(local.rows)
    assert normalize(in_chunks.rows) == normalize(local.rows)
    assert on_dask.summary["executor"] == "dask"
    crash = next(row for row in on_dask.rows if row["status"] == "crashed")
    assert "killed by SIGSEGV" in crash["error"]
    # The Dask workers survived: the crash and the hang only cost sandbox processes.
    assert len(cluster.scheduler_info["workers"]) == 2


def test_dask_cli_with_a_scheduler_streams_rows_and_resumes(cluster, library, tmp_path):
    root, expected = library
    out = tmp_path / "rows.jsonl"
    command = [
        *USDGRIP, "batch", "validate", str(root), "--executor", "dask",
        "--scheduler", cluster.scheduler_address, "--job", HOOKS, "--out", str(out),
        "--timeout", str(TIMEOUT), "--format", "json",
    ]  # fmt: skip
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.returncode == 1, first.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {row["path"]: row["status"] for row in rows} == expected
    assert len(rows) == len(expected)
    summary = json.loads(first.stdout)
    assert summary["executor"] == "dask" and summary["ran"] == len(expected)
    again = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)["ran"] == 0
    assert json.loads(again.stdout)["resumed"] == len(expected)


def test_dask_cli_starts_its_own_local_cluster(tmp_path):
    result = subprocess.run(
        [*USDGRIP, "batch", "validate", str(REPO / "examples"), "--glob", "gripper.usda",
         "--executor", "dask", "--jobs", "1", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["files"], summary["ok"], summary["executor"]) == (1, 1, "dask")


def test_ctrl_c_ends_a_dask_run_quietly_with_exit_130(tmp_path):
    # Ctrl-C at a terminal signals the whole process group: the CLI, its LocalCluster's
    # worker processes and their sandboxes. Only "interrupted" may be printed.
    root = tmp_path / "lib"
    root.mkdir()
    for i in range(30):
        (root / f"a{i:02d}.usda").write_text(GOOD)
    out = tmp_path / "r.jsonl"
    process = subprocess.Popen(
        [*USDGRIP, "batch", "validate", str(root), "--executor", "dask", "--jobs", "2",
         "--out", str(out), "--quiet", "--job", HOOKS],
        env={**os.environ, "USDGRIP_TEST_DELAY": "0.5"}, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        if out.exists() and out.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr == "usdgrip batch: interrupted\n" and stdout == ""
    assert 2 <= out.read_text().count("\n") < 30  # finished rows kept


def test_a_lost_dask_worker_becomes_a_crashed_row(cluster, tmp_path):
    # Last in the module: the killed Dask worker is restarted by its nanny afterwards.
    for name in ("a.usda", "killer.usda", "z.usda"):
        (tmp_path / name).write_text(GOOD)
    job = HOOKS.replace(":validate_with_hooks", ":kill_parent")
    executor = DaskExecutor(scheduler=cluster.scheduler_address, chunk_size=1)
    try:
        result = run_batch(tmp_path, job, params={"kill_on": "killer.usda"}, executor=executor)
    finally:
        executor.close()
    rows = {row["path"]: row for row in result.rows}
    assert sorted(rows) == ["a.usda", "killer.usda", "z.usda"]
    assert rows["killer.usda"]["status"] == "crashed"
    assert rows["killer.usda"]["error"].startswith("Dask task failed (KilledWorker: ")
    # Files Dask had already queued on the same worker are lost with it (no retries here).
    for name in ("a.usda", "z.usda"):
        assert rows[name]["status"] == "ok" or rows[name]["error"].startswith(
            "Dask task failed (KilledWorker: "
        )
