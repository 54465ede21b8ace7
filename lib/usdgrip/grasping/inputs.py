"""Read once what planning and physics need: the object, every gripper and the support.

:func:`read_grasp_inputs` opens each file once (:class:`StageSource`), reads the object
(its mesh in frame M and whether it bounds a solid, its GripperSlots and grasp vector
lines, the up axis, mass and friction as authored), every gripper (site, pad width,
grip force, collision model) and the support (a table under the object, or a prim of
a scene file) into one frozen :class:`GraspInputs`. The planner
(:func:`usdgrip.plan_grasps`) and the evaluators (:func:`usdgrip.evaluate_grasps`,
``evaluate_targets``, ``evaluate_grasp_lines``) take it, so planning and physics never
read or judge the same input twice, or differently.

The reader records what it finds and leaves the verdicts to its users: an object
without a mesh is refused by the antipodal backend and by physics, not here; a mesh
that does not bound a solid is refused by the antipodal backend only. Bad input for
everyone (an unreadable file, a missing prim, an object frame that cannot be built (a
non-finite or flattening transform, an object farther than 1e7 m from the origin, an
unusable metersPerUnit), a mesh of zero area, 1e30 m or 1e-10 m wide, malformed slots, a
support that is the object or holds it) raises :class:`~usdgrip.errors.GripperError` here.

**One rule for a bad gripper** (:func:`find_gripper_problem`): a site without a usable
forward axis, or whose max opening is not a finite value in ``(0, 2]`` m, is skipped with
a warning (``gripper FILE:/Site: skipped: ...``); when no gripper of the request remains,
reading fails with those reasons (exit 2 in the CLI).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from usdgrip.contracts import GeometryRef, GripperRef
from usdgrip.errors import GripperError
from usdgrip.grasping.gripper_inputs import (
    GRIPPER_MODELS,
    Gripper,
    compute_pad_width,
    find_gripper_problem,
    read_gripper,
    read_gripper_inputs,
    read_gripper_model,
)
from usdgrip.grasping.object_inputs import (
    LINE_UNUSABLE,
    MAX_OBJECT_SPAN_M,
    MIN_OBJECT_SPAN_M,
    NO_LINES,
    ObjectInputs,
    ObjectLine,
    describe_unsolid_mesh,
    find_line_object,
    is_at_or_under,
    read_object,
    select_object_lines,
)
from usdgrip.grasping.provenance import Note
from usdgrip.grasping.stage_source import StageSource, is_same_file

__all__ = [
    "GRIPPER_MODELS",
    "LINE_UNUSABLE",
    "MAX_OBJECT_SPAN_M",
    "MIN_OBJECT_SPAN_M",
    "NO_LINES",
    "GraspInputs",
    "Gripper",
    "ObjectInputs",
    "ObjectLine",
    "StageSource",
    "Support",
    "check_support_choice",
    "compute_pad_width",
    "describe_unsolid_mesh",
    "find_gripper_problem",
    "find_line_object",
    "is_at_or_under",
    "read_grasp_inputs",
    "read_gripper",
    "read_gripper_inputs",
    "read_gripper_model",
    "read_object",
    "select_object_lines",
]


# --- the support and the scene ---------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Support:
    """What the object rests on: nothing, a table under it, or a prim of a scene file.

    The table is a plane across the up axis (``ObjectInputs.lift_up``) through the object's
    lowest point; planning collides it as a wide box below that plane, physics as a plane.
    """

    kind: Literal["none", "table", "prim"] = "none"
    scene: str | None = None
    """The scene file holding the prim (``kind == "prim"``; ``None`` for an in-memory scene)."""
    prim: str | None = None
    """Prim path (USD) or obstacle name (a ``CollisionScene``) of the support."""
    table_height: float | None = None
    """The table plane's offset along up in M (the mesh's lowest point), metres."""
    vertices: NDArray[np.float64] | None = None
    """(V, 3) the support prim's geometry in M (physics), or ``None``."""
    faces: NDArray[np.int64] | None = None
    error: str | None = None
    """Why the support prim's geometry could not be read (physics refuses then)."""

    @property
    def label(self) -> str:
        """``table``, ``SCENE:/Prim`` or ``none`` (``metadata.physics["support"]``)."""
        if self.kind == "table":
            return "table"
        if self.kind == "prim":
            return f"{self.scene}:{self.prim}"
        return "none"


def check_support_choice(table: bool, scene: str | None, support: str | None) -> None:
    """Refuse a table together with a support prim.

    Raises:
        ValueError: both asked.
    """
    if table and support is not None:
        raise ValueError("table and support are exclusive: the object rests on one of them")


@dataclass(frozen=True, eq=False)
class GraspInputs:
    """Everything planning and physics read from USD, read once (frame M, metres)."""

    object: ObjectInputs
    grippers: tuple[Gripper, ...]
    """One per requested gripper, in request order (skipped ones included, see ``skipped``)."""
    support: Support
    scene: str | None
    """The scene file whose shapes are the planner's obstacles, or ``None``."""
    obstacles: tuple[Any, ...]
    """The scene's :class:`~usdgrip.usd.geometry.SceneShape` records, the object's own
    shapes left out."""
    notes: tuple[Note, ...] = ()
    """Notes about the scene (shapes of the object left out)."""
    gripper_model: str = "auto"
    """The collision model mode the grippers were read with."""

    @property
    def usable_grippers(self) -> tuple[Gripper, ...]:
        """The grippers the one rule keeps, in request order."""
        return tuple(g for g in self.grippers if g.skipped is None)

    def find_gripper(self, ref: GripperRef) -> Gripper:
        """The gripper record of ``ref`` (same prim, same file).

        Raises:
            ValueError: ``ref`` was not read.
        """
        for gripper in self.grippers:
            if gripper.ref == ref or (
                gripper.ref.prim_path == ref.prim_path
                and is_same_file(gripper.ref.asset_path, ref.asset_path)
            ):
                return gripper
        names = ", ".join(str(g.ref) for g in self.grippers) or "none"
        raise ValueError(f"gripper {ref} was not read into these inputs; they hold: {names}")

    def check_support(self, table: bool, scene: str | None, support: str | None) -> None:
        """Refuse options whose support differs from the one these inputs were read with.

        Raises:
            ValueError: naming both.
        """
        kind = "table" if table else "prim" if support is not None else "none"
        same = kind == self.support.kind and (
            kind != "prim" or (support == self.support.prim and scene == self.support.scene)
        )
        if not same:
            asked = "table" if table else f"{scene}:{support}" if support is not None else "none"
            raise ValueError(
                f"the options' support is {asked} but the inputs were read with support "
                f"{self.support.label}; read them with the same support"
            )


def read_grasp_inputs(
    object: GeometryRef,
    grippers: Sequence[GripperRef],
    *,
    table: bool = False,
    scene: str | os.PathLike[str] | None = None,
    support: str | None = None,
    gripper_model: str = "auto",
    stages: Mapping[str | os.PathLike[str], Any] | StageSource | None = None,
) -> GraspInputs:
    """Read the object, every gripper and the support once, for planning and physics.

    Args:
        object: the object prim.
        grippers: the gripper sites, in request order.
        table: the object rests on a plane just under its lowest point along the stage's
            up axis.
        scene: USD file of obstacles (planning) holding ``support``; the shapes at or under
            the object prim are left out (the object itself, when the file contains it).
        support: the prim the object rests on: a prim of ``scene`` (planning's support
            obstacle and physics' support), or without ``scene`` the name of an obstacle
            of the ``CollisionScene`` given to the planner.
        gripper_model: ``auto``, ``proxy`` or ``geometry`` (:func:`read_gripper_model`).
        stages: stages the caller has open, by asset path (or a :class:`StageSource`).

    Raises:
        GripperError: unreadable input (see :func:`read_object`, :func:`read_gripper`), or
            no gripper passes :func:`find_gripper_problem` (the reasons named).
        ValueError: ``table`` with ``support``, an unknown ``gripper_model``.
        TypeError: ``object`` is not a GeometryRef or a gripper not a GripperRef.
    """
    if not isinstance(object, GeometryRef):
        raise TypeError(f"object is {type(object).__name__}; expected a GeometryRef")
    for ref in grippers:
        if not isinstance(ref, GripperRef):
            raise TypeError(f"gripper is {type(ref).__name__}; expected a GripperRef")
    check_support_choice(table, None if scene is None else str(scene), support)
    if gripper_model not in GRIPPER_MODELS:
        raise ValueError(
            f"gripper model {gripper_model!r}; expected one of {', '.join(GRIPPER_MODELS)}"
        )
    source = stages if isinstance(stages, StageSource) else StageSource(stages)
    obj = read_object(object.asset_path, object.prim_path, stages=source)
    if support is not None:
        check_support_is_not_object(support, obj, None if scene is None else os.fspath(scene))
    read = tuple(
        read_gripper_inputs(r, gripper_model=gripper_model, stages=source) for r in grippers
    )
    if read and all(g.skipped is not None for g in read):
        reasons = "; ".join(f"{g.ref.asset_path}: <{g.ref.prim_path}>: {g.problem}" for g in read)
        raise GripperError(f"{reasons}; no usable gripper remains")
    scene_file = None if scene is None else os.fspath(scene)
    obstacles: tuple[Any, ...] = ()
    notes: list[Note] = []
    if scene_file is not None:
        obstacles, note = _read_obstacles(source, scene_file, obj.prim_path)
        notes.extend([note] if note else [])
    return GraspInputs(
        object=obj,
        grippers=read,
        support=_read_support(source, obj, table, scene_file, support),
        scene=scene_file,
        obstacles=obstacles,
        notes=tuple(notes),
        gripper_model=gripper_model,
    )


def check_support_is_not_object(support: str, obj: ObjectInputs, scene: str | None) -> None:
    """Refuse a support prim that is the object, or holds it, or lies under it.

    The scene shares the object stage's world, and the shapes at or under the object prim
    are the object itself in any scene file (the obstacles leave them out), so such a
    support would hold the object up from inside: every grasp would be ``unstable``.

    Raises:
        GripperError: naming the support, the scene file and the object.
    """
    object_path = obj.prim_path
    if not (is_at_or_under(support, object_path) or is_at_or_under(object_path, support)):
        return
    if support.rstrip("/") == object_path:
        relation = f"is the object {obj.geometry} itself"
    elif is_at_or_under(support, object_path):
        relation = f"is part of the object {obj.geometry}"
    else:
        relation = f"holds the object {obj.geometry} (a prim above it)"
    where = f" in {scene}" if scene is not None else ""
    raise GripperError(
        f"support <{support}>{where} {relation}; expected the prim the object rests on (a "
        "table or shelf of the scene, neither the object nor a prim above it)"
    )


def _read_obstacles(source: StageSource, scene: str, prim_path: str) -> tuple[tuple, Note | None]:
    """The scene's collision shapes without the object's own, and a note when some were left out."""
    from usdgrip.usd.geometry import read_collision_shapes

    try:
        shapes = read_collision_shapes(source.open(scene))
    except GripperError as exc:  # the shape readers name the prim; say which file too
        raise GripperError(f"{scene}: {exc}") from None
    kept = tuple(s for s in shapes if not is_at_or_under(s.path, prim_path))
    left_out = len(shapes) - len(kept)
    if not left_out:
        return kept, None
    return kept, Note(
        "object_in_scene",
        scene,
        f"{left_out} shape(s) at or under the object <{prim_path}> left out of the obstacles "
        "(the object itself)",
        (f"scene {scene}",),
    )


def _read_support(
    source: StageSource, obj: ObjectInputs, table: bool, scene: str | None, prim: str | None
) -> Support:
    if table:
        if not obj.has_mesh:  # no lowest point to put a table under
            why = (
                f"{obj.geometry.asset_path}: <{obj.prim_path}>: a table goes just under the "
                f"object's lowest point, and the object has no mesh ({obj.mesh_error})"
            )
            return Support("table", error=why)
        return Support("table", table_height=obj.lowest_along(obj.lift_up))
    if prim is None:
        return Support()
    if scene is None:  # an obstacle of an in-memory CollisionScene: no USD to read
        return Support("prim", None, prim)
    from usdgrip.usd.physics import read_support_mesh

    try:
        vertices, faces = read_support_mesh(source.open(scene), prim, obj.world_frame)
    except GripperError as exc:
        return Support("prim", scene, prim, error=f"{scene}: {exc}")
    return Support("prim", scene, prim, vertices=vertices, faces=faces)
