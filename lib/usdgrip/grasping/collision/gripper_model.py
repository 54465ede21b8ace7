"""The gripper's collision model: link shapes in the grasp frame, or the palm-and-fingers proxy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from usdgrip.frames import Mat4
from usdgrip.grasping import gripper_defaults as defaults
from usdgrip.grasping.collision.fcl_shapes import (
    Shape,
    ShapeGeometry,
    as_pose,
    check_positive,
    invert_rigid,
)
from usdgrip.site_records import GripperSite

#: Proxy gripper dimensions (metres) used when no collision meshes are given, the same
#: as the physics hand's (:mod:`usdgrip.grasping.gripper_defaults`); see
#: :meth:`GripperCollisionModel.proxy`.
PROXY_FINGER_THICKNESS = defaults.FINGER_THICKNESS
PROXY_FINGER_LENGTH = defaults.FINGER_LENGTH
PROXY_TIP_OFFSET = defaults.TIP_OFFSET
PROXY_PALM_DEPTH = defaults.PALM_DEPTH
PROXY_DEFAULT_PAD_WIDTH = defaults.DEFAULT_PAD_WIDTH


# ------------------------------------------------------------------------ robot


@dataclass(frozen=True, eq=False)
class RobotShape:
    """One link shape of the robot: ``shape`` placed by ``frame_from_shape`` in ``frame``."""

    name: str
    shape: Shape
    frame_from_shape: Mat4
    frame: int = 0


class GripperCollisionModel:
    """Collision shapes of a gripper, expressed in its grasp frame G (frame 0).

    G is the GraspGenX frame: X closing, Z approach, origin between the pads.
    Shapes are indexed by shape index (what :meth:`SceneExclusions.robot`
    names). fcl objects are built once and reused by every check.
    """

    frame_count = 1
    """Frames of this robot: only 0, the grasp frame G."""

    def __init__(
        self, shapes: Sequence[RobotShape], *, source: str, finger_indices: Sequence[int] = ()
    ) -> None:
        if not shapes:
            raise ValueError("a gripper collision model needs at least one shape")
        self.shapes: tuple[RobotShape, ...] = tuple(shapes)
        self.source = source
        """``proxy`` or ``meshes``."""
        self.finger_indices: tuple[int, ...] = tuple(int(i) for i in finger_indices)
        """Shape indices of the fingers (the shapes a grasped part may touch)."""
        for s in self.shapes:
            if s.frame != 0:
                raise ValueError(
                    f"robot shape {s.name!r} is bound to frame {s.frame}; a gripper model has "
                    "frame 0 (grasp frame G) only"
                )
        self.geometries = [ShapeGeometry(s.shape) for s in self.shapes]
        self.fcl_objects = [g.new_object() for g in self.geometries]
        """Per shape its fcl geometry and object, built once (what the scene checks)."""

    @property
    def shape_count(self) -> int:
        """Number of link shapes (valid robot shape indices are ``0..shape_count-1``)."""
        return len(self.shapes)

    @property
    def names(self) -> tuple[str, ...]:
        """Shape names by index."""
        return tuple(s.name for s in self.shapes)

    @classmethod
    def proxy(
        cls,
        max_opening: float,
        pad_width: float | None = None,
        *,
        finger_thickness: float = PROXY_FINGER_THICKNESS,
        finger_length: float = PROXY_FINGER_LENGTH,
        tip_offset: float = PROXY_TIP_OFFSET,
        palm_depth: float = PROXY_PALM_DEPTH,
    ) -> GripperCollisionModel:
        """Proxy parallel-jaw gripper in G: palm (0), left finger (1), right finger (2).

        With ``w = max_opening``, ``p = pad_width`` (default
        :data:`PROXY_DEFAULT_PAD_WIDTH`), ``t = finger_thickness``,
        ``L = finger_length``, ``e = tip_offset``, ``d = palm_depth``:

        * fingers: boxes ``t x p x L``; inner faces at ``x = -w/2`` (left) and
          ``x = +w/2`` (right) — the fully open jaw —, spanning
          ``z in [e - L, e]`` (tips ``e`` past the grasp centre);
        * palm: box ``(w + 2t) x p x d`` spanning ``z in [e - L - d, e - L]``.

        Raises:
            ValueError: a dimension is not finite and > 0.
        """
        w = check_positive(max_opening, "max opening")
        p = check_positive(PROXY_DEFAULT_PAD_WIDTH if pad_width is None else pad_width, "pad width")
        t = check_positive(finger_thickness, "finger thickness")
        length = check_positive(finger_length, "finger length")
        d = check_positive(palm_depth, "palm depth")
        e = float(tip_offset)

        def placed(x: float, z: float) -> Mat4:
            m = np.eye(4)
            m[:3, 3] = (x, 0.0, z)
            return m

        zf = e - length / 2.0
        finger = Shape.box((t, p, length), name="finger")
        shapes = [
            RobotShape(
                "palm", Shape.box((w + 2 * t, p, d), name="palm"), placed(0, e - length - d / 2)
            ),
            RobotShape("finger_left", finger, placed(-(w + t) / 2, zf)),
            RobotShape("finger_right", finger, placed((w + t) / 2, zf)),
        ]
        return cls(shapes, source="proxy", finger_indices=(1, 2))

    @classmethod
    def from_site(
        cls,
        site: GripperSite,
        meshes: Sequence[Any] | None = None,
        *,
        pad_width: float | None = None,
        **proxy_options: float,
    ) -> GripperCollisionModel:
        """Model for a gripper site: its collision meshes when given, else the proxy.

        Args:
            site: the gripper site (needs ``grasp_frame`` and, for the proxy,
                ``max_opening``; the pad width is ``grip_line.length``).
            meshes: optional gripper collision geometry in WORLD coordinates of the
                gripper stage: ``(name, Shape, world_from_shape)`` triples or
                ``SceneShape`` records (``path``, ``kind``, ``params``, ``pose``,
                ``mesh``) from :func:`usdgrip.usd.geometry.read_collision_shapes`.
                They are re-expressed in G; a shape whose name contains ``finger``
                is a finger.
            pad_width: the proxy's pad width (the input reader's
                :func:`~usdgrip.grasping.inputs.compute_pad_width`); ``None``: the grip
                line's length when it is finite and > 0, else the default.
            **proxy_options: keyword dimensions passed to :meth:`proxy`.

        Raises:
            GripperError: the site has no grasp frame, or no max opening for the proxy.
        """
        from usdgrip.errors import GripperError

        if site.grasp_frame is None:
            raise GripperError(
                f"<{site.path}>: gripper site has no grasp frame (no usable forward axis); "
                "author gripper_forward_axis"
            )
        if meshes:
            g_from_world = invert_rigid(site.grasp_frame)
            shapes = []
            for item in meshes:
                name, shape, pose = _shape_triple(item)
                shapes.append(RobotShape(name, shape, g_from_world @ pose))
            fingers = [i for i, s in enumerate(shapes) if "finger" in s.name.lower()]
            return cls(shapes, source="meshes", finger_indices=fingers)
        if site.max_opening is None or not np.isfinite(site.max_opening) or site.max_opening <= 0:
            raise GripperError(
                f"<{site.path}>: gripper:maxOpening is {site.max_opening!r}; the proxy gripper "
                "needs a finite max opening > 0 m (or pass collision meshes)"
            )
        pad = pad_width
        if pad is None:
            pad = site.grip_line.length if site.grip_line is not None else None
            if pad is not None and (not np.isfinite(pad) or pad <= 0):
                pad = None
        return cls.proxy(site.max_opening, pad, **proxy_options)


def _shape_triple(item: Any) -> tuple[str, Shape, Mat4]:
    if isinstance(item, tuple) and len(item) == 3:
        name, shape, pose = item
        return str(name), shape, as_pose(pose, f"pose of {name!r}")
    name, shape, pose = shape_from_scene_shape(item)
    return name, shape, pose


def shape_from_scene_shape(item: Any) -> tuple[str, Shape, Mat4]:
    """Convert a ``SceneShape`` (``path``, ``kind``, ``params``, ``pose``, ``mesh``).

    ``kind`` is ``mesh`` (uses ``mesh.vertices``/``mesh.faces``) or ``cube``/``box``,
    ``sphere``, ``cylinder``, ``capsule`` with ``params`` keys ``size`` (cube edge
    or (3,) sizes) / ``half_extents``, ``radius``, ``height``, ``axis``. Returns
    ``(path, Shape, world_from_shape)``.
    """
    path = str(getattr(item, "path", ""))
    kind = str(getattr(item, "kind", "")).lower()
    params = dict(getattr(item, "params", None) or {})
    pose = as_pose(getattr(item, "pose", None), f"pose of <{path}>")
    if kind == "mesh":
        mesh = getattr(item, "mesh", None)
        if mesh is None:
            raise ValueError(f"<{path}>: mesh shape without triangles")
        return path, Shape.from_triangle_mesh(mesh, name=path), pose
    if kind in ("cube", "box"):
        if "half_extents" in params:
            return path, Shape.box(half_extents=params["half_extents"], name=path), pose
        return path, Shape.box(params.get("size", 2.0), name=path), pose
    if kind == "sphere":
        return path, Shape.sphere(params["radius"], name=path), pose
    if kind in ("cylinder", "capsule"):
        make = Shape.cylinder if kind == "cylinder" else Shape.capsule
        return (
            path,
            make(params["radius"], params["height"], axis=params.get("axis", "Z"), name=path),
            pose,
        )
    raise ValueError(
        f"<{path}>: shape kind {kind!r} is not supported; expected mesh, cube, sphere, cylinder "
        "or capsule"
    )
