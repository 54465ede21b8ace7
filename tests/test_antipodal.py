"""Antipodal sampler: exact boxes, tapered blocks, overlapping shells, determinism, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from usdgrip.grasping.backends.antipodal import AntipodalGrasps, sample_antipodal_grasps
from usdgrip.grasping.backends.antipodal_approach import (
    compute_approach_frames,
    compute_approach_mask,
)
from usdgrip.grasping.backends.antipodal_contacts import find_contact_pairs
from usdgrip.usd.geometry import read_object_mesh

CONE = math.atan(0.5)
#: Score = the contact pair's score only (no approach term, no soft-NMS over pairs).
PAIR_ONLY = {"approach_weight": 0.0, "pair_decay": 1.0}


def _rotated_box(extents, rotation_deg=(20.0, -35.0, 50.0), translation=(0.3, -0.2, 0.9)):
    box = trimesh.creation.box(extents=extents)
    transform = trimesh.transformations.euler_matrix(*np.radians(rotation_deg))
    transform[:3, 3] = translation
    box.apply_transform(transform)
    return box, transform


def _tapered_block(theta_deg: float, half_bottom=0.03, height=0.1, length=0.2):
    """Trapezoid prism: the two side faces lean in by theta each (extruded along Y)."""
    top = half_bottom - height * math.tan(math.radians(theta_deg))
    section = [(-half_bottom, 0.0), (half_bottom, 0.0), (top, height), (-top, height)]
    vertices = [(x, y, z) for y in (-length / 2, length / 2) for x, z in section]
    # Bottom ring 0-3 at y=-L/2, top ring 4-7 at y=+L/2; outward winding.
    quads = [[0, 1, 2, 3], [4, 7, 6, 5], [0, 4, 5, 1], [1, 5, 6, 2], [2, 6, 7, 3], [3, 7, 4, 0]]
    faces = [[q[0], q[1], q[2]] for q in quads] + [[q[0], q[2], q[3]] for q in quads]
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    if mesh.volume < 0:
        mesh.invert()
    return mesh


def _check_frames(poses):
    rotations = poses[:, :3, :3]
    np.testing.assert_allclose(
        rotations.transpose(0, 2, 1) @ rotations,
        np.broadcast_to(np.eye(3), rotations.shape),
        atol=1e-12,
    )
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0, atol=1e-12)
    np.testing.assert_allclose(poses[:, 3], np.broadcast_to([0, 0, 0, 1], (len(poses), 4)))
    # +Y = Z x X
    np.testing.assert_allclose(
        poses[:, :3, 1], np.cross(poses[:, :3, 2], poses[:, :3, 0]), atol=1e-12
    )


def test_box_contacts_on_the_thin_faces_with_exact_width():
    box, transform = _rotated_box([0.04, 0.1, 0.2])
    grasps = sample_antipodal_grasps(
        box.vertices, box.faces, 0.085, rng=np.random.default_rng(3), count=200, **PAIR_ONLY
    )
    assert isinstance(grasps, AntipodalGrasps)
    assert grasps.poses.shape == (200, 4, 4) and grasps.contacts.shape == (200, 2, 3)
    np.testing.assert_allclose(grasps.widths, 0.04, atol=1e-12)
    _check_frames(grasps.poses)
    thin_axis = transform[:3, 0]
    # X along the thin axis (either sign), from contact 1 to contact 2.
    np.testing.assert_allclose(np.abs(grasps.poses[:, :3, 0] @ thin_axis), 1.0, atol=1e-12)
    delta = grasps.contacts[:, 1] - grasps.contacts[:, 0]
    np.testing.assert_allclose(delta, grasps.poses[:, :3, 0] * 0.04, atol=1e-12)
    # Contacts on the two faces x = +-0.02 in the box frame; origin at the midpoint.
    local = (grasps.contacts - transform[:3, 3]) @ transform[:3, :3]
    np.testing.assert_allclose(np.sort(local[:, :, 0], axis=1), [[-0.02, 0.02]] * 200, atol=1e-12)
    assert np.all(np.abs(local[:, :, 1]) <= 0.05 + 1e-12)
    assert np.all(np.abs(local[:, :, 2]) <= 0.1 + 1e-12)
    np.testing.assert_allclose(grasps.poses[:, :3, 3], grasps.contacts.mean(axis=1), atol=1e-15)
    # Perfectly antipodal: score = 0.75 * 1 + 0.25 * (0.08 - 0.04) / 0.08.
    np.testing.assert_allclose(grasps.scores, 0.875, atol=1e-12)


def test_widths_beyond_max_opening_minus_clearance_are_excluded():
    box, _ = _rotated_box([0.04, 0.06, 0.2])

    def widths(max_width):
        pairs = find_contact_pairs(
            box.vertices, box.faces, max_width, rng=np.random.default_rng(0), point_count=400
        )
        return set(np.round(pairs.widths, 9).tolist())

    assert widths(0.08) == {0.04, 0.06}
    assert widths(0.06 + 1e-9) == {0.04, 0.06}  # the boundary fits
    assert widths(0.06 - 1e-9) == {0.04}
    both = sample_antipodal_grasps(
        box.vertices, box.faces, 0.085, rng=np.random.default_rng(0), count=800
    )
    assert set(np.round(both.widths, 9).tolist()) == {0.04, 0.06}
    # Narrower width ranks higher (more margin).
    assert both.widths[0] == pytest.approx(0.04) and both.widths[-1] == pytest.approx(0.06)
    # 0.065 - 0.005 clearance = 0.06 usable: 0.06 just fits; 0.0649 does not.
    fits = sample_antipodal_grasps(
        box.vertices, box.faces, 0.065 + 1e-9, rng=np.random.default_rng(0), count=800
    )
    assert set(np.round(fits.widths, 9).tolist()) == {0.04, 0.06}
    narrow = sample_antipodal_grasps(
        box.vertices, box.faces, 0.0649, rng=np.random.default_rng(0), count=800
    )
    assert set(np.round(narrow.widths, 9).tolist()) == {0.04}
    none = sample_antipodal_grasps(
        box.vertices, box.faces, 0.044, rng=np.random.default_rng(0), count=50
    )
    assert none.poses.shape == (0, 4, 4) and none.widths.shape == (0,)
    assert none.contacts.shape == (0, 2, 3) and none.scores.shape == (0,)


def test_same_rng_state_gives_identical_output_and_other_seed_differs():
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.03)

    def run(seed):
        return sample_antipodal_grasps(
            sphere.vertices, sphere.faces, 0.085, rng=np.random.default_rng(seed), count=300
        )

    first, second, other = run(11), run(11), run(12)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first.poses, other.poses)


@pytest.mark.parametrize("backend", ["embree", "triangle"])
def test_ray_backends_agree(backend):
    box, _ = _rotated_box([0.03, 0.1, 0.12])
    reference = sample_antipodal_grasps(
        box.vertices, box.faces, 0.085, rng=np.random.default_rng(5), count=64
    )
    grasps = sample_antipodal_grasps(
        box.vertices,
        box.faces,
        0.085,
        rng=np.random.default_rng(5),
        count=64,
        ray_backend=backend,
    )
    np.testing.assert_allclose(grasps.widths, reference.widths, atol=1e-12)
    np.testing.assert_allclose(grasps.poses, reference.poses, atol=1e-12)


@pytest.mark.parametrize("theta", [5.0, 10.0])
def test_tapered_faces_score_by_cone_angle(theta):
    block = _tapered_block(theta)
    pairs = find_contact_pairs(
        block.vertices, block.faces, 0.08, rng=np.random.default_rng(1), point_count=400
    )
    assert len(pairs.widths) > 20
    # Contact normals differ by 2 theta: the worst cone angle is 2 theta at contact 2.
    np.testing.assert_allclose(pairs.antipodality, 1 - math.radians(2 * theta) / CONE, atol=1e-9)
    line = pairs.points[:, 1] - pairs.points[:, 0]
    np.testing.assert_allclose(np.linalg.norm(line, axis=1), pairs.widths, atol=1e-12)


def test_better_aligned_pairs_score_higher_and_scores_in_unit_interval():
    scores = {}
    for theta in (0.0, 5.0, 10.0):
        block = _tapered_block(theta)
        grasps = sample_antipodal_grasps(
            block.vertices,
            block.faces,
            0.085,
            rng=np.random.default_rng(2),
            count=400,
            clearance_weight=0.0,
            **PAIR_ONLY,
        )
        assert np.all((grasps.scores >= 0) & (grasps.scores <= 1))
        assert np.all(np.diff(grasps.scores) <= 0)  # best first
        scores[theta] = grasps.scores.mean()
    assert scores[0.0] == pytest.approx(1.0)
    assert scores[0.0] > scores[5.0] > scores[10.0] > 0


def test_pairs_outside_the_friction_cone_are_dropped():
    block = _tapered_block(15.0)  # contact normals 30 degrees apart > atan(0.5) = 26.6
    kwargs = {"rng": np.random.default_rng(4), "count": 100, **PAIR_ONLY}
    assert len(sample_antipodal_grasps(block.vertices, block.faces, 0.085, **kwargs).widths) == 0
    wide_cone = sample_antipodal_grasps(
        block.vertices, block.faces, 0.085, friction_coefficient=1.0, **kwargs
    )
    assert len(wide_cone.widths) == 100
    np.testing.assert_allclose(
        wide_cone.scores,
        0.75 * (1 - 30 / 45) + 0.25 * np.clip((0.08 - wide_cone.widths) / 0.08, 0, 1),
        atol=1e-9,
    )


def test_overlapping_shells_give_the_outer_width_and_inside_out_meshes_work():
    a = trimesh.creation.box(bounds=[[0, 0, 0], [0.04, 0.1, 0.1]])
    b = trimesh.creation.box(bounds=[[0.02, 0, 0], [0.06, 0.1, 0.1]])
    vertices = np.vstack([a.vertices, b.vertices])
    faces = np.vstack([a.faces, b.faces + len(a.vertices)])
    grasps = sample_antipodal_grasps(
        vertices, faces, 0.085, rng=np.random.default_rng(0), count=200
    )
    # Buried faces at x = 0.02 and 0.04 never become contacts; the union is 0.06 wide.
    np.testing.assert_allclose(grasps.widths, 0.06, atol=1e-12)
    np.testing.assert_allclose(
        np.sort(grasps.contacts[:, :, 0], axis=1), [[0, 0.06]] * 200, atol=1e-12
    )
    inverted = sample_antipodal_grasps(
        vertices, faces[:, ::-1], 0.085, rng=np.random.default_rng(0), count=200
    )
    np.testing.assert_allclose(inverted.widths, grasps.widths, atol=1e-12)


def test_approach_frames_evenly_spaced_around_the_closing_axis():
    contacts = np.array([[[0, 0, 0], [0.03, 0.04, 0]], [[1, 1, 1], [1, 1, 1.05]]], dtype=float)
    poses = compute_approach_frames(contacts, 6, np.random.default_rng(0))
    assert poses.shape == (12, 4, 4)
    _check_frames(poses)
    for pair in range(2):
        block = poses[6 * pair : 6 * pair + 6]
        x = block[0, :3, 0]
        np.testing.assert_allclose(block[:, :3, 0], np.broadcast_to(x, (6, 3)), atol=1e-12)
        np.testing.assert_allclose(block[:, :3, 2] @ x, 0.0, atol=1e-12)
        z = block[:, :3, 2]
        # Consecutive approaches turn by 60 degrees about +X (right-handed).
        turn = np.arctan2(
            np.einsum("ij,ij->i", np.cross(z[:-1], z[1:]), np.broadcast_to(x, (5, 3))),
            np.einsum("ij,ij->i", z[:-1], z[1:]),
        )
        np.testing.assert_allclose(turn, math.radians(60), atol=1e-12)
        np.testing.assert_allclose(block[:, :3, 3], contacts[pair].mean(axis=0)[None].repeat(6, 0))


def test_pad_width_ranks_pads_resting_on_a_thin_rod_higher():
    rod = trimesh.creation.box(extents=[0.01, 0.01, 0.3])
    grasps = sample_antipodal_grasps(
        rod.vertices,
        rod.faces,
        0.085,
        rng=np.random.default_rng(0),
        count=400,
        pad_width=0.03,
        **PAIR_ONLY,
    )
    along = np.abs(grasps.poses[:, 2, 1])  # |Y . rod axis|
    best = grasps.scores == grasps.scores.max()
    # Full support only when the pads lie along the rod; across it, both pad edges overhang.
    assert np.all(along[best] > 0.95 * math.cos(math.radians(45)))
    assert grasps.scores.max() > grasps.scores.min()
    plain = sample_antipodal_grasps(
        rod.vertices, rod.faces, 0.085, rng=np.random.default_rng(0), count=400, **PAIR_ONLY
    )
    assert np.ptp(plain.scores) == pytest.approx(0.0, abs=1e-12)


def test_approach_mask_rejects_approaches_from_below_the_table():
    poses = np.repeat(np.eye(4)[None], 3, axis=0)
    poses[1, :3, :3] = np.diag([1.0, -1.0, -1.0])  # +Z down: top-down approach
    poses[2, :3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]  # +Z horizontal: side approach
    # poses[0] approaches upward, from below the table.
    assert compute_approach_mask(poses, [0, 0, 1]).tolist() == [False, True, True]
    assert compute_approach_mask(poses, [0, 0, 2], max_angle_deg=30).tolist() == [
        False,
        True,
        False,
    ]
    with pytest.raises(ValueError, match=r"support_normal is \[0.0, 0.0, 0.0\]"):
        compute_approach_mask(poses, [0, 0, 0])


def test_planning_on_the_example_mug_from_usd(tmp_path):
    from pathlib import Path

    from usdgrip.usd.stage import open_stage

    stage = open_stage(Path(__file__).resolve().parent.parent / "examples" / "mug.usda")
    mesh = read_object_mesh(stage.GetPrimAtPath("/Mug"))
    grasps = sample_antipodal_grasps(
        mesh.vertices, mesh.faces, 0.085, rng=np.random.default_rng(0), count=200
    )
    assert len(grasps.widths) == 200
    assert np.all(grasps.widths <= 0.08 + 1e-12)
    _check_frames(grasps.poses)
    # The body is 0.07 wide; the 0.012 handle and 0.1 height are the other spans.
    assert np.any(np.isclose(grasps.widths, 0.012, atol=1e-6))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_opening": 0.0}, ValueError, r"max_opening is 0.0; expected a finite value > 0"),
        ({"max_opening": math.nan}, ValueError, r"max_opening is nan; expected a finite value > 0"),
        ({"clearance": 0.1}, ValueError, r"clearance is 0.1; expected 0 <= clearance < max_open"),
        ({"friction_coefficient": -1}, ValueError, r"friction_coefficient is -1.0; expected"),
        ({"count": 0}, ValueError, r"count is 0; expected an integer >= 1"),
        ({"approach_samples": 0}, ValueError, r"approach_samples is 0; expected an integer"),
        ({"pad_width": 0.0}, ValueError, r"pad_width is 0.0; expected a finite value > 0 or None"),
        ({"clearance_weight": 2}, ValueError, r"clearance_weight is 2; expected a value in"),
        ({"rng": 7}, TypeError, r"rng is int; expected numpy.random.Generator"),
        ({"approach_weight": -0.1}, ValueError, r"approach_weight is -0.1; expected a value in"),
        ({"pair_decay": 0.0}, ValueError, r"pair_decay is 0.0; expected a value in \(0, 1\]"),
        ({"support_normal": [0, 0, 0]}, ValueError, r"support_normal is \[0.0, 0.0, 0.0\]"),
        ({"support_normal": [0, 1]}, ValueError, r"support_normal is \[0.0, 1.0\]; expected"),
        ({"ray_backend": "bvh"}, ValueError, r"ray backend is 'bvh'; expected 'auto', 'embree'"),
        ({"faces": [[0, 1, 9]]}, ValueError, r"faces index 0..9; expected 0..7"),
        ({"faces": [[0.0, 1.0, 2.0]]}, TypeError, r"faces have dtype float64; expected integer"),
        ({"vertices": np.zeros((4, 2))}, ValueError, r"vertices have shape \(4, 2\); expected"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, error, message):
    box = trimesh.creation.box(extents=[0.04, 0.1, 0.2])
    arguments = {
        "vertices": box.vertices,
        "faces": box.faces,
        "max_opening": 0.085,
        "rng": np.random.default_rng(0),
        **kwargs,
    }
    with pytest.raises(error, match=message):
        sample_antipodal_grasps(
            arguments.pop("vertices"),
            arguments.pop("faces"),
            arguments.pop("max_opening"),
            **arguments,
        )


# ------------------------------------------------------- approach ranking and diversity


def _pair_groups(grasps):
    """Row indices of each contact pair (rows sharing both contacts), in first-seen order."""
    keys = [tuple(np.round(c, 12).ravel()) for c in grasps.contacts]
    groups: dict = {}
    for row, key in enumerate(keys):
        groups.setdefault(key, []).append(row)
    return list(groups.values())


def test_approaches_of_one_pair_score_differently_top_down_first():
    # A plate standing on a table (normal +Z), gripped across its 0.02 m thickness:
    # the approaches of a pair turn in the Y-Z plane.
    plate = trimesh.creation.box(bounds=[[-0.01, -0.05, 0.0], [0.01, 0.05, 0.2]])
    grasps = sample_antipodal_grasps(
        plate.vertices,
        plate.faces,
        0.085,
        rng=np.random.default_rng(5),
        count=160,
        support_normal=[0, 0, 1],
        pair_decay=1.0,
    )
    groups = _pair_groups(grasps)
    assert len(groups) == 20 and all(len(g) == 8 for g in groups)
    for rows in groups:
        scores = grasps.scores[rows]
        assert np.ptp(scores) > 1e-3  # approaches are told apart
        up = grasps.poses[rows, 2, 2]  # Z of G . world up
        # Straight down onto the plate beats coming up from under the table.
        assert scores[np.argmin(up)] > scores[np.argmax(up)]
    # Across pairs: the best approaches come from above.
    assert np.mean(grasps.poses[:20, 2, 2]) < -0.5


def test_best_first_list_spreads_over_contact_pairs():
    box, _ = _rotated_box([0.04, 0.1, 0.2])
    grasps = sample_antipodal_grasps(
        box.vertices, box.faces, 0.085, rng=np.random.default_rng(3), count=200
    )
    assert np.all(np.diff(grasps.scores) <= 0)
    first = [tuple(np.round(c, 12).ravel()) for c in grasps.contacts[:10]]
    assert len(set(first)) == 10  # ten best: ten different contact pairs
    # Soft-NMS: the k-th best approach of a pair keeps decay**k of its undecayed score.
    plain = sample_antipodal_grasps(
        box.vertices, box.faces, 0.085, rng=np.random.default_rng(3), count=200, pair_decay=1.0
    )
    np.testing.assert_array_equal(np.sort(plain.widths), np.sort(grasps.widths))
    assert grasps.scores.sum() < plain.scores.sum()


def test_pair_decay_and_approach_quality_formulas():
    from usdgrip.grasping.backends.antipodal_approach import (
        compute_approach_quality,
        compute_pair_decay,
    )

    decayed = compute_pair_decay([0.9, 0.5, 0.8, 0.9, 0.7], [0, 1, 0, 0, 1], 0.5)
    # Pair 0: 0.9 (first), 0.9 (second, tie by position), 0.8 (third); pair 1: 0.7, 0.5.
    np.testing.assert_allclose(decayed, [0.9, 0.25, 0.2, 0.45, 0.7])
    poses = np.repeat(np.eye(4)[None], 3, axis=0)
    poses[:, :3, 3] = (0.0, 0.0, 0.1)  # grasp centre 0.1 above the centroid
    poses[1, :3, :3] = np.diag([1.0, -1.0, -1.0])  # +Z down: toward the centroid
    poses[2, :3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]  # +Z sideways
    q = compute_approach_quality(
        poses,
        [0, 0, 0],
        0.2,
        palm_free=np.array([np.inf, 0.02, 0.08]),
        palm_range=0.08,
        support_normal=[0, 0, 2],
    )
    np.testing.assert_allclose(q.centroid, [0.0, 1.0, 0.5])
    np.testing.assert_allclose(q.support, [0.0, 1.0, 0.5])
    np.testing.assert_allclose(q.palm, [1.0, 0.25, 1.0])
    np.testing.assert_allclose(q.quality, [0.25, 3.25 / 4, 2.5 / 4])


def test_palm_side_clutter_is_measured_behind_the_object():
    from usdgrip.grasping.backends.antipodal_contacts import (
        compute_face_normals,
        compute_palm_free,
        get_ray_backend,
    )

    # A 0.01 m plate at y in [0, 0.06] and a block 0.03 m behind it (y in [-0.05, -0.03]).
    plate = trimesh.creation.box(bounds=[[-0.005, 0.0, 0.0], [0.005, 0.06, 0.1]])
    block = trimesh.creation.box(bounds=[[-0.05, -0.05, 0.0], [0.05, -0.03, 0.1]])
    v = np.vstack([plate.vertices, block.vertices])
    f = np.vstack([plate.faces, block.faces + len(plate.vertices)]).astype(np.int64)
    backend = get_ray_backend("auto")
    normals, _ = compute_face_normals(v, f)
    from usdgrip.grasping.backends.antipodal_contacts import _make_intersector

    cache = {
        "intersector": _make_intersector(v, f, backend),
        "normals": normals,
        "backend": backend,
        "scale": float(np.linalg.norm(np.ptp(v, axis=0))),
    }
    poses = np.repeat(np.eye(4)[None], 2, axis=0)
    poses[:, :3, 3] = (0.0, 0.02, 0.05)  # inside the plate, 0.02 from its back face
    poses[0, :3, :3] = [[1, 0, 0], [0, 0, 1], [0, -1, 0]]  # +Z = +Y: palm toward the block
    poses[1, :3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]  # +Z = -Y: palm in the open
    free = compute_palm_free(cache, v, f, poses)
    assert free[0] == pytest.approx(0.03, abs=1e-6)
    assert free[1] == np.inf
