"""The gripper half of the input reader: site, the one rule for a bad gripper, pads, force, model.

See :mod:`usdgrip.grasping.inputs` (:func:`~usdgrip.grasping.inputs.read_grasp_inputs`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from usdgrip.contracts import GripperRef
from usdgrip.errors import GripperError
from usdgrip.grasping.gripper_defaults import (
    DEFAULT_GRIP_FORCE,
    DEFAULT_PAD_WIDTH,
    MAX_GRIP_FORCE,
)
from usdgrip.grasping.provenance import Note
from usdgrip.grasping.stage_source import StageSource
from usdgrip.site_limits import MAX_OPENING_M, get_max_opening_problem

#: Gripper collision models (see :func:`read_gripper_model`).
GRIPPER_MODELS = ("auto", "proxy", "geometry", "articulation")


@dataclass(frozen=True, eq=False)
class Gripper:
    """One gripper of the request, read once: its site, pads, force and collision model.

    A gripper that fails :func:`find_gripper_problem` keeps its ``site`` and ``notes`` and
    has ``skipped`` set (and no collision model); planner and physics leave it out.
    """

    ref: GripperRef
    site: Any
    """:class:`usdgrip.site_records.GripperSite`."""
    max_opening: float | None
    """Metres (finite, in (0, 2]) unless skipped."""
    pad_width: float
    """Grip pad width along Y, metres (:func:`compute_pad_width`)."""
    pad_width_defaulted: bool
    """True when the grip line gave no usable pad width and ``DEFAULT_PAD_WIDTH`` is used."""
    grip_force: float
    """Grip force per finger, N: ``gripper:maxGripForce`` (when finite, > 0 and at most
    :data:`~usdgrip.grasping.gripper_defaults.MAX_GRIP_FORCE`), else the default."""
    grip_force_source: str
    """``gripper:maxGripForce`` or ``default grip force``."""
    grip_force_problem: str | None
    """Why an authored ``gripper:maxGripForce`` is unusable, else ``None``."""
    collision_model: Any
    """:class:`~usdgrip.grasping.collision.GripperCollisionModel` (``None`` when skipped)."""
    notes: tuple[Note, ...]
    """Site warnings, rendered under ``gripper FILE:/Site: site``."""
    skipped: Note | None = None
    """Why the gripper is left out (``gripper FILE:/Site: skipped: ...``), else ``None``."""
    problem: str | None = None
    """:func:`find_gripper_problem`'s verdict (the words of ``skipped``), else ``None``."""
    articulation: Any = None
    """The site's :class:`~usdgrip.gripper_articulation.GripperArticulation` when it has
    driven finger joints with a pad each side, else ``None`` (read for every model: the
    planner writes its joint values; the physics simulates it unless the model is ``proxy``)."""
    articulation_absent: str | None = None
    """Why the articulation is not simulated (no finger joints...), else ``None``."""

    @property
    def label(self) -> str:
        """``gripper FILE:/Site``, the context of its warnings."""
        return f"gripper {self.ref}"

    @property
    def pad_note(self) -> Note | None:
        """The warning for a defaulted pad width, else ``None``."""
        if not self.pad_width_defaulted:
            return None
        line = self.site.grip_line
        length = line.length if line is not None else None
        return Note(
            "pad_width_default",
            str(self.ref),
            f"grip pad width {length!r} unusable; using {DEFAULT_PAD_WIDTH:g} m",
            (self.label,),
        )


def find_gripper_problem(site: Any) -> str | None:
    """Why a gripper site cannot be planned or simulated with, else ``None`` (the one rule).

    A site needs a usable forward axis (its grasp frame) and a max opening that is a
    finite value in ``(0, MAX_OPENING_M]`` metres.
    """
    if site.grasp_frame is None:
        return "the site has no usable forward axis"
    opening = site.max_opening
    if opening is None or not (math.isfinite(opening) and opening > 0):
        return f"max opening is {opening!r}; expected a finite value > 0 m"
    if opening > MAX_OPENING_M:  # an absurd opening gives an absurd model: checks never end
        return get_max_opening_problem(opening, site.max_opening_source or "gripper:maxOpening")
    return None


def get_grip_force_limit_problem(force: float) -> str:
    """The words for an authored ``gripper:maxGripForce`` above :data:`MAX_GRIP_FORCE`."""
    return (
        f"gripper:maxGripForce is {force:g} N; expected at most {MAX_GRIP_FORCE:g} N, the "
        "strongest plausible grip: a unit mistake?"
    )


def compute_pad_width(site: Any) -> tuple[float, bool]:
    """The pad width (metres) and whether it is the default (the one rule).

    The grip line's length when it is a finite value in ``(0, max opening)``, else
    :data:`DEFAULT_PAD_WIDTH` (a grip line as long as the opening is the older jaw-span
    meaning, not a pad).
    """
    pad = site.grip_line.length if site.grip_line is not None else None
    opening = site.max_opening
    usable = pad is not None and opening is not None and math.isfinite(pad) and 0 < pad < opening
    return (float(pad), False) if usable else (DEFAULT_PAD_WIDTH, True)


def read_gripper(gripper: GripperRef, stages: StageSource | None = None) -> Any:
    """Read the gripper asset's site (a :class:`~usdgrip.site_records.GripperSite`).

    Raises:
        GripperError: unreadable file, missing prim, or the prim is not a gripper
            site (the message lists the sites the file has).
    """
    from usdgrip.usd.discovery import compute_site_markers, iter_site_prims
    from usdgrip.usd.sites import read_gripper_site
    from usdgrip.usd.stage import get_prim

    stage = (stages or StageSource()).open(gripper.asset_path)
    prim = get_prim(stage, gripper.prim_path)
    markers = compute_site_markers(prim)
    if not markers:
        sites = ", ".join(f"<{p.GetPath()}>" for p, _ in iter_site_prims(stage)) or "none"
        raise GripperError(
            f"{gripper.asset_path}: <{gripper.prim_path}> is not a gripper site (no "
            f"GripperSiteAPI, socketType, maxOpening or axis curves); sites in this file: {sites}"
        )
    return read_gripper_site(prim, markers)


def read_gripper_model(
    gripper: GripperRef,
    site: Any,
    mode: str = "auto",
    stages: StageSource | None = None,
    *,
    pad_width: float | None = None,
) -> Any:
    """The gripper's collision model (:class:`usdgrip.grasping.collision.GripperCollisionModel`).

    The gripper geometry is everything under the site's top-level ancestor
    (``/Gripper`` for ``/Gripper/tcp``); a prim whose name contains ``finger``
    is a finger.

    - ``auto``: the gripper's *collision* prims (``UsdPhysics.CollisionAPI``
      applied) when it has any, else the proxy. Render meshes are not used:
      they are often detailed (slow in the retreat check's distance queries)
      and may not be what the physics engine collides.
    - ``proxy``: :meth:`GripperCollisionModel.proxy` (a palm and two finger
      boxes from the max opening and ``pad_width``).
    - ``geometry``: every Mesh/Cube/Sphere/Cylinder/Capsule/Cone under the root,
      collision prims or not (falls back to the proxy when there is none).

    Raises:
        ValueError: an unknown ``mode``.
    """
    from usdgrip.grasping.collision import GripperCollisionModel
    from usdgrip.usd.geometry import read_collision_shapes
    from usdgrip.usd.stage import get_prim

    if mode not in GRIPPER_MODELS:
        raise ValueError(f"gripper model {mode!r}; expected one of {', '.join(GRIPPER_MODELS)}")
    if mode == "proxy":
        return GripperCollisionModel.from_site(site, pad_width=pad_width)
    if mode == "articulation":  # the planner's shapes are auto's; the physics simulates joints
        mode = "auto"
    stage = (stages or StageSource()).open(gripper.asset_path)
    root = get_prim(stage, "/" + gripper.prim_path.strip("/").split("/")[0])
    if mode == "auto":
        prefix = str(root.GetPath()) + "/"
        marked = any(
            "PhysicsCollisionAPI" in prim.GetAppliedSchemas()
            for prim in stage.Traverse()
            if str(prim.GetPath()).startswith(prefix) or prim == root
        )
        if not marked:
            return GripperCollisionModel.from_site(site, pad_width=pad_width)
    try:
        shapes = read_collision_shapes(root)
    except GripperError as exc:  # the shape readers name the prim; say which file too
        raise GripperError(f"{gripper.asset_path}: {exc}") from None
    return GripperCollisionModel.from_site(site, shapes or None, pad_width=pad_width)


def read_gripper_inputs(
    ref: GripperRef, *, gripper_model: str = "auto", stages: StageSource | None = None
) -> Gripper:
    """Read one gripper: its site, the one rule's verdict, pads, force, collision model.

    Raises:
        GripperError: unreadable file, missing prim, a prim that is not a site.
        ValueError: an unknown ``gripper_model``.
    """
    site = read_gripper(ref, stages)
    label = f"gripper {ref}"
    notes = tuple(Note("site", str(ref), text, (label, "site")) for text in site.warnings)
    problem = find_gripper_problem(site)
    pad, defaulted = compute_pad_width(site)
    force, force_from = site.max_grip_force, "gripper:maxGripForce"
    force_problem = site.problems.get("gripper:maxGripForce")
    if force is not None and force > MAX_GRIP_FORCE:  # finite and > 0 (the site reader's rule)
        force_problem, force = get_grip_force_limit_problem(force), None
    if force is None:
        force, force_from = DEFAULT_GRIP_FORCE, "default grip force"
    common = {
        "ref": ref,
        "site": site,
        "pad_width": pad,
        "pad_width_defaulted": defaulted,
        "grip_force": float(force),
        "grip_force_source": force_from,
        "grip_force_problem": force_problem,
        "notes": notes,
    }
    if problem is not None:
        skipped = Note("gripper_skipped", str(ref), f"skipped: {problem}", (label,))
        return Gripper(
            max_opening=None, collision_model=None, skipped=skipped, problem=problem, **common
        )
    model = read_gripper_model(ref, site, gripper_model, stages, pad_width=pad)
    # Read for every model: the planner writes its joint values (the physics simulates it
    # only when the model is not ``proxy``).
    articulation, absent = read_simulated_articulation(ref, stages)
    if gripper_model == "articulation" and articulation is None:
        raise GripperError(
            f"{ref.asset_path}: <{ref.prim_path}>: --gripper-model articulation: {absent}; "
            "use --gripper-model auto or proxy"
        )
    return Gripper(
        max_opening=float(site.max_opening),
        collision_model=model,
        articulation=articulation,
        articulation_absent=absent,
        **common,
    )


def read_simulated_articulation(
    ref: GripperRef, stages: StageSource | None = None
) -> tuple[Any, str | None]:
    """The site's articulation when it can be simulated, else ``None`` and why not.

    Simulated: driven finger joints (an opening report) and a pad link on each side.
    """
    from usdgrip.usd.articulation import read_gripper_articulation
    from usdgrip.usd.stage import get_prim

    stage = (stages or StageSource()).open(ref.asset_path)
    record = read_gripper_articulation(get_prim(stage, ref.prim_path), is_site=True)
    report = record.opening
    if record.status == "none" or report is None or not report.driven:
        return None, "the gripper has no driven finger joints"
    sides = {chain.side for chain in report.fingers if chain.pad is not None}
    if sides != {-1, 1}:
        return None, "the finger joints move no pad on one side of the grip"
    bare = [
        record.links[chain.pad].path
        for chain in report.fingers
        if chain.pad is not None and not record.links[chain.pad].pieces
    ]
    if bare:
        return None, f"the pad link <{bare[0]}> has no collider (PhysicsCollisionAPI)"
    return record, None
