"""The ``mjwarp`` engine (MuJoCo Warp) against the CPU engine, and its refusals.

Where MuJoCo Warp runs (here: Warp's CPU device), the two engines evaluate the same
candidates and must agree on held / not held for at least :data:`AGREEMENT` of them
(docs/physics.md, "Engines"). Warp compiles its kernels once (about 20 s on 2 cores) into
its kernel cache; each MuJoCo Warp run then costs about 20 ms a step on Warp's CPU device
whatever the world count, so the runs here are few and batch many worlds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import trimesh
from conftest import EXAMPLES

import usdgrip
from usdgrip.cli import main
from usdgrip.contracts import (
    PHYSICS_OUTCOMES,
    GeometryRef,
    GraspObject,
    GraspPlanningRequest,
    GripperRef,
)
from usdgrip.grasping.physics import (
    ENGINES,
    EvaluationParams,
    PhysicsGripper,
    TrialBatch,
    get_engine,
    make_physics_object,
    make_physics_scene,
)

#: Held / not held agree on at least this share of the candidates (docs/physics.md).
AGREEMENT = 0.95
GRIPPER_ARG = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
#: G frame approaching straight down (-Z), closing along world Y.
DOWN_Y = np.array([[0, 1, 0], [1, 0, 0], [0, 0, -1]], dtype=float).T


def _mjwarp_runs() -> str | None:
    """Why the engine cannot run here, or None."""
    try:
        get_engine("mjwarp").check()
    except ValueError as exc:
        return str(exc)
    return None


WHY_NOT = _mjwarp_runs()
needs_mjwarp = pytest.mark.skipif(WHY_NOT is not None, reason=f"MuJoCo Warp cannot run: {WHY_NOT}")


def _pose(rotation: np.ndarray, origin) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rotation
    m[:3, 3] = origin
    return m


def test_the_cli_engine_choices_are_the_registry():
    from usdgrip.cli.common import ENGINES as CLI_ENGINES

    assert set(CLI_ENGINES) == set(ENGINES)
    assert ENGINES["mjwarp"].batched and not ENGINES["mujoco"].batched


# --- agreement ---------------------------------------------------------------------------------


@needs_mjwarp
def test_engines_agree_on_the_example_candidates():
    """The mug's 50 planned candidates (as `make demo` plans them), 2 trials, both engines."""
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug")
        ),
        grippers=(GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp"),),
        max_candidates_per_gripper=50,
    )
    planned = usdgrip.plan_grasps(request, table=True)
    assert len(planned.grasps) == 50
    evaluated = {
        engine: usdgrip.evaluate_grasps(
            planned,
            request.object.geometry,
            options=usdgrip.EvaluationOptions(table=True, trials=2, engine=engine),
        )
        for engine in ("mujoco", "mjwarp")
    }
    cpu, gpu = (evaluated[e].grasps for e in ("mujoco", "mjwarp"))
    assert cpu.keys() == gpu.keys()
    held = {e: {k: g.physics.outcomes.get("held", 0) > 0 for k, g in evaluated[e].grasps.items()}
            for e in evaluated}  # fmt: skip
    agree = sum(held["mujoco"][k] == held["mjwarp"][k] for k in cpu) / len(cpu)
    assert agree >= AGREEMENT, (agree, held)
    for k in cpu:  # the same outcome names, the same trial counts
        assert set(gpu[k].physics.outcomes) <= set(PHYSICS_OUTCOMES)
        assert gpu[k].physics.trials == cpu[k].physics.trials == 2
    meta = evaluated["mjwarp"].metadata.physics
    assert meta["engine"] == "mjwarp" and meta["device"] == "cpu"
    assert meta["engine_version"].split(".")[:2] == meta["mujoco_version"].split(".")[:2]
    assert evaluated["mujoco"].metadata.physics["engine"] == "mujoco"


def _box_world():
    box = trimesh.creation.box((0.05, 0.05, 0.1))
    obj = make_physics_object(box.vertices, box.faces, mass=0.3, friction=0.8, use_cache=False)
    gripper = PhysicsGripper.proxy(max_opening=0.085, pad_width=0.02, grip_force=50.0)
    return obj, gripper, make_physics_scene(table=True)


@needs_mjwarp
def test_per_world_mass_friction_and_poses_give_the_cpu_outcomes(monkeypatch):
    """One batch mixing every outcome kind: each world's own pose, mass and friction count.

    In worlds of at most 8 at a time (two device batches: 8 + 7).
    """
    from usdgrip.grasping.physics import mjwarp_engine

    monkeypatch.setattr(mjwarp_engine, "MAX_WORLDS", 8)
    obj, gripper, scene = _box_world()
    rng = np.random.default_rng(0)
    poses = []
    for _ in range(12):  # across, beside, into the box, at different heights
        a, z, dx = rng.uniform(0, np.pi), rng.uniform(0.0, 0.06), rng.uniform(-0.04, 0.04)
        spin = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
        poses.append(_pose(spin @ DOWN_Y, (dx, 0, z)))
    centred = _pose(DOWN_Y, (0, 0, 0.02))
    poses += [centred, centred, centred]
    n = len(poses)
    mass = np.ones((n, 1))
    friction = np.ones((n, 1))
    mass[-2] = 60.0  # 18 kg: 50 N per finger at friction 0.8 cannot lift it
    friction[-1] = 0.02  # slippery: it slides out
    batch = TrialBatch(np.array(poses)[:, None, None], friction, mass)
    params = EvaluationParams()
    results = {
        e: [row[0] for row in get_engine(e).build(obj, gripper, scene, 1, params).run_batch(batch)]
        for e in ("mujoco", "mjwarp")
    }
    cpu, gpu = results["mujoco"], results["mjwarp"]
    assert gpu[-3].outcome == "held"
    assert gpu[-2].outcome.startswith(("dropped", "slipped"))
    assert gpu[-1].outcome.startswith(("dropped", "slipped"))
    kinds = {r.outcome for r in gpu}
    assert {"held", "collides_open", "missed"} <= kinds, kinds
    agree = sum(
        (a.outcome == "held") == (b.outcome == "held") for a, b in zip(cpu, gpu, strict=True)
    )
    assert agree / n >= AGREEMENT, [(a.outcome, b.outcome) for a, b in zip(cpu, gpu, strict=True)]
    for a, b in zip(cpu, gpu, strict=True):
        assert b.outcome in PHYSICS_OUTCOMES
        if a.outcome == b.outcome == "held":  # the measurements agree too (mm)
            assert abs(a.displacement - b.displacement) < 0.003
            assert abs(a.opening - b.opening) < 0.002
        if b.outcome == "collides_open":
            assert b.hit in ("object", "support") and a.hit == b.hit


@needs_mjwarp
def test_cli_evaluate_engine_mjwarp_writes_the_report(tmp_path, capsys):
    out = tmp_path / "out.yaml"
    code = main(
        ["evaluate", str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper", GRIPPER_ARG,
         "--grasps", str(EXAMPLES / "grasps" / "mug_graspgen.yaml"), "--table", "--trials", "1",
         "--engine", "mjwarp", "--jobs", "2", "--show", "0", "-o", str(out)]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1, captured.err  # the GraspGen file read as the site's frame: every grasp misses
    assert "warning: --jobs 2 is not used by --engine mjwarp" in captured.err  # never silent
    assert "MuJoCo Warp 4." in captured.out and " on cpu" in captured.out
    text = out.read_text()
    assert "engine: mjwarp" in text and "outcome: missed" in text


@needs_mjwarp
def test_worlds_that_all_collide_open_never_reach_the_device(monkeypatch):
    from usdgrip.grasping.physics import mjwarp_engine

    obj, gripper, scene = _box_world()
    engine = get_engine("mjwarp").build(obj, gripper, scene, 1, EvaluationParams())
    monkeypatch.setattr(engine.mjw, "put_model", lambda *a, **k: pytest.fail("stepped"))
    inside = _pose(DOWN_Y, (0.0, 0.0, -0.04))  # the palm deep in the box
    batch = TrialBatch(np.stack([inside] * 3)[:, None, None], np.ones((3, 1)), np.ones((3, 1)))
    rows = engine.run_batch(batch)
    assert [r[0].outcome for r in rows] == ["collides_open"] * 3
    assert {r[0].hit for r in rows} <= {"object", "support"}
    empty = TrialBatch(np.zeros((0, 2, 1, 4, 4)), np.ones((0, 2)), np.ones((0, 2)))
    assert engine.run_batch(empty) == []
    assert mjwarp_engine.MAX_WORLDS >= 1024


# --- refusals (no MuJoCo Warp run needed) -----------------------------------------------------


HIDE = textwrap.dedent(
    """
    import sys

    class Hide:  # the modules named in argv[1] are not installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in sys.argv[1].split(","):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Hide())
    from usdgrip.cli import main
    sys.exit(main(sys.argv[2:]))
    """
)


def _run_hidden(hidden: str, *argv: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-c", HIDE, hidden, *argv],
        capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})},
    )  # fmt: skip


@pytest.mark.parametrize("hidden", ["mujoco_warp", "warp"])
def test_missing_mujoco_warp_is_one_line_exit_2_before_reading(hidden, tmp_path):
    out = tmp_path / "out.yaml"
    done = _run_hidden(
        hidden, "evaluate", str(tmp_path / "absent.usda"), "--object", "/Mug",
        "--gripper", GRIPPER_ARG, "--grasps", str(tmp_path / "absent.yaml"), "-o", str(out),
        "--engine", "mjwarp",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "mjwarp" in lines[0] and "usdgrip[gpu]" in lines[0] and "Traceback" not in done.stderr
    assert ("MuJoCo Warp" if hidden == "mujoco_warp" else "NVIDIA Warp") in lines[0]
    assert not out.exists()


def test_missing_mujoco_warp_leaves_the_cpu_engine_alone(tmp_path):
    done = _run_hidden("mujoco_warp,warp", "evaluate", "--help")
    assert done.returncode == 0 and "--engine {mujoco,mjwarp}" in done.stdout


@needs_mjwarp
def test_a_missing_device_is_one_line_exit_2(tmp_path):
    done = _run_hidden(
        "", "evaluate", str(tmp_path / "absent.usda"), "--object", "/Mug", "--gripper",
        GRIPPER_ARG, "--grasps", str(tmp_path / "absent.yaml"), "-o", str(tmp_path / "o.yaml"),
        "--engine", "mjwarp", env={"USDGRIP_WARP_DEVICE": "cuda:7"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]  # Warp itself may warn of no CUDA driver first
    assert "USDGRIP_WARP_DEVICE=cuda:7 is not a Warp device here (devices: cpu" in last
    assert "Traceback" not in done.stderr


@needs_mjwarp
def test_a_mismatched_mujoco_warp_is_refused(monkeypatch):
    from usdgrip.grasping.physics import mjwarp_engine

    monkeypatch.setattr(mjwarp_engine.mujoco, "__version__", "3.3.0")
    with pytest.raises(ValueError, match=r"mujoco-warp 4\.\d+\.\d+ does not match mujoco 3\.3\.0"):
        mjwarp_engine.check_engine()


@needs_mjwarp
def test_an_articulation_with_closed_loops_is_refused_in_one_line(tmp_path, capsys):
    robotiq = EXAMPLES / "grippers" / "robotiq_2f85" / "robotiq_2f85.usda"
    code = main(
        ["evaluate", str(EXAMPLES / "mug.usda"), "--object", "/Mug",
         "--gripper", f"{robotiq}:/Robotiq_2F85/base/gripper_site",
         "--grasps", str(EXAMPLES / "grasps" / "mug_graspgen.yaml"), "--table",
         "--gripper-model", "articulation", "--engine", "mjwarp", "-o", str(tmp_path / "o.yaml")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "articulation with closed loops (2 connect" in err
    assert not (tmp_path / "o.yaml").exists()


@needs_mjwarp
def test_engines_agree_on_an_open_chain_articulation():
    """The Franka hand's own joints and drives: 20 planned mug candidates, 1 trial, both engines."""
    franka = GripperRef(
        asset_path=str(EXAMPLES / "grippers" / "franka_hand" / "franka_hand.usda"),
        prim_path="/FrankaHand/panda_hand/gripper_site",
    )
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug")
        ),
        grippers=(franka,),
        max_candidates_per_gripper=20,
    )
    planned = usdgrip.plan_grasps(request, table=True, gripper_model="articulation")
    held = {}
    for engine in ("mujoco", "mjwarp"):
        options = usdgrip.EvaluationOptions(
            table=True, trials=1, engine=engine, gripper_model="articulation"
        )
        result = usdgrip.evaluate_grasps(planned, request.object.geometry, options=options)
        assert result.metadata.physics["gripper"]["collision_model"].startswith("articulation")
        held[engine] = {k: g.physics.outcomes.get("held", 0) > 0 for k, g in result.grasps.items()}
    agree = sum(held["mujoco"][k] == held["mjwarp"][k] for k in held["mujoco"])
    assert agree / len(held["mujoco"]) >= AGREEMENT, held


def test_unknown_engine_is_refused_by_the_options_record():
    with pytest.raises(ValueError, match="physics engine 'bullet'; expected one of mujoco, mjwarp"):
        usdgrip.EvaluationOptions(engine="bullet")


def test_plan_engine_needs_evaluate(tmp_path, capsys):
    code = main(
        ["plan", str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper", GRIPPER_ARG,
         "--engine", "mjwarp", "-o", str(tmp_path / "o.yaml")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--engine given without --evaluate" in err


def test_gripper_test_refuses_another_engine(capsys):
    code = main(["evaluate", "--gripper-test", GRIPPER_ARG, "--engine", "mjwarp"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "not with --gripper-test" in err


@needs_mjwarp
def test_an_unusable_kernel_cache_is_one_line_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    done = _run_hidden(
        "", "evaluate", str(tmp_path / "absent.usda"), "--object", "/Mug", "--gripper",
        GRIPPER_ARG, "--grasps", str(tmp_path / "absent.yaml"), "-o", str(tmp_path / "o.yaml"),
        "--engine", "mjwarp", env={"WARP_CACHE_PATH": str(blocker / "cache")},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "Warp's kernel cache" in last and "WARP_CACHE_PATH" in last
    assert "Traceback" not in done.stderr
