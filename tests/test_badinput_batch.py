"""usdgrip batch on bad input: resume across job definitions, unusable matches, --jobs,
an --out-dir that cannot be created (the real CLI, real worker processes)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from batch_hooks import GOOD, ONE_POINT_GRIP_LINE, REPO, read_lines

from usdgrip.batch import run_batch
from usdgrip.batch.executors import max_jobs
from usdgrip.cli import main

GRIPPER = f"{REPO / 'examples' / 'gripper.usda'}:/Gripper/tcp"


def batch(capsys, *args: str) -> tuple[int, dict, str]:
    """Run ``usdgrip batch ...`` in-process: exit code, JSON summary, stderr."""
    code = main(["batch", *args, "--format", "json", "--quiet"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else {}, captured.err


# --- 1. --resume reuses only rows of the same job definition --------------------------


def test_resume_reruns_rows_of_another_rule_selection(tmp_path, capsys):
    root = tmp_path / "lib"
    root.mkdir()
    (root / "good.usda").write_text(GOOD)
    (root / "grip_line.usda").write_text(ONE_POINT_GRIP_LINE)  # a GR.003 failure
    out = str(tmp_path / "r.jsonl")

    code, summary, _ = batch(capsys, "validate", str(root), "--rule", "GR.001", "--out", out)
    assert code == 0 and summary["ok"] == 2  # GR.001 alone finds nothing
    code, summary, err = batch(capsys, "validate", str(root), "--out", out, "--resume")
    assert summary["ran"] == 2 and summary["resumed"] == 0
    assert code == 1 and summary["findings"] == 1  # the full rule set finds GR.003
    assert "2 row(s) from a different job definition re-run" in err
    assert "2 row(s) from a different job definition re-run" in summary["warnings"][0]
    rows = read_lines(Path(out))
    assert len(rows) == 2 and len({row["job"] for row in rows}) == 1

    code, summary, err = batch(capsys, "validate", str(root), "--out", out, "--resume")
    assert (summary["ran"], summary["resumed"], summary["findings"]) == (0, 2, 1)
    assert "different job definition" not in err

    # A row written before rows carried "job" is run again, not trusted.
    Path(out).write_text(
        "".join(json.dumps({k: v for k, v in row.items() if k != "job"}) + "\n" for row in rows)
    )
    code, summary, err = batch(capsys, "validate", str(root), "--out", out, "--resume")
    assert summary["ran"] == 2 and "2 row(s) from a different job definition re-run" in err


def test_resume_of_plan_reruns_validation_rows_other_grippers_and_out_dirs(tmp_path, capsys):
    root = tmp_path / "objects"
    root.mkdir()
    for name in ("mug.usda", "tote.usda"):
        shutil.copy(REPO / "examples" / name, root / name)
    gripper = tmp_path / "gripper.usda"
    shutil.copy(REPO / "examples" / "gripper.usda", gripper)
    out = str(tmp_path / "mix.jsonl")
    # 10: the tote is planned on its mesh only (its slots are a two-handed group), and
    # fewer proposals all collide with its walls.
    plan = ["plan", str(root), "--gripper", f"{gripper}:/Gripper/tcp", "--max-candidates", "10"]
    plan += ["--out", out, "--resume"]

    assert batch(capsys, "validate", str(root), "--out", out)[0] == 0
    code, summary, err = batch(capsys, *plan, "--out-dir", str(tmp_path / "a"))
    assert code == 0 and summary["ran"] == 2 and "2 row(s) from a different job" in err
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["mug.yaml", "tote.yaml"]
    assert all("output" in row for row in read_lines(Path(out)))

    code, summary, _ = batch(capsys, *plan, "--out-dir", str(tmp_path / "a"))
    assert (summary["ran"], summary["resumed"]) == (0, 2)  # same job: reused

    (tmp_path / "a" / "mug.yaml").unlink()  # a reused row needs its grasp file
    code, summary, err = batch(capsys, *plan, "--out-dir", str(tmp_path / "a"))
    assert summary["ran"] == 1 and "1 row(s) whose output file is gone re-run" in err
    assert (tmp_path / "a" / "mug.yaml").is_file()

    code, summary, err = batch(capsys, *plan, "--out-dir", str(tmp_path / "b"))
    assert summary["ran"] == 2 and "different job definition" in err
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["mug.yaml", "tote.yaml"]

    gripper.write_text(gripper.read_text() + "\n")  # new gripper content, same path
    code, summary, err = batch(capsys, *plan, "--out-dir", str(tmp_path / "b"))
    assert summary["ran"] == 2 and "different job definition" in err


# --- 2. a matched path that is not a readable file gets an error row ------------------


def test_broken_and_looping_links_and_fifos_get_error_rows(tmp_path, capsys):
    root = tmp_path / "lib"
    root.mkdir()
    (root / "good.usda").write_text(GOOD)
    (root / "broken.usda").symlink_to("nowhere.usda")
    (root / "loop.usda").symlink_to("loop.usda")
    os.mkfifo(root / "pipe.usda")  # opening it would block a worker forever
    (root / "null.usda").symlink_to("/dev/null")  # a device streams (here: nothing) forever
    (root / "folder.usda").mkdir()  # a folder the glob matches is not a file: left out
    out = str(tmp_path / "r.jsonl")

    code, summary, _ = batch(capsys, "validate", str(root), "--out", out)
    assert code == 1 and summary["files"] == 5 and summary["error"] == 4
    rows = {row["path"]: row for row in read_lines(Path(out))}
    assert sorted(rows) == ["broken.usda", "good.usda", "loop.usda", "null.usda", "pipe.usda"]
    assert rows["good.usda"]["status"] == "ok"
    assert (
        "broken.usda: broken symbolic link (it points to 'nowhere.usda'"
        in (rows["broken.usda"]["error"])
    )
    assert "loop.usda: symbolic link loop" in rows["loop.usda"]["error"]
    assert "pipe.usda: is a named pipe (FIFO), not a regular file" in rows["pipe.usda"]["error"]
    assert "null.usda: is a character device, not a regular file" in rows["null.usda"]["error"]
    assert all(rows[key]["status"] == "error" for key in ("broken.usda", "loop.usda"))

    # Only unusable matches: still one row each, not "no file matches".
    (root / "good.usda").unlink()
    (root / "pipe.usda").unlink()
    (root / "null.usda").unlink()
    code, summary, _ = batch(capsys, "validate", str(root), "--out", out, "--resume")
    assert code == 1 and summary["files"] == summary["error"] == 2


# --- 3. --jobs is capped ---------------------------------------------------------------


def test_jobs_above_the_maximum_is_usage_and_runs_start_no_more_workers_than_files(
    tmp_path, capsys
):
    (tmp_path / "a.usda").write_text(GOOD)
    too_many = str(max_jobs() + 1)
    for executor in ("local", "dask"):
        code = main(
            ["batch", "validate", str(tmp_path), "--jobs", too_many, "--executor", executor]
        )
        err = capsys.readouterr().err
        assert code == 2 and err.startswith(f"usdgrip batch: --jobs is {too_many}; at most ")
        assert len(err.strip().splitlines()) == 1
    result = run_batch(tmp_path, jobs=max_jobs())
    assert result.summary["jobs"] == 1 and result.summary["ok"] == 1


# --- 5. an --out-dir that cannot be created --------------------------------------------


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_out_dir_that_cannot_be_created_names_the_folder(tmp_path, capsys, where):
    (tmp_path / "lib").mkdir()
    shutil.copy(REPO / "examples" / "mug.usda", tmp_path / "lib" / "mug.usda")
    if where == "proc":
        if not Path("/proc/self").is_dir():
            pytest.skip("no /proc here")
        out_dir = "/proc/usdgrip-no-such-folder"
        reason = "No such file or directory"
    else:
        (tmp_path / "afile").write_text("a file, not a folder\n")
        out_dir = str(tmp_path / "afile" / "grasps")
        reason = "Not a directory"
    code = main(
        ["batch", "plan", str(tmp_path / "lib"), "--gripper", GRIPPER, "--out-dir", out_dir, "-q"]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"usdgrip batch: --out-dir {out_dir}: cannot create the folder ")
    assert f"({reason})" in err and "[Errno" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_results_file_named_like_a_usd_asset_is_refused(tmp_path, capsys):
    from usdgrip.cli import main

    shared = tmp_path / "shared.usda"  # e.g. an asset the matched files reference
    shared.write_text("#usda 1.0\n")
    library = tmp_path / "lib"
    library.mkdir()
    (library / "a.usda").write_text("#usda 1.0\n(\n    subLayers = [@../shared.usda@]\n)\n")
    assert main(["batch", "validate", str(library), "--out", str(shared)]) == 2
    assert "results file is JSON lines" in capsys.readouterr().err
    assert shared.read_text() == "#usda 1.0\n"
