"""The picked face and its normal (pure numpy)."""

from __future__ import annotations

import numpy as np
import pytest

from usdgrip.surface_pick import compute_forward_against, find_picked_face

# a unit cube's top (z=1, +z) and side (x=1, +x) faces, counter-clockwise from outside
V = np.array([[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1], [1, 0, 0], [1, 1, 0]], float)
F = np.array([[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]])


def test_point_on_a_face_gives_its_outward_normal():
    top = find_picked_face(V, F, (0.3, 0.6, 1.0))
    assert top.face == 1 and top.distance == pytest.approx(0)
    assert top.normal == pytest.approx((0, 0, 1))
    side = find_picked_face(V, F, (1.0, 0.5, 0.4))
    assert side.face in (2, 3) and side.normal == pytest.approx((1, 0, 0))
    assert compute_forward_against(side.normal) == pytest.approx((-1, 0, 0))


def test_point_off_the_mesh_takes_the_nearest_face_by_edge_distance():
    pick = find_picked_face(V, F, (0.5, -2.0, 1.0))  # beyond the top's front edge
    assert pick.face == 0 and pick.distance == pytest.approx(2.0)


def test_degenerate_faces_are_skipped():
    v = np.vstack([V, [[5, 5, 5]]])
    f = np.vstack([[[6, 6, 6], [0, 0, 1]], F])
    assert find_picked_face(v, f, (5, 5, 5)).face >= 2


@pytest.mark.parametrize(
    ("vertices", "faces", "point", "words"),
    [
        (V, F, (np.nan, 0, 0), "picked point"),
        (V, F, (np.inf, 0, 0), "picked point"),
        (V, F, (0, 0), "picked point"),
        (V[:, :2], F, (0, 0, 0), "vertices"),
        (np.where(V == 1, np.nan, V), F, (0, 0, 0), "vertices"),
        (V, F.astype(float), (0, 0, 0), "faces"),
        (V, F + 10, (0, 0, 0), "index outside"),
        (V, -F - 1, (0, 0, 0), "index outside"),
        (V, np.zeros((2, 3), int), (0, 0, 0), "degenerate"),
        (V, np.zeros((0, 3), int), (0, 0, 0), "degenerate"),
    ],
)
def test_bad_input_is_one_clear_error(vertices, faces, point, words):
    with pytest.raises(ValueError, match=words):
        find_picked_face(vertices, faces, point)


@pytest.mark.parametrize("normal", [(0, 0, 0), (np.nan, 0, 1), (1, 0)])
def test_forward_needs_a_direction(normal):
    with pytest.raises(ValueError, match="face normal"):
        compute_forward_against(normal)


def test_many_faces_stay_vectorised():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(30000, 3))
    f = rng.integers(0, len(v), size=(100000, 3))
    pick = find_picked_face(v, f, v[f[123]].mean(axis=0))
    assert pick.distance == pytest.approx(0, abs=1e-9)
