"""Which frames a grasp file's poses are in, and how they become ``T_M_G`` for one gripper.

usdgrip's own files hold ``T_M_G``: the site's grasp frame G in the object frame M. Another
tool's poses are of its own gripper frame F: Isaac Sim's Grasp Editor names it
(``gripper_frame``: the prim picked in its UI, usually the gripper's base link),
GraspDataGen names a prim (``gripper_frame_link``: its ``base_frame``), GraspGen names
none (its convention is the gripper's base link). A pose of F becomes one of G through
the transform between the two prims in the gripper asset: ``T_M_G = T_M_F · T_F_G`` with
``T_F_G = inv(W_F) · W_G`` (world transforms of the asset, metres, scale removed).

The object frame is the object prim's (M). A file's ``object_frame`` names the prim its
writer used, in the writer's stage: it is reported, not looked up (the Isaac ROS docs:
the frame fields are "a reference for human readers").

:func:`resolve_pose_frames` decides, once per gripper, and says what it assumed as
:class:`~usdgrip.grasping.provenance.Note` records (warnings) and as a record for
``metadata``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from usdgrip.contracts import GraspPlanningResult, GripperRef
from usdgrip.errors import GripperError
from usdgrip.frames import Mat4, Poses, compute_rigid_part
from usdgrip.grasping.isaac_yaml import describe_writer, find_gripper_frame_key
from usdgrip.grasping.provenance import Note

#: ``named_by`` when the caller chose the frame (the CLI's ``--gripper-frame``).
CHOSEN_BY_CALLER = "--gripper-frame"


@dataclass(frozen=True)
class PoseFrames:
    """How one file's poses map onto one gripper's grasp frame G."""

    gripper_frame: str | None
    """The frame the poses are of, as named (``None``: G, nothing named)."""
    named_by: str
    """``gripper_frame``, ``gripper_frame_link``, ``--gripper-frame`` or ``none``."""
    prim_path: str | None
    """The prim of the gripper asset the frame was found at (``None``: G itself)."""
    frame_to_grasp: Mat4
    """``T_F_G`` (4, 4), metres; the identity when the poses are of G."""
    object_frame: str | None
    """The file's ``object_frame`` (reported only), else ``None``."""
    site: str
    """The gripper site whose grasp frame G the poses become."""
    notes: tuple[Note, ...] = ()

    @property
    def is_identity(self) -> bool:
        """True when the poses are used as they are."""
        return bool(np.array_equal(self.frame_to_grasp, np.eye(4)))

    def convert(self, poses: Poses) -> Poses:
        """``T_M_G`` of the file's poses ``T_M_F`` ``(N, 4, 4)``."""
        poses = np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4)
        return poses if self.is_identity else poses @ self.frame_to_grasp

    def to_record(self) -> dict[str, Any]:
        """The JSON record kept in ``metadata.physics["pose_frames"]``."""
        return {
            "gripper_frame": self.gripper_frame,
            "named_by": self.named_by,
            "prim": self.prim_path,
            "grasp_frame_site": self.site,
            "frame_to_grasp": [[round(float(v), 12) for v in row] for row in self.frame_to_grasp],
            "object_frame": self.object_frame,
        }


def resolve_pose_frames(
    result: GraspPlanningResult,
    site_path: str,
    site_frame: Mat4,
    object_path: str,
    stage: Any,
    gripper_frame: str | None = None,
    label: str = "grasps",
) -> PoseFrames:
    """The frames of ``result``'s poses for one gripper site.

    Args:
        result: the grasp file read.
        site_path: the gripper site prim (its grasp frame is G).
        site_frame: G in the gripper asset's world, (4, 4) metres.
        object_path: the object prim the poses are read against (M).
        stage: the gripper asset (a ``Usd.Stage``), where the file's frame prim is found.
        gripper_frame: the caller's choice (``--gripper-frame PRIM``): a prim of the gripper
            asset; it replaces the file's.
        label: what the notes are about (the file, e.g. ``grasps in.yaml``).

    Returns:
        The frames, with notes saying what was assumed.

    Raises:
        GripperError: the named frame is no prim of the gripper asset, or several are.
    """
    from usdgrip.usd.frame_prims import find_frame_prim

    notes: list[Note] = []
    named = find_gripper_frame_key(result)
    writer = describe_writer(result)
    if gripper_frame is not None:
        frame, named_by = gripper_frame, CHOSEN_BY_CALLER
        said_by = "--gripper-frame"
    elif named is not None:
        named_by, frame = named
        said_by = f"the file's {named_by}"
    else:
        frame, named_by, said_by = None, "none", ""
    if frame is None:
        if writer != "usdgrip":
            notes.append(
                Note(
                    "gripper_frame_assumed",
                    site_path,
                    f"the file ({writer}) names no gripper frame: its poses are read as the "
                    f"grasp frame G of <{site_path}> (+Z approach, +X closing); GraspGen's "
                    "poses are of the gripper's base link: pass --gripper-frame PRIM when "
                    "they are of another prim",
                    (label,),
                )
            )
        transform, prim_path = np.eye(4), None
    else:
        found = find_frame_prim(stage, frame, said_by)
        prim_path = found.path
        transform = np.linalg.inv(compute_rigid_part(found.world)) @ np.asarray(site_frame)
        if np.allclose(transform, np.eye(4), atol=1e-12):
            transform = np.eye(4)
        where = "" if found.how == "path" else f" (found by {found.how} at <{found.path}>)"
        if not np.array_equal(transform, np.eye(4)):
            shift = transform[:3, 3]
            angle = float(
                np.degrees(np.arccos(np.clip((np.trace(transform[:3, :3]) - 1) / 2, -1, 1)))
            )
            notes.append(
                Note(
                    "gripper_frame_converted",
                    site_path,
                    f"poses are of {said_by} {frame!r}{where}, converted to the grasp frame G "
                    f"of <{site_path}> by the transform between them in the gripper asset "
                    f"(offset [{shift[0]:.4f}, {shift[1]:.4f}, {shift[2]:.4f}] m, rotation "
                    f"{angle:.1f}°)",
                    (label,),
                )
            )
        elif found.how != "path":
            notes.append(
                Note(
                    "gripper_frame_found",
                    site_path,
                    f"{said_by} {frame!r}{where} is the grasp frame G of <{site_path}>: "
                    "poses used as they are",
                    (label,),
                )
            )
    # usdgrip's own file names its pose frame as object_frame too (for the Grasp Editor):
    # nothing to say then.
    if result.metadata is None or result.object_frame not in (None, result.metadata.pose_frame):
        notes.append(_object_frame_note(result, object_path, label))
    return PoseFrames(
        gripper_frame=frame,
        named_by=named_by,
        prim_path=prim_path,
        frame_to_grasp=transform,
        object_frame=result.object_frame,
        site=site_path,
        notes=tuple(notes),
    )


def _object_frame_note(result: GraspPlanningResult, object_path: str, label: str) -> Note:
    if result.object_frame is None:
        text = (
            f"the file names no object frame: its poses are read in the frame of the object "
            f"<{object_path}> (its prim's frame, scale removed, metres)"
        )
    elif result.object_frame == object_path:
        text = f"its object_frame <{object_path}> is the object: poses read in its frame"
    else:
        text = (
            f"its object_frame {result.object_frame!r} (the writer's stage) is read as the "
            f"object <{object_path}>: poses read in <{object_path}>'s frame (scale removed, "
            "metres)"
        )
    return Note("object_frame_assumed", object_path, text, (label,))


def check_pose_frame(result: GraspPlanningResult, object_path: str) -> None:
    """Refuse a usdgrip file planned for another object (``metadata.pose_frame``).

    Another tool's file (no ``metadata``) names no usdgrip frame: its poses are read in
    the object's frame (:func:`resolve_pose_frames` says so).

    Raises:
        GripperError: ``metadata.pose_frame`` is not ``object_path``.
    """
    if result.metadata is not None and result.metadata.pose_frame != object_path:
        raise GripperError(
            f"the grasps are in the frame of <{result.metadata.pose_frame}> "
            f"(metadata.pose_frame), not of the object <{object_path}>; use the object they "
            "were planned for"
        )


class FileFrames(NamedTuple):
    """A grasp file's frames for the gripper it is shown or evaluated with."""

    frames: PoseFrames | None
    """``None`` without a gripper: the poses are used as they are."""
    opening: float | None
    """The gripper site's max opening (metres), ``None`` without one or when unusable."""
    notes: tuple[str, ...]
    """What was assumed, one warning line each."""


def resolve_file_frames(
    result: GraspPlanningResult,
    object_path: str,
    gripper: GripperRef | None,
    gripper_frame: str | None = None,
    label: str = "grasps",
    stages: Any = None,
) -> FileFrames:
    """The frames of ``result``'s poses for ``gripper``, read from its asset (render, viewers).

    Without ``gripper`` the poses are used as they are, and a note says so when they are of
    another frame (the file names one) or of an unknown one (another tool's file).

    Args:
        result: the grasp file read.
        object_path: the object prim the poses are read against.
        gripper: the site whose grasp frame G the poses become, or ``None``.
        gripper_frame: the prim of the gripper asset the poses are of (``--gripper-frame``).
        label: what the notes are about (``grasps FILE``).
        stages: a :class:`~usdgrip.grasping.stage_source.StageSource` or a mapping of open
            stages by path.

    Raises:
        ValueError: ``gripper_frame`` without ``gripper``.
        GripperError: the gripper file, site or frame cannot be read.
    """
    from usdgrip.grasping.stage_source import StageSource
    from usdgrip.usd.sites import read_gripper_site
    from usdgrip.usd.stage import get_prim

    if gripper is None:
        if gripper_frame is not None:
            raise ValueError(
                f"--gripper-frame {gripper_frame}: give --gripper FILE:/SITE too (the asset "
                "the frame is a prim of, and the site whose grasp frame the poses become)"
            )
        named = find_gripper_frame_key(result)
        if named is not None:
            text = (
                f"poses are of the file's {named[0]} {named[1]!r}; drawn as grasp frames, not "
                "converted: pass --gripper FILE:/SITE to convert them"
            )
        elif describe_writer(result) != "usdgrip":
            text = (
                "the file names no gripper frame: its poses are drawn as grasp frames G (pass "
                "--gripper FILE:/SITE and --gripper-frame PRIM when they are of another prim)"
            )
        else:
            return FileFrames(None, None, ())
        return FileFrames(None, None, (f"{label}: {text}",))
    stage = StageSource(stages).open(gripper.asset_path)
    site = read_gripper_site(get_prim(stage, gripper.prim_path))
    if site.grasp_frame is None:
        raise GripperError(
            f"{gripper}: the site has no grasp frame (no usable forward axis: "
            "gripper_forward_axis with 2 distinct finite points)"
        )
    frames = resolve_pose_frames(
        result, site.path, site.grasp_frame, object_path, stage, gripper_frame, label
    )
    opening = site.max_opening
    usable = opening is not None and math.isfinite(opening) and opening > 0
    return FileFrames(
        frames, float(opening) if usable else None, tuple(n.render() for n in frames.notes)
    )
