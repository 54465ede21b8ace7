"""The collision scene: obstacles, attached shapes and the gripper, checked per pose.

See :mod:`usdgrip.grasping.collision` for what is checked.
"""

from __future__ import annotations

from typing import Any, Literal

import fcl
import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import Mat4, Poses
from usdgrip.grasping.collision.exclusions import Exclusion, SceneExclusions
from usdgrip.grasping.collision.fcl_shapes import (
    ObjectId,
    Shape,
    ShapeGeometry,
    as_pose,
    check_positive,
    invert_rigid,
)
from usdgrip.grasping.collision.gripper_model import GripperCollisionModel, shape_from_scene_shape
from usdgrip.grasping.collision.queries import (
    Body,
    CollisionResult,
    Contact,
    RetreatResult,
    SceneEntry,
    as_poses,
    check_frame,
    find_touching,
    list_pairs,
    run_pairs,
    select_rows,
)


class CollisionScene:
    """Obstacles and attached shapes with stable ids, checked with python-fcl.

    Args:
        base_pose: world_from_base (4, 4) for shapes attached to the base
            (``frame=None``); identity by default.
    """

    def __init__(self, base_pose: ArrayLike | None = None) -> None:
        self.base_pose = as_pose(base_pose, "base pose")
        self._entries: dict[ObjectId, SceneEntry] = {}
        self._next = 1
        self.revision = 0
        """Incremented by every change (add, remove, attach, detach, update)."""
        self._request = fcl.CollisionRequest()
        self._result = fcl.CollisionResult()

    # ---- building

    def _new_entry(
        self, shape: Shape, name: str, attached: bool, frame: int | None, pose: Mat4
    ) -> ObjectId:
        if not isinstance(shape, Shape):
            raise TypeError(
                f"expected a usdgrip.grasping.collision.Shape, got {type(shape).__name__}"
            )
        oid = ObjectId(self._next)
        self._next += 1
        geom = ShapeGeometry(shape)
        entry = SceneEntry(
            oid, shape, geom, geom.new_object(), name or shape.name, attached, frame, pose
        )
        self._entries[oid] = entry
        if not attached:
            self._place(entry, pose)
        self.revision += 1
        return oid

    @staticmethod
    def _place(entry: SceneEntry, world_from_shape: Mat4) -> None:
        m = world_from_shape @ entry.geom.shape_from_geom
        entry.obj.setRotation(m[:3, :3])
        entry.obj.setTranslation(m[:3, 3])

    def add_obstacle(
        self, shape: Shape, pose: ArrayLike | None = None, *, name: str = ""
    ) -> ObjectId:
        """Add a world obstacle at ``pose`` (world_from_shape, rigid; identity by default)."""
        return self._new_entry(shape, name, False, None, as_pose(pose, "obstacle pose"))

    def add_attached(
        self,
        frame: int | None,
        shape: Shape,
        frame_from_shape: ArrayLike | None = None,
        *,
        name: str = "",
    ) -> ObjectId:
        """Add a shape bound to robot ``frame`` (0 = grasp frame G) or the base (``None``)."""
        return self._new_entry(
            shape, name, True, check_frame(frame), as_pose(frame_from_shape, "frame_from_shape")
        )

    def update_attached(
        self,
        object_id: ObjectId,
        shape: Shape | None = None,
        frame_from_shape: ArrayLike | None = None,
        *,
        frame: int | Literal["keep"] | None = "keep",
    ) -> None:
        """Change an attached shape's geometry, placement or frame; the id is kept."""
        entry = self._get(object_id, "update_attached")
        if not entry.attached:
            raise ValueError(
                f"update_attached({object_id}): {object_id} ({entry.name}) is an obstacle, not "
                "an attached shape; use attach() to attach it"
            )
        if shape is not None:
            if not isinstance(shape, Shape):
                raise TypeError(
                    f"expected a usdgrip.grasping.collision.Shape, got {type(shape).__name__}"
                )
            entry.shape = shape
            entry.geom = ShapeGeometry(shape)
            entry.obj = entry.geom.new_object()
        if frame_from_shape is not None:
            entry.pose = as_pose(frame_from_shape, "frame_from_shape")
        if frame != "keep":
            entry.frame = check_frame(frame)
        self.revision += 1

    def attach(self, object_id: ObjectId, frame: int | None, frame_from_shape: ArrayLike) -> None:
        """Grasp: obstacle ``object_id`` becomes attached to ``frame``; the id is kept.

        Args:
            object_id: an obstacle of this scene.
            frame: robot frame index (0 = G) or ``None`` for the base.
            frame_from_shape: the shape's pose in that frame after the grasp.
        """
        entry = self._get(object_id, "attach")
        if entry.attached:
            raise ValueError(f"attach({object_id}): {object_id} ({entry.name}) is already attached")
        entry.pose = as_pose(frame_from_shape, "frame_from_shape")
        entry.frame = check_frame(frame)
        entry.attached = True
        self.revision += 1

    def detach(self, object_id: ObjectId, world_pose: ArrayLike) -> None:
        """Release: attached ``object_id`` becomes an obstacle at ``world_pose``; the id is kept."""
        entry = self._get(object_id, "detach")
        if not entry.attached:
            raise ValueError(f"detach({object_id}): {object_id} ({entry.name}) is not attached")
        pose = as_pose(world_pose, "world pose")
        entry.attached = False
        entry.frame = None
        entry.pose = pose
        self._place(entry, pose)
        self.revision += 1

    def remove(self, object_id: ObjectId) -> None:
        """Remove an object; other ids are unchanged and this one is never reused."""
        self._get(object_id, "remove")
        del self._entries[object_id]
        self.revision += 1

    # ---- queries

    def _get(self, object_id: ObjectId, action: str) -> SceneEntry:
        entry = self._entries.get(object_id) if isinstance(object_id, ObjectId) else None
        if entry is None:
            raise ValueError(
                f"{action}({object_id!r}): no such object in the scene; objects: "
                f"{self.describe_ids()}"
            )
        return entry

    def __contains__(self, object_id: object) -> bool:
        return object_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def ids(self) -> tuple[ObjectId, ...]:
        """Every id, in creation order."""
        return tuple(self._entries)

    @property
    def obstacle_ids(self) -> tuple[ObjectId, ...]:
        """Ids of obstacles."""
        return tuple(i for i, e in self._entries.items() if not e.attached)

    @property
    def attached_ids(self) -> tuple[ObjectId, ...]:
        """Ids of attached shapes."""
        return tuple(i for i, e in self._entries.items() if e.attached)

    def is_attached(self, object_id: ObjectId) -> bool:
        """True for an attached shape, False for an obstacle (ValueError when unknown)."""
        return self._get(object_id, "is_attached").attached

    def name_of(self, object_id: ObjectId) -> str:
        """The object's name (prim path for shapes read from USD)."""
        return self._get(object_id, "name_of").name

    def find(self, name: str) -> ObjectId:
        """Id of the object called ``name`` (ValueError naming the known names when absent)."""
        for oid, e in self._entries.items():
            if e.name == name:
                return oid
        names = ", ".join(repr(e.name) for e in self._entries.values()) or "none"
        raise ValueError(f"no object named {name!r} in the scene; names: {names}")

    def shape_of(self, object_id: ObjectId) -> Shape:
        """The object's shape."""
        return self._get(object_id, "shape_of").shape

    def frame_of(self, object_id: ObjectId) -> int | None:
        """Frame of an attached shape (``None`` = base); ValueError for an obstacle."""
        entry = self._get(object_id, "frame_of")
        if not entry.attached:
            raise ValueError(f"frame_of({object_id}): {object_id} ({entry.name}) is an obstacle")
        return entry.frame

    def pose_of(self, object_id: ObjectId, frame_poses: ArrayLike | None = None) -> Mat4:
        """World pose of an object.

        For shapes attached to a robot frame, ``frame_poses`` (4, 4) is world_from_frame.
        """
        entry = self._get(object_id, "pose_of")
        if not entry.attached:
            return entry.pose.copy()
        if entry.frame is None:
            return self.base_pose @ entry.pose
        if frame_poses is None:
            raise ValueError(
                f"pose_of({object_id}): attached to frame {entry.frame}; pass frame_poses"
            )
        return as_pose(frame_poses, "frame pose") @ entry.pose

    def local_pose_of(self, object_id: ObjectId) -> Mat4:
        """Obstacle world pose, or an attached shape's frame_from_shape."""
        return self._get(object_id, "local_pose_of").pose.copy()

    def describe_ids(self) -> str:
        """``#1 obstacle 'table', #2 attached 'part'`` (or ``none``)."""
        parts = [
            f"{oid} {'attached' if e.attached else 'obstacle'}" + (f" {e.name!r}" if e.name else "")
            for oid, e in self._entries.items()
        ]
        return ", ".join(parts) if parts else "none"

    @classmethod
    def from_usd(cls, stage: Any, **kwargs: Any) -> CollisionScene:
        """Scene of obstacles read from a USD stage (meshes, cube/sphere/cylinder/capsule).

        Uses :func:`usdgrip.usd.geometry.read_collision_shapes`; every shape becomes
        an obstacle named by its prim path (see :meth:`find`).
        """
        from usdgrip.usd.geometry import read_collision_shapes

        return cls.from_scene_shapes(read_collision_shapes(stage, **kwargs))

    @classmethod
    def from_scene_shapes(cls, shapes: Any) -> CollisionScene:
        """Scene of obstacles from ``SceneShape`` records (each named by its prim path)."""
        scene = cls()
        for item in shapes:
            name, shape, pose = shape_from_scene_shape(item)
            scene.add_obstacle(shape, pose, name=name)
        return scene

    # ---- checks

    def _validate_for(
        self, model: GripperCollisionModel, exclusions: SceneExclusions | None
    ) -> tuple[Exclusion, ...]:
        if not isinstance(model, GripperCollisionModel):
            raise TypeError(f"expected a GripperCollisionModel, got {type(model).__name__}")
        for oid, e in self._entries.items():
            if e.attached and e.frame is not None and not 0 <= e.frame < model.frame_count:
                raise ValueError(
                    f"attached shape {oid} ({e.name}) is bound to frame {e.frame}; the gripper "
                    "model has frame 0 (grasp frame G) only"
                )
        if exclusions is None:
            return ()
        if not isinstance(exclusions, SceneExclusions):
            raise TypeError(f"expected SceneExclusions, got {type(exclusions).__name__}")
        exclusions.validate(self, model.shape_count)
        return exclusions.items

    def _bodies(
        self, model: GripperCollisionModel, frame_poses: Poses, skip: ObjectId | None = None
    ) -> tuple[list[Body], list[Body]]:
        """(robot + frame-attached bodies moving with the poses, fixed bodies)."""
        movers = [
            Body(("robot", i), s.name, g, o, frame_poses @ s.frame_from_shape, True)
            for i, (s, g, o) in enumerate(
                zip(model.shapes, model.geometries, model.fcl_objects, strict=True)
            )
        ]
        fixed: list[Body] = []
        for oid, e in self._entries.items():
            if oid == skip:
                continue
            if not e.attached:
                fixed.append(Body(("obstacle", oid), e.name, e.geom, e.obj, e.pose))
            elif e.frame is None:
                fixed.append(
                    Body(("attached", oid), e.name, e.geom, e.obj, self.base_pose @ e.pose)
                )
            else:
                movers.append(
                    Body(("attached", oid), e.name, e.geom, e.obj, frame_poses @ e.pose, True)
                )
        return movers, fixed

    def check_gripper(
        self,
        model: GripperCollisionModel,
        poses: ArrayLike,
        exclusions: SceneExclusions | None = None,
    ) -> CollisionResult:
        """Check the gripper (and shapes attached to it) at N poses.

        Args:
            model: the gripper's collision model.
            poses: (N, 4, 4) or (4, 4) world_from_G poses.
            exclusions: intended contacts; validated against this scene first.

        Returns:
            :class:`CollisionResult` with ``collides`` (N,), ``first_contact`` and
            ``exclusions_used``.

        Raises:
            ExclusionError: an exclusion does not fit the scene (see
                :meth:`SceneExclusions.validate`).
            ValueError: bad poses, or an attached shape bound to a frame the
                model does not have.
        """
        used = self._validate_for(model, exclusions)
        p = as_poses(poses)
        movers, fixed = self._bodies(model, p)
        pairs = list_pairs(movers + fixed, SceneExclusions(used))
        collides, contacts = self._run(movers + fixed, pairs, len(p))
        return CollisionResult(collides, contacts, used)

    def check_retreat(
        self,
        model: GripperCollisionModel,
        poses: ArrayLike,
        part_id: ObjectId,
        distance: float,
        steps: int = 5,
        support_id: ObjectId | None = None,
        exclusions: SceneExclusions | None = None,
    ) -> RetreatResult:
        """Lift obstacle ``part_id`` with the gripper at each pose and check the retreat.

        For each grasp pose the part is attached to frame 0 where it lies, the
        part is excluded against the finger shapes it touches there and against
        ``support_id`` while it still rests on it (touching from the grasp pose
        onwards without a break), then the gripper moves back along -Z of G
        (-approach) by ``distance`` in ``steps`` equal steps. A pose is rejected
        when at a step 1..steps the gripper, the carried part or another attached
        shape hits anything not excluded. The scene is restored afterwards (the
        part is an obstacle again, same id, same pose).

        Args:
            model: the gripper's collision model.
            poses: (N, 4, 4) or (4, 4) world_from_G grasp poses.
            part_id: the obstacle being picked.
            distance: retreat distance in metres (> 0).
            steps: number of sampled steps (>= 1); the motion between samples is
                not swept.
            support_id: obstacle the part rests on (table, bin), or ``None``.
            exclusions: further exclusions (validated with the part attached).

        Returns:
            :class:`RetreatResult`; ``exclusions_used`` per pose.
        """
        entry = self._get(part_id, "check_retreat")
        if entry.attached:
            raise ValueError(
                f"check_retreat: part {part_id} ({entry.name}) is already attached; pass an "
                "obstacle resting in the world"
            )
        d = check_positive(distance, "retreat distance")
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"retreat steps is {steps!r}; expected an int >= 1")
        if support_id is not None:
            support = self._get(support_id, "check_retreat support")
            if support_id == part_id:
                raise ValueError(f"check_retreat: support {support_id} is the part itself")
            if support.attached:
                raise ValueError(
                    f"check_retreat: support {support_id} ({support.name}) is attached; expected "
                    "an obstacle"
                )
        p = as_poses(poses)
        n, k = len(p), int(steps)
        world_part = entry.pose.copy()
        g_from_part = invert_rigid(p) @ world_part  # (N, 4, 4)
        self.attach(part_id, 0, np.eye(4))
        try:
            base = self._validate_for(model, exclusions)
            # Which fingers touch the part at the grasp pose.
            fingers = model.finger_indices or tuple(range(model.shape_count))
            touching = np.zeros((n, model.shape_count), dtype=bool)
            for s in fingers:
                shape = model.shapes[s]
                finger = Body(("robot", s), shape.name, model.geometries[s], model.fcl_objects[s],
                               p @ shape.frame_from_shape, True)  # fmt: skip
                part = Body(
                    ("attached", part_id), entry.name, entry.geom, entry.obj, p @ g_from_part, True
                )
                touching[:, s] = find_touching(finger, part, n, self._request, self._result)
            # Poses along the retreat: step j moves G by -j*d/k along its own Z.
            offsets = np.arange(1, k + 1) * (d / k)
            moved = np.repeat(p, k, axis=0)
            moved[:, :3, 3] -= np.repeat(p[:, :3, 2], k, axis=0) * np.tile(offsets, n)[:, None]
            part_world = moved @ np.repeat(g_from_part, k, axis=0)
            # Does the part still rest on its support (touching since the grasp, no break)?
            rests = np.zeros((n, k), dtype=bool)
            rested = False
            if support_id is not None:
                sup = self._entries[support_id]
                sup_body = Body(("obstacle", support_id), sup.name, sup.geom, sup.obj, sup.pose)
                part0 = Body(("attached", part_id), entry.name, entry.geom, entry.obj, world_part)
                rested = bool(find_touching(part0, sup_body, 1, self._request, self._result)[0])
                if rested:
                    part_k = Body(
                        ("attached", part_id), entry.name, entry.geom, entry.obj, part_world, True
                    )
                    touching_support = find_touching(
                        part_k, sup_body, n * k, self._request, self._result
                    )
                    rests = np.logical_and.accumulate(touching_support.reshape(n, k), axis=1)
            movers, fixed = self._bodies(model, moved, skip=part_id)
            part_body = Body(
                ("attached", part_id), entry.name, entry.geom, entry.obj, part_world, True
            )
            bodies = movers + [part_body] + fixed
            # Per-pose exclusions: the base set plus touching fingers; the support
            # pair is handled separately (it depends on the step).
            collides = np.zeros(n * k, dtype=bool)
            contacts: list[Contact | None] = [None] * (n * k)
            used_per_pose: list[tuple[Exclusion, ...]] = []
            groups: dict[tuple, list[int]] = {}
            for i in range(n):
                groups.setdefault(tuple(np.flatnonzero(touching[i])), []).append(i)
            sup_ex = Exclusion.obstacle(part_id, support_id) if support_id is not None else None
            for touched, members in groups.items():
                ex = SceneExclusions(base)
                for s in touched:
                    ex.robot(part_id, int(s))
                if sup_ex is not None:
                    ex.add(sup_ex)
                rows = (np.asarray(members)[:, None] * k + np.arange(k)[None]).ravel()
                sub = [select_rows(b, rows) for b in bodies]
                c, cc = self._run(sub, list_pairs(sub, ex), len(rows))
                collides[rows] = c
                for r, contact in zip(rows, cc, strict=True):
                    contacts[r] = contact
            if support_id is not None:
                # Part vs support, checked once the part has left it (or never rested).
                sup = self._entries[support_id]
                sup_body = Body(("obstacle", support_id), sup.name, sup.geom, sup.obj, sup.pose)
                todo = np.flatnonzero(~collides & ~rests.ravel())
                if len(todo):
                    sub = [select_rows(part_body, todo), sup_body]
                    c, cc = self._run(sub, [(0, 1)], len(todo))
                    collides[todo] = c
                    for r, contact in zip(todo, cc, strict=True):
                        if contact is not None:
                            contacts[r] = contact
            for i in range(n):
                ex = list(base) + [
                    Exclusion.robot(part_id, int(s)) for s in np.flatnonzero(touching[i])
                ]
                if sup_ex is not None and rested:
                    ex.append(sup_ex)
                used_per_pose.append(tuple(dict.fromkeys(ex)))
        finally:
            self.detach(part_id, world_part)
        per = collides.reshape(n, k)
        hit = per.any(axis=1)
        first = np.where(hit, per.argmax(axis=1) + 1, -1).astype(np.int64)
        first_contact = tuple(contacts[i * k + first[i] - 1] if hit[i] else None for i in range(n))
        return RetreatResult(hit, first_contact, first, tuple(used_per_pose), d, k)

    # ---- core

    def _run(
        self, bodies: list[Body], pairs: list[tuple[int, int]], n: int
    ) -> tuple[NDArray[np.bool_], tuple[Contact | None, ...]]:
        return run_pairs(bodies, pairs, n, self._request, self._result)
