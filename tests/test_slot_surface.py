"""GS.009's slot-vs-surface test: the plain-Python small path agrees with the numpy one."""

from __future__ import annotations

import numpy as np
import pytest

from usdgrip.slot_checks import (
    SMALL_SURFACE_POINTS,
    compute_slot_surface_problems,
)
from usdgrip.usd.primitives import tessellate_primitive


def _numpy_path(centers, spans, ups, world, mpu, points, faces):
    """The vectorised path, forced by padding the surface past the small path's limit."""
    pad = np.repeat(points[:1], SMALL_SURFACE_POINTS + 1, axis=0)  # unused points: same bounds
    return compute_slot_surface_problems(
        centers, spans, ups, world, mpu, np.concatenate([points, pad]), faces
    )


@pytest.mark.parametrize("seed", range(40))
def test_small_path_matches_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    points, faces = tessellate_primitive("box", {"size": (0.3, 0.3, 0.3)})
    world = np.eye(4)
    world[:3, :3] = rng.normal(size=(3, 3)) if seed % 3 else np.eye(3)
    world[:3, 3] = rng.normal(size=3)
    points = np.asarray(points) @ world[:3, :3].T + world[:3, 3]
    n = 1 + seed % 4
    centers = rng.normal(scale=0.3, size=(n, 3))
    spans = rng.normal(size=(n, 3))
    ups = rng.choice([0.2, -0.1, np.nan, 0.01], size=n)
    if seed % 7 == 0:
        centers[0] = np.nan  # a hostile centre: no hit, never outside
    small = compute_slot_surface_problems(centers, spans, ups, world, 1.0, points, faces)
    big = _numpy_path(centers, spans, ups, world, 1.0, points, faces)
    assert np.array_equal(small[0], big[0]) and np.array_equal(small[1], big[1])


def test_small_path_runs_for_a_box_and_finds_a_miss() -> None:
    points, faces = tessellate_primitive("box", {"size": (0.3, 0.3, 0.3)})
    misses, outside = compute_slot_surface_problems(
        [(0, 0, 0), (0, 5, 0)], [(1, 0, 0), (1, 0, 0)], [0.2, 0.2], np.eye(4), 1.0, points, faces
    )
    assert misses.tolist() == [False, True] and outside.tolist() == [False, True]
