"""usdgrip batch plan --evaluate and batch evaluate: real workers, real stages, real MuJoCo.

Small on purpose (4 candidates, 1 trial): the physics is tested elsewhere; here, what a
row says, what --resume reruns, what a hostile grasp file gives, and that a Dask
LocalCluster gives the local pool's rows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from batch_hooks import REPO, USDGRIP, normalize, read_lines

from usdgrip.batch import EVALUATE_JOB, PLAN_JOB, run_batch
from usdgrip.batch.jobs import run_job
from usdgrip.cli import main

GRIPPER_FILE = REPO / "examples" / "gripper.usda"
GRIPPER = f"{GRIPPER_FILE}:/Gripper/tcp"
PHYSICS = ["--trials", "1", "--table"]
FAST_PLAN = ["--max-candidates", "4", "--evaluate", *PHYSICS]


def run_cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*USDGRIP, *args], capture_output=True, text=True, timeout=300, cwd=REPO, **kwargs
    )


def write_objects(root: Path) -> None:
    """The mug (nested) and the tote, and a file that is not USD."""
    (root / "kitchen").mkdir(parents=True)
    shutil.copy(REPO / "examples" / "mug.usda", root / "kitchen" / "mug.usda")
    shutil.copy(REPO / "examples" / "tote.usda", root / "tote.usda")
    (root / "broken.usda").write_text("not usd\n")


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> tuple[Path, Path, list[dict], subprocess.CompletedProcess]:
    """``batch plan --evaluate`` over the objects, on the local pool of 2 workers."""
    base = tmp_path_factory.mktemp("planned")
    root = base / "objects"
    write_objects(root)
    grasps = base / "grasps"
    done = run_cli(
        "batch", "plan", str(root), "--gripper", GRIPPER, "--out-dir", str(grasps),
        *FAST_PLAN, "--jobs", "2", "--out", str(base / "plan.jsonl"),
    )  # fmt: skip
    return root, grasps, read_lines(base / "plan.jsonl"), done


def test_plan_evaluate_rows_carry_the_physics(planned):
    from usdgrip.grasping.isaac_yaml import read_isaac_grasp

    _, grasps, rows, done = planned
    assert done.returncode == 1, done.stderr  # the broken file
    by_path = {row["path"]: row for row in rows}
    assert set(by_path) == {"kitchen/mug.usda", "tote.usda", "broken.usda"}
    mug = by_path["kitchen/mug.usda"]
    assert mug["status"] == "ok", mug
    out = mug["output"]
    assert out["file"] == "kitchen/mug.yaml" and out["object"] == "/Mug"
    assert 1 <= out["held"] <= out["grasps"] <= 4
    assert out["trials"] == out["grasps"]  # one trial each
    assert sum(out["outcomes"].values()) == out["trials"]
    assert out["success_rate"] == pytest.approx(out["outcomes"].get("held", 0) / out["trials"])
    written = read_isaac_grasp(grasps / "kitchen" / "mug.yaml")
    first = next(iter(written.grasps.values()))
    assert first.physics is not None and out["first_success_rate"] == first.physics.success_rate
    # ranked by measured success: the first is the best
    assert out["first_success_rate"] == max(c.physics.success_rate for c in written.grasps.values())
    assert by_path["broken.usda"]["status"] == "error"
    assert mug["duration_s"] > 0 and mug["job"]
    # the text summary: files, held/none, the worst files
    err = done.stderr
    assert "held " in err and "none held in" in err and "worst files" in err
    assert "kitchen/mug.usda" in err and "broken.usda" in err


def test_physics_options_need_evaluate_and_are_checked(tmp_path, capsys):
    argv = ["batch", "plan", str(REPO / "examples" / "mug.usda"), "--gripper", GRIPPER]
    argv += ["--out-dir", str(tmp_path / "g"), "-q"]
    assert main([*argv, "--trials", "2"]) == 2
    assert "--trials given without --evaluate" in capsys.readouterr().err
    assert main([*argv, "--evaluate", "--trials", "0"]) == 2
    assert "--trials 0" in capsys.readouterr().err
    assert main([*argv, "--evaluate", "--friction", "nan"]) == 2
    assert "--friction" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def evaluate_args(root: Path, grasps: Path, out_dir: Path, *extra: str) -> list[str]:
    return [
        "batch", "evaluate", str(root), "--gripper", GRIPPER, "--grasps-dir", str(grasps),
        "--out-dir", str(out_dir), *PHYSICS, "--jobs", "2", *extra,
    ]  # fmt: skip


@pytest.fixture
def library(planned, tmp_path) -> tuple[Path, Path]:
    """A private copy of the objects and their grasp files (tests change them)."""
    root, grasps, _, _ = planned
    shutil.copytree(root, tmp_path / "objects")
    shutil.copytree(grasps, tmp_path / "grasps")
    return tmp_path / "objects", tmp_path / "grasps"


def test_evaluate_reads_each_objects_grasp_file_and_resumes_by_signature(library, tmp_path, capsys):
    root, grasps = library
    out = tmp_path / "eval.jsonl"
    argv = evaluate_args(root, grasps, tmp_path / "evaluated", "--out", str(out))
    first = run_cli(*argv)
    assert first.returncode == 1, first.stderr  # broken.usda has no grasps (and is not USD)
    rows = {row["path"]: row for row in read_lines(out)}
    mug = rows["kitchen/mug.usda"]
    assert mug["status"] == "ok", mug
    assert mug["output"]["grasps_file"] == "kitchen/mug.yaml"
    assert (tmp_path / "evaluated" / "kitchen" / "mug.yaml").is_file()
    assert mug["inputs"]["grasps"] is not None  # the grasp file's sha256
    missing = rows["broken.usda"]
    assert missing["status"] == "error" and "no grasp file for broken.usda" in missing["error"]
    assert missing["inputs"] == {"grasps": None}

    def resume(*extra: str) -> tuple[dict, str]:  # in this process: the workers are real
        capsys.readouterr()
        code = main([*argv, "--resume", "--format", "json", *extra])
        done = capsys.readouterr()
        assert code in (0, 1), done.err
        return json.loads(done.out), done.err

    summary, _ = resume()
    assert summary["ran"] == 0 and summary["resumed"] == 3  # the missing file too
    # a changed grasp file reruns its object only
    text = (grasps / "kitchen" / "mug.yaml").read_text()
    (grasps / "kitchen" / "mug.yaml").write_text(text + "# touched\n")
    summary, _ = resume()
    assert summary["ran"] == 1 and "per-file input changed" in " ".join(summary["warnings"])
    # a grasp file that appears reruns the row that said it was missing
    shutil.copy(grasps / "tote.yaml", grasps / "broken.yaml")
    summary, _ = resume()
    assert summary["ran"] == 1
    # a changed object reruns it
    with open(root / "tote.usda", "a") as stream:
        stream.write("# edited\n")
    summary, _ = resume()
    assert summary["ran"] == 1
    # another physics option is another job definition: everything reruns
    summary, _ = resume("--force", "40")
    assert summary["ran"] == 3 and "different job definition" in " ".join(summary["warnings"])
    # so is another gripper file content
    gripper = tmp_path / "gripper.usda"
    shutil.copy(GRIPPER_FILE, gripper)
    argv[argv.index("--gripper") + 1] = f"{gripper}:/Gripper/tcp"
    summary, _ = resume("--force", "40")
    assert summary["ran"] == 3


def test_evaluate_reports_as_jsonl_and_junit(library, tmp_path):
    from xml.etree import ElementTree

    root, grasps = library
    argv = evaluate_args(root, grasps, tmp_path / "e", "--glob", "**/[mt]*.usda", "-q")
    done = run_cli(*argv, "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(row["path"] for row in rows) == ["kitchen/mug.usda", "tote.usda"]
    report = tmp_path / "junit.xml"
    done = run_cli(*argv, "--format", "junit", "--output", str(report))
    assert done.returncode == 0, done.stderr
    suites = ElementTree.parse(report).getroot()
    assert suites.get("name") == "usdgrip batch evaluate"
    assert suites.get("tests") == "2" and suites.get("failures") == "0"
    assert "candidate(s) held" in "".join(suites.itertext())


def test_hostile_grasp_files_are_rows_not_hangs(library, tmp_path):
    root, grasps = library
    (grasps / "tote.yaml").unlink()
    os.mkfifo(grasps / "tote.yaml")  # a named pipe would block the worker that opens it
    (grasps / "kitchen" / "mug.yaml").write_text("grasps: [[[[" * 2000 + "\n")
    shutil.copy(grasps / "kitchen" / "mug.yaml", grasps / "broken.yaml")
    started = time.perf_counter()
    result = run_batch(
        root,
        EVALUATE_JOB,
        params=evaluate_params(root, grasps, tmp_path / "e"),
        jobs=2,
        timeout=120,
    )
    assert time.perf_counter() - started < 60
    rows = {row["path"]: row for row in result.rows}
    assert rows["tote.usda"]["status"] == "error"
    assert "named pipe" in rows["tote.usda"]["error"], rows["tote.usda"]
    assert rows["kitchen/mug.usda"]["status"] == "error"
    assert "mug.yaml" in rows["kitchen/mug.usda"]["error"]
    assert "Traceback" not in json.dumps(result.rows)
    # a folder in the grasp file's place
    (grasps / "tote.yaml").unlink()
    (grasps / "tote.yaml").mkdir()
    row = run_job(str(root / "tote.usda"), EVALUATE_JOB, evaluate_params(root, grasps, tmp_path))
    assert row["status"] == "error" and "is a folder" in row["error"]


def evaluate_params(root: Path, grasps: Path, out_dir: Path) -> dict:
    return {
        "gripper": [str(GRIPPER_FILE), "/Gripper/tcp"],
        "grasps_dir": str(grasps),
        "out_dir": str(out_dir),
        "root": str(root),
        "table": True,
        "physics": {"trials": 1},
    }


def test_usage_errors_are_one_line_exit_two(library, tmp_path, capsys):
    root, grasps = library

    def refused(argv: list[str], *words: str) -> None:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        for word in words:
            assert word in err, err

    refused(evaluate_args(root, tmp_path / "nowhere", tmp_path / "e"), "--grasps-dir", "no such")
    (tmp_path / "file").write_text("x")
    refused(evaluate_args(root, tmp_path / "file", tmp_path / "e"), "is not a folder")
    refused(evaluate_args(root, grasps, grasps), "is the --grasps-dir")
    refused(evaluate_args(root, grasps, tmp_path / "file"), "--out-dir", "is a file")
    refused([*evaluate_args(root, grasps, tmp_path / "e"), "--trials", "-1"], "--trials")
    refused(
        [*evaluate_args(root, grasps, tmp_path / "e"), "--output", str(tmp_path / "r.xml")],
        "--output",
    )


def test_read_only_output_and_non_utf8_names_are_rows(library, tmp_path):
    root, grasps = library
    out_dir = tmp_path / "e"
    (out_dir / "kitchen").mkdir(parents=True)
    (out_dir / "kitchen" / "mug.yaml").write_text("old\n")
    os.chmod(out_dir / "kitchen" / "mug.yaml", 0o444)
    name = os.fsdecode(b"caf\xe9.usda")
    shutil.copy(root / "tote.usda", root / name)
    result = run_batch(
        root, EVALUATE_JOB, params=evaluate_params(root, grasps, out_dir), jobs=2, timeout=120
    )
    rows = {row["path"]: row for row in result.rows}
    mug = rows["kitchen/mug.usda"]
    assert mug["status"] == "error" and "read-only" in mug["error"], mug  # root too
    assert (out_dir / "kitchen" / "mug.yaml").read_text() == "old\n"
    assert rows["caf\\xe9.usda"]["status"] == "error"
    assert "not valid UTF-8" in rows["caf\\xe9.usda"]["error"]
    assert rows["tote.usda"]["status"] == "ok"


def test_an_object_changed_during_the_run_reruns_on_resume(library, tmp_path):
    root, grasps = library
    out = tmp_path / "rows.jsonl"
    params = evaluate_params(root, grasps, tmp_path / "e")
    hooks = f"{REPO / 'tests' / 'batch_hooks.py'}:evaluate_then_change"
    kwargs = {"glob": "tote.usda", "jobs": 1, "timeout": 120, "out": out}
    first = run_batch(root, hooks, params=params, **kwargs)
    assert first.rows[0]["status"] == "ok"
    again = run_batch(root, hooks, params=params, resume=True, **kwargs)
    assert again.summary["ran"] == 1  # the row's sha256 is of the file before the edit


def test_plan_evaluate_rows_are_identical_on_a_dask_local_cluster(library, tmp_path):
    distributed = pytest.importorskip("distributed")
    from usdgrip.batch import DaskExecutor

    root, _ = library
    params = {
        "grippers": [[str(GRIPPER_FILE), "/Gripper/tcp"]],
        "root": str(root),
        "out_dir": str(tmp_path / "g"),
        "max_candidates": 4,
        "seed": 0,
        "table": True,
        "evaluate": {"trials": 1},
    }
    local = run_batch(root, PLAN_JOB, params=params, jobs=2, timeout=120)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        executor = DaskExecutor(timeout=120, scheduler=cluster.scheduler_address)
        try:
            on_dask = run_batch(root, PLAN_JOB, params=params, executor=executor)
        finally:
            executor.close()
    assert normalize(on_dask.rows) == normalize(local.rows)
    assert on_dask.summary["physics"] == local.summary["physics"]
    assert local.summary["physics"]["held"] == 2


#: Two processes fill one cache at once: each waits for the start file, then decomposes
#: the same tori in opposite orders (so some entries are written by both, some read).
CACHE_WORKER = """
import sys, time, os
from pathlib import Path
import numpy as np, trimesh
sys.path.insert(0, {tests!r})
from test_physics_decompose import FAST
from usdgrip.grasping.physics import decompose_mesh
cache, go, out, order = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
meshes = [trimesh.creation.torus(0.04, 0.012, major_sections=s, minor_sections=8)
          for s in (16, 20, 24)]
while not go.exists():
    time.sleep(0.005)
arrays, methods = {{}}, []
for i in map(int, order):
    result = decompose_mesh(meshes[i].vertices, meshes[i].faces, FAST, cache_dir=cache)
    methods.append(result.parts[0].method)
    assert all(p.cache_error is None for p in result.parts), result.parts
    for j, piece in enumerate(result.pieces):
        arrays[f"m{{i}}_p{{j}}"] = piece
np.savez(out, **arrays)
print(" ".join(methods))
"""


def test_two_processes_fill_one_coacd_cache_at_once(tmp_path):
    import numpy as np
    import trimesh
    from test_physics_decompose import FAST

    from usdgrip.grasping.physics import decompose_mesh

    cache, go = tmp_path / "cache", tmp_path / "go"
    script = CACHE_WORKER.format(tests=str(REPO / "tests"))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(cache), str(go), str(tmp_path / f"{n}.npz"), order],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, order in (("a", "012"), ("b", "210"))
    ]
    time.sleep(1.5)  # both imported and waiting
    go.write_text("")
    outputs = [proc.communicate(timeout=240) for proc in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert set(out.split()) <= {"coacd", "cached"}, out
    assert sorted(p.name for p in cache.iterdir() if not p.name.endswith(".npz")) == []
    assert len(list(cache.glob("*.npz"))) == 3  # one entry per torus, none torn or temp
    a, b = (np.load(tmp_path / f"{n}.npz") for n in "ab")
    assert sorted(a.files) == sorted(b.files)
    for key in a.files:
        np.testing.assert_array_equal(a[key], b[key])  # both results the same, and correct
    # every entry reads back as the pieces both processes computed
    for i, sections in enumerate((16, 20, 24)):
        mesh = trimesh.creation.torus(0.04, 0.012, major_sections=sections, minor_sections=8)
        again = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=cache)
        assert [p.method for p in again.parts] == ["cached"]
        assert again.parts[0].cache_error is None
        assert len(again.pieces) == sum(key.startswith(f"m{i}_") for key in a.files)
        for j, cached in enumerate(again.pieces):
            np.testing.assert_array_equal(a[f"m{i}_p{j}"], cached)


def test_a_single_file_root_and_a_grasp_file_without_grasps(library, tmp_path):
    root, grasps = library
    (grasps / "tote.yaml").write_text("format: isaac_grasp\nformat_version: 1.0\ngrasps: {}\n")
    row = run_job(str(root / "tote.usda"), EVALUATE_JOB, evaluate_params(root, grasps, tmp_path))
    assert row["status"] == "findings", row  # nothing to hold: no candidate
    assert row["output"]["grasps"] == 0 and row["output"]["first_success_rate"] is None
    assert (tmp_path / "tote.yaml").is_file()
    # ROOT a file: its grasp file is DIR/<its name>.yaml (was a crash for batch plan too)
    shutil.copy(grasps / "kitchen" / "mug.yaml", grasps / "mug.yaml")
    argv = ["batch", "evaluate", str(root / "kitchen" / "mug.usda"), "--gripper", GRIPPER]
    argv += ["--grasps-dir", str(grasps), "--out-dir", str(tmp_path / "one"), *PHYSICS]
    assert main([*argv, "-q", "--jobs", "1"]) == 0
    assert (tmp_path / "one" / "mug.yaml").is_file()


def test_cli_evaluate_on_its_own_dask_local_cluster(library, tmp_path):
    pytest.importorskip("distributed")
    root, grasps = library
    argv = evaluate_args(root, grasps, tmp_path / "e", "--glob", "tote.usda")
    done = run_cli(*argv, "--executor", "dask", "--out", str(tmp_path / "d.jsonl"), "-q")
    assert done.returncode == 0, done.stderr
    local = run_cli(*argv, "--out", str(tmp_path / "l.jsonl"), "-q")
    assert local.returncode == 0, local.stderr
    on_dask, here = read_lines(tmp_path / "d.jsonl"), read_lines(tmp_path / "l.jsonl")
    assert normalize(on_dask) == normalize(here) and on_dask[0]["output"]["held"] > 0


def test_junit_fails_a_file_where_nothing_held(tmp_path, capsys):
    from xml.etree import ElementTree

    argv = ["batch", "plan", str(REPO / "examples" / "pan.usda"), "--gripper", GRIPPER]
    argv += ["--out-dir", str(tmp_path / "g"), *FAST_PLAN, "--jobs", "1", "-q"]
    assert main([*argv, "--format", "junit"]) == 1  # the pan gets no candidate
    suites = ElementTree.fromstring(capsys.readouterr().out)
    assert suites.get("name") == "usdgrip batch plan" and suites.get("failures") == "1"
    failure = suites.find("./testsuite/testcase/failure")
    assert failure is not None and "0 of 0 candidate(s) held" in failure.get("message")
