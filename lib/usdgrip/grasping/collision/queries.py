"""The python-fcl pair queries behind :class:`~usdgrip.grasping.collision.scene.CollisionScene`.

Bodies (a shape's fcl objects, one per pose), the pairs to check, contacts, the
closed-mesh containment test and the retreat's touch test; and the result records.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import fcl
import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import Mat4, Poses, find_rigid_poses
from usdgrip.grasping.collision.exclusions import Exclusion, SceneExclusions
from usdgrip.grasping.collision.fcl_shapes import ObjectId, Shape, ShapeGeometry, invert_rigid

#: Two shapes closer than this (metres) count as touching in the retreat check's
#: "finger touches the part" and "part rests on its support" tests.
TOUCH_TOLERANCE = 1e-4


# ------------------------------------------------------------------------ results


class Contact(NamedTuple):
    """The pair that made a pose collide (one per colliding pose, not necessarily the deepest)."""

    subject_kind: str
    """``robot`` or ``attached``."""
    subject: ObjectId | int
    """Robot shape index or attached shape id."""
    partner_kind: str
    """``obstacle``, ``attached`` or ``robot``."""
    partner: ObjectId | int
    subject_name: str
    partner_name: str
    inside: bool
    """True when found by the closed-mesh containment test: a reference point of one shape
    lies inside the other's closed mesh (this also catches a shape wholly inside)."""

    def describe(self) -> str:
        """E.g. ``robot shape 1 'finger_left' vs obstacle #3 '/World/table'``."""

        def one(kind: str, ident: Any, name: str) -> str:
            label = f"{kind} shape {ident}" if kind == "robot" else f"{kind} {ident}"
            return f"{label} {name!r}" if name else label

        text = f"{one(self.subject_kind, self.subject, self.subject_name)} vs " + one(
            self.partner_kind, self.partner, self.partner_name
        )
        return text + (" (inside closed mesh)" if self.inside else "")


class CollisionResult(NamedTuple):
    """Result of :meth:`CollisionScene.check_gripper` for N poses."""

    collides: NDArray[np.bool_]
    """(N,) True where the pose collides."""
    first_contact: tuple[Contact | None, ...]
    """Per pose, the pair found first (``None`` when free)."""
    exclusions_used: tuple[Exclusion, ...]
    """The validated exclusions this check applied."""


class RetreatResult(NamedTuple):
    """Result of :meth:`CollisionScene.check_retreat` for N grasp poses."""

    collides: NDArray[np.bool_]
    """(N,) True where the gripper or the carried part hits something while retreating."""
    first_contact: tuple[Contact | None, ...]
    first_step: NDArray[np.int64]
    """(N,) first colliding step (1..steps), -1 when clear."""
    exclusions_used: tuple[tuple[Exclusion, ...], ...]
    """Per pose: caller exclusions + part × touching fingers + part × support (if it rested)."""
    distance: float
    steps: int


# -------------------------------------------------------------------------- scene


@dataclass(eq=False)
class SceneEntry:
    id: ObjectId
    shape: Shape
    geom: ShapeGeometry
    obj: fcl.CollisionObject
    name: str
    attached: bool
    frame: int | None
    pose: Mat4
    """World pose (obstacle) or frame_from_shape (attached)."""


@dataclass(eq=False)
class Body:
    key: tuple[str, Any]
    name: str
    geom: ShapeGeometry
    obj: fcl.CollisionObject
    world: NDArray[np.float64]
    """(4, 4) fixed or (N, 4, 4) per pose: world_from_shape (shape, not fcl geometry)."""
    moving: bool = field(default=False)


def as_poses(poses: ArrayLike, what: str = "poses") -> Poses:
    p = np.asarray(poses, dtype=np.float64)
    if p.shape == (4, 4):
        p = p[None]
    if p.ndim != 3 or p.shape[1:] != (4, 4):
        raise ValueError(f"{what} have shape {p.shape}; expected (N, 4, 4) or (4, 4)")
    finite, rigid = find_rigid_poses(p)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise ValueError(f"{what}[{bad}] has non-finite values")
    if not rigid.all():
        bad = int(np.flatnonzero(~rigid)[0])
        raise ValueError(
            f"{what}[{bad}] is not rigid (rotation not orthonormal with det +1, or last row "
            "not 0 0 0 1); expected world_from_G rigid transforms"
        )
    return p


def check_frame(frame: int | None) -> int | None:
    if frame is None:
        return None
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or frame < 0:
        raise ValueError(f"frame is {frame!r}; expected a robot frame index >= 0 or None (base)")
    return int(frame)


def select_rows(body: Body, rows: NDArray[np.int64]) -> Body:
    if not body.moving:
        return body
    return Body(body.key, body.name, body.geom, body.obj, body.world[rows], True)


def list_pairs(bodies: list[Body], exclusions: SceneExclusions) -> list[tuple[int, int]]:
    """Index pairs to check: anything involving a robot or attached body, minus exclusions."""
    out = []
    for i, j in itertools.combinations(range(len(bodies)), 2):
        a, b = bodies[i], bodies[j]
        kinds = {a.key[0], b.key[0]}
        if kinds == {"obstacle"} or kinds == {"robot"}:
            continue
        if not (a.moving or b.moving) and "attached" not in kinds:
            continue
        # Subject first: robot or attached; partner obstacle last.
        if a.key[0] == "obstacle":
            i, j = j, i
        if exclusions.excludes(bodies[i].key, bodies[j].key) is None:
            out.append((i, j))
    return out


def _world_aabb(body: Body, n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    w = body.world if body.world.ndim == 3 else body.world[None]
    pts = body.geom.corners @ np.swapaxes(w[:, :3, :3], 1, 2) + w[:, None, :3, 3]
    lo, hi = pts.min(axis=1), pts.max(axis=1)
    if len(lo) != n:
        lo, hi = np.broadcast_to(lo, (n, 3)), np.broadcast_to(hi, (n, 3))
    return lo, hi


def _contact(a: Body, b: Body, inside: bool) -> Contact:
    return Contact(a.key[0], a.key[1], b.key[0], b.key[1], a.name, b.name, inside)


def run_pairs(
    bodies: list[Body],
    pairs: list[tuple[int, int]],
    n: int,
    request: fcl.CollisionRequest,
    result: fcl.CollisionResult,
) -> tuple[NDArray[np.bool_], tuple[Contact | None, ...]]:
    """Collide every pair at n poses: AABB cull, closed-mesh containment, then fcl."""
    collides = np.zeros(n, dtype=bool)
    contacts: list[Contact | None] = [None] * n
    if n == 0 or not pairs:
        return collides, tuple(contacts)
    boxes = [_world_aabb(b, n) for b in bodies]
    cand = np.empty((n, len(pairs)), dtype=bool)
    for c, (i, j) in enumerate(pairs):
        (lo_a, hi_a), (lo_b, hi_b) = boxes[i], boxes[j]
        cand[:, c] = np.all((lo_a <= hi_b) & (lo_b <= hi_a), axis=1)
    # Containment: a shape wholly inside a closed mesh has no surface contact.
    for c, (i, j) in enumerate(pairs):
        for inner, outer in ((i, j), (j, i)):
            o = bodies[outer]
            if not o.geom.closed:
                continue
            rows = np.flatnonzero(cand[:, c] & ~collides)
            if not len(rows):
                continue
            wi = bodies[inner].world
            wi = wi[rows] if wi.ndim == 3 else np.broadcast_to(wi, (len(rows), 4, 4))
            wo = o.world[rows] if o.world.ndim == 3 else np.broadcast_to(o.world, (len(rows), 4, 4))
            ref = np.einsum("nij,j->ni", wi[:, :3, :3], bodies[inner].geom.ref_point) + wi[:, :3, 3]
            inv = invert_rigid(wo)
            local = np.einsum("nij,nj->ni", inv[:, :3, :3], ref) + inv[:, :3, 3]
            inside = o.geom.contains(local)
            for r in rows[inside]:
                collides[r] = True
                contacts[r] = _contact(bodies[i], bodies[j], True)
    # Surface/solid contact with fcl, reusing objects: set transforms only.
    geom_world = [b.world @ b.geom.shape_from_geom for b in bodies]
    rot = [g[..., :3, :3] for g in geom_world]
    trans = [g[..., :3, 3] for g in geom_world]
    for k, b in enumerate(bodies):
        if not b.moving:
            b.obj.setRotation(rot[k])
            b.obj.setTranslation(trans[k])
    moving = [b.moving for b in bodies]
    objs = [b.obj for b in bodies]
    collide = fcl.collide
    for r in np.flatnonzero(~collides & cand.any(axis=1)):
        placed = [False] * len(bodies)
        for c in np.flatnonzero(cand[r]):
            i, j = pairs[c]
            for k in (i, j):
                if moving[k] and not placed[k]:
                    objs[k].setRotation(rot[k][r])
                    objs[k].setTranslation(trans[k][r])
                    placed[k] = True
            if collide(objs[i], objs[j], request, result):
                result.contacts.clear()
                collides[r] = True
                contacts[r] = _contact(bodies[i], bodies[j], False)
                break
    return collides, tuple(contacts)


def find_touching(
    a: Body, b: Body, n: int, request: fcl.CollisionRequest, result: fcl.CollisionResult
) -> NDArray[np.bool_]:
    """(n,) True where ``a`` and ``b`` collide or are within :data:`TOUCH_TOLERANCE`.

    An exact fcl distance query is slow on a detailed mesh, so it only runs
    where a solid containing one shape grown by the tolerance
    (:meth:`ShapeGeometry.inflated`) overlaps the other: elsewhere the shapes are
    provably farther apart than the tolerance, and the answer is the same.
    """
    hit, _ = run_pairs([a, b], [(0, 1)], n, request, result)
    (lo_a, hi_a), (lo_b, hi_b) = _world_aabb(a, n), _world_aabb(b, n)
    near = np.all((lo_a <= hi_b + TOUCH_TOLERANCE) & (lo_b <= hi_a + TOUCH_TOLERANCE), axis=1)
    rows = np.flatnonzero(~hit & near)
    if not len(rows):
        return hit
    # Grow the shape whose inflated solid is tightest: a primitive, else the smaller mesh.
    grown, other = (a, b) if _inflation_cost(a.geom) <= _inflation_cost(b.geom) else (b, a)
    solid, shape_from_solid, exact = grown.geom.inflated(TOUCH_TOLERANCE)
    solid_world = grown.world @ shape_from_solid
    grown_world = grown.world @ grown.geom.shape_from_geom
    other_world = other.world @ other.geom.shape_from_geom
    collide, distance = fcl.collide, fcl.distance
    dreq = fcl.DistanceRequest()
    for r in rows:
        sw = solid_world[r] if solid_world.ndim == 3 else solid_world
        ow = other_world[r] if other_world.ndim == 3 else other_world
        solid.setRotation(sw[:3, :3])
        solid.setTranslation(sw[:3, 3])
        other.obj.setRotation(ow[:3, :3])
        other.obj.setTranslation(ow[:3, 3])
        overlaps = collide(solid, other.obj, request, result)
        result.contacts.clear()
        if not overlaps:
            continue
        if exact:
            hit[r] = True
            continue
        gw = grown_world[r] if grown_world.ndim == 3 else grown_world
        grown.obj.setRotation(gw[:3, :3])
        grown.obj.setTranslation(gw[:3, 3])
        if distance(grown.obj, other.obj, dreq, fcl.DistanceResult()) <= TOUCH_TOLERANCE:
            hit[r] = True
    return hit


def _inflation_cost(geom: ShapeGeometry) -> tuple[int, int]:
    """Sort key: primitives first (tight inflation), then meshes by face count."""
    if geom.shape.kind != "mesh":
        return (0, 0)
    return (1, len(geom.shape.faces))
