"""GS.009's slot-vs-surface test: the plain-Python small path agrees with the numpy one, and
the certified pass on boxes (no triangles) passes only what the triangle cast passes."""

from __future__ import annotations

import numpy as np
import pytest

from usdgrip.frames import compute_rigid_part
from usdgrip.slot_checks import (
    SMALL_SURFACE_POINTS,
    check_slots_meet_boxes,
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


# --- the certified pass on boxes (check_slots_meet_boxes) against the cast -----------------

#: Object transforms (linear part, before the random rotation): GS.009 reads any of them.
LINEAR = {
    "identity": lambda rng: np.eye(3),
    "rotated": lambda rng: _rotation(rng),
    "scaled": lambda rng: _rotation(rng) @ np.diag(rng.uniform(0.3, 3.0, size=3)),
    "sheared": lambda rng: np.diag(rng.uniform(0.3, 3.0, size=3)) @ _rotation(rng),
    "mirrored": lambda rng: np.diag([-1.0, 1.0, 1.0]) @ _rotation(rng),
    "tiny": lambda rng: 1e-6 * _rotation(rng),
    "huge": lambda rng: 1e4 * _rotation(rng),
}
#: How the slots are drawn: through the box, anywhere, along a face, an edge, via a corner,
#: or with the centre just on the bounds grown by the up range.
SLOTS = ("inside", "anywhere", "face", "edge", "corner", "bounds")


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else q @ np.diag([-1.0, 1.0, 1.0])


def _read_box(world: np.ndarray, body: np.ndarray, size: float) -> tuple:
    """What read_collision_shapes makes of a Cube of ``size`` at ``world @ body``: size, pose."""
    matrix = world @ body
    return tuple((size * np.linalg.norm(matrix[:3, :3], axis=0)).tolist()), compute_rigid_part(
        matrix
    )


def _cast(centers, spans, ups, world, boxes) -> tuple[np.ndarray, np.ndarray]:
    """The generic path: the boxes' triangles, as compute_object_surface builds them."""
    vertices, faces, offset = [], [], 0
    for size, pose in boxes:
        points, triangles = tessellate_primitive("box", {"size": size})
        vertices.append(np.asarray(points) @ pose[:3, :3].T + pose[:3, 3])
        faces.append(np.asarray(triangles) + offset)
        offset += len(points)
    return compute_slot_surface_problems(
        centers, spans, ups, world, 1.0, np.concatenate(vertices), np.concatenate(faces)
    )


def _draw_slot(rng, how: str, body: np.ndarray, half: float) -> tuple[np.ndarray, np.ndarray]:
    """A centre and a span axis in the object's frame, drawn in the body's frame."""
    corner = rng.choice([-half, half], size=3)
    tangent = rng.normal(size=3)
    if how == "inside":
        point = rng.uniform(-0.9 * half, 0.9 * half, size=3)
    elif how == "anywhere":
        point = rng.normal(scale=2 * half, size=3)
    elif how == "face":  # in a face's plane, along it: the cast meets the faces beside it
        axis = rng.integers(3)
        point = rng.uniform(-0.9 * half, 0.9 * half, size=3)
        point[axis], tangent[axis] = corner[axis], 0.0
    elif how == "edge":  # along an edge
        axis = rng.integers(3)
        point, tangent = corner.copy(), np.zeros(3)
        point[axis], tangent[axis] = rng.uniform(-half, half), 1.0
    else:  # through a corner ("corner"), or anywhere ("bounds": the centre is moved later)
        point = corner
    point = point @ body[:3, :3].T + body[:3, 3]
    return point, tangent @ body[:3, :3].T


@pytest.mark.parametrize("linear", sorted(LINEAR))
@pytest.mark.parametrize("seed", range(12))
def test_boxes_certify_only_what_the_cast_passes(linear: str, seed: int) -> None:
    """A certified pass is a cast that finds nothing; a regular clear pass is certified."""
    rng = np.random.default_rng(seed)
    world = np.eye(4)
    world[:3, :3] = LINEAR[linear](rng)
    world[:3, 3] = rng.normal(size=3) * np.abs(world[:3, :3]).max()
    bodies = []
    for _ in range(1 + seed % 2):
        body = np.eye(4)  # the Cube's own transform: axis-aligned, rotated or scaled
        body[:3, :3] = [np.eye(3), _rotation(rng), np.diag(rng.uniform(0.5, 2, size=3))][seed % 3]
        body[:3, 3] = rng.normal(scale=0.1, size=3)
        bodies.append((body, float(rng.uniform(0.05, 0.4))))
    boxes = [_read_box(world, body, size) for body, size in bodies]
    certified = expected_fast = 0
    for how in SLOTS:
        for _ in range(4):
            body, size = bodies[rng.integers(len(bodies))]
            center, span = _draw_slot(rng, how, body, size / 2)
            ups = [float(rng.choice([0.2, 0.01, np.nan, -0.1]))]
            if how == "bounds":  # the centre on the grown bounds, within a hair
                high = _cast_points(world, boxes).max(axis=0)
                ups = [0.05]
                center = center.copy()
                center[0] = high[0] + 0.05 * (1 + float(rng.choice([-1e-12, 1e-12, 0.0])))
            misses, outside = _cast([center], [span], ups, world, boxes)
            fast = check_slots_meet_boxes([center], [span], ups, world, 1.0, boxes)
            if fast:
                certified += 1
                assert not misses[0] and not outside[0], (how, center, span, ups)
            # The Cube's world axes orthogonal (no shear: the cast's box is the Cube's image).
            gram = (world @ body)[:3, :3].T @ (world @ body)[:3, :3]
            shear = np.abs(gram - np.diag(np.diag(gram))).max() / np.diag(gram).max()
            regular = linear != "tiny" and shear < 1e-9
            if how in ("inside", "face") and regular and not outside[0]:
                assert fast, (how, center, span, ups)  # the common case takes the fast path
                expected_fast += 1
    assert certified >= expected_fast and (certified or linear == "tiny")


def _cast_points(world: np.ndarray, boxes: list) -> np.ndarray:
    """The boxes' corners in the object's frame (the bounds GS.009 grows)."""
    points = []
    for size, pose in boxes:
        corners, _ = tessellate_primitive("box", {"size": size})
        points.append(np.asarray(corners) @ pose[:3, :3].T + pose[:3, 3])
    local = np.concatenate(points)
    to_local = np.linalg.inv(world)
    return local @ to_local[:3, :3].T + to_local[:3, 3]


def test_boxes_certify_a_line_along_a_face_in_centimetres() -> None:
    """The benchmark's slot: along the top face of a 0.3 cube, metersPerUnit 0.01, moved."""
    mpu = 0.01
    world = np.diag([mpu, mpu, mpu, 1.0])
    world[:3, 3] = (3.27 * mpu, 1 * mpu, 0.0)
    boxes = [_read_box(world, np.eye(4), 0.3)]
    centers, spans = [(-0.195, 0, 0.15), (0.195, 0, 0.15)], [(1, 0, 0), (-1, 0, 0)]
    assert check_slots_meet_boxes(centers, spans, [0.2, 0.2], world, mpu, boxes)
    # Lifted off the face by a thousandth of the box: the cast misses, nothing is certified.
    lifted = [(-0.195, 0, 0.1503), (0.195, 0, 0.1503)]
    assert not check_slots_meet_boxes(lifted, spans, [0.2, 0.2], world, mpu, boxes)
    points, faces = tessellate_primitive("box", {"size": boxes[0][0]})
    points = np.asarray(points) + boxes[0][1][:3, 3]
    misses, _ = compute_slot_surface_problems(lifted, spans, [0.2, 0.2], world, mpu, points, faces)
    assert misses.all()


@pytest.mark.parametrize(
    "world",
    [np.zeros((4, 4)), np.full((4, 4), np.nan), np.diag([1.0, 1.0, 1e-20, 1.0])],
    ids=["zero", "nan", "flat"],
)
def test_boxes_certify_nothing_on_a_degenerate_transform(world: np.ndarray) -> None:
    boxes = [((0.3, 0.3, 0.3), np.eye(4))]
    assert not check_slots_meet_boxes([(0, 0, 0)], [(1, 0, 0)], [0.2], world, 1.0, boxes)


def test_boxes_certify_nothing_for_a_zero_box_or_span() -> None:
    world = np.eye(4)
    assert not check_slots_meet_boxes(
        [(0, 0, 0)], [(0, 0, 0)], [0.2], world, 1.0, [((1,) * 3, world)]
    )
    assert not check_slots_meet_boxes(
        [(0, 0, 0)], [(1, 0, 0)], [0.2], world, 1.0, [((0, 1, 1), world)]
    )
    assert not check_slots_meet_boxes([(0, 0, 0)], [(1, 0, 0)], [0.2], world, 1.0, [])


@pytest.mark.parametrize("lift", [0.0, 1e-13, 1e-11, 1e-10, 1e-9, 3e-9, 1e-8, 1e-7, 1e-6])
def test_boxes_certify_a_line_beside_a_face_only_within_the_cast_slack(lift: float) -> None:
    """A line parallel to the top face, ``lift`` of the half edge above it."""
    world, boxes = np.eye(4), [((0.3, 0.3, 0.3), np.eye(4))]
    centers, spans = [(0.05, 0.02, 0.15 * (1 + lift))], [(1, 0.3, 0)]
    fast = check_slots_meet_boxes(centers, spans, [0.2], world, 1.0, boxes)
    misses, _ = _cast(centers, spans, [0.2], world, boxes)
    assert not (fast and misses[0])
    assert fast == (lift <= 1e-10)  # the cast's slack is 1e-9 of the edge: a tenth is certified


def test_boxes_certify_nothing_where_rounding_moves_the_cast() -> None:
    """A 1e-10 m cube 1000 km off: float64 keeps ~1e-10 m there, the cast loses the box."""
    rng = np.random.default_rng(7)
    certified = missed = 0
    for how in ("inside", "face", "edge") * 20:
        world = np.eye(4)
        world[:3, 3] = 1e6 + rng.uniform(0, 1, size=3)
        boxes = [_read_box(world, np.eye(4), 1e-10)]
        center, span = _draw_slot(rng, how, np.eye(4), 0.5e-10)
        fast = check_slots_meet_boxes([center], [span], [np.nan], world, 1.0, boxes)
        misses, _ = _cast([center], [span], [np.nan], world, boxes)
        certified += fast
        missed += bool(misses[0])
        assert not (fast and misses[0])
    assert missed and not certified  # the cast decides there (and misses): nothing certified
