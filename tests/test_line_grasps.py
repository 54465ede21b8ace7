"""The `lines` planning backend's proposals (pure): frames, centre, width, scores, misses."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from usdgrip.grasping.backends.line_proposals import compute_line_frames, propose_line_grasps


def _box():
    box = trimesh.creation.box(extents=(0.04, 0.04, 0.04))
    return np.asarray(box.vertices), np.asarray(box.faces)


def test_frames_close_along_the_line_and_approach_perpendicular():
    poses = compute_line_frames((0.1, 0.2, 0.3), (0, 0, 2), 8)
    assert poses.shape == (8, 4, 4)
    rotations = poses[:, :3, :3]
    np.testing.assert_allclose(
        rotations @ rotations.transpose(0, 2, 1), np.tile(np.eye(3), (8, 1, 1)), atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0)
    np.testing.assert_allclose(poses[:, :3, 0], np.tile([0, 0, 1], (8, 1)), atol=1e-12)
    np.testing.assert_allclose(poses[:, :3, 3], np.tile([0.1, 0.2, 0.3], (8, 1)))
    # evenly around: consecutive approaches 45 degrees apart
    z = poses[:, :3, 2]
    np.testing.assert_allclose(np.einsum("ij,ij->i", z, np.roll(z, -1, axis=0)), np.cos(np.pi / 4))
    with pytest.raises(ValueError, match="closing axis"):
        compute_line_frames((0, 0, 0), (0, 0, 0), 4)


def test_proposals_centre_on_the_symmetrised_midpoint_with_the_surface_width():
    vertices, faces = _box()
    # authored off-centre along x: 1 cm before one face, 5 cm beyond the other
    lines = [("grasp_identifier_01", (-0.03, 0, 0.01), (0.07, 0, 0.01)),
             ("beside", (-0.05, 0.5, 0), (0.05, 0.5, 0))]  # fmt: skip
    grasps = propose_line_grasps(
        lines, vertices, faces, count=12, key="abcd1234", support_normal=(0, 0, 1)
    )
    assert len(grasps.ids) == 12 and set(grasps.lines) == {"grasp_identifier_01"}
    assert grasps.ids[0] == "g_abcd1234_lines_grasp_identifier_01_0000"
    np.testing.assert_allclose(grasps.poses[:, :3, 3], np.tile([0, 0, 0.01], (12, 1)), atol=1e-12)
    np.testing.assert_allclose(grasps.widths, 0.04)
    assert grasps.notes == ["grasp line 'beside' skipped: it does not meet the object (GP.001)"]
    # from above ranks above from below (support normal +Z)
    z = grasps.poses[:, :3, 2]
    top, bottom = int(np.argmin(z[:, 2])), int(np.argmax(z[:, 2]))
    assert grasps.scores[top] > grasps.scores[bottom]
    assert np.all((grasps.scores >= 0.5) & (grasps.scores <= 1))


def test_no_usable_line_gives_no_proposal_and_says_why():
    vertices, faces = _box()
    grasps = propose_line_grasps(
        [("flat", (0, 0, 0), (0, 0, 0))], vertices, faces, count=4, key="k"
    )
    assert grasps.poses.shape == (0, 4, 4) and grasps.ids == []
    assert "not two finite points" in grasps.notes[0]
    with pytest.raises(ValueError, match="count is 0"):
        propose_line_grasps([], vertices, faces, count=0, key="k")


def test_a_line_too_long_to_resolve_the_surfaces_is_skipped_not_a_zero_width_grasp():
    vertices, faces = _box()
    lines = [("huge", (-1e30, 0, 0), (1e30, 0, 0)), ("good", (-0.05, 0, 0), (0.05, 0, 0))]
    grasps = propose_line_grasps(lines, vertices, faces, count=4, key="k")
    assert set(grasps.lines) == {"good"} and np.all(grasps.widths > 0)
    assert grasps.notes == [
        "grasp line 'huge' skipped: the surfaces it lands on are 0 m apart "
        "(the line is 2e+30 m long); expected two sides of the part to grasp"
    ]


def test_per_line_verdicts_from_evaluations():
    from dataclasses import dataclass

    from usdgrip.grasping.backends.line_proposals import summarize_line_evaluations

    @dataclass
    class Evaluation:  # the two fields the summary reads of a physics evaluation
        success_rate: float
        outcomes: dict

    evaluations = [
        Evaluation(0.0, {"held": 0, "dropped_lift": 2}),
        Evaluation(0.5, {"held": 1, "slipped_shake": 1}),
        Evaluation(0.5, {"held": 1, "dropped_shake": 1}),
        Evaluation(0.0, {"held": 0, "missed": 2}),
    ]
    verdicts = summarize_line_evaluations(
        ["a", "b", "c"], ["a", "a", "a", "b"], ["a0", "a1", "a2", "b0"], evaluations
    )
    a, b, c = verdicts
    assert (a.held, a.held_by, a.best_success_rate, a.candidates) == (True, "a1", 0.5, 3)
    assert a.outcomes == {"held": 2, "dropped_lift": 2, "slipped_shake": 1, "dropped_shake": 1}
    assert (b.held, b.held_by, b.outcomes) == (False, None, {"held": 0, "missed": 2})
    assert (c.held, c.candidates, c.best_success_rate) == (False, 0, 0.0)
    with pytest.raises(ValueError, match="unknown line"):
        summarize_line_evaluations(["a"], ["z"], ["z0"], evaluations[:1])
    with pytest.raises(ValueError, match="equal lengths"):
        summarize_line_evaluations(["a"], ["a"], [], evaluations[:1])


def test_approaches_per_line_are_capped():
    from usdgrip.grasping.backends.line_proposals import MAX_APPROACHES_PER_LINE

    vertices, faces = _box()
    line = [("a", (-0.05, 0, 0), (0.05, 0, 0))]
    grasps = propose_line_grasps(line, vertices, faces, count=1000, key="k")
    assert len(grasps.ids) == MAX_APPROACHES_PER_LINE == 72
