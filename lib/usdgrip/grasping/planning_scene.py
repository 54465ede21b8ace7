"""The planner's collision scene: the obstacles, the table or support, and the object.

:func:`build_scene` puts what the object rests on into the scene the planner checks, so
the open gripper at a grasp pose collides with it (a grasp whose hand would cut the
table is dropped) and the retreat check excuses the object's contact with it while the
object still rests there.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from usdgrip.errors import GripperError
from usdgrip.grasping.inputs import GraspInputs, ObjectInputs
from usdgrip.grasping.provenance import Note

#: Name of the table obstacle in the collision scene (and in candidates' exclusions).
TABLE_NAME = "table"
#: How far the table box reaches past the object on every side, metres (a gripper opens
#: at most 2 m: no hand that reaches the object gets around it).
TABLE_MARGIN = 2.0


class PlanningScene(NamedTuple):
    """The scene one planning run checks, and what the run added to it."""

    scene: Any
    """:class:`~usdgrip.grasping.collision.CollisionScene`."""
    support_id: Any
    """The support obstacle's id (the table's, or the named prim's), else ``None``."""
    object_id: Any
    """The object's id (``None`` without a mesh)."""
    added: tuple[Any, ...]
    """Ids this run added (the table, the object): removed when the run ends, so a caller's
    scene is left as it was."""
    notes: tuple[Note, ...]
    obstacles: int
    """Scene obstacles besides the ones added."""


def build_scene(inputs: GraspInputs, scene: Any, support: str | None) -> PlanningScene:
    """The collision scene with the support and the object (added last).

    Args:
        inputs: the object, its support and the scene file's shapes.
        scene: ``None`` or a USD path (the inputs' obstacles), or a ``CollisionScene``.
        support: the name of the obstacle the object rests on, else ``None``.

    Raises:
        TypeError: ``scene`` is not ``None``, a CollisionScene or a USD path.
        ValueError: the support names no obstacle of the scene (a prim of the scene file
            that is missing or has no geometry: the reader's words, naming the file).
    """
    from usdgrip.grasping.collision import CollisionScene, Shape

    notes: tuple[Note, ...] = ()
    if isinstance(scene, CollisionScene):
        collision_scene = scene
    elif scene is None or isinstance(scene, str | os.PathLike):
        collision_scene = CollisionScene.from_scene_shapes(inputs.obstacles)
        notes = inputs.notes
    else:
        raise TypeError(
            f"scene is {type(scene).__name__}; expected None, a CollisionScene or a USD file path"
        )
    obstacles = len(collision_scene.obstacle_ids)
    support_id = None
    added = []
    obj = inputs.object
    if support is not None:
        from_file = inputs.support.kind == "prim" and inputs.support.scene is not None
        if from_file and inputs.support.error is not None and collision_scene is not scene:
            raise ValueError(inputs.support.error)  # no such prim, no mesh: the file named
        support_id = collision_scene.find(support)  # before adding anything
    object_id = None
    if obj.vertices is not None:  # the object's id comes right after the scene's, as it always did
        object_id = collision_scene.add_obstacle(
            Shape.mesh(obj.vertices, obj.faces, name=obj.prim_path),
            obj.world_frame,
            name=obj.prim_path,
        )
        added.append(object_id)
    if support is None and inputs.support.kind == "table":
        if inputs.support.error is not None:
            raise GripperError(inputs.support.error)
        if not obj.up_authored:
            notes += (
                Note(
                    "table_up_fallback",
                    obj.geometry.asset_path,
                    "no upAxis authored; the table lies across USD's fallback Y axis",
                    (obj.label,),
                ),
            )
        box, pose = compute_table_box(obj, inputs.support.table_height)
        support_id = collision_scene.add_obstacle(box, pose, name=TABLE_NAME)
        added.append(support_id)
    return PlanningScene(collision_scene, support_id, object_id, tuple(added), notes, obstacles)


def compute_table_box(obj: ObjectInputs, height: float | None) -> tuple[Any, np.ndarray]:
    """The table as a collision box and its world pose.

    Its top is the plane across ``lift_up`` through the object's lowest point; it reaches
    :data:`TABLE_MARGIN` past the object on every side and as deep below it.
    """
    from usdgrip.frames import compute_fallback_perpendicular
    from usdgrip.grasping.collision import Shape

    up = obj.lift_up / np.linalg.norm(obj.lift_up)
    x = compute_fallback_perpendicular(up)
    y = np.cross(up, x)
    span = float(np.max(np.ptp(obj.vertices, axis=0))) if obj.vertices is not None else 0.0
    side = span + 2 * TABLE_MARGIN
    depth = span + TABLE_MARGIN
    centre = obj.vertices.mean(axis=0) if obj.vertices is not None else np.zeros(3)
    top = centre + ((height or 0.0) - float(centre @ up)) * up
    local = np.eye(4)
    local[:3, 0], local[:3, 1], local[:3, 2] = x, y, up
    local[:3, 3] = top - 0.5 * depth * up
    return Shape.box((side, side, depth), name=TABLE_NAME), obj.world_frame @ local
