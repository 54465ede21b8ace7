"""usdgrip batch: real worker processes, a real library on disk, the real CLI (no mocks).

The fault hooks (segfault, hang, per-file delay) live only in the test job
``tests/batch_hooks.py``, passed to the batch layer by path.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from batch_hooks import (
    GOOD,
    HOOK_PARAMS,
    HOOKS,
    REPO,
    TIMEOUT,
    USDGRIP,
    normalize,
    read_lines,
    write_library,
)

from usdgrip.batch import BatchResult, find_batch_files, run_batch
from usdgrip.batch.jobs import compute_file_facts, resolve_job, run_job
from usdgrip.batch.progress import format_duration, format_progress
from usdgrip.batch.results import (
    ResultsWriter,
    format_summary,
    read_results,
    should_skip,
    summarize_rows,
)
from usdgrip.batch.worker import summarize_stderr
from usdgrip.cli import main


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("library")
    return root, write_library(root)


@pytest.fixture(scope="module")
def local_run(library, tmp_path_factory) -> tuple[BatchResult, Path]:
    root, _ = library
    out = tmp_path_factory.mktemp("out") / "results.jsonl"
    result = run_batch(root, HOOKS, params=HOOK_PARAMS, jobs=2, timeout=TIMEOUT, out=out)
    return result, out


# --- the local process pool ------------------------------------------------------


def test_every_file_gets_exactly_one_row(library, local_run):
    _, expected = library
    result, out = local_run
    statuses = {row["path"]: row["status"] for row in result.rows}
    assert statuses == expected
    assert len(result.rows) == len(expected)
    assert normalize(read_lines(out)) == normalize(result.rows)


def test_rows_carry_the_file_facts_and_the_issues(library, local_run):
    root, _ = library
    rows = {row["path"]: row for row in local_run[0].rows}
    good = rows["good_00.usda"]
    assert list(good)[:8] == [
        "path", "size", "mtime", "sha256", "status", "duration_s", "counts", "issues"
    ]  # fmt: skip
    facts = compute_file_facts(root / "good_00.usda")
    assert (good["size"], good["mtime"], good["sha256"]) == (
        facts["size"], facts["mtime"], facts["sha256"]
    )  # fmt: skip
    assert good["error"] is None and good["duration_s"] > 0
    assert not good["counts"].get("failure")
    finding = rows["grip_line.usda"]
    assert finding["counts"]["failure"] >= 1
    gr003 = [issue for issue in finding["issues"] if issue["code"] == "GR.003"]
    assert gr003 and gr003[0]["prim"] == "/Gripper/tcp"
    assert gr003[0]["severity"] == "failure" and gr003[0]["rule"] == "gripper-grip-line"


def test_crash_timeout_and_error_rows_say_what_happened(local_run):
    rows = {row["path"]: row for row in local_run[0].rows}
    crash = rows["crash.usda"]
    assert "killed by SIGSEGV while processing this file" in crash["error"]
    assert "Fatal Python error: Segmentation fault" in crash["error"]
    assert "validate_with_hooks (batch_hooks.py:" in crash["error"]
    assert crash["sha256"] == rows["good_00.usda"]["sha256"]  # same content, hashed anyway
    slow = rows["slow.usda"]
    assert slow["error"].startswith(f"no result after {TIMEOUT:g} s (--timeout)")
    assert TIMEOUT <= slow["duration_s"] < TIMEOUT + 5
    bad = rows["unreadable.usda"]
    assert bad["error"].startswith("StageOpenError: ")
    assert "unreadable.usda" in bad["error"]
    assert bad["sha256"] is not None and bad["counts"] == {}


def test_summary_counts_statuses_and_codes(library, local_run):
    _, expected = library
    summary = local_run[0].summary
    assert summary["files"] == summary["ran"] == len(expected)
    assert (summary["ok"], summary["findings"], summary["error"]) == (7, 1, 1)
    assert (summary["timeout"], summary["crashed"], summary["errors"]) == (1, 1, 3)
    assert summary["by_code"]["GR.003"] == 1
    assert summary["executor"] == "local" and summary["files_per_s"] > 0
    assert local_run[0].exit_code == 1
    text = format_summary(summary, [r for r in local_run[0].rows if r["status"] != "ok"])
    assert "crashed  crash.usda: worker process was killed by SIGSEGV" in text
    assert "findings grip_line.usda: GR.003" in text


def test_workers_are_replaced_after_a_crash(tmp_path):
    # Every file after the crash (one worker) still gets a real row.
    for name in ("a.usda", "b.usda", "c.usda"):
        (tmp_path / name).write_text(GOOD)
    result = run_batch(tmp_path, HOOKS, params={"crash_on": "a.usda"}, jobs=1, timeout=30)
    statuses = {row["path"]: row["status"] for row in result.rows}
    assert statuses == {"a.usda": "crashed", "b.usda": "ok", "c.usda": "ok"}


def test_the_shipped_job_validates_the_examples():
    result = run_batch(REPO / "examples", jobs=1)
    keys = {row["path"] for row in result.rows}
    assert {"gripper.usda", "mug.usda", "tote.usda"} <= keys
    gripper = next(row for row in result.rows if row["path"] == "gripper.usda")
    assert gripper["status"] == "ok", gripper


# --- resume ------------------------------------------------------------------


def test_resume_reruns_changed_files_and_failures_only_when_asked(tmp_path, monkeypatch):
    root = tmp_path / "lib"
    root.mkdir()
    expected = write_library(root, good=2)
    expected["slow.usda"] = "ok"  # no hang here: keep the test short
    out = tmp_path / "results.jsonl"
    # The crash hook comes from the environment: the job definition stays the same.
    monkeypatch.setenv("USDGRIP_TEST_CRASH_ON", "crash.usda")
    run_batch(root, HOOKS, jobs=2, out=out)
    first = read_lines(out)
    assert len(first) == len(expected)

    (root / "good_01.usda").write_text(GOOD.replace("0.085", "0.09"))  # new content, new hash
    ran: list[str] = []
    again = run_batch(
        root, HOOKS, out=out, resume=True,
        on_row=lambda row: ran.append(row["path"]),
    )  # fmt: skip
    assert ran == ["good_01.usda"]
    assert again.summary["resumed"] == len(expected) - 1
    rows = read_lines(out)
    assert sorted(r["path"] for r in rows) == sorted(expected)  # still one row per file

    ran.clear()
    monkeypatch.delenv("USDGRIP_TEST_CRASH_ON")
    run_batch(
        root, HOOKS, out=out, resume=True, retry_failed=True,
        on_row=lambda row: ran.append(row["path"]),
    )  # fmt: skip
    assert sorted(ran) == ["crash.usda", "unreadable.usda"]
    rows = {r["path"]: r for r in read_lines(out)}
    assert len(rows) == len(read_lines(out)) == len(expected)
    assert rows["crash.usda"]["status"] == "ok"
    assert rows["unreadable.usda"]["status"] == "error"


def test_resume_after_the_cli_is_killed_runs_only_the_missing_files(tmp_path):
    root = tmp_path / "lib"
    root.mkdir()
    total = 14
    for i in range(total):
        (root / f"asset_{i:02d}.usda").write_text(GOOD)
    out = tmp_path / "results.jsonl"
    command = [
        *USDGRIP, "batch", "validate", str(root), "--jobs", "2", "--out", str(out), "--job", HOOKS,
    ]  # fmt: skip
    env = {**os.environ, "USDGRIP_TEST_DELAY": "0.4"}
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if out.exists() and out.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    before = out.read_text()
    done = {row["path"] for row in read_results(out).values()}
    assert 3 <= len(done) < total, "the run finished before it could be killed"

    resumed = subprocess.run(
        [*USDGRIP, "batch", "validate", str(root), "--out", str(out), "--resume",
         "--format", "json", "--job", HOOKS],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["ran"] == total - len(done)
    assert summary["resumed"] == len(done) and summary["files"] == total
    after = out.read_text()
    complete = before[: before.rfind("\n") + 1]
    assert after.startswith(complete)  # finished rows kept byte for byte
    new_paths = [row["path"] for row in map(json.loads, after[len(complete) :].splitlines())]
    assert sorted(new_paths) == sorted(f"asset_{i:02d}.usda" for i in range(total) if
                                       f"asset_{i:02d}.usda" not in done)  # fmt: skip


# --- the CLI -----------------------------------------------------------------


def run_cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*USDGRIP, *args], capture_output=True, text=True, timeout=120, **kwargs)


def test_cli_progress_lines_without_a_terminal_and_none(tmp_path):
    lines = run_cli("batch", "validate", str(REPO / "examples"), "--progress", "lines",
                    "--out", str(tmp_path / "a.jsonl"))  # fmt: skip
    assert lines.returncode in (0, 1), lines.stderr
    shown = [line for line in lines.stderr.splitlines() if line.startswith("usdgrip batch: files")]
    assert shown and "files/s" in shown[0] and "\r" not in lines.stderr
    assert shown[-1].startswith("usdgrip batch: files ") and "(100%" in shown[-1]
    silent = run_cli("batch", "validate", str(REPO / "examples"), "--progress", "none",
                     "--out", str(tmp_path / "b.jsonl"))  # fmt: skip
    assert "usdgrip batch: files" not in silent.stderr
    bad = run_cli("batch", "validate", str(REPO / "examples"), "--progress", "often")
    assert bad.returncode == 2 and "--progress" in bad.stderr


def test_cli_validate_examples_text_and_json(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    text = run_cli("batch", "validate", str(REPO / "examples"), "--out", str(out))
    assert text.returncode in (0, 1), text.stderr
    assert text.stdout == ""
    assert "files " in text.stderr and "throughput" in text.stderr
    assert "\r" not in text.stderr  # no progress bar when stderr is not a terminal
    code = main(
        ["batch", "validate", str(REPO / "examples"), "--format", "json", "--out", str(out)]
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["files"] == len(read_lines(out)) >= 3
    assert code == (0 if summary["ok"] == summary["files"] else 1)


def test_cli_exit_one_on_findings_and_crashes(library, tmp_path):
    root, expected = library
    result = run_cli(
        "batch", "validate", str(root), "--job", HOOKS, "--format", "json", "--quiet",
        env={**os.environ, "USDGRIP_TEST_CRASH_ON": "crash.usda"},
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["files"], summary["crashed"], summary["timeout"]) == (len(expected), 1, 0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{missing}"], "{missing}: no such file or directory"),
        (["{root}", "--glob", "a/**b"], "--glob 'a/**b': Invalid pattern"),
        (["{root}", "--glob", "/abs/*.usda"], "expected a pattern relative to ROOT"),
        (["{root}", "--glob", "*.obj"], "no file matches --glob '*.obj'"),
        (["{root}", "--executor", "dask", "--scheduler", "nonsense"],
         "--scheduler 'nonsense': expected a Dask scheduler address"),
        (["{root}", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:{port}"],
         "cannot reach the Dask scheduler (Connection refused)"),
        (["{root}", "--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --executor dask"),
        (["{root}", "--resume"], "--resume and --retry-failed need --out FILE"),
        (["{root}", "--out", "{out}", "--retry-failed"], "--retry-failed only makes sense"),
    ],
)  # fmt: skip
def test_cli_usage_errors_are_one_line_exit_two(tmp_path, capsys, args, message):
    # In-process through the real entry point (a subprocess per case costs a USD import each).
    (tmp_path / "a.usda").write_text(GOOD)
    values = {
        "root": str(tmp_path), "missing": str(tmp_path / "missing"),
        "out": str(tmp_path / "o.jsonl"), "port": str(free_port()),
    }  # fmt: skip
    code = main(["batch", "validate", *(a.format(**values) for a in args)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("usdgrip batch: ")
    assert message.format(**values) in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert captured.out == ""
    assert not (tmp_path / "o.jsonl").exists()


def test_cli_argument_errors_exit_two(tmp_path, capsys):
    for args in (["--jobs", "0"], ["--timeout", "soon"]):
        with pytest.raises(SystemExit) as exit_:
            main(["batch", "validate", str(REPO / "examples"), *args])
        assert exit_.value.code == 2 and "usdgrip: error: argument" in capsys.readouterr().err
    assert main(["batch"]) == 2
    assert "expected an action: usdgrip batch validate|plan" in capsys.readouterr().err
    plan = ["batch", "plan", str(REPO / "examples"), "--out-dir", str(tmp_path / "x")]
    assert main([*plan, "--gripper", "nofile.usda:/G"]) == 2
    assert "--gripper 'nofile.usda:/G': nofile.usda: no such file" in capsys.readouterr().err
    assert main([*plan, "--gripper", "nocolon"]) == 2
    assert "expected FILE:/Site/Path" in capsys.readouterr().err


# --- batch plan ----------------------------------------------------------------


def test_cli_plan_writes_one_isaac_grasp_file_per_object(tmp_path):
    from usdgrip.grasping.isaac_yaml import read_isaac_grasp

    root = tmp_path / "objects"
    (root / "kitchen").mkdir(parents=True)
    (root / "kitchen" / "mug.usda").write_bytes((REPO / "examples" / "mug.usda").read_bytes())
    (root / "broken.usda").write_text("not usd\n")
    gripper = REPO / "examples" / "gripper.usda"
    out_dir = tmp_path / "grasps"
    result = run_cli(
        "batch", "plan", str(root), "--gripper", f"{gripper}:/Gripper/tcp",
        "--out-dir", str(out_dir), "--max-candidates", "5", "--out", str(tmp_path / "p.jsonl"),
        "--format", "json",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr  # the broken file
    rows = {row["path"]: row for row in read_lines(tmp_path / "p.jsonl")}
    mug = rows["kitchen/mug.usda"]
    assert mug["status"] == "ok", mug
    assert mug["output"]["file"] == "kitchen/mug.yaml" and mug["output"]["object"] == "/Mug"
    assert 1 <= mug["output"]["grasps"] <= 5
    grasps = read_isaac_grasp(out_dir / "kitchen" / "mug.yaml")
    assert len(grasps.grasps) == mug["output"]["grasps"]
    assert rows["broken.usda"]["status"] == "error"
    assert not list(out_dir.rglob("*.tmp")) and not list(out_dir.rglob(".*"))


def test_plan_leaves_out_the_gripper_files(tmp_path):
    gripper = tmp_path / "gripper.usda"
    gripper.write_bytes((REPO / "examples" / "gripper.usda").read_bytes())
    (tmp_path / "tote.usda").write_bytes((REPO / "examples" / "tote.usda").read_bytes())
    keys = [key for key, _ in find_batch_files(tmp_path, exclude=[gripper])]
    assert keys == ["tote.usda"]


# --- pieces ------------------------------------------------------------------


def test_find_batch_files_single_file_and_nested(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.usdc").write_bytes(b"")
    (tmp_path / "y.usda").write_text(GOOD)
    assert [k for k, _ in find_batch_files(tmp_path)] == ["a/b/x.usdc", "y.usda"]
    assert find_batch_files(tmp_path / "y.usda") == [("y.usda", (tmp_path / "y.usda").resolve())]


def test_run_job_turns_every_failure_into_a_row(tmp_path):
    file = tmp_path / "a.usda"
    file.write_text(GOOD)
    row = run_job(str(tmp_path / "missing.usda"), "usdgrip.batch.jobs:validate_file")
    assert row["status"] == "error" and row["sha256"] is None
    assert "No such file" in row["error"]
    row = run_job(str(file), "usdgrip.batch.jobs:nothing")
    assert row["error"] == (
        "ValueError: job 'usdgrip.batch.jobs:nothing': usdgrip.batch.jobs has no function 'nothing'"
    )
    row = run_job(str(file), "json:dumps")  # returns a str, not a row
    assert row["status"] == "error" and "ValueError" in row["error"]
    row = run_job(str(file), f"{HOOKS.rpartition(':')[0]}:not_json")
    assert row["status"] == "error"
    assert (
        "returned a row that is not JSON: Object of type set is not JSON serializable"
        in (row["error"])
    )
    with pytest.raises(ValueError, match=r"expected 'package\.module:function'"):
        resolve_job("no_colon")
    with pytest.raises(ValueError, match="cannot import"):
        resolve_job(f"{tmp_path / 'missing.py'}:job")


def test_results_file_tolerates_a_torn_line_and_keeps_the_last_row(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text('{"path": "a", "status": "ok", "sha256": "1"}\n'
                   '{"path": "b", "status": "ok"}\n{"path": "a", "status": "error", "sha256": "1"}\n'
                   '{"path": "c", "sta')  # fmt: skip
    rows = read_results(out)
    assert sorted(rows) == ["a", "b"] and rows["a"]["status"] == "error"
    assert should_skip(rows["a"], "1", retry_failed=False)
    assert not should_skip(rows["a"], "1", retry_failed=True)
    assert not should_skip(rows["a"], "2", retry_failed=False)
    assert not should_skip(None, "1", retry_failed=False)
    with ResultsWriter(out, keep=[rows["b"]]) as writer:
        writer.append({"path": "d", "status": "ok"})
    assert [r["path"] for r in read_lines(out)] == ["b", "d"]


def test_summary_and_progress_formatting():
    rows = [
        {"path": "a", "status": "ok", "counts": {"warning": 1},
         "issues": [{"code": "GR.006", "severity": "warning"}]},
        {"path": "b", "status": "timeout", "counts": {}, "error": "no result"},
    ]  # fmt: skip
    summary = summarize_rows(rows, ran=1, elapsed_s=2.0, executor="local", jobs=2)
    assert summary["resumed"] == 1 and summary["files_per_s"] == 0.5
    assert summary["by_code"] == {"GR.006": 1} and summary["errors"] == 1
    assert format_duration(75) == "1m15s" and format_duration(3725) == "1h02m"
    assert format_progress(1, 4, 2.0) == "files 1/4  0.5 files/s  ETA 6s"


def test_summarize_stderr_keeps_the_error_and_innermost_calls():
    text = (
        "Warning: something\nFatal Python error: Segmentation fault\n\n"
        "Current thread 0x00007f (most recent call first):\n"
        '  File "/x/ctypes/__init__.py", line 519 in string_at\n'
        '  File "/t/batch_hooks.py", line 40 in validate_with_hooks\n'
        '  File "/u/jobs.py", line 141 in run_job\n  File "/u/worker.py", line 9 in main\n'
    )
    assert summarize_stderr(text) == (
        "Fatal Python error: Segmentation fault; innermost calls: string_at (__init__.py:519), "
        "validate_with_hooks (batch_hooks.py:40), run_job (jobs.py:141)"
    )
    assert summarize_stderr("a\nb\nc\nd\n") == "b | c | d"


def test_cli_rule_selects_the_rules_that_run(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    code = main(
        ["batch", "validate", str(REPO / "examples" / "broken"), "--rule", "GR.003",
         "--out", str(out), "--format", "json", "--jobs", "1"]
    )  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert code == 1 and summary["failed"] == 1
    assert set(summary["by_code"]) == {"GR.003"}
    codes = {issue["code"] for row in read_lines(out) for issue in row["issues"]}
    assert codes == {"GR.003"}
