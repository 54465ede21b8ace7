"""``usdgrip evaluate --gripper-test``: SimReady's FET028 on the CPU, on the example grippers."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from usdgrip.contracts import GripperRef
from usdgrip.grasping.gripper_check import check_gripper
from usdgrip.grasping.physics.gripper_test import GripperTestParams, resolve_payload

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PRISMATIC = f"{EXAMPLES}/grippers/prismatic_two_finger.usda:/PrismaticGripper/palm/tcp"


def usdgrip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "usdgrip", *args], capture_output=True, text=True, timeout=300
    )


def test_report_per_object_and_exit_code(tmp_path):
    out = tmp_path / "report.json"
    done = usdgrip("evaluate", "--gripper-test", PRISMATIC, "--trials", "1", "-o", str(out))
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(out.read_text())
    assert set(report["objects"]) == {"cube", "sphere"}
    assert report["params"]["friction"] == 2.0 and report["params"]["lift_height"] == 0.2
    cube = report["objects"]["cube"]["results"][0]
    assert cube["size"] == pytest.approx(0.7 * 0.08)
    assert cube["mass"] == pytest.approx(0.85 * 1.0)  # gripper:maxPayload = 1 kg
    assert report["objects"]["sphere"]["results"][0]["mass"] == pytest.approx(0.5)
    assert cube["outcome"] == "held" and cube["pad_force"] > 0 and cube["release_drop"] > 0.05
    assert done.returncode == (0 if report["passed"] else 1)


def test_format_text_puts_the_summary_on_stdout_and_json_stays_the_default():
    as_text = usdgrip("evaluate", "--gripper-test", PRISMATIC, "--trials", "1", "--format", "text")
    assert as_text.returncode in (0, 1), as_text.stderr
    assert as_text.stdout.startswith(f"gripper test {PRISMATIC}: ")
    assert "cube" in as_text.stdout and "{" not in as_text.stdout and as_text.stderr == ""
    default = usdgrip("evaluate", "--gripper-test", PRISMATIC, "--trials", "1")
    assert json.loads(default.stdout)["objects"].keys() == {"cube", "sphere"}
    assert default.stderr.startswith(f"gripper test {PRISMATIC}: ")


def test_too_heavy_a_payload_is_dropped():
    ref = GripperRef(asset_path=PRISMATIC.rsplit(":", 1)[0], prim_path="/PrismaticGripper/palm/tcp")
    params = replace(GripperTestParams(), payload_fraction={"cube": 40.0, "sphere": 40.0})
    report = check_gripper(ref, params=params)
    assert not report["passed"]
    assert report["objects"]["cube"]["results"][0]["outcome"] in ("dropped_lift", "dropped_shake")


def test_gripper_without_joints_is_skipped():
    done = usdgrip("evaluate", "--gripper-test", f"{EXAMPLES}/gripper.usda:/Gripper/tcp")
    assert done.returncode == 0, done.stderr
    assert "skipped: the gripper has no driven finger joints" in done.stderr
    assert json.loads(done.stdout)["skipped"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--gripper-test", f"{EXAMPLES}/missing.usda:/X"], "no such file"),
        (["--gripper-test", f"{EXAMPLES}/mug.usda:/Mug"], "not a gripper site"),
        (["--gripper-test", PRISMATIC, "--object", "/Mug"], "not with --gripper-test"),
        (["--gripper-test", "nocolon"], "expected FILE:/Site/Path"),
        ([f"{EXAMPLES}/mug.usda", "--object", "/Mug", "--grasps", "x.yaml"], "--gripper"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message):
    done = usdgrip("evaluate", *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_payload_heuristic_is_simready_s():
    params = GripperTestParams()
    assert resolve_payload(None, 0.08, params) == (pytest.approx(4.0), True)
    assert resolve_payload(None, 0.0001, params) == (0.1, True)
    assert resolve_payload(None, 5.0, params) == (50.0, True)
    assert resolve_payload(2.0, 0.08, params) == (2.0, False)


@pytest.mark.parametrize(
    "site",
    [
        "grippers/prismatic_two_finger.usda:/PrismaticGripper/palm/tcp",
        "grippers/revolute_jaw.usda:/RevoluteJawGripper/palm/tcp",
        "grippers/franka_hand/franka_hand.usda:/FrankaHand/panda_hand/gripper_site",
    ],
)
def test_example_grippers_pass_fet028(site):
    asset, prim = f"{EXAMPLES}/{site}".rsplit(":", 1)
    report = check_gripper(GripperRef(asset_path=asset, prim_path=prim))
    outcomes = {s: e["results"][0]["outcome"] for s, e in report["objects"].items()}
    assert report["passed"], outcomes


def test_robotiq_runs_and_reports_each_object():
    asset = f"{EXAMPLES}/grippers/robotiq_2f85/robotiq_2f85.usda"
    report = check_gripper(
        GripperRef(asset_path=asset, prim_path="/Robotiq_2F85/base/gripper_site")
    )
    assert set(report["objects"]) == {"cube", "sphere"}
    assert report["payload_kg"] > 0


def test_batch_gripper_test_over_a_folder(tmp_path):
    import shutil

    root = tmp_path / "grippers"
    root.mkdir()
    shutil.copy(EXAMPLES / "grippers/prismatic_two_finger.usda", root)
    shutil.copy(EXAMPLES / "gripper.usda", root)  # no joints: skipped, not failed
    out = tmp_path / "rows.jsonl"
    done = usdgrip("batch", "gripper-test", str(root), "--out", str(out), "-q")
    assert done.returncode == 0, done.stderr
    rows = {json.loads(line)["path"]: json.loads(line) for line in out.read_text().splitlines()}
    prismatic = rows["prismatic_two_finger.usda"]["output"]["sites"][0]
    assert prismatic["passed"] and prismatic["objects"]["cube"]["outcome"] == "held"
    assert rows["gripper.usda"]["output"]["sites"][0]["skipped"]
    assert rows["gripper.usda"]["counts"] == {"warning": 1}
    # a payload the fingers cannot hold: the file has findings, exit 1
    heavy = (
        (root / "prismatic_two_finger.usda")
        .read_text()
        .replace("gripper:maxPayload = 1", "gripper:maxPayload = 40")
    )
    (root / "heavy.usda").write_text(heavy)
    done = usdgrip("batch", "gripper-test", str(root), "--out", str(tmp_path / "r2.jsonl"), "-q")
    assert done.returncode == 1, done.stderr


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            ('prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]\n    )\n    {\n'
             "        float physics:mass = 0.5",
             'prepend apiSchemas = ["PhysicsMassAPI"]\n    )\n    {\n'
             "        float physics:mass = 0.5"),
            "no rigid-body ancestor",
        ),
        (("float gripper:maxOpening = 0.08", "float gripper:maxOpening = -1"), "maxOpening is -1"),
        (("float gripper:maxOpening = 0.08", "float gripper:maxOpening = nan"), "maxOpening"),
    ],
)  # fmt: skip
def test_fet028_preconditions_are_bad_input(tmp_path, edit, message):
    text = (EXAMPLES / "grippers/prismatic_two_finger.usda").read_text()
    assert edit[0] in text
    bad = tmp_path / "bad.usda"
    bad.write_text(text.replace(edit[0], edit[1], 1))
    done = usdgrip("evaluate", "--gripper-test", f"{bad}:/PrismaticGripper/palm/tcp")
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--trials", "0"], "trials is 0"),
        (["-o", "{tmp}"], "is a directory"),
        (["-o", "{gripper}"], "would replace it"),
        (["--gripper", "x.usda:/G"], "not with --gripper-test"),
    ],
)
def test_gripper_test_options_are_checked(tmp_path, extra, message):
    asset = str(EXAMPLES / "grippers/prismatic_two_finger.usda")
    args = [a.format(tmp=tmp_path, gripper=asset) for a in extra]
    done = usdgrip("evaluate", "--gripper-test", PRISMATIC, *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
