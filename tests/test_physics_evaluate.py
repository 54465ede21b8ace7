"""Grasp-and-lift trials in real MuJoCo on small generated objects with known outcomes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from usdgrip.grasping.physics import (
    OUTCOMES,
    DecompositionParams,
    EvaluationCancelled,
    EvaluationParams,
    GripperShape,
    PhysicsGripper,
    PhysicsScene,
    evaluate_candidates,
    make_physics_object,
    make_physics_scene,
    summarize_evaluations,
    trial_workers,
)
from usdgrip.grasping.physics import candidate_trials as evaluate_module
from usdgrip.grasping.physics import decompose as decompose_module
from usdgrip.grasping.physics.engines import EngineRecord

GRIPPER = PhysicsGripper.proxy(max_opening=0.085, pad_width=0.02, grip_force=50.0)
#: G frame approaching straight down (-Z), closing along world X.
DOWN_X = np.array([[1, 0, 0], [0, -1, 0], [0, 0, -1]], dtype=float).T
#: G frame approaching straight down, closing along world Y.
DOWN_Y = np.array([[0, 1, 0], [1, 0, 0], [0, 0, -1]], dtype=float).T


def pose(rotation, origin):
    m = np.eye(4)
    m[:3, :3] = rotation
    m[:3, 3] = origin
    return m


def box_object(size=(0.05, 0.05, 0.1), **kwargs):
    box = trimesh.creation.box(size)
    kwargs.setdefault("use_cache", False)
    return make_physics_object(box.vertices, box.faces, **kwargs)


def revolve(profile, sections):
    """Closed surface of revolution about Z of a (r, z) polyline from the axis back to the axis."""
    profile = np.asarray(profile, dtype=float)
    angles = np.linspace(0, 2 * np.pi, sections, endpoint=False)
    rings = np.stack(
        [
            np.column_stack([r * np.cos(angles), r * np.sin(angles), np.full(sections, z)])
            for r, z in profile
        ]
    )
    vertices = rings.reshape(-1, 3)
    faces = []
    for k in range(len(profile) - 1):
        for j in range(sections):
            a, b = k * sections + j, k * sections + (j + 1) % sections
            c, d = a + sections, b + sections
            faces += [[a, b, d], [a, d, c]]
    return vertices, np.array(faces)


def cup_mesh(sections=32):
    """A mug-like cup: outer radius 4 cm, wall 5 mm, height 10 cm, bottom 5 mm, open top."""
    return revolve(
        [(0, 0), (0.04, 0), (0.04, 0.1), (0.035, 0.1), (0.035, 0.005), (0, 0.005)], sections
    )


BOX_GRASP = pose(DOWN_X, (0, 0, 0.02))  # pads span z 0.01..0.06 on a box whose top is at 0.05


@pytest.mark.parametrize("table", [False, True])
def test_centred_grasp_across_a_box_holds(table):
    scene = make_physics_scene(table=table)
    (result,) = evaluate_candidates(box_object(), GRIPPER, BOX_GRASP[None], scene=scene)
    assert result.outcome == "held"
    assert result.success_rate == 1.0
    assert result.outcomes["held"] == 1 and sum(result.outcomes.values()) == 1
    assert result.displacement[0] < 0.005  # soft contacts creep, but by millimetres
    assert result.to_record() == {
        "success_rate": 1.0,
        "trials": 1,
        "outcome": "held",
        "outcomes": {"held": 1},
    }


def test_grasp_beside_the_box_misses_and_jaws_cutting_it_collide():
    obj = box_object()
    poses = np.stack(
        [
            pose(DOWN_X, (0.1, 0, 0.02)),  # beside the box: closes on nothing
            pose(DOWN_X, (0.04, 0, 0.02)),  # the left open jaw cuts the box
            pose(DOWN_X, (0, 0, -0.03)),  # the palm sinks into the box's top
        ]
    )
    results = evaluate_candidates(obj, GRIPPER, poses)
    assert [r.outcome for r in results] == ["missed", "collides_open", "collides_open"]
    assert all(r.success_rate == 0.0 for r in results)
    held = evaluate_candidates(obj, GRIPPER, BOX_GRASP[None])
    assert summarize_evaluations([*results, *held]) == {
        "candidates": 4,
        "trials": 4,
        "held_candidates": 1,
        "success_rate": 0.25,
        "outcomes": {"held": 1, "collides_open": 2, "missed": 1},
    }
    assert summarize_evaluations([])["success_rate"] == 0.0


def test_box_too_heavy_for_force_and_friction_drops():
    # 2 pads x 0.3 x 20 N = 12 N of friction against 5 kg x 9.81 = 49 N of weight.
    heavy = box_object(mass=5.0, friction=0.3)
    weak = PhysicsGripper.proxy(0.085, 0.02, grip_force=20.0)
    (result,) = evaluate_candidates(heavy, weak, BOX_GRASP[None])
    assert result.outcome == "dropped_lift"
    # The same box held with enough friction: the drop is the force budget, not the pose.
    (light,) = evaluate_candidates(box_object(mass=0.5, friction=0.8), weak, BOX_GRASP[None])
    assert light.outcome == "held"


def test_slippery_heavy_box_slips_or_drops_during_shake_not_before():
    # Friction just above the static need (2 x 0.4 x 20 N = 16 N vs 1.2 kg x 9.81 = 11.8 N):
    # holds the lift, loses it when the shake adds inertial load.
    obj = box_object(mass=1.2, friction=0.4)
    weak = PhysicsGripper.proxy(0.085, 0.02, grip_force=20.0)
    params = EvaluationParams(shake_amplitude=0.02, shake_frequency=4.0, shake_angle=20.0)
    (result,) = evaluate_candidates(obj, weak, BOX_GRASP[None], params=params)
    assert result.outcome in ("slipped_shake", "dropped_shake")


def test_two_hands_carry_a_long_box_that_one_hand_at_its_end_cannot():
    long_box = box_object(size=(0.6, 0.1, 0.1), density=400.0, friction=0.8)  # 2.4 kg
    gripper = PhysicsGripper.proxy(0.12, 0.02, grip_force=50.0)
    left = pose(DOWN_Y, (-0.25, 0, 0.02))
    right = pose(DOWN_Y, (0.25, 0, 0.02))
    (one,) = evaluate_candidates(long_box, gripper, right[None])
    assert one.outcome in ("slipped_lift", "dropped_lift")
    (two,) = evaluate_candidates(long_box, gripper, np.stack([left, right])[None])
    assert two.outcome == "held"


def test_hollow_cup_rim_grasp_holds_and_the_cavity_is_empty(tmp_path, monkeypatch):
    vertices, faces = cup_mesh()
    fast = DecompositionParams(
        threshold=0.05, resolution=800, preprocess_resolution=40, mcts_iterations=60
    )
    cup = make_physics_object(
        vertices, faces, mass=0.3, friction=0.8, decomposition=fast, cache_dir=tmp_path
    )
    assert [p.method for p in cup.decomposition.parts] == ["coacd"]
    assert cup.volume == pytest.approx(math.pi * (0.04**2 * 0.1 - 0.035**2 * 0.095), rel=0.02)
    rim = pose(DOWN_X, (0.0375, 0, 0.09))  # one pad inside the cup, one outside, across the wall
    inside = pose(DOWN_X, (0, 0, 0.08))  # narrow jaws entirely inside the cavity
    narrow = PhysicsGripper(
        max_opening=0.04, pad_width=0.02, grip_force=50.0
    )  # pads within r < 3.2 cm
    (held,) = evaluate_candidates(cup, GRIPPER, rim[None])
    assert held.outcome == "held"
    # A convex hull of the cup would make this collides_open; the decomposition keeps it hollow.
    (empty,) = evaluate_candidates(cup, narrow, inside[None])
    assert empty.outcome == "missed"
    # The second build reads the cache: no CoACD run.
    monkeypatch.setattr(decompose_module, "_run_coacd", lambda *a: pytest.fail("CoACD ran again"))
    again = make_physics_object(vertices, faces, mass=0.3, decomposition=fast, cache_dir=tmp_path)
    assert [p.method for p in again.decomposition.parts] == ["cached"]


def test_table_blocks_a_grasp_below_the_object_and_palm_shapes_collide():
    obj = box_object()
    pads_only = PhysicsGripper(0.085, 0.02, 50.0)
    low = pose(DOWN_X, (0, 0, -0.045))  # pads reach 5 mm below the box bottom: into the table
    (blocked,) = evaluate_candidates(
        obj, pads_only, low[None], scene=make_physics_scene(table=True)
    )
    assert blocked.outcome == "collides_open"
    (free,) = evaluate_candidates(obj, pads_only, low[None])
    assert free.outcome == "held"
    # An extra palm shape reaching into the object makes the open hand collide.
    spike = GripperShape(
        "spike", "box", pose(np.eye(3), (0, 0, 0.0)), size=np.array([0.01, 0.01, 0.01])
    )
    spiky = PhysicsGripper(0.085, 0.02, 50.0, palm=(spike,))
    (hit,) = evaluate_candidates(obj, spiky, BOX_GRASP[None])
    assert hit.outcome == "collides_open"


def test_support_mesh_holds_the_object_under_gravity():
    slab = trimesh.creation.box((0.3, 0.3, 0.02))
    slab.apply_translation((0, 0, -0.06))  # top face 1 cm under the box bottom (z = -0.05)
    scene = make_physics_scene(support_meshes=((slab.vertices, slab.faces),))
    assert scene.has_support and len(scene.support_pieces) == 1
    (result,) = evaluate_candidates(box_object(), GRIPPER, BOX_GRASP[None], scene=scene)
    assert result.outcome == "held"


def test_trials_are_seeded_and_deterministic():
    obj = box_object()
    poses = np.stack([BOX_GRASP, pose(DOWN_X, (0.0, 0.02, 0.02)), pose(DOWN_X, (0.03, 0, 0.02))])
    params = EvaluationParams(trials=4, position_sigma=0.004, angle_sigma=4.0)
    first = evaluate_candidates(obj, GRIPPER, poses, params=params, seed=3)
    second = evaluate_candidates(obj, GRIPPER, poses, params=params, seed=3)
    assert [r.trial_outcomes for r in first] == [r.trial_outcomes for r in second]
    np.testing.assert_array_equal([r.displacement for r in first], [r.displacement for r in second])
    assert all(r.trials == 4 and sum(r.outcomes.values()) == 4 for r in first)
    assert all(set(r.outcomes) == set(OUTCOMES) for r in first)
    assert first[0].success_rate == first[0].outcomes["held"] / 4
    # A candidate's trials do not depend on the other candidates.
    alone = evaluate_candidates(obj, GRIPPER, poses[2:], params=params, seed=3)
    assert alone[0].trial_outcomes == first[2].trial_outcomes
    other = evaluate_candidates(obj, GRIPPER, poses, params=params, seed=4)
    assert [r.displacement for r in other] != [r.displacement for r in first]


@pytest.mark.parametrize("caller_works", [True, False])
def test_worker_processes_give_the_same_results_as_one_process(monkeypatch, caller_works):
    # caller_works=False: every candidate is evaluated in a worker process.
    monkeypatch.setattr(evaluate_module, "_CALLER_WORKS", caller_works)
    monkeypatch.setattr(trial_workers, "MIN_PARALLEL_TRIALS", 0)  # small work: still parallel
    obj = box_object()
    offsets = np.linspace(-0.03, 0.03, 6)
    poses = np.stack([pose(DOWN_X, (x, 0, 0.02)) for x in offsets])
    params = EvaluationParams(trials=2)
    seen = []
    serial = evaluate_candidates(obj, GRIPPER, poses, params=params, seed=11)
    parallel = evaluate_candidates(
        obj,
        GRIPPER,
        poses,
        params=params,
        seed=11,
        jobs=2,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert [r.index for r in parallel] == list(range(6))
    assert [r.trial_outcomes for r in parallel] == [r.trial_outcomes for r in serial]
    np.testing.assert_array_equal(
        [r.displacement for r in parallel], [r.displacement for r in serial]
    )
    assert seen[-1] == (6, 6)
    assert len({r.outcome for r in serial}) > 1  # the candidates differ: a mix-up would show
    # the worker answered (one that fails is dropped, and this process does its share)
    assert [w.alive() for w in trial_workers._POOL] == [True]


def test_progress_and_cancel(monkeypatch):
    monkeypatch.setattr(trial_workers, "MIN_PARALLEL_TRIALS", 0)
    obj = box_object()
    poses = np.stack([BOX_GRASP] * 3)
    seen = []
    results = evaluate_candidates(obj, GRIPPER, poses, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 3), (2, 3), (3, 3)] and len(results) == 3
    with pytest.raises(EvaluationCancelled) as info:
        evaluate_candidates(
            obj, GRIPPER, poses, cancel=lambda: len(seen) >= 4, progress=lambda d, t: seen.append(d)
        )
    assert len(info.value.results) == 1
    with pytest.raises(EvaluationCancelled) as info:
        evaluate_candidates(obj, GRIPPER, np.stack([BOX_GRASP] * 20), jobs=2, cancel=lambda: True)
    assert 1 <= len(info.value.results) < 20
    indices = [r.index for r in info.value.results]
    assert indices == sorted(set(indices))
    assert evaluate_candidates(obj, GRIPPER, np.zeros((0, 4, 4))) == []


def test_small_work_runs_in_one_process_and_jobs_are_bounded(monkeypatch):
    # 3 candidates x 1 trial is below MIN_PARALLEL_TRIALS: no worker starts.
    trial_workers.stop_workers()
    evaluate_candidates(box_object(), GRIPPER, np.stack([BOX_GRASP] * 3), jobs=2)
    assert trial_workers._POOL == []
    monkeypatch.setenv(trial_workers.MAX_JOBS_ENV, "3")
    assert trial_workers.max_workers()[0] <= 3
    assert trial_workers.check_jobs(1000) is not None and trial_workers.check_jobs(1) is None


@pytest.mark.parametrize("value", ["abc", "0", "-3", "2.5", "\u0663"])
def test_a_bad_max_jobs_variable_is_refused_not_ignored(monkeypatch, value):
    monkeypatch.setenv(trial_workers.MAX_JOBS_ENV, value)
    with pytest.raises(ValueError, match=f"{trial_workers.MAX_JOBS_ENV} is "):
        trial_workers.check_jobs(2)


def test_divergence_is_unstable_never_a_pass():
    # max_speed is the divergence threshold: an object carried faster than it counts as diverged.
    params = EvaluationParams(max_speed=0.05)  # the lift moves at up to 0.52 m/s
    (result,) = evaluate_candidates(box_object(), GRIPPER, BOX_GRASP[None], params=params)
    assert result.outcome == "unstable"
    assert result.success_rate == 0.0
    # A 10 mg box squeezed at 50 N: soft contacts cannot stop the pads, which pass through it.
    (through,) = evaluate_candidates(box_object(mass=1e-5), GRIPPER, BOX_GRASP[None])
    assert through.outcome == "unstable"


BAD_ROTATION = pose(np.diag([1.0, 1.0, -1.0]), (0, 0, 0))


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"poses": np.zeros((2, 3, 3))}, ValueError, r"poses has shape \(2, 3, 3\)"),
        ({"poses": "poses"}, TypeError, "poses: expected a numeric"),
        ({"poses": np.stack([BOX_GRASP, BAD_ROTATION])}, ValueError, r"poses\[1\] is not a rigid"),
        (
            {"poses": np.stack([BOX_GRASP, np.full((4, 4), np.nan)])[:, None]},
            ValueError,
            r"poses\[1\]\[0\] contains NaN",
        ),
        ({"seed": -1}, ValueError, "seed is -1"),
        ({"seed": 1.5}, TypeError, "seed is 1.5"),
        ({"jobs": 0}, ValueError, "jobs is 0"),
        ({"jobs": True}, TypeError, "jobs is True"),
        ({"params": {"trials": 3}}, TypeError, "params is dict"),
        ({"scene": "table"}, TypeError, "scene is str"),
        ({"progress": 3}, TypeError, "progress is 3"),
        ({"obj": "box"}, TypeError, "object is str"),
        ({"gripper": None}, TypeError, "gripper is NoneType"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, words):
    arguments = {"obj": box_object(), "gripper": GRIPPER, "poses": BOX_GRASP[None], **kwargs}
    obj, gripper, poses = arguments.pop("obj"), arguments.pop("gripper"), arguments.pop("poses")
    with pytest.raises(error, match=words):
        evaluate_candidates(obj, gripper, poses, **arguments)


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: EvaluationParams(timestep=-0.001), ValueError, "EvaluationParams.timestep"),
        (lambda: EvaluationParams(trials=0), ValueError, "EvaluationParams.trials is 0"),
        (lambda: EvaluationParams(trials=2.0), TypeError, "EvaluationParams.trials"),
        (
            lambda: EvaluationParams(lift_height=float("inf")),
            ValueError,
            "EvaluationParams.lift_height",
        ),
        (lambda: EvaluationParams(timestep=0.01), ValueError, "contact_time_constant"),
        (lambda: EvaluationParams(integrator="rk45"), ValueError, "EvaluationParams.integrator"),
        (lambda: EvaluationParams(mass_spread=1.5), ValueError, "EvaluationParams.mass_spread"),
        (
            lambda: EvaluationParams(drop_distance=0.01),
            ValueError,
            "EvaluationParams.drop_distance",
        ),
        (lambda: PhysicsGripper(max_opening=-0.1), ValueError, "gripper max_opening is -0.1"),
        (
            lambda: PhysicsGripper(0.08, grip_force=float("nan")),
            ValueError,
            "gripper grip_force is nan",
        ),
        (lambda: PhysicsGripper(0.08, palm=("palm",)), TypeError, "gripper palm holds str"),
        (
            lambda: GripperShape("p", "box", np.eye(4), size=np.array([0.1, -1, 0.1])),
            ValueError,
            "gripper shape 'p': size",
        ),
        (lambda: GripperShape("p", "sphere", np.eye(4)), ValueError, "kind is 'sphere'"),
        (
            lambda: GripperShape("p", "convex", np.eye(4), points=np.zeros((4, 3))),
            ValueError,
            "span no volume",
        ),
        (
            lambda: GripperShape("p", "box", np.eye(3), size=np.ones(3)),
            ValueError,
            r"'p' pose has shape \(3, 3\)",
        ),
        (lambda: make_physics_scene(up=(0, 0, 0)), ValueError, "up is"),
        (
            lambda: make_physics_scene(support_meshes=(np.zeros((4, 3)),)),
            TypeError,
            r"support_meshes\[0\]",
        ),
    ],
)
def test_bad_model_inputs_are_named(build, error, words):
    with pytest.raises(error, match=words):
        build()


def test_scene_default_is_z_up_without_support():
    scene = PhysicsScene()
    assert not scene.has_support
    np.testing.assert_array_equal(scene.up, (0, 0, 1))
    np.testing.assert_allclose(make_physics_scene(up=(0, 2, 0)).up, (0, 1, 0))


def test_gripper_from_the_planner_collision_model():
    from usdgrip.grasping.collision import GripperCollisionModel, RobotShape, Shape

    proxy = GripperCollisionModel.proxy(0.085, 0.02)
    gripper = PhysicsGripper.from_collision_model(proxy, 0.085, 0.02, 50.0)
    (palm,) = gripper.palm  # the model's two fingers are replaced by the closing pads
    assert palm.name == "palm" and palm.kind == "box"
    np.testing.assert_allclose(palm.size, GRIPPER.palm[0].size)
    np.testing.assert_allclose(palm.pose, GRIPPER.palm[0].pose)
    (a,) = evaluate_candidates(box_object(), gripper, BOX_GRASP[None])
    (b,) = evaluate_candidates(box_object(), GRIPPER, BOX_GRASP[None])
    assert a.trial_outcomes == b.trial_outcomes == ("held",)
    assert a.displacement == b.displacement

    housing = trimesh.creation.box((0.1, 0.03, 0.02))
    shapes = [
        RobotShape("rod", Shape.cylinder(0.005, 0.2, axis="X"), pose(np.eye(3), (0, 0, -0.08))),
        RobotShape("cap", Shape.capsule(0.01, 0.02, axis="Y"), pose(np.eye(3), (0, 0, -0.1))),
        RobotShape("ball", Shape.sphere(0.01), pose(np.eye(3), (0, 0, -0.12))),
        RobotShape(
            "housing", Shape.mesh(housing.vertices, housing.faces), pose(np.eye(3), (0, 0, -0.06))
        ),
    ]
    model = GripperCollisionModel(shapes, source="meshes")
    built = PhysicsGripper.from_collision_model(model, 0.085, use_cache=False)
    assert [s.name for s in built.palm] == ["rod", "cap", "ball", "housing[0]"]
    assert all(s.kind == "convex" for s in built.palm)
    np.testing.assert_allclose(np.ptp(built.palm[0].points, axis=0), (0.2, 0.01, 0.01), atol=1e-3)
    np.testing.assert_allclose(np.ptp(built.palm[1].points, axis=0), (0.02, 0.04, 0.02), atol=1e-3)
    # Lowered 5 cm, the rod and the housing reach into the box: the open hand collides.
    rod_hand = pose(DOWN_X, (0, 0, -0.03))
    (hit,) = evaluate_candidates(box_object(), built, rod_hand[None])
    assert hit.outcome == "collides_open"


def test_every_parameter_is_documented_with_its_default():
    import dataclasses
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "physics.md").read_text()
    for cls in (EvaluationParams, DecompositionParams):
        for field in dataclasses.fields(cls):
            row = re.search(rf"^\| `{field.name}` \| ([^|]+) \|", text, re.M)
            assert row, f"{cls.__name__}.{field.name} missing from docs/physics.md"
            documented = row.group(1).strip().strip("`")
            if isinstance(field.default, str):
                assert documented == field.default, field.name
            else:
                assert float(documented) == field.default, field.name


def test_workers_started_before_the_size_is_known_stop_when_one_process_is_faster(monkeypatch):
    # `evaluate --jobs 2` starts its worker before it reads the grasp file; a file too small
    # to pay for it stops it again.
    monkeypatch.setenv(trial_workers.MAX_JOBS_ENV, "2")
    trial_workers.stop_workers()
    try:
        trial_workers.prestart(2)
        (worker,) = trial_workers._POOL
        trial_workers.prestart(2, candidates=3, trials=1)
        assert trial_workers._POOL == [] and worker.process.poll() is not None
        trial_workers.prestart(2, candidates=50, trials=4)
        assert len(trial_workers._POOL) == 1
    finally:
        trial_workers.stop_workers()


def test_a_simulation_worker_loads_neither_pxr_nor_pydantic_glfw_or_scipy():
    import os
    import subprocess
    import sys

    from usdgrip.grasping.physics import children

    # What the worker imports before it says ready (trial_worker_main.main), in its environment.
    probe = (
        "import sys; from usdgrip.grasping.physics import trial_worker_main; "
        "from usdgrip.grasping.physics.candidate_trials import evaluate_one; "
        "from usdgrip.grasping.physics.engines import get_engine; get_engine('mujoco').load(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pxr', 'pydantic', 'glfw', "
        "'scipy', 'trimesh', 'yaml'}))"
    )
    env = {**os.environ, children.WORKER_ENV: "1", "MUJOCO_GL": "disable"}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
    # spawn gives its children that environment
    process, tasks, results = children.spawn(
        "import os, sys; from multiprocessing.connection import Connection; "
        "Connection(int(sys.argv[2]), readable=False).send("
        f"(os.environ.get({children.WORKER_ENV!r}), os.environ.get('MUJOCO_GL')))"
    )
    try:
        assert results.recv() == ("1", "disable")
    finally:
        children.end(process, tasks, results, grace=5)


def _ready_worker(monkeypatch: pytest.MonkeyPatch) -> trial_workers.TrialWorker:
    """One live worker that has said ready (as `evaluate --jobs 2`'s early one has)."""
    monkeypatch.setenv(trial_workers.MAX_JOBS_ENV, "2")
    monkeypatch.setattr(trial_workers, "MIN_PARALLEL_TRIALS", 0)
    trial_workers.stop_workers()
    (worker,) = trial_workers.start_workers(1)
    assert worker.connection.poll(120) and worker.connection.recv() == trial_workers.READY
    worker.ready = True
    return worker


def test_ready_workers_get_the_world_before_this_process_builds_its_engine(monkeypatch):
    # The worker simulates its first chunks while this process builds its own model.
    worker = _ready_worker(monkeypatch)
    seen = []
    original = EngineRecord.build

    def build(self, *args):
        seen.append((worker.world is not None, len(worker.chunks)))
        return original(self, *args)

    monkeypatch.setattr(EngineRecord, "build", build)  # this process only
    poses = np.stack([pose(DOWN_X, (x, 0, 0.02)) for x in np.linspace(-0.03, 0.03, 6)])
    try:
        parallel = evaluate_candidates(box_object(), GRIPPER, poses, jobs=2)
    finally:
        trial_workers.stop_workers()
    assert seen == [(True, 2)]
    serial = evaluate_candidates(box_object(), GRIPPER, poses)
    assert [r.trial_outcomes for r in parallel] == [r.trial_outcomes for r in serial]


def test_a_model_this_process_cannot_build_fails_and_the_next_call_is_answered(monkeypatch):
    # The worker already holds chunks of the failed call: their answers are dropped.
    _ready_worker(monkeypatch)
    original = EngineRecord.build

    def refuse(self, *args):
        raise ValueError("no model here")

    failed = np.stack([pose(DOWN_X, (x, 0, 0.02)) for x in np.linspace(-0.03, 0.0, 6)])
    poses = np.stack([pose(DOWN_X, (x, 0.002, 0.02)) for x in np.linspace(0.0, 0.03, 6)])
    try:
        monkeypatch.setattr(EngineRecord, "build", refuse)
        with pytest.raises(ValueError, match="no model here"):
            evaluate_candidates(box_object(), GRIPPER, failed, jobs=2)
        monkeypatch.setattr(EngineRecord, "build", original)
        again = evaluate_candidates(box_object(), GRIPPER, poses, jobs=2)
    finally:
        trial_workers.stop_workers()
    serial = evaluate_candidates(box_object(), GRIPPER, poses)
    assert [r.index for r in again] == list(range(6))
    np.testing.assert_array_equal([r.displacement for r in again], [r.displacement for r in serial])
    # a mix-up of the two calls would show: their candidates' displacements differ
    other = evaluate_candidates(box_object(), GRIPPER, failed)
    assert all(a.displacement != b.displacement for a, b in zip(other, serial, strict=True))


#: A worker that says ready and then answers every chunk with an error.
FAILING_WORKER = (
    "import sys; from multiprocessing.connection import Connection\n"
    "tasks, results = (Connection(int(fd)) for fd in sys.argv[1:3])\n"
    "results.send('ready')\n"
    "while True:\n"
    "    task = tasks.recv()\n"
    "    if task[0] == 'chunk':\n"
    "        results.send((task[1], 'RuntimeError: no engine here'))\n"
)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("caller_works", [True, False])
def test_a_worker_that_fails_its_chunks_is_dropped_and_they_are_run_here(monkeypatch, caller_works):
    # The chunk it failed goes back to the queue with the others it held (it was lost, and
    # the call never ended).
    monkeypatch.setattr(evaluate_module, "_CALLER_WORKS", caller_works)
    monkeypatch.setattr(trial_workers, "_ENTRY", FAILING_WORKER)
    _ready_worker(monkeypatch)  # it gets the first chunks
    poses = np.stack([pose(DOWN_X, (x, 0, 0.02)) for x in np.linspace(-0.03, 0.03, 5)])
    params = EvaluationParams(trials=2)
    try:
        parallel = evaluate_candidates(box_object(), GRIPPER, poses, params=params, jobs=2)
        if not caller_works:  # this process waited for its answers: it is dropped
            assert trial_workers._POOL == []
    finally:
        trial_workers.stop_workers()
    serial = evaluate_candidates(box_object(), GRIPPER, poses, params=params)
    assert [r.trial_outcomes for r in parallel] == [r.trial_outcomes for r in serial]


@pytest.mark.parametrize(
    ("total", "trials", "jobs"),
    [(2, 4, 2), (3, 1, 2), (5, 2, 8), (50, 4, 2), (64, 3, 2), (1000, 4, 4), (100_000, 2, 2)],
)
def test_the_work_is_split_into_whole_candidates_then_the_tail_trial_by_trial(total, trials, jobs):
    chunks = evaluate_module.plan_chunks(total, trials, jobs)
    tasks = [task for chunk in chunks for task in chunk]
    covered = [(i, t) for i, first, end in tasks for t in range(first, end)]
    assert covered == [(i, t) for i in range(total) for t in range(trials)]  # once, in order
    tail = min(total, jobs) if trials > 1 else 0
    split = [task for task in tasks if task[2] - task[1] < trials]
    assert split == [(i, t, t + 1) for i in range(total - tail, total) for t in range(trials)]
    assert all(len(chunk) == 1 for chunk in chunks if chunk[0] in split)
    # whole candidates in chunks of total / (32 jobs): small enough to keep every process fed
    whole = [len(chunk) for chunk in chunks if chunk[0] not in split]
    assert max(whole, default=1) == max(1, (total - tail) // (jobs * 32))
