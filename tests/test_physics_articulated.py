"""The gripper's own articulation in MuJoCo: builder, engine, the real grippers of examples/."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from pxr import Usd

from usdgrip.grasping.physics import (
    EvaluationParams,
    PhysicsGripper,
    evaluate_candidates,
    make_physics_object,
)
from usdgrip.grasping.physics.articulated_hand import add_articulated_hand
from usdgrip.usd.articulation import read_gripper_articulation
from usdgrip.usd.discovery import iter_site_prims

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "grippers"
GRIPPERS = {
    "franka_hand": EXAMPLES / "franka_hand" / "franka_hand.usda",
    "prismatic_two_finger": EXAMPLES / "prismatic_two_finger.usda",
    "revolute_jaw": EXAMPLES / "revolute_jaw.usda",
    "robotiq_2f85": EXAMPLES / "robotiq_2f85" / "robotiq_2f85.usda",
}


def _articulation(name: str):
    stage = Usd.Stage.Open(str(GRIPPERS[name]))
    prim = next(iter_site_prims(stage))[0]
    return read_gripper_articulation(prim)


def _box(size: float, mass: float = 0.1, friction: float = 1.0):
    h = size / 2
    v = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    f = np.array(
        [
            [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
            [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
        ]
    )  # fmt: skip
    return make_physics_object(v, f, mass=mass, friction=friction)


@pytest.mark.parametrize("name", sorted(GRIPPERS))
def test_builder_closes_the_authored_fingers(name: str) -> None:
    articulation = _articulation(name)
    spec = mujoco.MjSpec()
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    hand = add_articulated_hand(
        spec, spec.worldbody.add_body(name="hand"), articulation, prefix="h_"
    )
    model = spec.compile()
    data = mujoco.MjData(model)
    assert hand.actuators and all(hand.pad_geoms)
    for joint, name_ in hand.actuators.items():
        data.ctrl[model.actuator(name_).id] = hand.closed_positions[joint]
    mujoco.mj_forward(model, data)
    left, right = (data.geom_xpos[model.geom(g[0]).id][0] for g in hand.pad_geoms)
    mujoco.mj_step(model, data, nstep=600)
    left2, right2 = (data.geom_xpos[model.geom(g[0]).id][0] for g in hand.pad_geoms)
    assert left < right  # left pad on -X of the grasp frame
    assert (right2 - left2) < (right - left) - 0.01  # the drive closed the jaw
    assert not data.warning.number.any()


@pytest.mark.parametrize("name", sorted(GRIPPERS))
def test_each_real_gripper_holds_a_small_box(name: str) -> None:
    articulation = _articulation(name)
    gripper = PhysicsGripper(
        max_opening=articulation.opening.opening_open, grip_force=20.0, articulation=articulation
    )
    (result,) = evaluate_candidates(_box(0.03), gripper, np.eye(4)[None], params=EvaluationParams())
    assert result.outcome == "held", result


def test_fingertips_on_the_object_are_not_a_hold() -> None:
    """A box wider than the jaw opens: the authored fingers hit it, the grasp is not held."""
    articulation = _articulation("prismatic_two_finger")
    gripper = PhysicsGripper(max_opening=0.08, grip_force=20.0, articulation=articulation)
    (result,) = evaluate_candidates(_box(0.12), gripper, np.eye(4)[None], params=EvaluationParams())
    assert result.outcome == "collides_open"


def test_articulation_without_drive_is_refused() -> None:
    articulation = _articulation("prismatic_two_finger")
    from dataclasses import replace

    bare = replace(articulation, opening=None)
    with pytest.raises(ValueError, match="no driven finger joint"):
        PhysicsGripper(max_opening=0.08, articulation=bare)


# --- contact fidelity at high force -------------------------------------------------------------


@pytest.fixture(scope="module")
def tote_grasps(tmp_path_factory):
    """Grasps planned on examples/tote.usda for examples/gripper.usda (235 N authored)."""
    from usdgrip.cli import main

    out = tmp_path_factory.mktemp("tote") / "tote.yaml"
    tote, gripper = EXAMPLES.parent / "tote.usda", EXAMPLES.parent / "gripper.usda"
    argv = ["plan", str(tote), "--object", "/Tote", "--gripper", f"{gripper}:/Gripper/tcp"]
    assert main([*argv, "-o", str(out), "--max-candidates", "10"]) == 0
    return out


def _evaluate_tote(path, **params):
    from usdgrip.contracts import GeometryRef
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps
    from usdgrip.grasping.options import EvaluationOptions

    tote = GeometryRef(asset_path=str(EXAMPLES.parent / "tote.usda"), prim_path="/Tote")
    options = EvaluationOptions(trials=1, params=EvaluationParams(**params))
    return evaluate_grasps(str(path), tote, options=options).metadata.physics["summary"]


def test_tote_at_235_n_is_held_where_a_one_step_verdict_drops_it(tote_grasps) -> None:
    held = _evaluate_tote(tote_grasps)
    assert held["outcomes"] == {"held": held["candidates"]}, held
    # the old verdict (pad contact at one step): chattering contacts read as drops
    one_step = _evaluate_tote(tote_grasps, contact_window=1e-4)
    assert one_step["outcomes"].get("dropped_lift", 0) > 0, one_step


def test_a_real_slip_is_still_caught(tote_grasps) -> None:
    from usdgrip.contracts import GeometryRef
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps
    from usdgrip.grasping.options import EvaluationOptions

    tote = GeometryRef(asset_path=str(EXAMPLES.parent / "tote.usda"), prim_path="/Tote")
    summary = evaluate_grasps(
        str(tote_grasps), tote, options=EvaluationOptions(trials=1, force=3.0)
    ).metadata.physics["summary"]
    assert "held" not in summary["outcomes"], summary  # 3 N cannot hold the tote


# --- the command line: plan --evaluate and evaluate with the gripper's own articulation --------

SITES = {
    "franka_hand": "/FrankaHand/panda_hand/gripper_site",
    "prismatic_two_finger": "/PrismaticGripper/palm/tcp",
    "revolute_jaw": "/RevoluteJawGripper/palm/tcp",
    "robotiq_2f85": "/Robotiq_2F85/base/gripper_site",
}
MUG = EXAMPLES.parent / "mug.usda"


def _plan(tmp_path, name: str, *extra: str) -> tuple[int, Path]:
    from usdgrip.cli import main

    out = tmp_path / f"{name}.yaml"
    argv = ["plan", str(MUG), "--object", "/Mug", "--gripper", f"{GRIPPERS[name]}:{SITES[name]}"]
    code = main([*argv, "-o", str(out), "--max-candidates", "2", *extra])
    return code, out


@pytest.mark.parametrize("name", sorted(GRIPPERS))
def test_plan_evaluate_and_evaluate_simulate_each_real_gripper(name, tmp_path, capsys) -> None:
    import yaml

    from usdgrip.cli import main

    code, out = _plan(
        tmp_path, name, "--evaluate", "--trials", "2", "--gripper-model", "articulation"
    )
    assert code in (0, 1), capsys.readouterr().err  # 1: no candidate held (a verdict)
    physics = yaml.safe_load(out.read_text())["metadata"]["physics"]
    assert physics["gripper"]["collision_model"] == "articulation"
    assert physics["summary"]["trials"] == 2 * physics["summary"]["candidates"]
    again = tmp_path / "again.yaml"
    argv = [
        "evaluate",
        str(MUG),
        "--object",
        "/Mug",
        "--gripper",
        f"{GRIPPERS[name]}:{SITES[name]}",
    ]
    code = main([*argv, "--grasps", str(out), "-o", str(again), "--trials", "1",
                 "--gripper-model", "articulation"])  # fmt: skip
    assert code in (0, 1), capsys.readouterr().err  # 1: none held (a verdict, not an error)
    record = yaml.safe_load(again.read_text())["metadata"]["physics"]
    assert record["gripper"]["collision_model"] == "articulation"


def test_auto_says_which_model_it_used(tmp_path, capsys) -> None:
    code, _ = _plan(tmp_path, "prismatic_two_finger", "--evaluate", "--trials", "1")
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert "--gripper-model auto simulates the gripper's own articulation" in err
    from usdgrip.cli import main

    gripper = EXAMPLES.parent / "gripper.usda"
    argv = ["plan", str(MUG), "--object", "/Mug", "--gripper", f"{gripper}:/Gripper/tcp"]
    assert main([*argv, "-o", str(tmp_path / "g.yaml"), "--max-candidates", "1", "--evaluate",
                 "--trials", "1"]) in (0, 1)  # fmt: skip
    err = capsys.readouterr().err
    assert "--gripper-model auto simulates" in err and "no driven finger joints" in err


def test_articulation_without_finger_joints_is_bad_input(tmp_path, capsys) -> None:
    from usdgrip.cli import main

    gripper = EXAMPLES.parent / "gripper.usda"
    argv = ["plan", str(MUG), "--object", "/Mug", "--gripper", f"{gripper}:/Gripper/tcp"]
    code = main([*argv, "-o", str(tmp_path / "g.yaml"), "--evaluate",
                 "--gripper-model", "articulation"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and not (tmp_path / "g.yaml").exists()
    assert "--gripper-model articulation: the gripper has no driven finger joints" in err[-1]


def test_dump_scene_writes_loadable_mjcf(tmp_path, capsys) -> None:
    scenes = tmp_path / "scenes"
    code, _ = _plan(tmp_path, "revolute_jaw", "--evaluate", "--trials", "1",
                    "--dump-scene", str(scenes))  # fmt: skip
    assert code in (0, 1), capsys.readouterr().err
    files = sorted(scenes.glob("candidate_*.xml"))
    assert files
    for path in files:
        model = mujoco.MjModel.from_xml_path(str(path))
        names = {model.body(i).name for i in range(model.nbody)}
        assert {"object", "hand_0"} <= names and model.nu == 1  # object, hand, its drive


def test_dump_scene_into_a_file_is_one_line_exit_2(tmp_path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _ = _plan(tmp_path, "revolute_jaw", "--evaluate", "--trials", "1",
                      "--dump-scene", str(blocker / "sub"))  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("usdgrip plan: --dump-scene ")


def test_geometry_simulates_the_authored_fingers(tmp_path, capsys) -> None:
    import yaml

    code, out = _plan(tmp_path, "prismatic_two_finger", "--evaluate", "--trials", "1",
                      "--gripper-model", "geometry")  # fmt: skip
    assert code in (0, 1), capsys.readouterr().err
    physics = yaml.safe_load(out.read_text())["metadata"]["physics"]
    assert physics["gripper"]["collision_model"] == "articulation"  # not default pads


def test_a_pad_link_without_colliders_is_not_simulated(tmp_path, capsys) -> None:
    """Attack: the right finger's collider removed; articulation is refused, auto falls back."""
    from usdgrip.cli import main

    text = GRIPPERS["prismatic_two_finger"].read_text()
    stage = Usd.Stage.Open(str(GRIPPERS["prismatic_two_finger"]))
    finger = stage.GetPrimAtPath("/PrismaticGripper/finger_right")
    colliders = [p for p in Usd.PrimRange(finger) if "PhysicsCollisionAPI" in p.GetAppliedSchemas()]
    assert colliders and text
    for prim in colliders:
        prim.RemoveAPI(__import__("pxr").UsdPhysics.CollisionAPI)
    path = tmp_path / "bare.usda"
    stage.GetRootLayer().Export(str(path))
    argv = ["plan", str(MUG), "--object", "/Mug", "--gripper", f"{path}:/PrismaticGripper/palm/tcp"]
    code = main([*argv, "-o", str(tmp_path / "a.yaml"), "--evaluate", "--trials", "1",
                 "--max-candidates", "1", "--gripper-model", "articulation"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "--gripper-model articulation: " in err[-1]
    assert "no pad on one side" in err[-1] or "has no collider" in err[-1]
