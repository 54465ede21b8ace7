"""usdgrip evaluate end to end: USD readers, evaluate_grasps / evaluate_targets, the CLI, plan --evaluate.

Real usd-core stages in tmp_path, real MuJoCo trials (short: a handful of candidates).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml
from pxr import Usd

import usdgrip
from usdgrip.cli import main
from usdgrip.contracts import (
    GeometryRef,
    GraspCandidate,
    GraspPlanningMetadata,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.grasping.grasp_evaluation import evaluate_grasps
from usdgrip.grasping.isaac_yaml import read_isaac_grasp, write_isaac_grasp
from usdgrip.grasping.target_evaluation import evaluate_targets
from usdgrip.usd.physics import read_physics_properties

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRIPPER_FILE = str(EXAMPLES / "gripper.usda")
GRIPPER = GripperRef(asset_path=GRIPPER_FILE, prim_path="/Gripper/tcp")
#: G looking down (+Z approach = world -Z), closing along world X: 180° about X.
DOWN_X = {"w": 0.0, "xyz": (1.0, 0.0, 0.0)}
#: G looking down, closing along world Y: 180° about X, then 90° about Z.
DOWN_Y = {"w": 0.0, "xyz": (0.7071067811865476, 0.7071067811865476, 0.0)}


def box_usda(size, *, translate=(0.0, 0.0, 0.0)) -> str:
    """A box mesh standing on z = 0 of its prim /Box (optionally moved), metres, Z up."""
    sx, sy, sz = size[0] / 2, size[1] / 2, size[2]
    points = [
        (x, y, z) for z in (0.0, sz) for (x, y) in ((-sx, -sy), (sx, -sy), (sx, sy), (-sx, sy))
    ]
    faces = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]
    pts = ", ".join(f"({x}, {y}, {z})" for x, y, z in points)
    return f"""#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "Box"
{{
    double3 xformOp:translate = {tuple(translate)}
    uniform token[] xformOpOrder = ["xformOp:translate"]
    def Mesh "mesh"
    {{
        int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
        int[] faceVertexIndices = {faces}
        point3f[] points = [{pts}]
    }}
}}
"""


def candidate(cid, position, orientation, confidence, method="antipodal"):
    return GraspCandidate(
        candidate_id=cid,
        gripper=GRIPPER,
        confidence=confidence,
        generation_method=method,
        position=position,
        orientation=orientation,
        width=0.04,
    )


def make_result(*candidates, frame="/Box") -> GraspPlanningResult:
    metadata = GraspPlanningMetadata(
        upstream_revision="usdgrip test", seed=0, runtime_seconds=0.0, pose_frame=frame
    )
    return GraspPlanningResult(grasps={c.candidate_id: c for c in candidates}, metadata=metadata)


@pytest.fixture
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("coacd"))


@pytest.fixture
def box_file(tmp_path):
    path = tmp_path / "box.usda"
    path.write_text(box_usda((0.04, 0.04, 0.1)))
    return path


@pytest.fixture
def grasps_file(tmp_path):
    """A grasp across the box's top (holds) and the same grasp 0.2 m beside it (missed)."""
    held = candidate("g_centre", (0.0, 0.0, 0.075), DOWN_X, 0.5)
    beside = candidate("g_beside", (0.2, 0.0, 0.075), DOWN_X, 0.9)
    path = tmp_path / "grasps.yaml"
    write_isaac_grasp(make_result(beside, held), path)
    return path


# --- USD readers ----------------------------------------------------------------------------


def test_mass_density_and_physics_material_are_read_in_si_units(tmp_path):
    materials = """
def Material "Rubber" ( prepend apiSchemas = ["PhysicsMaterialAPI"] )
{
    float physics:staticFriction = 1.1
    float physics:dynamicFriction = 0.9
}
def Material "Ice" ( prepend apiSchemas = ["PhysicsMaterialAPI"] )
{
    float physics:dynamicFriction = 0.05
}
"""
    # Centimetres and grams: a density of 2 g/cm³ is 2000 kg/m³, a mass of 250 g is 0.25 kg.
    text = f"""#usda 1.0
(
    metersPerUnit = 0.01
    kilogramsPerUnit = 0.001
    upAxis = "Z"
)
def Xform "Box" (
    prepend apiSchemas = ["PhysicsMassAPI", "MaterialBindingAPI"]
)
{{
    float physics:density = 2
    rel material:binding = </Ice>
    rel material:binding:physics = </Rubber>
}}
def Xform "Light" (
    prepend apiSchemas = ["PhysicsMassAPI", "MaterialBindingAPI"]
)
{{
    float physics:mass = 250
    float physics:density = 7
    rel material:binding = </Ice>
}}
def Xform "Bad" ( prepend apiSchemas = ["PhysicsMassAPI"] )
{{
    float physics:mass = -1
}}
{materials}
"""
    (tmp_path / "m.usda").write_text(text)
    stage = Usd.Stage.Open(str(tmp_path / "m.usda"))
    box = read_physics_properties(stage.GetPrimAtPath("/Box"))
    assert box.mass is None and box.density == pytest.approx(2000.0)  # 2 g/cm³ in kg/m³
    assert box.friction == pytest.approx(1.1)  # physics purpose wins, static before dynamic
    assert box.friction_source == "</Rubber>.physics:staticFriction"
    light = read_physics_properties(stage.GetPrimAtPath("/Light"))
    assert light.mass == pytest.approx(0.25) and light.density is None  # mass wins
    assert light.friction == pytest.approx(0.05)  # allPurpose binding, dynamic friction
    with pytest.raises(usdgrip.GripperError, match=r"</Bad>.physics:mass is -1.0"):
        read_physics_properties(stage.GetPrimAtPath("/Bad"))


# --- API ------------------------------------------------------------------------------------


def test_evaluate_grasps_measures_a_held_and_a_missed_grasp(box_file, grasps_file, cache):
    result = evaluate_grasps(
        grasps_file,
        GeometryRef(asset_path=str(box_file), prim_path="/Box"),
        GRIPPER,
        trials=2,
        table=True,
        cache_dir=cache,
    )
    assert list(result.grasps) == ["g_beside", "g_centre"]  # order and ids kept
    centre, beside = result.grasps["g_centre"].physics, result.grasps["g_beside"].physics
    assert centre.outcome == "held" and centre.success_rate == 1.0 and centre.trials == 2
    assert beside.outcome == "missed" and beside.success_rate == 0.0
    meta = result.metadata.physics
    assert meta["engine"] == "mujoco" and meta["parameters"]["trials"] == 2
    assert meta["ranking"] == "unchanged" and meta["support"] == "table"
    assert meta["object"]["mass_from"] == "default density"
    assert meta["object"]["mass_kg"] == pytest.approx(400 * 0.04 * 0.04 * 0.1)
    # The example gripper authors gripper:maxGripForce (235 N, a Robotiq 2F-85's).
    assert meta["gripper"]["grip_force_n"] == 235.0
    assert meta["gripper"]["grip_force_from"] == "gripper:maxGripForce"
    assert meta["summary"]["held_candidates"] == 1
    warnings = " | ".join(result.metadata.warnings)
    assert "default density 400" in warnings and "default friction 0.8" in warnings
    assert "grip force" not in warnings

    ranked = evaluate_grasps(
        result, GeometryRef(asset_path=str(box_file), prim_path="/Box"), table=True,
        force=40.0, friction=0.9, density=500.0, rank=True, cache_dir=cache,
    )  # fmt: skip
    # Measured success first, though the planner was more confident of the missed grasp.
    assert list(ranked.grasps) == ["g_centre", "g_beside"]
    assert ranked.metadata.physics["ranking"] == "success_rate,confidence"
    assert "ranking=physics" in ranked.metadata.generation_mode
    assert ranked.metadata.physics["gripper"]["grip_force_from"] == "force option"
    assert ranked.metadata.physics["object"]["mass_kg"] == pytest.approx(500 * 1.6e-4)
    # The physics ranking is part of the contract: a reordered file reads back.
    path = write_isaac_grasp(ranked, box_file.parent / "ranked.yaml")
    assert read_isaac_grasp(path) == ranked


def test_evaluate_grasps_refuses_another_object_and_bad_options(box_file, grasps_file):
    geometry = GeometryRef(asset_path=str(box_file), prim_path="/Box")
    with pytest.raises(ValueError, match=r"frame of </Box>.*not of the object </Other>"):
        evaluate_grasps(grasps_file, GeometryRef(asset_path=str(box_file), prim_path="/Other"))
    with pytest.raises(ValueError, match="trials is 0; expected an integer >= 1"):
        evaluate_grasps(grasps_file, geometry, trials=0)
    with pytest.raises(ValueError, match=r"friction is -0\.5; expected a finite value > 0"):
        evaluate_grasps(grasps_file, geometry, friction=-0.5)
    with pytest.raises(ValueError, match="table and support are exclusive"):
        evaluate_grasps(grasps_file, geometry, table=True, scene="s.usda", support="/Floor")
    other = GripperRef(asset_path=GRIPPER_FILE, prim_path="/Gripper")
    with pytest.raises(ValueError, match="has no candidates in the grasps; they are for"):
        evaluate_grasps(grasps_file, geometry, other)


def long_box_samples(ends) -> dict:
    """Samples JSON with one candidate: a hand across the long box at each x in ``ends``."""
    targets = []
    for ee, x in enumerate(ends):
        pose = np.eye(4)
        pose[:3, :3] = [[0, 1, 0], [1, 0, 0], [0, 0, -1]]  # closing +Y, approach -Z
        pose[:3, 3] = [0.3 + x, 0.0, 0.045]  # the box prim sits at x = 0.3
        targets.append({"ee_id": ee, "slot": f"end{ee}", "matrix": pose.tolist()})
    return {"seed": 0, "count": 1, "ee_ids": list(range(len(ends))), "candidates": [
        {"targets": targets}
    ]}  # fmt: skip


def test_two_hands_carry_a_long_box_that_one_hand_at_its_end_cannot(tmp_path, cache):
    path = tmp_path / "long.usda"
    path.write_text(box_usda((0.6, 0.04, 0.06), translate=(0.3, 0.0, 0.0)))
    geometry = GeometryRef(asset_path=str(path), prim_path="/Box")
    common = {"table": True, "density": 1000.0, "force": 50.0, "cache_dir": cache}
    both = evaluate_targets(long_box_samples([-0.27, 0.27]), geometry, GRIPPER, **common)
    one = evaluate_targets(long_box_samples([0.27]), geometry, GRIPPER, **common)
    assert both["hands"] == 2 and one["hands"] == 1
    assert both["candidates"][0]["outcome"] == "held"
    assert one["candidates"][0]["outcome"] in {"dropped_lift", "slipped_lift"}
    assert both["candidates"][0]["targets"][1]["slot"] == "end1"
    assert both["physics"]["object"]["mass_kg"] == pytest.approx(1000 * 0.6 * 0.04 * 0.06)


# --- CLI ------------------------------------------------------------------------------------


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def evaluate_args(box_file, grasps, output, *extra):
    return (
        "evaluate", box_file, "--object", "/Box", "--gripper", f"{GRIPPER_FILE}:/Gripper/tcp",
        "--grasps", grasps, "-o", output, "--table", *extra,
    )  # fmt: skip


def test_cli_exit_0_when_one_held_1_when_none(box_file, grasps_file, tmp_path, capsys):
    out = tmp_path / "out.yaml"
    code, stdout, stderr = run_cli(capsys, *evaluate_args(box_file, grasps_file, out))
    assert code == 0, stderr
    assert (
        "held: 1 of 2 candidate(s)" in stdout and "outcomes: held 3, missed 3" in stdout
    )  # 3 trials
    assert "by method: antipodal 1/2 held" in stdout
    assert stdout.index("g_centre") < stdout.index("g_beside")  # top list: best first
    assert "warning: " in stderr and "default friction 0.8" in stderr
    data = yaml.safe_load(out.read_text())
    entry = data["grasps"]["g_centre"]
    assert list(entry)[:3] == ["confidence", "position", "orientation"]
    assert entry["physics"] == {
        "success_rate": 1.0, "trials": 3, "outcome": "held", "outcomes": {"held": 3}
    }  # fmt: skip
    assert data["metadata"]["physics"]["engine"] == "mujoco"

    beside_only = tmp_path / "beside.yaml"
    result = read_isaac_grasp(grasps_file)
    write_isaac_grasp(
        result.model_copy(update={"grasps": {"g_beside": result.grasps["g_beside"]}}), beside_only
    )
    code, stdout, _ = run_cli(capsys, *evaluate_args(box_file, beside_only, tmp_path / "o1.yaml"))
    assert code == 1 and "held: 0 of 1 candidate(s)" in stdout
    assert (tmp_path / "o1.yaml").is_file()  # written even when none held


def test_cli_same_seed_same_file(box_file, grasps_file, tmp_path, capsys):
    files = []
    for name in ("a.yaml", "b.yaml"):
        args = evaluate_args(box_file, grasps_file, tmp_path / name, "--trials", 3, "--seed", 5)
        assert run_cli(capsys, *args)[0] == 0
        text = (tmp_path / name).read_text()
        files.append([line for line in text.splitlines() if "runtime_seconds" not in line])
    assert files[0] == files[1]
    data = yaml.safe_load((tmp_path / "a.yaml").read_text())
    assert data["grasps"]["g_centre"]["physics"]["trials"] == 3
    assert data["metadata"]["physics"]["seed"] == 5


def test_cli_bad_inputs_are_one_line_exit_2_and_write_nothing(
    box_file, grasps_file, tmp_path, capsys
):
    out = tmp_path / "never.yaml"
    not_grasps = tmp_path / "other.yaml"
    not_grasps.write_text("a: 1\n")
    not_samples = tmp_path / "other.json"
    not_samples.write_text('{"a": 1}')
    scaled = tmp_path / "scaled.json"
    scaled.write_text(
        json.dumps({"candidates": [{"targets": [{"matrix": np.diag([2.0, 1, 1, 1]).tolist()}]}]})
    )
    cases = {
        "missing file": (
            evaluate_args(tmp_path / "nope.usda", grasps_file, out),
            "nope.usda",
        ),
        "bad prim": (
            evaluate_args(box_file, grasps_file, out)[:3] + ("/Nope",)
            + evaluate_args(box_file, grasps_file, out)[4:],
            "Nope",
        ),
        "not a grasp file": (evaluate_args(box_file, not_grasps, out), "format is None"),
        "negative trials": (
            evaluate_args(box_file, grasps_file, out, "--trials", -2),
            "--trials -2: expected an integer >= 1",
        ),
        "zero friction": (
            evaluate_args(box_file, grasps_file, out, "--friction", 0),
            "--friction 0: expected a finite value > 0",
        ),
        "output is an input": (
            evaluate_args(box_file, grasps_file, grasps_file),
            "is the input file",
        ),
        "table and support": (
            evaluate_args(box_file, grasps_file, out, "--support", "/Floor"),
            "--table and --support",
        ),
        "bad targets": (
            (*evaluate_args(box_file, grasps_file, out)[:6], "--targets", not_samples, "-o", out),
            "'candidates' list",
        ),
        "targets not rigid": (
            (*evaluate_args(box_file, grasps_file, out)[:6], "--targets", scaled, "-o", out),
            "scaled.json: candidates[0].targets[0].matrix is not a rigid transform",
        ),
        "targets not JSON": (
            (*evaluate_args(box_file, grasps_file, out)[:6], "--targets", not_grasps, "-o", out),
            "other.yaml: not valid JSON",
        ),
    }  # fmt: skip
    before = grasps_file.read_bytes()
    for name, (args, expected) in cases.items():
        code, _, stderr = run_cli(capsys, *args)
        assert code == 2, (name, stderr)
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (name, stderr)
        assert "Traceback" not in stderr and not out.exists(), name
    assert grasps_file.read_bytes() == before


def test_cli_writes_a_fifo_and_a_device_streamed(box_file, grasps_file, tmp_path, capsys):
    assert run_cli(capsys, *evaluate_args(box_file, grasps_file, os.devnull))[0] == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    code, _, stderr = run_cli(capsys, *evaluate_args(box_file, grasps_file, fifo))
    reader.join(timeout=60)
    assert code == 0, stderr
    assert yaml.safe_load(received[0])["grasps"]["g_centre"]["physics"]["outcome"] == "held"
    assert fifo.is_fifo()  # written into, not replaced


def test_cli_targets_two_hands_carry_the_long_box(tmp_path, capsys, cache):
    path = tmp_path / "long.usda"
    path.write_text(box_usda((0.6, 0.04, 0.06), translate=(0.3, 0.0, 0.0)))
    samples = tmp_path / "samples.json"
    samples.write_text(json.dumps(long_box_samples([-0.27, 0.27])))
    out = tmp_path / "carry.json"
    code, stdout, stderr = run_cli(
        capsys, "evaluate", path, "--object", "/Box", "--gripper", f"{GRIPPER_FILE}:/Gripper/tcp",
        "--targets", samples, "--table", "--density", 1000, "-o", out,
    )  # fmt: skip
    assert code == 0, stderr
    assert "1 candidate(s) of 2 hand(s) closing together" in stdout
    report = json.loads(out.read_text())
    assert report["candidates"][0]["outcome"] == "held"
    assert report["candidates"][0]["success_rate"] == 1.0


def test_cli_tote_carry_group_holds_with_two_hands_at_50_n(tmp_path, capsys):
    samples = tmp_path / "tote.json"
    code, _, _ = run_cli(
        capsys, "sample", EXAMPLES / "tote.usda", "--prim", "/Tote", "--count", 4, "-o", samples
    )
    assert code == 0
    out = tmp_path / "carry.json"
    code, stdout, stderr = run_cli(
        capsys, "evaluate", EXAMPLES / "tote.usda", "--object", "/Tote",
        "--gripper", f"{GRIPPER_FILE}:/Gripper/tcp", "--targets", samples, "--table",
        "--force", 50, "-o", out,
    )  # fmt: skip
    assert code == 0, stderr
    report = json.loads(out.read_text())
    assert [c["outcome"] for c in report["candidates"]] == ["held"] * 4
    assert report["physics"]["object"]["collision_pieces"] == 5  # walls and floor, exactly
    # At 50 N per finger one hand on one edge does not hold the tote (at the example
    # gripper's own 235 N it does: the README's table).
    data = json.loads(samples.read_text())
    for c in data["candidates"]:
        c["targets"] = c["targets"][:1]
    samples.write_text(json.dumps(data))
    code, stdout, _ = run_cli(
        capsys, "evaluate", EXAMPLES / "tote.usda", "--object", "/Tote",
        "--gripper", f"{GRIPPER_FILE}:/Gripper/tcp", "--targets", samples, "--table",
        "--force", 50, "-o", out,
    )  # fmt: skip
    assert code == 1 and "held: 0 of 4" in stdout


def test_plan_evaluate_orders_by_measured_success(box_file, tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    code, stdout, stderr = run_cli(
        capsys, "plan", box_file, "--object", "/Box", "--gripper", f"{GRIPPER_FILE}:/Gripper/tcp",
        "--max-candidates", 6, "-o", out, "--evaluate", "--table",
    )  # fmt: skip
    assert code == 0, stderr
    result = read_isaac_grasp(out)
    assert "ranking=physics success_rate then confidence" in result.metadata.generation_mode
    assert result.metadata.physics["ranking"] == "success_rate,confidence"
    keys = [(c.physics.success_rate, c.confidence) for c in result.grasps.values()]
    assert keys == sorted(keys, reverse=True)
    assert "held: " in stdout and " held 100%" in stdout


def test_contract_outcomes_are_the_engine_outcomes():
    from usdgrip.contracts import PHYSICS_OUTCOMES
    from usdgrip.grasping.physics import OUTCOMES

    assert PHYSICS_OUTCOMES == OUTCOMES


def test_support_from_a_scene_file_and_its_errors(box_file, grasps_file, tmp_path, cache):
    scene = tmp_path / "scene.usda"
    scene.write_text(
        box_usda((0.5, 0.5, 0.02), translate=(0.0, 0.0, -0.02)).replace('"Box"', '"Floor"')
    )
    geometry = GeometryRef(asset_path=str(box_file), prim_path="/Box")
    result = evaluate_grasps(
        grasps_file, geometry, scene=str(scene), support="/Floor", cache_dir=cache
    )
    assert result.grasps["g_centre"].physics.outcome == "held"
    assert result.metadata.physics["support"] == f"{scene}:/Floor"
    with pytest.raises(usdgrip.GripperError, match="support </Table>: no such prim"):
        evaluate_grasps(grasps_file, geometry, scene=str(scene), support="/Table")


def test_evaluate_grasp_set_keeps_the_displayed_order(box_file, grasps_file, cache):
    from usdgrip.views.actions import evaluate_grasp_set
    from usdgrip.views.grasp_set import compute_grasp_set_from_plan

    shown = compute_grasp_set_from_plan(read_isaac_grasp(grasps_file), "/Box")
    assert shown.success_rates is None
    seen = []
    evaluated = evaluate_grasp_set(
        shown, box_file, progress=lambda m, f: seen.append(f), cache_dir=cache
    )
    assert evaluated.labels == shown.labels == ("g_beside", "g_centre")
    assert evaluated.success_rates.tolist() == [0.0, 1.0]
    assert seen and seen[-1] == 1.0


def test_authored_convex_blocks_are_used_exactly(cache):
    # Two boxes sharing a face, each with its own vertices (as the tote's walls): welded
    # they are one part; as authored, two exact convex pieces.
    from usdgrip.grasping.physics import decompose_mesh

    corners = np.array([[x, y, z] for z in (0, 1) for y in (0, 1) for x in (0, 1)], float)
    faces = np.array(
        [[0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4],
         [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]]
    )  # fmt: skip
    floor = corners * [0.4, 0.3, 0.01]
    wall = corners * [0.01, 0.3, 0.15]
    result = decompose_mesh(
        np.vstack([floor, wall]), np.vstack([faces, faces + 8]), cache_dir=cache
    )
    assert [p.method for p in result.parts] == ["convex", "convex"] and result.coacd_calls == 0
    assert sorted(len(p) for p in result.pieces) == [8, 8]
    np.testing.assert_allclose(result.pieces[1].max(axis=0), [0.01, 0.3, 0.15])


def test_an_unusable_authored_grip_force_falls_back_with_a_warning(box_file, tmp_path, cache):
    gripper = tmp_path / "gripper.usda"
    text = Path(GRIPPER_FILE).read_text()
    assert "float gripper:maxGripForce = 235" in text
    gripper.write_text(text.replace("gripper:maxGripForce = 235", "gripper:maxGripForce = -5"))
    site = GripperRef(asset_path=str(gripper), prim_path="/Gripper/tcp")
    planned = make_result(
        candidate("g_centre", (0.0, 0.0, 0.075), DOWN_X, 0.5).model_copy(update={"gripper": site})
    )
    evaluated = evaluate_grasps(
        planned, GeometryRef(asset_path=str(box_file), prim_path="/Box"), table=True,
        cache_dir=cache,
    )  # fmt: skip
    assert evaluated.metadata.physics["gripper"]["grip_force_n"] == 50.0
    warning = next(w for w in evaluated.metadata.warnings if "grip force" in w)
    assert "gripper:maxGripForce unusable" in warning and "default 50 N per finger" in warning
