"""What each Grippers menu entry does, without a viewer: one function per job, no Qt.

The usdview commands (:mod:`usdgrip.hosts.usdview.usdview_commands`, its session and dialogs)
and the Kit extension (:mod:`usdgrip.hosts.kit`) both call these, so a menu
entry does the same thing in both hosts. Each function takes the stage (and
the prim paths a host selected); reading inputs, running the library call and
authoring overlays are separate functions so a host can run the middle one off
its UI thread:

- :func:`find_slot_prims` / :func:`show_slot_overlays` (Show Slots, with the grasp vector
  lines of :func:`show_grasp_line_overlays`);
- :func:`read_sampling_input` → :func:`sample_grasp_set` (Sample Slot Grasps);
- :func:`build_plan_request` → :func:`plan_grasp_set` (Plan Grasps);
- :func:`evaluate_grasp_set` (the candidates panel's Evaluate: measured success rates);
- :func:`load_grasp_set` (Load Grasps…: an Isaac-Grasp file of any writer);
- :func:`author_grasp_set_overlays` (draws either result);
- :func:`export_grasp_set` (Export Grasps);
- :func:`list_removables` (Remove…: the site, slots and grasp lines of a prim).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pxr import Sdf, Usd

from usdgrip.errors import GripperError
from usdgrip.views import overlays
from usdgrip.views.glyphs import DEFAULT_OPEN_WIDTH
from usdgrip.views.grasp_set import (
    GraspSet,
    compute_grasp_set_from_plan,
    compute_grasp_set_from_samples,
)

#: Status line when Evaluate has no planned grasps to evaluate.
NOTHING_TO_EVALUATE = (
    "usdgrip: nothing to evaluate; run Grippers > Plan Grasps… first "
    "(only planned candidates are evaluated)."
)
#: Status line when Export Grasps has no planned grasps to write.
NOTHING_TO_EXPORT = (
    "usdgrip: nothing to export; run Grippers > Plan Grasps… first "
    "(sampled slot targets are exported by `usdgrip sample --format json`)."
)


def find_slot_prims(stage: Usd.Stage, roots: Sequence[str] = ()) -> list[str]:
    """Paths of the prims with grasp slots at or under ``roots`` (the whole stage when empty)."""
    from usdgrip.usd.slots import iter_slot_prims

    prefixes = [Sdf.Path(p) for p in roots] or [Sdf.Path.absoluteRootPath]
    return [
        str(prim.GetPath())
        for prim in iter_slot_prims(stage)
        if any(prim.GetPath().HasPrefix(prefix) for prefix in prefixes)
    ]


class SlotOverlays(NamedTuple):
    """What :func:`show_slot_overlays` drew."""

    slot_count: int
    """Slots drawn."""
    prim_paths: list[str]
    """The prims asked for (kept, so a host can redraw them on a replaced stage)."""
    problems: list[str]
    """Why prims or slots were skipped, one line each."""
    grasp_lines: GraspLineOverlays | None = None
    """The grasp vector lines drawn with the slots (``None``: not asked for)."""
    drawn_prim_count: int = 0
    """Prims with at least one slot drawn."""

    @property
    def status(self) -> str:
        """The one-line summary a host shows (``N slot(s) shown on M prim(s)``, grasp lines)."""
        note = f"; {len(self.problems)} skipped: {self.problems[0]}" if self.problems else ""
        lines = self.grasp_lines
        also = f", {lines.line_count} grasp line(s)" if lines and lines.line_count else ""
        if lines and lines.problem:
            note += f"; grasp lines not shown: {lines.problem}"
        shown = self.drawn_prim_count
        return f"usdgrip: {self.slot_count} slot(s) shown on {shown} prim(s){also}{note}"


class GraspLineOverlays(NamedTuple):
    """What :func:`show_grasp_line_overlays` drew."""

    line_count: int
    """Grasp vector lines drawn (lines without two distinct points are not)."""
    roots: list[str]
    """The roots asked for (kept, so a host can redraw them on a replaced stage)."""
    problem: str | None = None
    """Why no line could be read (e.g. metersPerUnit = 0), else ``None``."""


def show_grasp_line_overlays(stage: Usd.Stage, roots: Sequence[str] = ()) -> GraspLineOverlays:
    """Draw the grasp vector lines at or under ``roots``, or whose object is (all when empty).

    Raises:
        ValueError: the stage has no session layer.
    """
    from usdgrip.usd.grasp_lines import find_grasp_lines

    prefixes = [Sdf.Path(p) for p in roots] or [Sdf.Path.absoluteRootPath]
    try:
        found = find_grasp_lines(stage)
    except GripperError as exc:  # the lines cannot be placed: say so instead of drawing
        overlays.author_grasp_line_overlays(stage, [])
        return GraspLineOverlays(0, list(roots), str(exc))
    lines = [
        line
        for line in found
        if any(
            Sdf.Path(line.path).HasPrefix(prefix) or Sdf.Path(line.object_path).HasPrefix(prefix)
            for prefix in prefixes
        )
    ]
    drawn = overlays.author_grasp_line_overlays(stage, lines)
    return GraspLineOverlays(len(drawn), list(roots))


def show_slot_overlays(
    stage: Usd.Stage, prim_paths: Sequence[str], grasp_line_roots: Sequence[str] | None = None
) -> SlotOverlays:
    """Draw the slots of ``prim_paths`` in the session layer, replacing earlier slot overlays.

    A prim whose slots cannot be read (a value of the wrong type, say) and a
    slot whose frame cannot be drawn (forward parallel to spanAxis, GS.001) are
    skipped and named in :attr:`SlotOverlays.problems`; the others are drawn. A
    path with no prim is ignored. With ``grasp_line_roots`` (the host's selection;
    empty: the whole stage) the grasp vector lines there are drawn too
    (:func:`show_grasp_line_overlays`).

    Raises:
        ValueError: the stage has no session layer.
    """
    from usdgrip.usd.slots import read_gripper_slots
    from usdgrip.views.glyphs import compute_slot_shape

    slots = []
    problems: list[str] = []
    for path in prim_paths:
        prim = stage.GetPrimAtPath(path)
        if not prim:
            continue
        try:
            read = read_gripper_slots(prim)
        except GripperError as exc:
            problems.append(str(exc))
            continue
        for slot in read:
            try:
                compute_slot_shape(slot)
            except ValueError as exc:
                problems.append(str(exc))
            else:
                slots.append(slot)
    overlays.author_slot_overlays(stage, slots)
    lines = None
    if grasp_line_roots is not None:
        lines = show_grasp_line_overlays(stage, grasp_line_roots)
    drawn = len({slot.prim for slot in slots})
    return SlotOverlays(len(slots), list(prim_paths), problems, lines, drawn)


def author_grasp_set_overlays(stage: Usd.Stage, grasps: GraspSet) -> list[str]:
    """Draw ``grasps`` at their object's current world transform; [] when the object is gone.

    Evaluated sets (``success_rates``) are coloured by measured success, others by confidence.
    """
    from usdgrip.usd.stage import compute_world_transform

    prim = stage.GetPrimAtPath(grasps.object_path)
    if not prim:
        return []
    world = grasps.compute_world_poses(compute_world_transform(prim))
    return overlays.author_grasp_overlays(
        stage,
        world,
        grasps.confidences,
        grasps.open_width,
        labels=grasps.labels,
        success_rates=grasps.success_rates,
    )


# --- authoring ---------------------------------------------------------------------


def list_removables(stage: Usd.Stage, prim_path: str) -> list[tuple[str, Any]]:
    """What Remove… offers on a prim: ``(label, edit)`` for its site, slots and grasp lines.

    The site: the prim's gripper site (``GripperSiteAPI``, or the prim whose curve
    ``gripper_forward_axis``/``gripper_grip_line`` is selected); slots are the prim's
    ``GripperSlotAPI`` instances; grasp lines are its ``grasp_identifier*`` children (or
    the prim itself when it is one).
    """
    from usdgrip.authoring import LineEdit, SiteEdit, SlotEdit
    from usdgrip.grasp_line_geometry import GRASP_LINE_PREFIX
    from usdgrip.usd.names import FORWARD_AXIS_NAMES, GRIP_LINE_NAMES, SITE_API
    from usdgrip.usd.slots import list_slot_instances

    prim = stage.GetPrimAtPath(prim_path)
    if not prim:
        return []
    site = prim
    if prim.GetName() in (FORWARD_AXIS_NAMES[0], GRIP_LINE_NAMES[0]):
        site = prim.GetParent()
    found: list[tuple[str, Any]] = []
    if site.HasAPI(SITE_API):
        found.append((f"gripper site {site.GetPath()}", SiteEdit(str(site.GetPath()), remove=True)))
    found += [
        (f"slot {name}", SlotEdit(prim_path, name, remove=True))
        for name in list_slot_instances(prim)
    ]
    lines = [prim] if prim.GetName().startswith(GRASP_LINE_PREFIX) else []
    lines += [c for c in prim.GetChildren() if c.GetName().startswith(GRASP_LINE_PREFIX)]
    for line in lines:
        parent = str(line.GetPath().GetParentPath())
        found.append(
            (f"grasp line {line.GetName()}", LineEdit(parent, line.GetName(), remove=True))
        )
    return found


# --- sampling ---------------------------------------------------------------------


class SamplingInput(NamedTuple):
    """Everything :func:`sample_grasp_set` needs, read from the stage on the UI thread."""

    object_path: str
    slots: list[Any]
    """:class:`~usdgrip.site_records.GripperSlot` world snapshots."""
    object_to_world: Any
    """(4, 4) the object's world transform when it was read, metres."""


def read_sampling_input(stage: Usd.Stage, object_path: str) -> SamplingInput:
    """Read the slots and world transform of ``object_path``.

    Raises:
        ValueError: no object chosen, or it has no grasp slots.
        GripperError: no such prim, or its slots cannot be read.
    """
    from usdgrip.usd.slots import read_gripper_slots
    from usdgrip.usd.stage import compute_world_transform, get_prim

    if not object_path:
        raise ValueError("Choose an object with grasp slots first.")
    prim = get_prim(stage, object_path)
    slots = read_gripper_slots(prim)
    if not slots:
        raise ValueError(f"<{object_path}> has no grasp slots.")
    return SamplingInput(object_path, slots, compute_world_transform(prim))


def sample_grasp_set(
    sampling: SamplingInput, count: int, seed: int, open_width: float = DEFAULT_OPEN_WIDTH
) -> GraspSet:
    """Sample ``count`` candidates, one end-effector per slot; no USD access (thread-safe)."""
    from usdgrip.sampling import sample_gripper_groups

    ee_ids = tuple(range(len(sampling.slots)))
    samples = sample_gripper_groups(sampling.slots, ee_ids=ee_ids, count=count, seed=seed)
    return compute_grasp_set_from_samples(
        samples, sampling.object_path, sampling.object_to_world, open_width
    )


def find_default_open_width(stage: Usd.Stage) -> float | None:
    """The max opening of the stage's first gripper site with a usable one, else ``None``."""
    from usdgrip.usd.sites import find_gripper_sites

    openings = [s.max_opening for s in find_gripper_sites(stage, strict=False)]
    usable = [o for o in openings if o is not None and math.isfinite(o) and o > 0]
    return float(usable[0]) if usable else None


# --- planning ---------------------------------------------------------------------


def build_plan_request(
    stage: Usd.Stage,
    object_path: str,
    gripper_asset: str,
    site_path: str,
    max_candidates: int,
    seed: int,
) -> Any:
    """The :class:`~usdgrip.contracts.GraspPlanningRequest` for one object of ``stage``.

    Args:
        stage: the open stage; the planner reads its root layer from disk.
        object_path: prim to grasp.
        gripper_asset: file holding the gripper site ("" means this stage's file).
        site_path: the gripper site prim in that file.
        max_candidates: candidates kept.
        seed: planner seed.

    Raises:
        ValueError: no object or site chosen, or the stage is not saved to a file.
    """
    from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef

    if not object_path:
        raise ValueError("Choose the object to grasp first.")
    if not site_path:
        raise ValueError("Choose a gripper asset with a gripper site first.")
    asset = stage.GetRootLayer().realPath
    if not asset:
        raise ValueError("The stage is not saved to a file; the planner reads assets from disk.")
    return GraspPlanningRequest(
        object=GraspObject(geometry=GeometryRef(asset_path=asset, prim_path=object_path)),
        grippers=(GripperRef(asset_path=gripper_asset or asset, prim_path=site_path),),
        max_candidates_per_gripper=max_candidates,
        seed=seed,
    )


def plan_grasp_set(
    request: Any,
    methods: Sequence[str] | None = None,
    progress: Callable[[str, float], None] | None = None,
    stages: dict[str, Any] | None = None,
) -> GraspSet:
    """Run :func:`usdgrip.plan_grasps` on ``request``; reads files only (thread-safe).

    Args:
        request: from :func:`build_plan_request`.
        methods: backends to run; ``None`` runs every backend that applies.
        progress: ``(message, fraction)`` callback; raising in it stops the planner.
        stages: stages the caller already opened, by asset path (not the viewer's own
            stage, which the UI thread may change while this runs).
    """
    import usdgrip

    result = usdgrip.plan_grasps(request, methods=methods, progress=progress, stages=stages)
    return compute_grasp_set_from_plan(result, request.object.geometry.prim_path)


def evaluate_grasp_set(
    grasps: GraspSet,
    object_file: str | Path,
    *,
    options: Any = None,
    rank: bool = False,
    progress: Callable[[str, float], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    stages: dict[str, Any] | None = None,
    **keywords: Any,
) -> GraspSet:
    """Grasp-and-lift a planned set in MuJoCo (:func:`usdgrip.evaluate_grasps`); reads files only.

    The order and labels stay as shown (overlays keep their rows) unless ``rank=True``
    is passed on (usdview's Evaluate does: best measured success first, then confidence,
    as ``usdgrip plan --evaluate``); the returned set carries ``success_rates`` and
    ``outcomes``, and its ``result`` the ``physics`` of every candidate.

    Args:
        grasps: a planned set (``source == "plan"``).
        object_file: the USD file holding ``grasps.object_path``.
        options: the :class:`~usdgrip.grasping.options.EvaluationOptions` (the dialog
            builds them once); ``None``: made from ``keywords``, with ``table=True`` (the
            object rests on a plane under its lowest point, the usual case) unless given.
        rank: order by measured success, then confidence.
        progress: ``(message, fraction)`` callback.
        cancel: polled between candidates; True raises ``EvaluationCancelled``.
        stages: stages the caller already opened, by asset path.
        **keywords: :class:`~usdgrip.grasping.options.EvaluationOptions` fields (trials,
            force, friction, jobs...) when ``options`` is not given.

    Raises:
        ValueError: ``grasps`` is not a plan, or a bad option.
        TypeError: ``options`` with keywords.
    """
    from usdgrip.contracts import GeometryRef
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps
    from usdgrip.grasping.options import EvaluationOptions

    if grasps is None or grasps.source != "plan":
        raise ValueError("usdgrip: only planned grasps can be evaluated; run Plan Grasps… first")
    if options is None:
        options = EvaluationOptions(**{"table": True, **keywords})
    elif keywords:
        raise TypeError(
            f"evaluate_grasp_set: pass options or the keywords {', '.join(sorted(keywords))}, "
            "not both"
        )
    geometry = GeometryRef(asset_path=str(object_file), prim_path=grasps.object_path)
    result = evaluate_grasps(
        grasps.result,
        geometry,
        grasps.gripper,
        options=options,
        rank=rank,
        progress=progress,
        cancel=cancel,
        stages=stages,
        gripper_frame=grasps.gripper_frame,
    )
    return compute_grasp_set_from_plan(
        result,
        grasps.object_path,
        grasps.open_width,
        grasps.frames,
        gripper=grasps.gripper,
        gripper_frame=grasps.gripper_frame,
        notes=grasps.notes,
    )


def describe_evaluation(grasps: GraspSet) -> str:
    """One line on an evaluated set: candidates held in every trial, mean success, outcomes.

    Raises:
        ValueError: ``grasps`` has no measured success rates.
    """
    if grasps.success_rates is None or grasps.outcomes is None:
        raise ValueError("the grasp set is not evaluated (no success rates)")
    count = len(grasps)
    measured = grasps.success_rates[np.isfinite(grasps.success_rates)]
    held = int((measured >= 1.0).sum())
    mean = float(measured.mean()) if len(measured) else 0.0
    tally: dict[str, int] = {}
    for outcome in grasps.outcomes:
        if outcome:  # "": not evaluated (a loaded file evaluated in part)
            tally[outcome] = tally.get(outcome, 0) + 1
    counts = ", ".join(f"{name} {n}" for name, n in sorted(tally.items(), key=lambda t: -t[1]))
    return f"{held} of {count} candidate(s) held in every trial, mean success {mean:.0%}" + (
        f" (first trials: {counts})" if counts else ""
    )


# --- load -------------------------------------------------------------------------


def load_grasp_set(
    stage: Usd.Stage,
    source: Any,
    object_path: str = "",
    gripper: Any = None,
    gripper_frame: str | None = None,
    name: str | None = None,
) -> GraspSet:
    """An Isaac-Grasp file of any writer as a listed set (Load Grasps…), on ``stage``.

    ``source`` is the file (read here) or its ``GraspPlanningResult`` (a host reads the
    file off its UI thread, then calls this on it); ``name`` names it in messages.

    The grasps are relative to the file's ``metadata.pose_frame`` prim (usdgrip's files),
    else to ``object_path``, else to the stage's default prim. Another writer's poses of a
    gripper frame are converted to ``gripper``'s grasp frame (the file's ``gripper_frame``
    / ``gripper_frame_link``, or ``gripper_frame``); without ``gripper`` they are shown as
    they are. What was assumed is in the set's ``notes``. The set can be evaluated and
    exported like a plan (the file's keys kept).

    Raises:
        GripperError: unreadable file, a pose frame not on the stage, no object, a gripper
            frame not found.
        ValueError: ``gripper_frame`` without ``gripper``.
    """
    from usdgrip.grasping.isaac_yaml import read_isaac_grasp
    from usdgrip.grasping.pose_frames import resolve_file_frames

    if isinstance(source, str | Path):
        path, result = name or str(source), read_isaac_grasp(source)
    else:
        path, result = name or "the grasps", source
    pose_frame = result.metadata.pose_frame if result.metadata is not None else ""
    if pose_frame:
        if not (Sdf.Path.IsValidPathString(pose_frame) and stage.GetPrimAtPath(pose_frame)):
            raise GripperError(
                f"{path}: the grasps are relative to {pose_frame!r} (metadata.pose_frame), "
                "which is not on this stage; open the stage they were planned on"
            )
        object_path = pose_frame
    if not object_path:
        default = stage.GetDefaultPrim()
        object_path = str(default.GetPath()) if default else ""
    if not object_path or not stage.GetPrimAtPath(object_path):
        raise GripperError(
            f"{path}: the grasps name no object and {object_path or 'the stage'!r} has no "
            "default prim; select the object the grasps are for"
        )
    entries = [c.gripper for c in result.grasps.values() if c.gripper is not None]
    if gripper is None and entries and result.gripper_frame is not None:
        gripper = entries[0]  # usdgrip's own file naming a gripper frame: its gripper
    found = resolve_file_frames(result, object_path, gripper, gripper_frame, f"grasps {path}")
    return compute_grasp_set_from_plan(
        result,
        object_path,
        found.opening or DEFAULT_OPEN_WIDTH,
        found.frames,
        gripper=gripper,
        gripper_frame=gripper_frame,
        notes=found.notes,
    )


# --- export -----------------------------------------------------------------------


def export_grasp_set(grasps: GraspSet | None, path: str | Path) -> Path:
    """Write planned ``grasps`` as Isaac-Grasp YAML (atomically).

    Raises:
        ValueError: ``grasps`` is ``None`` or sampled (only plans are exported);
            the message is :data:`NOTHING_TO_EXPORT`.
        OSError: the file cannot be written.
    """
    from usdgrip.grasping.isaac_yaml import write_isaac_grasp

    if grasps is None or grasps.source != "plan":
        raise ValueError(NOTHING_TO_EXPORT)
    return Path(write_isaac_grasp(grasps.result, path))
