"""The grasping wing's seams: one options record, the backend registry, the engine table."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import pytest
from conftest import EXAMPLES

import usdgrip
from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.grasping.backends import registry
from usdgrip.grasping.options import EvaluationOptions, OptionError, PlanningOptions
from usdgrip.grasping.proposals import Backend, ProposalBatch

GRIPPER = GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp")
MUG = GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug")


def mug_request(count=5) -> GraspPlanningRequest:
    return GraspPlanningRequest(
        object=GraspObject(geometry=MUG), grippers=(GRIPPER,), max_candidates_per_gripper=count
    )


# --- options ------------------------------------------------------------------------------------


def test_evaluation_options_are_keyword_only_frozen_and_checked_once():
    with pytest.raises(TypeError):
        EvaluationOptions(3)  # type: ignore[misc]
    options = EvaluationOptions(trials=3, force=40.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.trials = 4  # type: ignore[misc]
    cases = {
        "trials is 0; expected an integer >= 1": {"trials": 0},
        "friction is -0.5; expected a finite value > 0": {"friction": -0.5},
        "table and support are exclusive": {"table": True, "scene": "s.usda", "support": "/F"},
        "support '/F' needs a scene file": {"support": "/F"},
        "scene 's.usda' without a support": {"scene": "s.usda"},
        "gripper model 'fancy'": {"gripper_model": "fancy"},
        "physics engine 'warp'; expected one of mujoco": {"engine": "warp"},
    }
    for message, fields in cases.items():
        with pytest.raises(ValueError, match=message):
            EvaluationOptions(**fields)
    with pytest.raises(OptionError) as refused:
        EvaluationOptions(density=0)
    assert refused.value.cli_message() == "--density 0: expected a finite value > 0 kg/m3"


def test_planning_options_normalise_methods_and_refuse_bad_values():
    assert PlanningOptions(methods=" slots , antipodal").methods == ("slots", "antipodal")
    assert PlanningOptions().rays in ("embree", "triangle")
    for fields, message in (
        ({"methods": "magic"}, "unknown method 'magic'"),
        ({"retreat_distance": 0}, "retreat distance is 0 m"),
        ({"pair_decay": 2}, "pair decay is 2"),
        ({"table": True, "support": "/T"}, "table and support are exclusive"),
    ):
        with pytest.raises(ValueError, match=message):
            PlanningOptions(**fields)


def test_old_keywords_and_the_options_record_give_the_same_evaluation(tmp_path):
    planned = usdgrip.plan_grasps(mug_request(3), methods="slots")
    by_keywords = usdgrip.evaluate_grasps(planned, MUG, trials=2, table=True, seed=3)
    by_record = usdgrip.evaluate_grasps(
        planned, MUG, options=EvaluationOptions(trials=2, table=True, seed=3)
    )
    assert [c.physics for c in by_keywords.grasps.values()] == [
        c.physics for c in by_record.grasps.values()
    ]
    with pytest.raises(TypeError, match="not both"):
        usdgrip.evaluate_grasps(planned, MUG, options=EvaluationOptions(), trials=2)
    with pytest.raises(TypeError, match="not both"):
        usdgrip.plan_grasps(mug_request(), options=PlanningOptions(), methods="slots")
    same = usdgrip.plan_grasps(mug_request(3), options=PlanningOptions(methods="slots"))
    assert list(same.grasps) == list(planned.grasps)


# --- the backend registry ---------------------------------------------------------------------


def test_a_new_backend_is_one_record(monkeypatch):
    seen = {}

    def propose_centre(obj, gripper, *, count, rng, settings):
        seen["args"] = (obj.prim_path, gripper.ref, count, settings.clearance)
        seen["draw"] = rng.random()
        pose = np.eye(4)
        pose[:3, 3] = obj.vertices.mean(axis=0) + (0, 0, 0.5)  # far above: collides nothing
        return ProposalBatch(
            names=("top",), poses=pose[None], widths=np.array([0.01]),
            scores=np.array([0.9]), groups=np.array([-1]), sources=("/Mug",),
        )  # fmt: skip

    record = Backend(
        name="centre",
        seed_index=99,
        applies=lambda obj: None if obj.has_mesh else "no mesh",
        propose=propose_centre,
        source="slot",
    )
    monkeypatch.setitem(registry.BACKENDS, "centre", record)
    result = usdgrip.plan_grasps(mug_request(1), methods="centre")
    (candidate,) = result.grasps.values()
    assert candidate.candidate_id.endswith("_centre_top")
    assert candidate.generation_method == "centre" and candidate.slot == "/Mug"
    assert seen["args"][0] == "/Mug" and seen["args"][2] == 3  # 3 proposals per kept one
    first = seen["draw"]
    usdgrip.plan_grasps(mug_request(1), methods="centre")
    assert seen["draw"] == first  # its own seeded stream
    assert "centre" in registry.list_applicable(usdgrip.read_grasp_inputs(MUG, [GRIPPER]).object)


def test_an_asked_backend_that_does_not_apply_is_bad_input(write_usda):
    from usdgrip.errors import GripperError

    path = write_usda('#usda 1.0\ndef Xform "Obj"\n{\n    def BasisCurves "c"\n    {\n    }\n}\n')
    request = GraspPlanningRequest(
        object=GraspObject(geometry=GeometryRef(asset_path=str(path), prim_path="/Obj")),
        grippers=(GRIPPER,),
    )
    with pytest.raises(GripperError, match=r"no UsdGeom\.Mesh with faces"):
        usdgrip.plan_grasps(request, methods="antipodal")
    with pytest.raises(GripperError, match="has no GripperSlots"):
        usdgrip.plan_grasps(request, methods="slots")
    with pytest.raises(GripperError, match="has no mesh and no GripperSlots"):
        usdgrip.plan_grasps(request)


# --- the simulator seam -------------------------------------------------------------------------

pytest.importorskip("mujoco")


class RecordingEngine:
    """A batched engine that records its batches; every trial holds."""

    batches: ClassVar[list] = []

    def __init__(self, params, hands):
        self.params, self.hands = params, hands

    def run_trial(self, poses, friction_scale=1.0, mass_scale=1.0):
        from usdgrip.grasping.physics import TrialResult

        return TrialResult("held", 0.0, 0.01)

    def run_batch(self, batch):
        RecordingEngine.batches.append(batch)
        return [[self.run_trial(p) for p in trials] for trials in batch.poses]


def test_a_batched_engine_gets_every_candidate_and_trial_at_once(monkeypatch):
    import types

    from usdgrip.grasping.physics import (
        EngineRecord,
        EvaluationParams,
        PhysicsGripper,
        engines,
        evaluate_candidates,
        make_physics_object,
    )

    module = types.ModuleType("recording_engine")
    module.build_engine = lambda obj, gripper, scene, hands, params: RecordingEngine(params, hands)
    module.describe_engine = lambda params: {"engine": "recording"}
    monkeypatch.setitem(__import__("sys").modules, "recording_engine", module)
    monkeypatch.setitem(
        engines.ENGINES, "recording", EngineRecord("recording", "recording_engine", batched=True)
    )
    RecordingEngine.batches.clear()
    box = make_physics_object(
        np.array([[x, y, z] for x in (0, 0.04) for y in (0, 0.04) for z in (0, 0.04)]),
        np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]),
        mass=0.1, use_cache=False,
    )  # fmt: skip
    poses = np.tile(np.eye(4), (5, 1, 1))
    results = evaluate_candidates(
        box, PhysicsGripper.proxy(0.085), poses, params=EvaluationParams(trials=3),
        jobs=4, engine="recording",
    )  # fmt: skip
    (batch,) = RecordingEngine.batches
    assert batch.poses.shape == (5, 3, 1, 4, 4) and batch.friction_scales.shape == (5, 3)
    assert [r.success_rate for r in results] == [1.0] * 5
    # Trial 0 is nominal; the perturbations are the evaluation's, seeded per candidate.
    np.testing.assert_array_equal(batch.poses[:, 0, 0], poses)
    from usdgrip.grasping.physics import compute_trial_batch

    again = compute_trial_batch(poses[:, None], range(5), 0, EvaluationParams(trials=3))
    np.testing.assert_array_equal(again.poses, batch.poses)


def test_mujoco_batches_equal_its_trials_one_by_one():
    from usdgrip.grasping.physics import (
        EvaluationParams,
        PhysicsGripper,
        compute_trial_batch,
        get_engine,
        make_physics_object,
        make_physics_scene,
    )

    box = make_physics_object(
        np.array([[x, y, z] for x in (-0.02, 0.02) for y in (-0.02, 0.02) for z in (0, 0.1)]),
        np.array([[0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4],
                  [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]]),
        mass=0.1, use_cache=False,
    )  # fmt: skip
    down = np.diag([1.0, -1.0, -1.0, 1.0])
    down[2, 3] = 0.075
    params = EvaluationParams(trials=2)
    engine = get_engine("mujoco").build(
        box, PhysicsGripper.proxy(0.085), make_physics_scene(table=True), 1, params
    )
    batch = compute_trial_batch(down[None, None], [0], 7, params)
    (trials,) = engine.run_batch(batch)
    one_by_one = [
        engine.run_trial(batch.poses[0, t], batch.friction_scales[0, t], batch.mass_scales[0, t])
        for t in range(2)
    ]
    assert [t.outcome for t in trials] == [t.outcome for t in one_by_one] == ["held", "held"]
