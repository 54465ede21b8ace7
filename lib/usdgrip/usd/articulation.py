"""Reading a gripper's articulation: :func:`read_gripper_articulation`.

From a gripper site (or any prim of a gripper asset), one walk of the asset (the site's
top-level ancestor) finds the rigid bodies, colliders, joints, articulation roots and
Newton actuators; the palm is the site's rigid-body ancestor, the links every rigid body
the joints join to it. Values become the SI records of :mod:`usdgrip.gripper_articulation`
(see its docstring for the units); what cannot be used becomes a note naming the prim,
attribute and value, never an exception. The kinematics (open side, opening at each limit)
are :mod:`usdgrip.gripper_kinematics`' and are filled in here. ``docs/grippers.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from pxr import Sdf, Usd, UsdGeom, UsdPhysics

from usdgrip.errors import GripperError
from usdgrip.frames import Mat4
from usdgrip.gripper_articulation import (
    ArticulationLink,
    ColliderPiece,
    GripperArticulation,
)
from usdgrip.gripper_kinematics import (
    compute_kinematic_tree,
    compute_rigid_inverse,
)
from usdgrip.gripper_opening import compute_opening_report
from usdgrip.usd.articulation_joints import (
    ArticulationReader,
    read_joint,
    rigid_pose,
)
from usdgrip.usd.discovery import PHYSICS_TOKENS, compute_site_markers, compute_token_hints
from usdgrip.usd.geometry import compute_shape_mesh, read_collision_shape
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.stage import (
    TRAVERSAL,
    require_prim,
)

#: At most this many joints joined to the palm are read (more: a note, the proxy is used).
MAX_GRIPPER_JOINTS = 1000
_RIGID_BODY, _COLLISION, _ARTICULATION_ROOT = (
    "PhysicsRigidBodyAPI",
    "PhysicsCollisionAPI",
    "PhysicsArticulationRootAPI",
)


class PhysicsScope(NamedTuple):
    """What one walk of an asset's subtree found (paths in traversal order)."""

    root: str
    bodies: tuple[str, ...]
    """Enabled rigid bodies (``PhysicsRigidBodyAPI``)."""
    disabled_bodies: tuple[str, ...]
    joints: tuple[str, ...]
    colliders: tuple[str, ...]
    """``PhysicsCollisionAPI`` prims with collision enabled."""
    articulation_roots: tuple[str, ...]
    actuators: tuple[str, ...]
    """``NewtonActuator`` prims."""


def scan_physics_scope(
    root: Usd.Prim, cache: MutableMapping[str, Any] | None = None
) -> PhysicsScope:
    """One walk of ``root``'s subtree for the physics prims (cached by root path in ``cache``).

    A stage whose used layers never spell a physics schema name (plain usda text) is not
    walked at all. ``cache`` is a mapping the caller keeps for one unchanged stage (the
    validation rules keep one per run, filled from the run's one walk of the stage by
    :func:`fill_physics_scopes`), so many sites under one root walk it once, or never.
    """
    key = str(root.GetPath())
    if cache is not None and key in cache:
        return cache[key]
    stage = root.GetStage()
    hint_key = "physics-tokens"
    if cache is not None and hint_key in cache:
        hinted = cache[hint_key]
    else:
        hinted = any(compute_token_hints(stage, PHYSICS_TOKENS))
        if cache is not None:
            cache[hint_key] = hinted
    scope = _collect_physics(key, Usd.PrimRange(root, TRAVERSAL) if hinted else ())
    if cache is not None:
        cache[key] = scope
    return scope


def fill_physics_scopes(
    stage: Usd.Stage, prims: Iterable[Usd.Prim], cache: MutableMapping[str, Any]
) -> None:
    """Cache every top-level prim's :class:`PhysicsScope` from one walk of the whole stage.

    ``prims``: the prims of that walk :func:`usdgrip.usd.discovery.is_physics_prim` keeps,
    in traversal order
    (more are harmless: the same per-prim checks as :func:`scan_physics_scope` sort them).
    """
    cache["physics-tokens"] = True
    groups: dict[str, list[Usd.Prim]] = {}
    for prim in prims:
        prefixes = prim.GetPath().GetPrefixes()
        groups.setdefault(str(prefixes[0]) if prefixes else str(prim.GetPath()), []).append(prim)
    for top in stage.GetPseudoRoot().GetFilteredChildren(TRAVERSAL):
        key = str(top.GetPath())
        cache[key] = _collect_physics(key, groups.get(key, ()))


def _collect_physics(key: str, prims: Iterable[Usd.Prim]) -> PhysicsScope:
    bodies, disabled, joints, colliders, roots, actuators = [], [], [], [], [], []
    # Two queries per prim (applied schemas, type name): the physics prims are few.
    for prim in prims:
        type_name = prim.GetTypeName()
        if type_name and "Joint" in type_name and prim.IsA(UsdPhysics.Joint):
            joints.append(prim.GetPath().pathString)
        elif type_name == "NewtonActuator":
            actuators.append(prim.GetPath().pathString)
        schemas = prim.GetAppliedSchemas()
        if not schemas:
            continue
        if _RIGID_BODY in schemas:
            enabled = UsdPhysics.RigidBodyAPI(prim).GetRigidBodyEnabledAttr().Get()
            found = bodies if enabled is None or bool(enabled) else disabled
            found.append(prim.GetPath().pathString)
        if _COLLISION in schemas:
            enabled = UsdPhysics.CollisionAPI(prim).GetCollisionEnabledAttr().Get()
            if enabled is None or bool(enabled):
                colliders.append(prim.GetPath().pathString)
        if _ARTICULATION_ROOT in schemas:
            roots.append(prim.GetPath().pathString)
    return PhysicsScope(
        key, tuple(bodies), tuple(disabled), tuple(joints), tuple(colliders), tuple(roots),
        tuple(actuators),
    )  # fmt: skip


def _top_level(prim: Usd.Prim) -> Usd.Prim:
    path = prim.GetPath()
    prefixes = path.GetPrefixes()
    return prim.GetStage().GetPrimAtPath(prefixes[0]) if prefixes else prim


def find_rigid_body_ancestor(prim: Usd.Prim, bodies: frozenset[str] | set[str]) -> str | None:
    """The site's gripper base as SimReady's FET028 picks it, among ``bodies`` (paths).

    Of the strict ancestors with ``PhysicsRigidBodyAPI``, the closest one that has
    rigid-body descendants, else the closest one; ``None`` when no ancestor is a body.
    """
    ancestors = [str(p) for p in reversed(prim.GetPath().GetPrefixes()[:-1]) if str(p) in bodies]
    for path in ancestors:
        prefix = path + "/"
        if any(body.startswith(prefix) for body in bodies):
            return path
    return ancestors[0] if ancestors else None


def read_actuators(reader: ArticulationReader, scope: PhysicsScope) -> dict[str, str]:
    """Joint path -> the ``NewtonActuator`` that drives it."""
    driven: dict[str, str] = {}
    for path in scope.actuators:
        rel = reader.stage.GetPrimAtPath(path).GetRelationship("newton:targets")
        for target in rel.GetTargets() if rel else ():
            driven.setdefault(str(target), path)
    return driven


def read_gripper_articulation(
    prim: Usd.Prim,
    *,
    grasp_frame: Mat4 | None = None,
    read_frame: Callable[[], Mat4 | None] | None = None,
    geometry: bool = True,
    xform_cache: UsdGeom.XformCache | None = None,
    scope_cache: MutableMapping[str, Any] | None = None,
    is_site: bool | None = None,
) -> GripperArticulation:
    """Read the articulation of the gripper that ``prim`` belongs to (a site or any prim).

    The asset is the subtree of ``prim``'s top-level ancestor. For a site, the palm is its
    rigid-body ancestor (:func:`find_rigid_body_ancestor`); without one, or when ``prim``
    is not a site, the rigid body at ``prim`` or the one most joints start from (status
    ``unrooted`` for a site, with a note). The links are the rigid bodies the joints join
    to the palm (palm first); the joints every joint between them. With moving joints the
    record carries an :class:`~usdgrip.gripper_articulation.OpeningReport` measured along
    the site's grasp frame (read from the site when ``grasp_frame`` is not given), else
    along a frame estimated from the fingers.

    Args:
        prim: a gripper site, or a prim of the gripper asset (for a gripper with no site).
        grasp_frame: the site's world grasp frame G when the caller has read it.
        read_frame: for a site, how the caller reads G when it is needed (an asset with
            rigid bodies) instead of :func:`read_gripper_site`; a record of an asset
            without bodies then has no frame (``grasp_frame`` ``None``).
        geometry: read the colliders' triangles (``False``: only which links have colliders;
            no opening is computed).
        xform_cache: shared by reads of one unchanged stage.
        scope_cache: a mapping kept for one unchanged stage (see :func:`scan_physics_scope`).
        is_site: whether ``prim`` is a gripper site, when the caller knows (default: its
            discovery markers say).

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        ValueError: ``prim`` is not valid.
    """
    require_prim(prim)
    stage = prim.GetStage()
    if is_site is None:
        is_site = bool(compute_site_markers(prim))
    site_path = prim.GetPath().pathString if is_site else None
    root = _top_level(prim)
    scope = scan_physics_scope(root, scope_cache)
    if not scope.bodies:  # nothing to read (most stages): no further query
        return GripperArticulation(site_path, scope.root, "none", grasp_frame=grasp_frame)
    reader = ArticulationReader(stage, xform_cache)
    bodies = set(scope.bodies)
    ancestor = find_rigid_body_ancestor(prim, bodies) if is_site else None
    roots = list(scope.articulation_roots)
    roots += [
        str(p) for p in prim.GetPath().GetPrefixes() if str(p) not in roots and _is_root(stage, p)
    ]
    base = GripperArticulation(
        site_path,
        scope.root,
        "none",
        grasp_frame=grasp_frame,
        articulation_root=roots[0] if roots else None,
        rigid_bodies=scope.bodies,
        rigid_body_ancestor=ancestor,
    )
    if is_site and grasp_frame is None:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if read_frame is not None:
                grasp_frame = read_frame()
            else:
                grasp_frame = read_gripper_site(prim, strict=False).grasp_frame
        base = replace(base, grasp_frame=grasp_frame)
    joint_prims = [stage.GetPrimAtPath(p) for p in scope.joints]
    palm = ancestor
    if palm is None:
        palm = str(prim.GetPath()) if str(prim.GetPath()) in bodies else None
    if palm is None:
        palm = _guess_palm(scope, joint_prims)
        if is_site:
            reader.note(
                "no-rigid-body-ancestor",
                site_path,
                f"the site has no rigid-body ancestor (the asset has {len(bodies)} rigid "
                f"bodies); the palm is guessed as <{palm}>, the body most joints start from "
                "(SimReady's FET028 needs the site under the gripper base)",
            )
    # Connectivity from the body rels' paths alone; transforms only for the joints found.
    ends_by_path = [_find_bodies(joint, bodies, scope.root) for joint in joint_prims]
    link_paths = _connected_links(palm, ends_by_path)
    index = {path: i for i, path in enumerate(link_paths)}
    connected = [
        joint
        for joint, ends in zip(joint_prims, ends_by_path, strict=True)
        if ends[0] in index or ends[1] in index
    ]
    if len(connected) > MAX_GRIPPER_JOINTS:
        reader.note(
            "too-many-joints",
            site_path or str(root.GetPath()),
            f"{len(connected)} joints join {len(link_paths)} rigid bodies to the palm <{palm}>; "
            f"usdgrip reads at most {MAX_GRIPPER_JOINTS} (a gripper has tens): the "
            "articulation is not read and the proxy gripper is used",
        )
        return replace(base, notes=tuple(reader.notes))
    links = _read_links(reader, link_paths, scope, geometry)
    joints_in = [(joint, _resolve_bodies(reader, joint, bodies, scope.root)) for joint in connected]
    joint_index = {str(joint.GetPath()): i for i, (joint, _) in enumerate(joints_in)}
    actuated = read_actuators(reader, scope)
    joints = tuple(
        read_joint(reader, joint, ends, index, links, joint_index, actuated)
        for joint, ends in joints_in
    )
    record = replace(base, links=tuple(links), joints=joints, palm=0)
    moving = [j for j in joints if j.moving and (j.body0 is not None or j.body1 is not None)]
    if moving:
        record = replace(
            record, status="unrooted" if is_site and ancestor is None else "articulated"
        )
    tree = compute_kinematic_tree(record)
    notes = [*reader.notes, *tree.notes]
    if moving and geometry:
        report, report_notes = compute_opening_report(record, tree=tree)
        record = replace(record, opening=report)
        notes.extend(report_notes)
    return replace(record, notes=tuple(notes))


def _is_root(stage: Usd.Stage, path: Sdf.Path) -> bool:
    prim = stage.GetPrimAtPath(path)
    return bool(prim) and prim.HasAPI(UsdPhysics.ArticulationRootAPI)


def _guess_palm(scope: PhysicsScope, joint_prims: list[Usd.Prim]) -> str:
    counts: dict[str, int] = {}
    for joint in joint_prims:
        targets = UsdPhysics.Joint(joint).GetBody0Rel().GetTargets()
        if targets and str(targets[0]) in scope.bodies:
            counts[str(targets[0])] = counts.get(str(targets[0]), 0) + 1
    if counts:
        return max(scope.bodies, key=lambda body: counts.get(body, 0))
    return scope.bodies[0]


def _resolve_bodies(
    reader: ArticulationReader, joint: Usd.Prim, bodies: set[str], root: str
) -> tuple[tuple[str, Mat4] | None, tuple[str, Mat4] | None, tuple[str | None, str | None]]:
    """Per end: ``(body path, body_from_target)`` or ``None`` (world), and the authored targets."""
    api = UsdPhysics.Joint(joint)
    ends: list[tuple[str, Mat4] | None] = []
    authored: list[str | None] = []
    for k, rel in enumerate((api.GetBody0Rel(), api.GetBody1Rel())):
        targets = rel.GetTargets()
        name = f"physics:body{k}"
        path = str(joint.GetPath())
        authored.append(str(targets[0]) if targets else None)
        if not targets:
            ends.append(None)  # the world
            continue
        if len(targets) > 1:
            reader.note(
                "joint-body-targets",
                path,
                f"{name} has {len(targets)} targets ({', '.join(f'<{t}>' for t in targets)}); "
                "expected one: the first is read",
            )
        target = reader.stage.GetPrimAtPath(targets[0])
        if not target or not target.IsValid():
            reader.note(
                "joint-body-missing",
                path,
                f"{name} targets <{targets[0]}>, which is not a prim on this stage; expected a "
                "rigid body of the gripper: the joint is read as attached to the world there",
            )
            ends.append(None)
            continue
        target_path = str(targets[0])
        if not (target_path == root or target_path.startswith(root + "/")):
            reader.note(
                "joint-body-outside-asset",
                path,
                f"{name} targets <{target_path}>, outside the gripper asset <{root}>; expected "
                "a rigid body under it: the joint is read as attached to the world there",
            )
            ends.append(None)
            continue
        body = target_path
        while body and body not in bodies and body != root:
            body = body.rsplit("/", 1)[0]
        if body not in bodies:
            ends.append(None)  # not a body and under no body: static (the world)
            continue
        body_prim = reader.stage.GetPrimAtPath(body)
        # Joint frames are authored in the target's frame: re-express them in the body's.
        relative = compute_rigid_inverse(rigid_pose(reader.world(body_prim))) @ reader.world(target)
        ends.append((body, relative))
    return ends[0], ends[1], (authored[0], authored[1])


def _find_bodies(joint: Usd.Prim, bodies: set[str], root: str) -> tuple[str | None, str | None]:
    """The rigid bodies (paths) a joint's first body0/body1 targets lie in, ``None``: world."""
    api = UsdPhysics.Joint(joint)
    found: list[str | None] = []
    for rel in (api.GetBody0Rel(), api.GetBody1Rel()):
        targets = rel.GetTargets()
        body = str(targets[0]) if targets else ""
        if not body.startswith(root + "/") and body != root:
            found.append(None)
            continue
        while body and body not in bodies and body != root:
            body = body.rsplit("/", 1)[0]
        found.append(body if body in bodies else None)
    return found[0], found[1]


def _connected_links(palm: str, ends: list[tuple[str | None, str | None]]) -> list[str]:
    """The palm and every rigid body the joints join to it, breadth first."""
    neighbours: dict[str, list[str]] = {}
    for end0, end1 in ends:
        if end0 is not None and end1 is not None and end0 != end1:
            neighbours.setdefault(end0, []).append(end1)
            neighbours.setdefault(end1, []).append(end0)
    order, seen = [palm], {palm}
    for link in order:  # grows while iterating: breadth first
        for other in neighbours.get(link, ()):
            if other not in seen:
                seen.add(other)
                order.append(other)
    return order


def _read_links(
    reader: ArticulationReader, paths: list[str], scope: PhysicsScope, geometry: bool
) -> list[ArticulationLink]:
    wanted = set(paths)
    bodies = set(scope.bodies)
    owned: dict[str, list[str]] = {path: [] for path in paths}
    for collider in scope.colliders:
        owner = collider
        while owner and owner not in bodies:
            owner = owner.rsplit("/", 1)[0]
        if owner in wanted:
            owned[owner].append(collider)
    links = []
    for path in paths:
        prim = reader.stage.GetPrimAtPath(path)
        world = reader.world(prim)
        rigid = rigid_pose(world)
        pieces = _read_pieces(reader, owned[path], rigid) if geometry else []
        links.append(
            ArticulationLink(
                path,
                rigid,
                tuple(pieces),
                tuple(owned[path]),
                **_read_mass(reader, prim, world, rigid, owned[path]),
            )
        )
    return links


def _read_pieces(
    reader: ArticulationReader, colliders: list[str], link_pose: Mat4
) -> list[ColliderPiece]:
    inverse = np.linalg.inv(link_pose)
    pieces = []
    for path in colliders:
        prim = reader.stage.GetPrimAtPath(path)
        if UsdGeom.Imageable(prim).ComputePurpose() == UsdGeom.Tokens.guide:
            continue
        try:
            shape = read_collision_shape(prim)
        except GripperError as error:
            reader.note("collider-unreadable", path, f"{error}; the collider is skipped")
            continue
        if shape is None:
            continue
        mesh = compute_shape_mesh(shape)
        approximation = None
        if shape.kind == "mesh":
            token = reader.value(prim, "physics:approximation")
            approximation = str(token) if token is not None else "none"
        pieces.append(
            ColliderPiece(
                path,
                shape.kind,
                dict(shape.params),
                inverse @ shape.pose,
                mesh.vertices,
                mesh.faces,
                approximation,
            )
        )
    return pieces


def _read_mass(
    reader: ArticulationReader, prim: Usd.Prim, world: Mat4, rigid: Mat4, colliders: list[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def positive(owner: Usd.Prim, name: str) -> float | None:
        value = reader.number(owner, name)
        if value is None:
            return None
        if not (math.isfinite(value) and value > 0):
            # 0 is the schema's "not set" value; only a negative or infinite value is wrong.
            if value != 0:
                reader.note(
                    "mass-unusable",
                    str(owner.GetPath()),
                    f"{name} is {value:g}; expected a finite value > 0: read as not authored",
                )
            return None
        return value

    mass = positive(prim, "physics:mass")
    if mass is not None:
        out["mass"] = mass * reader.kgpu
    for owner in [prim, *(reader.stage.GetPrimAtPath(c) for c in colliders)]:
        density = positive(owner, "physics:density")
        if density is not None:
            out["density"] = density * reader.kgpu / reader.mpu**3
            break
    com = reader.value(prim, "physics:centerOfMass")
    if com is not None:
        point = np.asarray(com, dtype=np.float64)
        # The schema's fallback (-inf, -inf, -inf) means "not set".
        if point.shape == (3,) and np.all(np.isfinite(point)):
            world_point = world[:3, :3] @ point + world[:3, 3]
            out["center_of_mass"] = np.linalg.solve(rigid, np.append(world_point, 1.0))[:3]
    inertia = reader.value(prim, "physics:diagonalInertia")
    if inertia is not None:
        values = np.asarray(inertia, dtype=np.float64)
        if values.shape == (3,) and np.all(np.isfinite(values)) and np.all(values > 0):
            out["diagonal_inertia"] = values * reader.kgpu * reader.mpu**2
    axes = reader.value(prim, "physics:principalAxes")
    if axes is not None:
        quaternion = np.array([axes.GetReal(), *axes.GetImaginary()], dtype=np.float64)
        norm = float(np.linalg.norm(quaternion))
        if math.isfinite(norm) and norm > 0 and "diagonal_inertia" in out:
            out["principal_axes"] = quaternion / norm
    return out
