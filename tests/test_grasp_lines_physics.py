"""FET005 on the CPU, library level: the example prop's grasp lines through the real MuJoCo engine.

The good line's planned grasps hold in grasp-and-lift on a table; the line that misses the
block gives no candidate, so it cannot be proven (the per-line verdict says so).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES

pytest.importorskip("mujoco")

from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.grasping.backends.line_proposals import (
    propose_line_grasps,
    summarize_line_evaluations,
)
from usdgrip.grasping.inputs import read_object
from usdgrip.grasping.physics import (
    EvaluationParams,
    PhysicsGripper,
    evaluate_candidates,
    make_physics_object,
    make_physics_scene,
)
from usdgrip.grasping.planner import plan_grasps


def test_the_good_line_holds_and_the_missing_line_cannot_be_proven():
    obj = read_object(
        EXAMPLES / "graspable_prop.usda", "/Block", need_mesh=True, check_closed=False
    )
    lines = [(line.name, line.p0, line.p1) for line in obj.grasp_lines]
    grasps = propose_line_grasps(
        lines, obj.vertices, obj.faces, count=8, key="56a0d63d", support_normal=obj.up
    )
    ids, poses, scores = grasps.ids, grasps.poses, grasps.scores
    assert grasps.notes == [
        "grasp line 'grasp_identifier_02' skipped: it does not meet the object (GP.001)"
    ]
    best = np.argsort(-scores, kind="stable")[:2]  # straight down and its neighbour
    block = make_physics_object(obj.vertices, obj.faces, mass=0.2, friction=0.8)  # as authored
    evaluations = evaluate_candidates(
        block,
        PhysicsGripper.proxy(0.085, 0.022, 50.0),
        poses[best],
        scene=make_physics_scene(obj.up, table=True),
        params=EvaluationParams(trials=1),
        seed=0,
    )
    chosen = [ids[i] for i in best]
    verdicts = summarize_line_evaluations(
        [line.name for line in obj.listed_lines],
        [grasps.lines[i] for i in best],
        chosen,
        evaluations,
    )
    good, missing = verdicts
    assert good.line == "grasp_identifier_01" and good.held
    assert good.held_by == chosen[0] and good.best_success_rate == 1.0
    assert missing.line == "grasp_identifier_02" and not missing.held and missing.candidates == 0


def test_planned_line_candidates_carry_their_line_as_data():
    # The line a candidate closes along is a field of the candidate, not a part of its id.
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(
                asset_path=str(EXAMPLES / "graspable_prop.usda"), prim_path="/Block"
            )
        ),
        grippers=(GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp"),),
        max_candidates_per_gripper=8,
    )
    result = plan_grasps(request, methods="lines")
    assert result.grasps
    for candidate in result.grasps.values():
        assert candidate.generation_method == "lines"
        assert candidate.grasp_line.endswith("/grasp_identifier_01")
        assert candidate.slot is None and candidate.group is not None
