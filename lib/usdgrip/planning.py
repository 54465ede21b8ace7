"""Grasp planning: request in, ranked and collision-checked Isaac-Grasp candidates out.

:func:`plan_grasps` reads the object (a USD asset and prim) and every gripper
(a USD asset and the prim of its gripper site), proposes candidates with the
backends that apply, drops the ones that do not fit or collide, ranks them and
returns a :class:`~usdgrip.contracts.GraspPlanningResult`.

Pipeline for each gripper, in request order:

1. Proposals (``generation_method``):

   - ``antipodal``: :func:`usdgrip.antipodal.sample_antipodal_grasps` on the
     object's ``UsdGeom.Mesh`` surface (all meshes under the object prim);
     width = contact width; score = antipodality and width margin times the
     approach quality (toward the centroid, away from the stage's authored up
     axis, nothing of the object behind the palm).
   - ``slots``: every valid GripperSlot of the object sampled on its own with
     :func:`usdgrip.sampling.sample_gripper_groups` (a grouped slot becomes a
     single-gripper grasp too); the slot target frame is already a GraspGenX
     grasp frame (X span/closing, Z forward/approach); width = the site's
     max opening; score = ``1 - |s|/up_range - |θ|/slot_input_angle`` (1 at
     the slot centre, untilted; 0 at a corner of the range).

2. Fit: candidates wider than the site's max opening are dropped; a gripper
   whose max payload is below the object's ``mass_kg`` is skipped.
3. Rank by score after soft non-maximum suppression over antipodal contact
   pairs (the k-th approach of a pair times ``pair_decay ** k``), ties by id;
   the decay is applied again among the survivors and gives ``confidence``.
4. Collision (:mod:`usdgrip.grasping.collision`), in rank order and in chunks until
   ``max_candidates_per_gripper`` survive (lower-ranked proposals are never
   checked): the open gripper at the grasp pose against the object and the
   scene obstacles; then the retreat check (the object attached to the
   gripper, moved back along -approach by ``retreat_distance``). Each candidate
   records the exclusions its checks used. The gripper's collision model is
   its ``UsdPhysics.CollisionAPI`` prims, else a proxy
   (:func:`read_gripper_model`).

Frames: poses are ``T_M_G`` with M the object prim's world frame with its
scale removed (:func:`usdgrip.frames.compute_rigid_part`), in metres; so
``metadata.pose_frame`` is the object prim path. The gripper's own world pose
in its file is irrelevant: only the geometry relative to the site's grasp
frame is used.

Candidate ids: ``g_<h>_antipodal_<n>`` and ``g_<h>_slots_<slot>_<n>``, with
``<h>`` the first 8 hex digits of SHA-256 over the gripper's asset path (as
given) and prim path, and ``<n>`` the proposal's index in its backend's output.
They do not depend on the collision outcome, the ranking or the truncation,
so an id names the same proposal in every later stage; the same request and
seed give the same ids and poses.

Randomness: one ``numpy.random.Generator`` per (seed, gripper, method), from
``SeedSequence([seed, s, method index])``; backends never share a stream.
``s`` (:func:`compute_stream_key`) hashes the gripper file's *name* and prim
path, not its directory, so the same request gives the same grasps wherever
the files live (another checkout, another machine, a CI clone); only the ids'
``<h>`` keeps the full path, for uniqueness.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from usdgrip.antipodal import DEFAULT_PAIR_DECAY, compute_pair_decay
from usdgrip.contracts import (
    GraspCandidate,
    GraspPlanningMetadata,
    GraspPlanningRequest,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.errors import GripperError
from usdgrip.frames import Mat4, Poses, compute_quaternion_wxyz, compute_rigid_part
from usdgrip.slot_checks import MAX_OPENING_M, get_max_opening_problem

#: Backends, in the order they run for each gripper.
METHODS = ("antipodal", "slots")
#: Proposals generated per kept candidate, so that collisions still leave enough.
OVERSAMPLE = 3
#: Default retreat distance along -approach, metres.
DEFAULT_RETREAT_DISTANCE = 0.1
#: Largest accepted retreat distance, metres (a larger value is a unit mistake
#: and makes the collision checks meaningless or endless).
MAX_RETREAT_DISTANCE = 10.0
#: Default opening kept free beyond the contact width (antipodal), metres.
DEFAULT_CLEARANCE = 0.005
#: Smallest chunk of ranked proposals collision-checked at once.
CHECK_CHUNK_MIN = 32
#: Upper bound on proposals per backend and gripper (memory and time guard).
MAX_PROPOSALS = 20_000

Progress = Callable[[str, float], None]
"""``progress(message, fraction_done)``; fraction in [0, 1]."""


@dataclass
class _Proposals:
    """Candidates of one gripper before ranking (arrays aligned on axis 0)."""

    ids: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    poses: list[Mat4] = field(default_factory=list)  # T_M_G
    widths: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # diversity group (contact pair)

    def extend(self, ids, method, poses, widths, scores, groups=None) -> None:
        """Append proposals; ``groups`` (N,) labels the proposals of one contact pair.

        Without ``groups`` each proposal is a group of its own (no soft-NMS).
        """
        base = max(self.groups, default=-1) + 1
        labels = (
            np.arange(len(ids)) if groups is None else np.unique(groups, return_inverse=True)[1]
        )
        self.ids.extend(ids)
        self.methods.extend([method] * len(ids))
        self.poses.extend(np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4))
        self.widths.extend(float(w) for w in widths)
        self.scores.extend(float(s) for s in scores)
        self.groups.extend(int(base + g) for g in np.ravel(labels))

    def __len__(self) -> int:
        return len(self.ids)

    def keep(self, mask: Sequence[bool]) -> _Proposals:
        kept = _Proposals()
        for i, flag in enumerate(mask):
            if flag:
                kept.ids.append(self.ids[i])
                kept.methods.append(self.methods[i])
                kept.poses.append(self.poses[i])
                kept.widths.append(self.widths[i])
                kept.scores.append(self.scores[i])
                kept.groups.append(self.groups[i])
        return kept

    def keep_order(self, order: Sequence[int]) -> _Proposals:
        mask_free = _Proposals()
        for i in order:
            mask_free.ids.append(self.ids[i])
            mask_free.methods.append(self.methods[i])
            mask_free.poses.append(self.poses[i])
            mask_free.widths.append(self.widths[i])
            mask_free.scores.append(self.scores[i])
            mask_free.groups.append(self.groups[i])
        return mask_free

    @property
    def pose_array(self) -> Poses:
        return np.array(self.poses, dtype=np.float64).reshape(-1, 4, 4)


@dataclass(frozen=True)
class ObjectData:
    """What the planner needs from the object asset (world metres unless said)."""

    prim_path: str
    world_frame: Mat4
    """Frame M: the object prim's world transform with scale removed (4, 4)."""
    vertices: np.ndarray | None
    """(V, 3) surface vertices in M, or ``None`` without a mesh."""
    faces: np.ndarray | None
    mesh_paths: tuple[str, ...]
    slots: tuple[Any, ...]
    """GripperSlots of the object (world snapshots)."""
    notes: tuple[str, ...]
    """Why a backend cannot use the object (no mesh, bad slots...)."""
    up: np.ndarray | None = None
    """(3,) the stage's authored up axis expressed in M (stands for the support normal)."""


def compute_gripper_key(gripper: GripperRef) -> str:
    """8 hex digits naming ``gripper`` in candidate ids (SHA-256 of asset path and prim path)."""
    text = f"{gripper.asset_path}\n{gripper.prim_path}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def compute_stream_key(gripper: GripperRef) -> str:
    """8 hex digits seeding ``gripper``'s random streams: its file name and prim path.

    Independent of the directory, so results do not change when assets move.
    """
    text = f"{PurePath(gripper.asset_path).name}\n{gripper.prim_path}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _make_rng(seed: int, key: str, method: str) -> np.random.Generator:
    entropy = [int(seed), int(key, 16), METHODS.index(method)]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def _id_part(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "_"


def parse_methods(text: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """Parse ``"antipodal,slots"`` (or a sequence) into known method names; ``None`` stays None.

    Raises:
        ValueError: an unknown or repeated method, or an empty list.
    """
    if text is None:
        return None
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in names if n]
    if not names:
        raise ValueError(
            f"no method given; expected a comma-separated list of {', '.join(METHODS)}"
        )
    for name in names:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; expected one of {', '.join(METHODS)}")
    if len(set(names)) != len(names):
        raise ValueError(f"method list {','.join(names)} repeats a method")
    return tuple(names)


# --- reading ---------------------------------------------------------------------------------


def read_object(
    asset_path: str | Path, prim_path: str, *, need_mesh: bool, check_closed: bool
) -> ObjectData:
    """Read the object prim: frame M, its surface mesh in M, and its slots.

    Args:
        asset_path: USD file.
        prim_path: object prim.
        need_mesh: raise when there is no mesh (instead of noting it).
        check_closed: raise when the mesh is not closed and manifold.

    Raises:
        GripperError: unreadable file, missing prim, no mesh (``need_mesh``),
            a mesh that does not bound a solid (``check_closed``), malformed slots.
    """
    from usdgrip.usd.geometry import check_manifold, read_object_mesh, read_up_axis
    from usdgrip.usd.slots import read_gripper_slots
    from usdgrip.usd.stage import compute_world_transform, get_prim, open_stage

    stage = open_stage(asset_path)
    prim = get_prim(stage, prim_path)
    frame = compute_rigid_part(compute_world_transform(prim))
    notes: list[str] = []
    vertices = faces = None
    mesh_paths: tuple[str, ...] = ()
    try:
        mesh = read_object_mesh(prim, frame="world")
    except GripperError as exc:
        if need_mesh:
            raise GripperError(f"{asset_path}: {exc}") from None
        notes.append(f"object has no mesh: {exc}")
    else:
        problems = check_manifold(mesh)
        if problems and check_closed:
            raise GripperError(
                f"{asset_path}: the object mesh does not bound a solid (antipodal grasps and "
                f"inside tests need one): {'; '.join(problems)}"
            )
        notes.extend(f"object mesh: {p}" for p in problems)
        inverse = np.linalg.inv(frame)
        vertices = mesh.vertices @ inverse[:3, :3].T + inverse[:3, 3]
        faces = np.asarray(mesh.faces, dtype=np.int64)
        mesh_paths = mesh.source_paths
    slots = tuple(read_gripper_slots(prim))
    up = read_up_axis(stage)
    if up is not None:
        up = frame[:3, :3].T @ up
    return ObjectData(
        prim_path=str(prim.GetPath()),
        world_frame=frame,
        vertices=vertices,
        faces=faces,
        mesh_paths=mesh_paths,
        slots=slots,
        notes=tuple(notes),
        up=up,
    )


def read_gripper(gripper: GripperRef):
    """Open the gripper asset and read its site (a :class:`~usdgrip.model.GripperSite`).

    Raises:
        GripperError: unreadable file, missing prim, or the prim is not a gripper
            site (the message lists the sites the file has).
    """
    from usdgrip.usd.discovery import compute_site_markers, iter_site_prims
    from usdgrip.usd.sites import read_gripper_site
    from usdgrip.usd.stage import get_prim, open_stage

    stage = open_stage(gripper.asset_path)
    prim = get_prim(stage, gripper.prim_path)
    markers = compute_site_markers(prim)
    if not markers:
        sites = ", ".join(f"<{p.GetPath()}>" for p, _ in iter_site_prims(stage)) or "none"
        raise GripperError(
            f"{gripper.asset_path}: <{gripper.prim_path}> is not a gripper site (no "
            f"GripperSiteAPI, socketType, maxOpening or axis curves); sites in this file: {sites}"
        )
    return read_gripper_site(prim, markers)


# --- backends ----------------------------------------------------------------------------------


def propose_antipodal(
    obj: ObjectData,
    max_opening: float,
    *,
    count: int,
    rng: np.random.Generator,
    key: str,
    clearance: float = DEFAULT_CLEARANCE,
    pad_width: float | None = None,
    ray_backend: str = "auto",
) -> tuple[list[str], Poses, np.ndarray, np.ndarray, np.ndarray]:
    """Antipodal proposals in M: (ids, poses (N, 4, 4), widths (N,), scores (N,), pairs (N,)).

    The stage's authored up axis (``obj.up``) is the support normal of the
    approach ranking (:func:`usdgrip.antipodal.compute_approach_quality`).
    Scores are not decayed per contact pair (``pair_decay=1``): the planner
    applies the soft-NMS itself, before and after the collision checks;
    ``pairs`` labels the proposals of one contact pair.
    """
    from usdgrip.antipodal import sample_antipodal_grasps

    grasps = sample_antipodal_grasps(
        obj.vertices,
        obj.faces,
        max_opening,
        rng=rng,
        count=count,
        clearance=clearance,
        pad_width=pad_width,
        ray_backend=ray_backend,
        support_normal=obj.up,
        pair_decay=1.0,
    )
    ids = [f"g_{key}_antipodal_{i:04d}" for i in range(len(grasps.widths))]
    pairs = np.unique(grasps.contacts.reshape(-1, 6), axis=0, return_inverse=True)[1]
    return ids, grasps.poses, grasps.widths, grasps.scores, np.ravel(pairs)


def compute_slot_scores(offsets, tilts_deg, up_range: float, angle_deg: float) -> np.ndarray:
    """Slot ranking score in [0, 1]: 1 at the slot centre untilted, minus the used fraction.

    ``1 - 0.5 |s| / (R/2) - 0.5 |θ| / (a/2)``; a zero angle range counts as untilted.
    """
    s = np.abs(np.asarray(offsets, dtype=np.float64)) / max(up_range / 2.0, 1e-300)
    t = np.abs(np.asarray(tilts_deg, dtype=np.float64))
    t = t / (angle_deg / 2.0) if angle_deg > 0 else np.zeros_like(t)
    return np.clip(1.0 - 0.5 * s - 0.5 * t, 0.0, 1.0)


def propose_slots(
    obj: ObjectData, max_opening: float, *, count: int, seed: int, key: str, stream: str
) -> tuple[list[str], Poses, np.ndarray, np.ndarray, list[str]]:
    """Slot proposals in M: (ids, poses, widths, scores, notes about skipped slots).

    ``key`` names the gripper in the ids; ``stream`` (:func:`compute_stream_key`) seeds.
    """
    from usdgrip.sampling import check_slot, sample_gripper_groups

    usable = []
    notes = []
    for slot in obj.slots:
        problems = check_slot(slot)
        if problems:
            notes.append(f"slot {slot.name!r} skipped: {'; '.join(str(p) for p in problems)}")
        else:
            usable.append(slot)
    ids: list[str] = []
    poses: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    if not usable:
        return ids, np.zeros((0, 4, 4)), np.zeros(0), np.zeros(0), notes
    per_slot = max(1, math.ceil(count / len(usable)))
    used_names: set[str] = set()
    inverse = np.linalg.inv(obj.world_frame)
    seeds = np.random.SeedSequence([int(seed), int(stream, 16), METHODS.index("slots")]).spawn(
        len(usable)
    )
    for slot, child in zip(usable, seeds, strict=True):
        slot_seed = int(child.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
        samples = sample_gripper_groups([slot], ee_ids=(0,), count=per_slot, seed=slot_seed)
        world = samples.poses[:, 0]
        poses.append(inverse @ world)
        scores.append(
            compute_slot_scores(
                samples.offsets[:, 0], samples.tilts_deg[:, 0], slot.up_range, slot.slot_input_angle
            )
        )
        name = _id_part(slot.name)
        if name in used_names:  # two slot names that differ only in unusable characters
            name = f"{name}_{len(used_names)}"
        used_names.add(name)
        ids.extend(f"g_{key}_slots_{name}_{i:04d}" for i in range(per_slot))
    pose_array = np.concatenate(poses)
    return ids, pose_array, np.full(len(ids), float(max_opening)), np.concatenate(scores), notes


# --- collision -------------------------------------------------------------------------------


def read_scene(scene: Any):
    """A :class:`~usdgrip.grasping.collision.CollisionScene` from ``None``, a scene or a USD path.

    Raises:
        GripperError: the scene file cannot be opened or read.
        TypeError: ``scene`` is of another type.
    """
    from usdgrip.grasping.collision import CollisionScene

    if scene is None:
        return CollisionScene()
    if isinstance(scene, CollisionScene):
        return scene
    if isinstance(scene, str | Path):
        from usdgrip.usd.stage import open_stage

        return CollisionScene.from_usd(open_stage(scene))
    raise TypeError(
        f"scene is {type(scene).__name__}; expected None, a CollisionScene or a USD file path"
    )


def _is_at_or_under(path: str, root: str) -> bool:
    """True when prim path ``path`` is ``root`` or a descendant of it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


#: Gripper collision models (see :func:`read_gripper_model`).
GRIPPER_MODELS = ("auto", "proxy", "geometry")


def read_gripper_model(gripper: GripperRef, site, mode: str = "auto"):
    """The gripper's collision model (:class:`usdgrip.grasping.collision.GripperCollisionModel`).

    The gripper geometry is everything under the site's top-level ancestor
    (``/Gripper`` for ``/Gripper/tcp``); a prim whose name contains ``finger``
    is a finger.

    - ``auto``: the gripper's *collision* prims (``UsdPhysics.CollisionAPI``
      applied) when it has any, else the proxy. Render meshes are not used:
      they are often detailed (slow in the retreat check's distance queries)
      and may not be what the physics engine collides.
    - ``proxy``: :meth:`GripperCollisionModel.proxy` (a palm and two finger
      boxes from the max opening and grip pad width).
    - ``geometry``: every Mesh/Cube/Sphere/Cylinder/Capsule under the root,
      collision prims or not (falls back to the proxy when there is none).

    Raises:
        ValueError: an unknown ``mode``.
    """
    from usdgrip.grasping.collision import GripperCollisionModel
    from usdgrip.usd.geometry import read_collision_shapes
    from usdgrip.usd.stage import get_prim, open_stage

    if mode not in GRIPPER_MODELS:
        raise ValueError(f"gripper model {mode!r}; expected one of {', '.join(GRIPPER_MODELS)}")
    if mode == "proxy":
        return GripperCollisionModel.from_site(site)
    stage = open_stage(gripper.asset_path)
    root = get_prim(stage, "/" + gripper.prim_path.strip("/").split("/")[0])
    if mode == "auto":
        prefix = str(root.GetPath()) + "/"
        marked = any(
            "PhysicsCollisionAPI" in prim.GetAppliedSchemas()
            for prim in stage.Traverse()
            if str(prim.GetPath()).startswith(prefix) or prim == root
        )
        if not marked:
            return GripperCollisionModel.from_site(site)
    shapes = read_collision_shapes(root)
    return GripperCollisionModel.from_site(site, shapes or None)


def _describe_exclusion(exclusion, scene, model) -> str:
    subject = scene.name_of(exclusion.subject) if exclusion.subject in scene else "?"
    if exclusion.kind == "robot":
        index = int(exclusion.partner)
        name = model.names[index] if 0 <= index < model.shape_count else "?"
        partner = f"{index}:{name}"
    else:
        partner = scene.name_of(exclusion.partner) if exclusion.partner in scene else "?"
    return f"{exclusion.kind}({subject}, {partner})"


def _top_contacts(contacts, limit: int = 2) -> str:
    counts: dict[str, int] = {}
    for contact in contacts:
        if contact is not None:
            text = contact.describe()
            counts[text] = counts.get(text, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return "; ".join(f"{text} ×{n}" for text, n in ranked)


class _RankedChecker:
    """Grasp-pose and retreat checks over ranked proposals, in chunks, until the budget is met.

    Keeps per-stage counts and the most frequent contacts for the warnings.
    """

    def __init__(self, scene, model, world_frame, object_id, support_id, distance, steps) -> None:
        self.scene = scene
        self.model = model
        self.world_frame = world_frame
        self.object_id = object_id
        self.support_id = support_id
        self.distance = distance
        self.steps = steps
        self.checked = 0
        self.pose_hits: list = []
        self.retreat_checked = 0
        self.retreat_hits: list = []

    def _describe(self, exclusions) -> list[str]:
        return [_describe_exclusion(e, self.scene, self.model) for e in exclusions]

    def run(
        self, proposals: _Proposals, budget: int, report: Callable[[int, int], None]
    ) -> tuple[list[int], dict[int, tuple[str, ...]]]:
        """Indices (rank order) of the first ``budget`` survivors, and their exclusions."""
        kept: list[int] = []
        exclusions: dict[int, tuple[str, ...]] = {}
        total = len(proposals)
        start = 0
        poses = proposals.pose_array
        while start < total and len(kept) < budget:
            # Ask for a little more than is missing: most proposals usually survive.
            size = max(CHECK_CHUNK_MIN, math.ceil(1.25 * (budget - len(kept))))
            rows = np.arange(start, min(total, start + size))
            start = int(rows[-1]) + 1
            report(int(rows[0]), total)
            world = self.world_frame @ poses[rows]
            hit = self.scene.check_gripper(self.model, world)
            self.checked += len(rows)
            self.pose_hits.extend(
                c for c, h in zip(hit.first_contact, hit.collides, strict=True) if h
            )
            base = self._describe(hit.exclusions_used)
            rows, world = rows[~hit.collides], world[~hit.collides]
            used: list[list[str]] = [list(base) for _ in rows]
            if self.object_id is not None and len(rows):
                retreat = self.scene.check_retreat(
                    self.model,
                    world,
                    self.object_id,
                    self.distance,
                    steps=self.steps,
                    support_id=self.support_id,
                )
                self.retreat_checked += len(rows)
                self.retreat_hits.extend(
                    c for c, h in zip(retreat.first_contact, retreat.collides, strict=True) if h
                )
                for row, extra in enumerate(retreat.exclusions_used):
                    used[row].extend(self._describe(extra))
                keep = ~retreat.collides
                rows = rows[keep]
                used = [u for u, k in zip(used, keep, strict=True) if k]
            for row, names in zip(rows, used, strict=True):
                if len(kept) < budget:
                    kept.append(int(row))
                    exclusions[int(row)] = tuple(dict.fromkeys(names))
        report(start, total)
        return kept, exclusions

    def summaries(self) -> list[str]:
        """Warnings: how many checked proposals collided, and with what."""
        texts = []
        if self.pose_hits:
            texts.append(
                f"{len(self.pose_hits)} of {self.checked} checked proposals collide at the grasp "
                f"pose ({_top_contacts(self.pose_hits)})"
            )
        if self.retreat_hits:
            texts.append(
                f"{len(self.retreat_hits)} of {self.retreat_checked} checked proposals collide "
                f"while retreating {self.distance:g} m ({_top_contacts(self.retreat_hits)})"
            )
        return texts


# --- orchestration -----------------------------------------------------------------------------


def _fallback_warning(asked: str) -> str:
    why = (
        "ray_backend 'triangle' was asked"
        if asked == "triangle"
        else "Embree is unavailable (embreex is not importable)"
    )
    return (
        f"antipodal: {why}, so ray casting used trimesh's slower pure-python fallback "
        "(about 25x slower than Embree); install the 'plan' extra (embreex) for speed"
    )


def _check_slots_usable(obj: ObjectData, asset_path: str) -> None:
    # Asked-for slots that cannot be used are bad input, as a missing mesh is for antipodal.
    from usdgrip.sampling import check_slot

    where = f"{asset_path}: <{obj.prim_path}>"
    if not obj.slots:
        raise GripperError(
            f"{where} has no GripperSlots (GripperSlotAPI or customData "
            "lambdasim:gripper_slots), so method 'slots' has nothing to sample; "
            "`usdgrip info FILE` lists the prims that have some"
        )
    problems = {slot.name: check_slot(slot) for slot in obj.slots}
    if all(problems.values()):
        details = "; ".join(
            f"{name!r}: {', '.join(str(p) for p in found)}" for name, found in problems.items()
        )
        raise GripperError(f"{where}: no GripperSlot is usable for method 'slots' ({details})")


def _available_methods(obj: ObjectData) -> tuple[str, ...]:
    methods = []
    if obj.vertices is not None:
        methods.append("antipodal")
    if obj.slots:
        methods.append("slots")
    return tuple(methods)


def plan_grasps(
    request: GraspPlanningRequest,
    scene: Any = None,
    *,
    methods: str | Sequence[str] | None = None,
    support: str | None = None,
    retreat_distance: float = DEFAULT_RETREAT_DISTANCE,
    retreat_steps: int = 5,
    clearance: float = DEFAULT_CLEARANCE,
    gripper_model: str = "auto",
    ray_backend: str = "auto",
    pair_decay: float = DEFAULT_PAIR_DECAY,
    progress: Progress | None = None,
) -> GraspPlanningResult:
    """Plan collision-checked grasp candidates for every gripper of ``request``.

    Args:
        request: object, grippers (in output order), candidate limit and seed.
        scene: obstacles around the object: ``None`` (the object alone), a
            :class:`~usdgrip.grasping.collision.CollisionScene` (the object is added for
            the run and removed afterwards), or a USD file path read with
            :meth:`CollisionScene.from_usd`, leaving out the shapes at or under the
            object prim (the object itself, when the file contains it; a warning
            says so). A CollisionScene must not contain the object itself.
        methods: backends to run (``"antipodal,slots"`` or a sequence); ``None``
            runs every backend that applies (antipodal when the object has a
            mesh, slots when it has GripperSlots).
        support: name (prim path) of the scene obstacle the object rests on; the
            retreat check ignores object-support contact while the object still
            rests there.
        retreat_distance: metres to move back along -approach with the object, in
            ``(0, MAX_RETREAT_DISTANCE]``.
        retreat_steps: poses sampled along the retreat (>= 1).
        clearance: antipodal opening kept free beyond the contact width, metres, in
            ``[0, MAX_OPENING_M]``.
        gripper_model: ``auto``, ``proxy`` or ``geometry`` (see :func:`read_gripper_model`).
        ray_backend: antipodal ray casting: ``auto`` (Embree when ``embreex`` is
            importable), ``embree`` or ``triangle`` (trimesh's pure-python
            fallback, ~25x slower). A warning says when the fallback was used.
        pair_decay: soft-NMS factor in (0, 1]: the k-th candidate of one antipodal
            contact pair has its confidence multiplied by ``pair_decay ** k``
            (:func:`usdgrip.antipodal.compute_pair_decay`); 1 turns it off.
        progress: optional ``progress(message, fraction)`` callback.

    Returns:
        The result: entries best-first per gripper, grippers in request order;
        ``metadata.warnings`` says what was skipped and why nothing survived.

    Raises:
        GripperError: unreadable object or gripper file, missing prim, a gripper
            prim that is not a site, a max opening above ``MAX_OPENING_M`` (2 m),
            an object without a mesh when antipodal is required (explicitly, or
            because it has no slots either), an object without a usable
            GripperSlot when slots is asked for, or a mesh that does not bound a
            solid when antipodal runs.
        ValueError: bad ``methods``, ``support``, distances or counts.
    """
    import usdgrip
    from usdgrip.antipodal import get_ray_backend
    from usdgrip.grasping.collision import Shape

    started = time.perf_counter()
    report = progress or (lambda message, fraction: None)
    requested = parse_methods(methods)
    if gripper_model not in GRIPPER_MODELS:
        raise ValueError(
            f"gripper model {gripper_model!r}; expected one of {', '.join(GRIPPER_MODELS)}"
        )
    if not (math.isfinite(retreat_distance) and 0 < retreat_distance <= MAX_RETREAT_DISTANCE):
        raise ValueError(
            f"retreat distance is {retreat_distance!r} m; expected a finite value in "
            f"(0, {MAX_RETREAT_DISTANCE:g}] m"
        )
    if not (math.isfinite(clearance) and 0 <= clearance <= MAX_OPENING_M):
        raise ValueError(
            f"clearance is {clearance!r} m; expected a finite value in [0, {MAX_OPENING_M:g}] m"
        )
    rays = get_ray_backend(ray_backend)  # ValueError for an unknown or unavailable backend
    if not (math.isfinite(pair_decay) and 0 < pair_decay <= 1):
        raise ValueError(f"pair decay is {pair_decay!r}; expected a value in (0, 1]")
    geometry = request.object.geometry
    report(f"reading object {geometry}", 0.0)
    antipodal_needed = requested is not None and "antipodal" in requested
    obj = read_object(
        geometry.asset_path,
        geometry.prim_path,
        need_mesh=antipodal_needed,
        check_closed=requested is None or antipodal_needed,
    )
    if requested is not None and "slots" in requested:
        _check_slots_usable(obj, geometry.asset_path)
    if requested is None and not _available_methods(obj):
        raise GripperError(
            f"{geometry.asset_path}: <{obj.prim_path}> has no mesh and no GripperSlots; nothing "
            f"to plan from ({'; '.join(obj.notes)})"
        )
    chosen = requested if requested is not None else _available_methods(obj)
    warnings: list[str] = [f"object {geometry}: {note}" for note in obj.notes]
    if requested is None and "antipodal" not in chosen:
        warnings.append(f"object {geometry}: antipodal skipped (no mesh)")
    # Read every gripper first: a bad gripper file fails before any work.
    sites = []
    for gripper in request.grippers:
        report(f"reading gripper {gripper}", 0.02)
        site = read_gripper(gripper)
        if site.max_opening is not None and site.max_opening > MAX_OPENING_M:
            # An absurd opening gives an absurd gripper model (collision checks never end).
            raise GripperError(
                f"{gripper.asset_path}: <{gripper.prim_path}>: "
                f"{get_max_opening_problem(site.max_opening, site.max_opening_source)}; "
                "not planning with it"
            )
        sites.append(site)
    collision_scene = read_scene(scene)
    if isinstance(scene, str | Path):  # read here: leave the object itself out of its obstacles
        own = [
            oid
            for oid in collision_scene.obstacle_ids
            if _is_at_or_under(collision_scene.name_of(oid), obj.prim_path)
        ]
        for oid in own:
            collision_scene.remove(oid)
        if own:
            warnings.append(
                f"scene {scene}: {len(own)} shape(s) at or under the object <{obj.prim_path}> "
                "left out of the obstacles (the object itself)"
            )
    support_id = collision_scene.find(support) if support is not None else None
    object_id = None
    if obj.vertices is not None:
        object_id = collision_scene.add_obstacle(
            Shape.mesh(obj.vertices, obj.faces, name=obj.prim_path),
            obj.world_frame,
            name=obj.prim_path,
        )
    grasps: dict[str, GraspCandidate] = {}
    budget = request.max_candidates_per_gripper
    proposal_count = min(MAX_PROPOSALS, OVERSAMPLE * budget)
    models_used = []
    fallback_noted = False
    try:
        for index, (gripper, site) in enumerate(zip(request.grippers, sites, strict=True)):
            share = 0.05 + 0.95 * index / len(sites)
            step = 0.95 / len(sites)
            label = f"gripper {gripper}"
            for note in site.warnings:
                warnings.append(f"{label}: site: {note}")
            if site.grasp_frame is None:
                warnings.append(f"{label}: skipped: the site has no usable forward axis")
                continue
            opening = site.max_opening
            if opening is None or not (math.isfinite(opening) and opening > 0):
                warnings.append(
                    f"{label}: skipped: max opening is {opening!r}; expected a finite value > 0 m"
                )
                continue
            mass = request.object.mass_kg
            payload = site.max_payload
            too_heavy = (
                mass is not None
                and payload is not None
                and math.isfinite(payload)
                and mass > payload
            )
            if too_heavy:
                warnings.append(
                    f"{label}: skipped: object mass {mass:g} kg exceeds the gripper's max "
                    f"payload {payload:g} kg ({site.max_payload_source})"
                )
                continue
            model = read_gripper_model(gripper, site, gripper_model)
            models_used.append(model.source)
            key, stream = compute_gripper_key(gripper), compute_stream_key(gripper)
            proposals = _Proposals()
            pad = site.grip_line.length if site.grip_line is not None else None
            pad = pad if pad is not None and 0 < pad < opening else None
            for method in chosen:
                report(f"{label}: {method} proposals", share)
                if method == "antipodal":
                    if obj.vertices is None:
                        warnings.append(f"{label}: antipodal: object has no mesh")
                        continue
                    ids, poses, widths, scores, groups = propose_antipodal(
                        obj,
                        opening,
                        count=proposal_count,
                        rng=_make_rng(request.seed, stream, method),
                        key=key,
                        clearance=clearance,
                        pad_width=pad,
                        ray_backend=rays,
                    )
                    if rays == "triangle" and not fallback_noted:
                        fallback_noted = True
                        warnings.append(_fallback_warning(ray_backend))
                else:  # asked-for slots exist and some are usable (_check_slots_usable)
                    ids, poses, widths, scores, notes = propose_slots(
                        obj,
                        opening,
                        count=proposal_count,
                        seed=request.seed,
                        key=key,
                        stream=stream,
                    )
                    groups = None
                    warnings.extend(f"{label}: slots: {n}" for n in notes)
                if not ids:
                    warnings.append(f"{label}: {method} produced no proposals")
                    continue
                proposals.extend(ids, method, poses, widths, scores, groups)
            if not len(proposals):
                continue
            fits = np.array(proposals.widths) <= opening * (1 + 1e-9)
            if not fits.all():
                warnings.append(
                    f"{label}: {int((~fits).sum())} proposals wider than max opening "
                    f"{opening:g} m dropped"
                )
                proposals = proposals.keep(fits)
            # Rank first (soft-NMS over contact pairs), then check in rank order until the
            # budget is filled: proposals below the last kept one are never checked.
            ranked_scores = compute_pair_decay(proposals.scores, proposals.groups, pair_decay)
            ranked = sorted(
                range(len(proposals)), key=lambda i: (-ranked_scores[i], proposals.ids[i])
            )
            proposals = proposals.keep_order(ranked)
            checker = _RankedChecker(
                collision_scene, model, obj.world_frame, object_id, support_id,
                retreat_distance, retreat_steps,
            )  # fmt: skip
            kept, exclusions = checker.run(
                proposals,
                budget,
                lambda done, total, label=label, share=share, step=step: report(
                    f"{label}: collision checks ({done}/{total} proposals)",
                    share + step * (0.1 + 0.9 * done / max(total, 1)),
                ),
            )
            warnings.extend(f"{label}: {text}" for text in checker.summaries())
            if not kept:
                warnings.append(f"{label}: no candidate survived the fit and collision checks")
                continue
            # Soft-NMS again among the survivors: a pair whose best approach collided
            # is not penalised for it.
            confidence = compute_pair_decay(
                [proposals.scores[i] for i in kept], [proposals.groups[i] for i in kept], pair_decay
            )
            final = sorted(range(len(kept)), key=lambda j: (-confidence[j], proposals.ids[kept[j]]))
            order = [kept[j] for j in final]
            poses = proposals.pose_array[order]
            quaternions = compute_quaternion_wxyz(poses)
            for row, (i, j) in enumerate(zip(order, final, strict=True)):
                cid = proposals.ids[i]
                grasps[cid] = GraspCandidate(
                    candidate_id=cid,
                    gripper=gripper,
                    confidence=float(confidence[j]),
                    generation_method=proposals.methods[i],
                    position=tuple(float(v) for v in poses[row, :3, 3]),
                    orientation={
                        "w": float(quaternions[row, 0]),
                        "xyz": tuple(float(v) for v in quaternions[row, 1:]),
                    },
                    width=float(proposals.widths[i]),
                    exclusions=exclusions[i],
                )
    finally:
        if object_id is not None:
            collision_scene.remove(object_id)
    report("done", 1.0)
    mode = (
        f"methods={','.join(chosen)}; proposals_per_method={proposal_count}; "
        f"clearance_m={clearance:g}; retreat_m={retreat_distance:g}; "
        f"retreat_steps={retreat_steps}; gripper_models={','.join(models_used) or 'none'}; "
        f"scene_obstacles={len(collision_scene.obstacle_ids)}; support={support or 'none'}"
    )
    metadata = GraspPlanningMetadata(
        upstream_revision=f"usdgrip {usdgrip.__version__}",
        seed=request.seed,
        runtime_seconds=time.perf_counter() - started,
        pose_frame=obj.prim_path,
        generation_mode=mode,
        warnings=tuple(warnings),
    )
    return GraspPlanningResult(grasps=grasps, metadata=metadata)
