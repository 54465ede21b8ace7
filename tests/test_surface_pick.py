"""A click ray against a mesh, and the face normal (pure numpy)."""

from __future__ import annotations

import numpy as np
import pytest

from usdgrip.surface_pick import compute_forward_against, intersect_ray

# a unit cube's top (z=1, +z) and side (x=1, +x) faces, counter-clockwise from outside
V = np.array([[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1], [1, 0, 0], [1, 1, 0]], float)
F = np.array([[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]])


def test_ray_down_hits_the_top_and_sideways_the_side():
    top = intersect_ray(V, F, (0.3, 0.6, 5.0), (0, 0, -2.0))
    assert top.face == 1 and top.point == pytest.approx((0.3, 0.6, 1.0))
    assert top.distance == pytest.approx(2.0) and top.normal == pytest.approx((0, 0, 1))
    side = intersect_ray(V, F, (3.0, 0.5, 0.4), (-1, 0, 0))
    assert side.face in (2, 3) and side.normal == pytest.approx((1, 0, 0))
    assert compute_forward_against(side.normal) == pytest.approx((-1, 0, 0))


def test_nearest_of_two_faces_along_the_ray():
    hit = intersect_ray(V, F, (3.0, 0.5, 0.99), (-1, 0, -0.001))  # side first, top behind
    assert hit.face in (2, 3)


@pytest.mark.parametrize(
    "origin, direction",
    [((0.5, 0.5, 5), (0, 0, 1)), ((5, 5, 5), (0, 0, -1)), ((0.5, -1, 1), (0, 1, 0))],
    ids=["pointing-away", "beside", "along-the-face"],
)
def test_a_miss_is_one_clear_error(origin, direction):
    with pytest.raises(ValueError, match="missed the object"):
        intersect_ray(V, F, origin, direction)


@pytest.mark.parametrize(
    ("vertices", "faces", "origin", "direction", "words"),
    [
        (V, F, (np.nan, 0, 0), (0, 0, 1), "ray origin"),
        (V, F, (0, 0, 0), (np.inf, 0, 0), "ray direction"),
        (V, F, (0, 0), (0, 0, 1), "ray origin"),
        (V, F, (0, 0, 0), (0, 0, 0), "zero"),
        (V[:, :2], F, (0, 0, 0), (0, 0, 1), "vertices"),
        (np.where(V == 1, np.nan, V), F, (0, 0, 0), (0, 0, 1), "vertices"),
        (V, F.astype(float), (0, 0, 0), (0, 0, 1), "faces"),
        (V, F + 10, (0, 0, 0), (0, 0, 1), "index outside"),
        (V, -F - 1, (0, 0, 0), (0, 0, 1), "index outside"),
        (V, np.zeros((2, 3), int), (0, 0, 5), (0, 0, -1), "missed"),  # degenerate faces
        (V, np.zeros((0, 3), int), (0, 0, 5), (0, 0, -1), "missed"),
    ],
)
def test_bad_input_is_one_clear_error(vertices, faces, origin, direction, words):
    with pytest.raises(ValueError, match=words):
        intersect_ray(vertices, faces, origin, direction)


@pytest.mark.parametrize("normal", [(0, 0, 0), (np.nan, 0, 1), (1, 0)])
def test_forward_needs_a_direction(normal):
    with pytest.raises(ValueError, match="face normal"):
        compute_forward_against(normal)


def test_many_faces_at_once():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(30000, 3))
    f = rng.integers(0, len(v), size=(100000, 3))
    target = v[f[123]].mean(axis=0)
    hit = intersect_ray(v, f, target + (0, 0, 50), (0, 0, -1))
    assert hit.point[2] >= target[2] - 1e-9
