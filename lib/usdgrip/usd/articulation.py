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
from usdgrip.frames import Mat4, compute_pose, compute_rigid_part
from usdgrip.gripper_articulation import (
    AXES,
    ArticulationJoint,
    ArticulationLink,
    ArticulationNote,
    ColliderPiece,
    GripperArticulation,
    JointDrive,
    MimicCoupling,
)
from usdgrip.gripper_kinematics import (
    compute_kinematic_tree,
    compute_rest_position,
    compute_rigid_inverse,
)
from usdgrip.gripper_opening import compute_opening_report
from usdgrip.usd.discovery import PHYSICS_TOKENS, compute_site_markers, compute_token_hints
from usdgrip.usd.geometry import compute_shape_mesh, read_collision_shape
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.stage import (
    TRAVERSAL,
    compute_world_transform,
    get_meters_per_unit,
    read_attribute_value,
    require_prim,
)

#: At most this many joints joined to the palm are read (more: a note, the proxy is used).
MAX_GRIPPER_JOINTS = 1000
#: A revolute limit beyond this many degrees is unusable (read as not limited, with a note).
MAX_REVOLUTE_LIMIT_DEG = 360.0
_KINDS = (
    (UsdPhysics.PrismaticJoint, "prismatic"),
    (UsdPhysics.RevoluteJoint, "revolute"),
    (UsdPhysics.FixedJoint, "fixed"),
    (UsdPhysics.SphericalJoint, "spherical"),
)
_DEG = math.pi / 180.0
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


def _rigid(matrix: Mat4) -> Mat4:
    """:func:`compute_rigid_part`, without its SVD when the matrix is rigid already."""
    rotation = matrix[:3, :3]
    if np.abs(rotation.T @ rotation - np.eye(3)).max() < 1e-12 and np.linalg.det(rotation) > 0:
        return matrix.copy()
    return compute_rigid_part(matrix)


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


class _Reader:
    """State of one :func:`read_gripper_articulation` call (notes, units, transforms)."""

    def __init__(self, stage: Usd.Stage, xform_cache: UsdGeom.XformCache | None) -> None:
        self.stage = stage
        self.mpu = get_meters_per_unit(stage)
        self.kgpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
        self.cache = xform_cache or UsdGeom.XformCache(Usd.TimeCode.Default())
        self.notes: list[ArticulationNote] = []
        self._worlds: dict[Sdf.Path, Mat4] = {}

    def note(self, code: str, subject: str, text: str) -> None:
        self.notes.append(ArticulationNote(code, subject, text))

    def world(self, prim: Usd.Prim) -> Mat4:
        """Full local-to-world (scale included), metres (read once per prim)."""
        path = prim.GetPath()
        found = self._worlds.get(path)
        if found is None:
            found = self._worlds[path] = compute_world_transform(
                prim, xform_cache=self.cache, meters_per_unit=self.mpu
            )
        return found

    def value(self, prim: Usd.Prim, name: str, fallback: Any = None) -> Any:
        attr = prim.GetAttribute(name)
        if not attr:
            return fallback
        value = attr.Get()
        return fallback if value is None else value

    def number(self, prim: Usd.Prim, name: str, fallback: float | None = None) -> float | None:
        """A finite float attribute, else ``fallback`` (a non-number or NaN gets a note).

        Read at the default time code as the physics readers read it
        (:func:`~usdgrip.usd.stage.read_attribute_value`): a value only time-sampled is
        not the schema's fallback (0 for the physics masses and densities) but unusable,
        and says so in a note.
        """
        attr = prim.GetAttribute(name)
        raw = attr.Get() if attr else None
        if attr and (raw is None or raw == 0):  # None or the physics fallback: a default?
            _, problem = read_attribute_value(attr, "number", raw, 0.0 if raw == 0 else None)
            if problem is not None and "time-sampled" in problem:
                self.note(
                    "attribute-unusable", str(prim.GetPath()), f"{problem}; read as not authored"
                )
                return fallback
        if raw is None:
            return fallback
        try:
            number = float(raw)
        except (TypeError, ValueError):
            self.note(
                "attribute-unusable",
                str(prim.GetPath()),
                f"{name} is {raw!r}; expected a number: read as not authored",
            )
            return fallback
        if math.isnan(number):
            self.note(
                "attribute-unusable",
                str(prim.GetPath()),
                f"{name} is nan; expected a number: read as not authored",
            )
            return fallback
        return number


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
    reader = _Reader(stage, xform_cache)
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
    actuated = _read_actuators(reader, scope)
    joints = tuple(
        _read_joint(reader, joint, ends, index, links, joint_index, actuated)
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
    reader: _Reader, joint: Usd.Prim, bodies: set[str], root: str
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
        relative = compute_rigid_inverse(_rigid(reader.world(body_prim))) @ reader.world(target)
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
    reader: _Reader, paths: list[str], scope: PhysicsScope, geometry: bool
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
        rigid = _rigid(world)
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


def _read_pieces(reader: _Reader, colliders: list[str], link_pose: Mat4) -> list[ColliderPiece]:
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
    reader: _Reader, prim: Usd.Prim, world: Mat4, rigid: Mat4, colliders: list[str]
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


def _read_actuators(reader: _Reader, scope: PhysicsScope) -> dict[str, str]:
    """Joint path -> the ``NewtonActuator`` that drives it."""
    driven: dict[str, str] = {}
    for path in scope.actuators:
        rel = reader.stage.GetPrimAtPath(path).GetRelationship("newton:targets")
        for target in rel.GetTargets() if rel else ():
            driven.setdefault(str(target), path)
    return driven


def _read_joint(
    reader: _Reader,
    prim: Usd.Prim,
    ends: tuple,
    index: dict[str, int],
    links: list[ArticulationLink],
    joint_index: dict[str, int],
    actuated: dict[str, str],
) -> ArticulationJoint:
    path = str(prim.GetPath())
    api = UsdPhysics.Joint(prim)
    kind = next((name for schema, name in _KINDS if prim.IsA(schema)), "other")
    end0, end1, targets = ends
    frames = []
    body_indices = []
    for k, end in enumerate((end0, end1)):
        pos_attr = api.GetLocalPos0Attr() if k == 0 else api.GetLocalPos1Attr()
        rot_attr = api.GetLocalRot0Attr() if k == 0 else api.GetLocalRot1Attr()
        position = np.asarray(pos_attr.Get() or (0.0, 0.0, 0.0), dtype=np.float64)
        rotation = rot_attr.Get()
        quaternion = (
            np.array([rotation.GetReal(), *rotation.GetImaginary()], dtype=np.float64)
            if rotation is not None
            else np.array([1.0, 0.0, 0.0, 0.0])
        )
        norm = float(np.linalg.norm(quaternion))
        name = f"physics:localRot{k}"
        if not (math.isfinite(norm) and norm > 1e-12) or not np.all(np.isfinite(position)):
            reader.note(
                "joint-frame-unusable",
                path,
                f"physics:localPos{k} {position.tolist()} / {name} {quaternion.tolist()}; "
                "expected finite values and a non-zero quaternion: the identity frame is read",
            )
            position, quaternion, norm = np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), 1.0
        local = compute_pose(position, quaternion / norm)
        if end is None:
            # World end: the frame is in world units (stage units) at the world origin.
            local[:3, 3] *= reader.mpu
            frames.append(local)
            body_indices.append(None)
            continue
        body, body_from_target = end
        frame = _rigid(body_from_target @ local)
        frames.append(frame)
        body_indices.append(index.get(body))
    axis = 0
    lower = upper = None
    authored: tuple[float | None, float | None] = (None, None)
    if kind in ("prismatic", "revolute"):
        token = str(reader.value(prim, "physics:axis", "X"))
        if token not in AXES:
            reader.note(
                "joint-axis-unusable",
                path,
                f"physics:axis is {token!r}; expected X, Y or Z: read as X",
            )
            token = "X"
        axis = AXES.index(token)
        lower, upper, authored = _read_limits(reader, prim, kind)
    drive = _read_drive(reader, prim, kind, actuated.get(path))
    mimic = _read_mimic(reader, prim, kind, joint_index)
    if mimic is not None and drive is not None and (drive.stiffness or drive.damping):
        reader.note(
            "drive-and-mimic",
            path,
            f"the joint has both a drive (stiffness {drive.stiffness:g}, damping "
            f"{drive.damping:g}) and a mimic coupling; read as a mimic follower (SimReady "
            "DJ.004: a mimic joint's drive stiffness and damping must be 0)",
        )
    excluded = bool(reader.value(prim, "physics:excludeFromArticulation", False))
    enabled = bool(reader.value(prim, "physics:jointEnabled", True))
    worlds = [links[i].world_from_link if i is not None else np.eye(4) for i in body_indices]
    joint = ArticulationJoint(
        path,
        kind,
        body_indices[0],
        body_indices[1],
        frames[0],
        frames[1],
        axis,
        lower,
        upper,
        authored,
        drive,
        mimic,
        excluded,
        enabled,
        body_targets=targets,
    )
    if kind in ("prismatic", "revolute") and None not in body_indices:
        rest, residual = compute_rest_position(joint, worlds[0], worlds[1])
        if residual > 1e-4:
            reader.note(
                "joint-frame-mismatch",
                path,
                f"the authored poses of <{links[body_indices[0]].path}> and "
                f"<{links[body_indices[1]].path}> are {residual:.3g} (m + rad) from any "
                f"position of this {kind} joint; expected localPos/localRot to give the same "
                "frame in both bodies: kinematics start from the nearest position",
            )
        joint = replace(joint, rest_position=rest, rest_residual=residual)
    return joint


def _read_limits(
    reader: _Reader, prim: Usd.Prim, kind: str
) -> tuple[float | None, float | None, tuple[float | None, float | None]]:
    path = str(prim.GetPath())
    values = []
    authored = []
    for name in ("physics:lowerLimit", "physics:upperLimit"):
        value = reader.number(prim, name)
        authored.append(value)
        if value is None or math.isinf(value):
            values.append(None)  # -inf / inf: not limited
            continue
        if kind == "revolute":
            if abs(value) > MAX_REVOLUTE_LIMIT_DEG:
                reader.note(
                    "joint-limit-unusable",
                    path,
                    f"{name} is {value:g} degrees; expected -{MAX_REVOLUTE_LIMIT_DEG:g} to "
                    f"{MAX_REVOLUTE_LIMIT_DEG:g} (or ±inf: not limited): read as not limited",
                )
                values.append(None)
                continue
            values.append(value * _DEG)
        else:
            values.append(value * reader.mpu)
    lower, upper = values
    if lower is not None and upper is not None and lower > upper:
        reader.note(
            "joint-limit-unusable",
            path,
            f"physics:lowerLimit {authored[0]:g} > physics:upperLimit {authored[1]:g}; "
            "expected lower <= upper: read as not limited",
        )
        lower = upper = None
    return lower, upper, (authored[0], authored[1])


def _read_drive(
    reader: _Reader, prim: Usd.Prim, kind: str, actuator: str | None
) -> JointDrive | None:
    instance = {"prismatic": "linear", "revolute": "angular"}.get(kind)
    drives = [
        name.split(":", 1)[1] for name in _applied(prim) if name.startswith("PhysicsDriveAPI:")
    ]
    if instance is None or instance not in drives:
        return JointDrive(f"NewtonActuator <{actuator}>") if actuator else None
    path = str(prim.GetPath())
    prefix = f"drive:{instance}:physics:"
    angular = instance == "angular"
    # USD: linear gains mass/s² and mass/s, max force mass·DIST/s²; angular ones per degree,
    # max force mass·DIST²/s² (UsdPhysics DriveAPI docs).
    length = reader.mpu
    scales = {
        "stiffness": reader.kgpu * (length**2 / _DEG if angular else 1.0),
        "damping": reader.kgpu * (length**2 / _DEG if angular else 1.0),
        "maxForce": reader.kgpu * (length**2 if angular else length),
        "targetPosition": _DEG if angular else length,
        "targetVelocity": _DEG if angular else length,
    }
    values: dict[str, float | None] = {}
    for name, scale in scales.items():
        value = reader.number(prim, prefix + name)
        if value is not None and name in ("stiffness", "damping", "maxForce") and value < 0:
            reader.note(
                "drive-unusable",
                path,
                f"{prefix}{name} is {value:g}; expected >= 0: read as not authored",
            )
            value = None
        if value is not None and not math.isfinite(value):
            value = None  # maxForce = inf: unlimited
        values[name] = None if value is None else value * scale
    drive_type = reader.value(prim, prefix + "type")
    return JointDrive(
        f"PhysicsDriveAPI:{instance}",
        str(drive_type) if drive_type is not None else "force",
        values["stiffness"] if values["stiffness"] is not None else 0.0,
        values["damping"] if values["damping"] is not None else 0.0,
        values["maxForce"],
        values["targetPosition"] if values["targetPosition"] is not None else 0.0,
        values["targetVelocity"] if values["targetVelocity"] is not None else 0.0,
    )


def _applied(prim: Usd.Prim) -> list[str]:
    """Every applied API schema name, registered or not (PhysX, Newton, MuJoCo schemas)."""
    return [str(name) for name in prim.GetPrimTypeInfo().GetAppliedAPISchemas()]


def _read_mimic(
    reader: _Reader, prim: Usd.Prim, kind: str, joint_index: dict[str, int]
) -> MimicCoupling | None:
    applied = _applied(prim)
    physx = [name.split(":", 1)[1] for name in applied if name.startswith("PhysxMimicJointAPI:")]
    newton = "NewtonMimicAPI" in applied
    mujoco = "MjcEqualityJointAPI" in applied
    if not (physx or newton or mujoco):
        return None
    path = str(prim.GetPath())
    if kind not in ("prismatic", "revolute"):
        reader.note(
            "mimic-unusable",
            path,
            f"mimic coupling on a {kind} joint; expected a prismatic or revolute follower: ignored",
        )
        return None
    offset_scale = _DEG if kind == "revolute" else reader.mpu
    couplings = []
    if newton or mujoco:
        source = "MjcEqualityJointAPI" if mujoco else "NewtonMimicAPI"
        leader = _single_target(reader, prim, "newton:mimicJoint")
        if leader is None and mujoco:
            leader = _single_target(reader, prim, "mjc:target")  # deprecated spelling
        coef0 = _authored_number(reader, prim, "newton:mimicCoef0")
        coef1 = _authored_number(reader, prim, "newton:mimicCoef1")
        if mujoco:  # deprecated mjc:coef0/1 when Newton's are not authored
            coef0 = coef0 if coef0 is not None else _authored_number(reader, prim, "mjc:coef0")
            coef1 = coef1 if coef1 is not None else _authored_number(reader, prim, "mjc:coef1")
        coef0 = 0.0 if coef0 is None else coef0
        coef1 = 1.0 if coef1 is None else coef1
        higher = tuple(
            (reader.number(prim, f"mjc:coef{k}", 0.0) if mujoco else 0.0) for k in (2, 3, 4)
        )
        enabled = bool(reader.value(prim, "newton:mimicEnabled", True))
        couplings.append(
            (source, leader, coef0 * offset_scale, coef1, higher,
             {"coef0": coef0, "coef1": coef1}, enabled)
        )  # fmt: skip
    for instance in physx:
        prefix = f"physxMimicJoint:{instance}:"
        leader = _single_target(reader, prim, prefix + "referenceJoint")
        gearing = reader.number(prim, prefix + "gearing", 1.0)
        offset = reader.number(prim, prefix + "offset", 0.0)
        # position + gearing * reference + offset = 0 (PhysX); offset in degrees for a
        # revolute joint, like Newton's coef0 (ovphysx maps offset = -coef0 unconverted).
        couplings.append(
            (f"PhysxMimicJointAPI:{instance}", leader, -offset * offset_scale, -gearing,
             (0.0, 0.0, 0.0), {"gearing": gearing, "offset": offset}, True)
        )  # fmt: skip
    if len(couplings) > 1:
        first, *rest = couplings
        differ = [c[0] for c in rest if (c[1], c[2], c[3]) != (first[1], first[2], first[3])]
        reader.note(
            "mimic-several",
            path,
            f"{len(couplings)} mimic couplings authored ({', '.join(c[0] for c in couplings)}); "
            f"{first[0]} is read"
            + (f" and {', '.join(differ)} disagree with it" if differ else " (they agree)"),
        )
    source, leader, coef0, coef1, higher, values, enabled = couplings[0]
    if leader is None:
        reader.note(
            "mimic-leader-missing",
            path,
            f"{source} names no leader joint (one target expected); the joint is read as passive",
        )
        return None
    if leader not in joint_index:
        target = reader.stage.GetPrimAtPath(leader)
        what = "not a prim on this stage" if not target else "not a joint of this gripper"
        reader.note(
            "mimic-leader-missing",
            path,
            f"the {source} leader <{leader}> is {what}; expected a joint of the gripper: the "
            "joint is read as passive",
        )
        return None
    if joint_index[leader] == joint_index[path]:
        reader.note(
            "mimic-cycle",
            path,
            f"the {source} leader is the joint itself; expected another joint: read as passive",
        )
        return None
    if not (math.isfinite(coef0) and math.isfinite(coef1)):
        reader.note(
            "mimic-unusable",
            path,
            f"{source} coefficients {values}; expected finite numbers: the joint is read as "
            "passive",
        )
        return None
    return MimicCoupling(joint_index[leader], coef0, coef1, source, higher, values, enabled)


def _authored_number(reader: _Reader, prim: Usd.Prim, name: str) -> float | None:
    attr = prim.GetAttribute(name)
    if not attr or not attr.HasAuthoredValue():
        return None
    return reader.number(prim, name)


def _single_target(reader: _Reader, prim: Usd.Prim, name: str) -> str | None:
    rel = prim.GetRelationship(name)
    targets = rel.GetTargets() if rel else []
    if not targets:
        return None
    if len(targets) > 1:
        reader.note(
            "mimic-leader-targets",
            str(prim.GetPath()),
            f"{name} has {len(targets)} targets; expected exactly one (SimReady DJ.007): the "
            "first is read",
        )
    return str(targets[0])
