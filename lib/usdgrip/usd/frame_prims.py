"""Find the prim a grasp file names as its gripper frame, in the gripper asset.

Another tool names the frame its poses are of in its own stage: Isaac Sim's Grasp Editor
writes the prim path it was picked at (``/Robotiq_2F_85/base_link``, the asset referenced
under ``/Robotiq_2F_85``), GraspDataGen a prim name (``base_link``). The same prim in the
gripper asset may sit under another root, so a path that is not on the stage is matched
by its trailing segments (the longest suffix that names exactly one prim).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from pxr import Sdf, Usd

from usdgrip.errors import GripperError
from usdgrip.usd.stage import compute_world_transform, get_stage_name

#: Prims visited at most when matching a name or a path's suffix (a gripper asset has
#: tens to a few thousand); past it the search stops and says so.
MAX_FRAME_SEARCH_PRIMS = 200_000


class FramePrim(NamedTuple):
    """The prim found for a frame name, how, and its world transform."""

    path: str
    how: str
    """``path`` (the exact path), ``suffix`` (its trailing segments) or ``name``."""
    world: object
    """(4, 4) local-to-world, metres."""


def find_frame_prim(stage: Usd.Stage, frame: str, said_by: str) -> FramePrim:
    """The one prim of ``stage`` that ``frame`` (a prim path or a prim name) names.

    A path on the stage is used as it is; else the longest run of its trailing segments
    that ends exactly one prim's path; a bare name matches the prims of that name.

    Args:
        stage: the gripper asset.
        frame: the frame as the file (or the user) wrote it.
        said_by: who named it, for messages (``the file's gripper_frame``, ``--gripper-frame``).

    Raises:
        GripperError: no prim, or several, match (naming up to three; the message says to
            pass ``--gripper-frame PRIM``), or its world transform is not finite.
    """
    found = _match_frame_prim(stage, frame, said_by)
    if not np.isfinite(found.world).all():
        raise GripperError(
            f"{get_stage_name(stage)}: {said_by} {frame!r}: the world transform of "
            f"<{found.path}> is not finite (an xformOp of it or of an ancestor holds inf or "
            "NaN); expected a usable transform to convert the poses with"
        )
    return found


def _match_frame_prim(stage: Usd.Stage, frame: str, said_by: str) -> FramePrim:
    name = get_stage_name(stage)
    text = frame.strip()
    segments = [s for s in text.split("/") if s]
    if not segments or not all(Sdf.Path.IsValidIdentifier(s) for s in segments):
        raise GripperError(
            f"{said_by} {frame!r} is not a prim path or prim name; expected e.g. "
            "/Robotiq_2F_85/base_link or base_link"
        )
    if text.startswith("/"):
        prim = stage.GetPrimAtPath(text)
        if prim:
            return FramePrim(text, "path", compute_world_transform(prim))
    matches: dict[int, list[str]] = {k: [] for k in range(1, len(segments) + 1)}
    for visited, prim in enumerate(stage.TraverseAll(), start=1):
        if visited > MAX_FRAME_SEARCH_PRIMS:
            raise GripperError(
                f"{name}: {said_by} {frame!r} is not a prim path of it, and the asset has more "
                f"than {MAX_FRAME_SEARCH_PRIMS:,} prims to search; pass --gripper-frame with "
                "the prim's path"
            )
        parts = prim.GetPath().pathString.split("/")[1:]
        depth = 0
        while (
            depth < len(segments)
            and depth < len(parts)
            and parts[-1 - depth] == segments[-1 - depth]
        ):
            depth += 1
        if depth:
            matches[depth].append(prim.GetPath().pathString)
    for depth in range(len(segments), 0, -1):
        found = matches[depth]
        if len(found) == 1:
            how = "name" if len(segments) == 1 else "suffix"
            return FramePrim(found[0], how, compute_world_transform(stage.GetPrimAtPath(found[0])))
        if len(found) > 1:
            shown = ", ".join(f"<{p}>" for p in found[:3]) + (
                f" and {len(found) - 3} more" if len(found) > 3 else ""
            )
            raise GripperError(
                f"{name}: {said_by} {frame!r} matches {len(found)} prims ({shown}); pass "
                "--gripper-frame with the path of the prim the poses are of"
            )
    raise GripperError(
        f"{name}: {said_by} {frame!r} is no prim of the gripper asset (no prim path ends "
        f"with /{segments[-1]}); pass --gripper-frame PRIM: the prim of this asset the poses "
        "are of (the gripper site itself when they are of its grasp frame)"
    )
