"""FET005 on the CPU, library level: the example prop's grasp lines through the real MuJoCo engine.

The good line's planned grasps hold in grasp-and-lift on a table; the line that misses the
block gives no candidate, so it cannot be proven (the per-line verdict says so).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES

pytest.importorskip("mujoco")

from usdgrip.grasping.backends.line_proposals import (
    parse_line_candidate_id,
    propose_lines,
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


def test_the_good_line_holds_and_the_missing_line_cannot_be_proven():
    obj = read_object(
        EXAMPLES / "graspable_prop.usda", "/Block", need_mesh=True, check_closed=False
    )
    ids, poses, _, scores, _, notes = propose_lines(obj, 0.085, count=8, key="56a0d63d")
    assert notes == [
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
        [name for name, _, _ in obj.grasp_lines],
        [parse_line_candidate_id(c) for c in chosen],
        chosen,
        evaluations,
    )
    good, missing = verdicts
    assert good.line == "grasp_identifier_01" and good.held
    assert good.held_by == chosen[0] and good.best_success_rate == 1.0
    assert missing.line == "grasp_identifier_02" and not missing.held and missing.candidates == 0


def test_candidate_ids_name_their_line():
    assert parse_line_candidate_id("g_56a0d63d_lines_grasp_identifier_01_0054") == (
        "grasp_identifier_01"
    )
    assert parse_line_candidate_id("g_56a0d63d_antipodal_0001") is None
