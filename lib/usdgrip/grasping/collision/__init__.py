"""Collision checking of gripper poses (seed 002), on python-fcl: one job per module.

:mod:`.fcl_shapes` (shapes and their fcl geometry) · :mod:`.exclusions` · :mod:`.gripper_model`
· :mod:`.scene` (:class:`CollisionScene`) · :mod:`.queries` (the fcl pair queries).

Pure (numpy, python-fcl, trimesh; no ``pxr``). Poses are ``(4, 4)`` /
``(N, 4, 4)`` float64 rigid transforms acting on column vectors, translation
in ``[:3, 3]``, lengths in metres.

Objects
    * **Obstacles** sit in the world at a pose.
    * **Attached shapes** are expressed in a robot frame (``frame=0`` is the
      gripper's grasp frame G) or the base (``frame=None``) and move with it.
    * The **robot** is a :class:`GripperCollisionModel`: link shapes indexed by
      shape index (for the proxy: ``0`` palm, ``1`` left finger, ``2`` right
      finger), all bound to frame 0 (G).

Every object has a stable :class:`ObjectId` that survives removal of other
objects and :meth:`CollisionScene.attach` / :meth:`CollisionScene.detach`.

What is checked, per gripper pose: every robot shape against every obstacle;
every attached shape against obstacles, other attached shapes and robot shapes,
minus the pairs named in a :class:`SceneExclusions`. Robot shapes are not
checked against each other (the palm touches the fingers by design), nor
obstacles against obstacles.

Surfaces and volumes: fcl treats boxes, spheres, cylinders and capsules as
solids but a triangle mesh (``BVHModel``) as a surface only, so a finger wholly
inside a closed mesh has no surface contact. For every pair whose bounds
overlap and that has a *closed* (watertight) mesh on either side, a reference
point of the other shape (a primitive's centre, a mesh's first vertex) is also
tested for containment in the closed mesh (trimesh ray parity, embree when
available); containment counts as a collision (``Contact.inside``). Open
meshes stay surfaces.
"""

from usdgrip.grasping.collision.exclusions import Exclusion, ExclusionError, SceneExclusions
from usdgrip.grasping.collision.fcl_shapes import SHAPE_KINDS, ObjectId, Shape
from usdgrip.grasping.collision.gripper_model import (
    GripperCollisionModel,
    RobotShape,
    shape_from_scene_shape,
)
from usdgrip.grasping.collision.queries import (
    TOUCH_TOLERANCE,
    CollisionResult,
    Contact,
    RetreatResult,
)
from usdgrip.grasping.collision.scene import CollisionScene

__all__ = [
    "SHAPE_KINDS",
    "TOUCH_TOLERANCE",
    "CollisionResult",
    "CollisionScene",
    "Contact",
    "Exclusion",
    "ExclusionError",
    "GripperCollisionModel",
    "ObjectId",
    "RetreatResult",
    "RobotShape",
    "SceneExclusions",
    "Shape",
    "shape_from_scene_shape",
]
