"""``usdgrip info FILE``: the gripper sites and grasp slots usdgrip finds, as a table or JSON."""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from usdgrip.grasp_line_geometry import GraspLine
from usdgrip.gripper_articulation import ArticulationJoint, GripperArticulation
from usdgrip.sampling import check_slot
from usdgrip.site_records import GripperSite, GripperSlot
from usdgrip.usd.names import MAX_GRIP_FORCE_ATTRS

NAME = "info"
ORDER = 10
HELP = "list the gripper sites, grasp slots and grasp vector lines in a USD file"
DESCRIPTION = """List every gripper site (with its max opening, axes, max payload, max grip
force and grasp frame; for a gripper with finger joints its articulation: fingers, joints
with type, axis, limits, drive and mimic coupling, the pad gap at each limit and which
limit opens), every grasp slot (in world space) and every SimReady grasp vector line
(grasp_identifier*: its object, both points in world metres, its length) that usdgrip
finds in FILE. --json prints the same data for scripts as strict JSON: a number
that is not finite (NaN, infinity) is null. A slot that cannot be sampled shows why
("unusable: ..."; `problems` in JSON). Exit 0 when the file was read, 2 when it cannot
be (missing, not USD, corrupt), a slot record is malformed, or a value usdgrip reads has
the wrong type or only time samples."""


def _vector(v) -> list[float] | None:
    return None if v is None else [round(float(c), 9) + 0.0 for c in v]


def compute_strict_json(value):
    """``value`` with every non-finite float replaced by ``None`` (JSON has no NaN/Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: compute_strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [compute_strict_json(v) for v in value]
    return value


def compute_site_json(site: GripperSite) -> dict:
    """JSON-ready dictionary of a site (world space, unit directions)."""

    def curve(info):
        if info is None:
            return None
        out = {"child": info.child, "direction": _vector(info.direction)}
        if info is site.grip_line:
            out["length"] = round(info.length, 9)
        return out

    return {
        "path": site.path,
        "max_opening": site.max_opening,
        "max_opening_source": site.max_opening_source,
        "max_payload": site.max_payload,
        "max_grip_force": site.max_grip_force,
        "forward_axis": curve(site.forward_axis),
        "grip_line": curve(site.grip_line),
        "grasp_frame": None
        if site.grasp_frame is None
        else [_vector(row) for row in site.grasp_frame],
        "markers": list(site.markers),
        "warnings": list(site.warnings),
    }


def _joint_json(joint: ArticulationJoint, articulation: GripperArticulation) -> dict:
    links = articulation.links
    drive = joint.drive
    mimic = joint.mimic
    return {
        "path": joint.path,
        "name": joint.name,
        "type": joint.kind,
        "axis": joint.axis_name if joint.kind in ("prismatic", "revolute") else None,
        "body0": None if joint.body0 is None else links[joint.body0].path,
        "body1": None if joint.body1 is None else links[joint.body1].path,
        "unit": joint.unit or None,
        "lower": joint.lower,
        "upper": joint.upper,
        "authored_limits": list(joint.authored_limits),
        "rest_position": joint.rest_position,
        "exclude_from_articulation": joint.exclude_from_articulation,
        "drive": None
        if drive is None
        else {
            "source": drive.source,
            "type": drive.drive_type,
            "stiffness": drive.stiffness,
            "damping": drive.damping,
            "max_force": drive.max_force,
            "target_position": drive.target_position,
        },
        "mimic": None
        if mimic is None
        else {
            "source": mimic.source,
            "leader": articulation.joints[mimic.leader].path,
            "coef0": mimic.coef0,
            "coef1": mimic.coef1,
            "higher": list(mimic.higher),
            "authored": dict(mimic.authored),
            "enabled": mimic.enabled,
        },
    }


def shows_articulation(articulation: GripperArticulation | None) -> bool:
    """Whether ``info`` lists the articulation (finger joints, or notes about them)."""
    return articulation is not None and (articulation.status != "none" or bool(articulation.notes))


def compute_articulation_json(articulation: GripperArticulation) -> dict:
    """JSON-ready dictionary of a site's articulation (SI units: metres, radians, N, N m)."""
    links = articulation.links
    report = articulation.opening
    opening = None
    if report is not None:
        opening = {
            "closing_axis": _vector(report.closing_axis),
            "at_lower": report.opening_at_lower,
            "at_upper": report.opening_at_upper,
            "open_side": report.open_side,
            "open_limits": {
                articulation.joints[i].path: limit
                for i, limit in zip(report.driven, report.open_limits, strict=False)
            },
            "open": report.opening_open,
            "closed": report.opening_closed,
            "open_positions": dict(report.open_positions),
            "closed_positions": dict(report.closed_positions),
            "fingers": [
                {
                    "links": [links[i].path for i in finger.links],
                    "pad": None if finger.pad is None else links[finger.pad].path,
                    "side": finger.side,
                    "has_colliders": finger.has_colliders,
                }
                for finger in report.fingers
            ],
        }
    return {
        "status": articulation.status,
        "root": articulation.root_path,
        "articulation_root": articulation.articulation_root,
        "rigid_body_ancestor": articulation.rigid_body_ancestor,
        "palm": None if articulation.palm is None else links[articulation.palm].path,
        "links": [
            {"path": link.path, "mass": link.mass, "colliders": list(link.collider_paths)}
            for link in links
        ],
        "joints": [_joint_json(joint, articulation) for joint in articulation.joints],
        "opening": opening,
        "notes": [
            {"code": note.code, "subject": note.subject, "text": note.text}
            for note in articulation.notes
        ],
    }


def _limit_text(joint: ArticulationJoint) -> str:
    if joint.kind == "revolute":
        values = [None if v is None else math.degrees(v) for v in (joint.lower, joint.upper)]
        unit = "deg"
    else:
        values, unit = [joint.lower, joint.upper], "m"
    shown = ["-" if v is None else f"{v:.4g}" for v in values]
    return f"limits {shown[0]} to {shown[1]} {unit}"


def _joint_text(joint: ArticulationJoint, articulation: GripperArticulation) -> str:
    head = f"{joint.name} {joint.kind}"
    if joint.kind not in ("prismatic", "revolute"):
        bodies = [
            "world" if b is None else articulation.links[b].name for b in (joint.body0, joint.body1)
        ]
        loop = " (loop, excluded from the articulation)" if joint.exclude_from_articulation else ""
        return f"{head} {bodies[0]} - {bodies[1]}{loop}"
    parts = [f"{head} {joint.axis_name}", _limit_text(joint)]
    per = "N m/rad" if joint.kind == "revolute" else "N/m"
    force = "N m" if joint.kind == "revolute" else "N"
    if joint.mimic is not None:
        mimic = joint.mimic
        offset = (math.degrees(mimic.coef0) if joint.kind == "revolute" else mimic.coef0) + 0.0
        unit = "deg" if joint.kind == "revolute" else "m"
        leader = articulation.joints[mimic.leader].name
        parts.append(f"mimic {mimic.coef1:g} x {leader} {offset:+.4g} {unit} ({mimic.source})")
    elif joint.drive is not None:
        drive = joint.drive
        if drive.stiffness is None and drive.damping is None:
            parts.append(f"drive {drive.source}")
        else:
            limit = "unlimited" if drive.max_force is None else f"{drive.max_force:.4g} {force}"
            parts.append(
                f"drive stiffness {drive.stiffness:.4g} {per}, damping {drive.damping:.4g}, "
                f"max force {limit}"
            )
    else:
        parts.append("passive")
    return ", ".join(parts)


def format_articulation(articulation: GripperArticulation) -> list[str]:
    """The table lines of a site's articulation (empty when it has no finger joints)."""
    if not shows_articulation(articulation):
        return []
    links = articulation.links
    palm = "-" if articulation.palm is None else f"<{links[articulation.palm].path}>"
    declared = f", declared by <{articulation.articulation_root}>" if articulation.declared else ""
    lines = [f"    articulation {articulation.status}: palm {palm}{declared}"]
    report = articulation.opening
    if report is not None:
        for finger in report.fingers:
            pad = "no collider" if finger.pad is None else f"pad <{links[finger.pad].path}>"
            names = ", ".join(links[i].name for i in finger.links)
            side = {-1: "-X", 1: "+X", 0: "on the centre"}[finger.side]
            lines.append(f"    finger     {names} ({pad}, {side})")
    for joint in articulation.joints:
        lines.append(f"    joint      {_joint_text(joint, articulation)}")
    if report is not None and report.opening_open is not None:
        lower, upper = (
            "-" if v is None else f"{v:.4g} m"
            for v in (report.opening_at_lower, report.opening_at_upper)
        )
        lines.append(
            f"    opening    {lower} at the lower limit(s), {upper} at the upper: "
            f"open = {report.open_side}"
        )
    lines.extend(f"    note: {note.code}: {note.text}" for note in articulation.notes)
    return lines


def compute_slot_json(slot: GripperSlot) -> dict:
    """JSON-ready dictionary of a slot in world space, with what makes it unusable (if any)."""
    return {
        "prim": slot.prim,
        "name": slot.name,
        "source": slot.source,
        "center": _vector(slot.center),
        "forward": _vector(slot.forward),
        "span_axis": _vector(slot.span_axis),
        "up_axis": _vector(slot.up_axis),
        "up_range": round(slot.up_range, 9),
        "slot_input_angle": slot.slot_input_angle,
        "lr": slot.lr_token,
        "group": slot.group,
        "problems": [problem.message for problem in check_slot(slot)],
    }


def compute_grasp_line_json(line: GraspLine) -> dict:
    """JSON-ready dictionary of a grasp vector line: world points (metres) and its object."""
    return {
        "path": line.path,
        "name": line.name,
        "object": line.object_path,
        "object_source": line.object_source,
        "layout": line.layout,
        "points": [_vector(p) for p in line.points_world],
        "points_object": [_vector(p) for p in line.points_object],
        "length": round(line.length, 9),
        "type": line.curve_type,
        "problems": [f"{name}: {problem}" for name, problem in sorted(line.problems.items())],
    }


def _fmt(v) -> str:
    if v is None:
        return "-"
    return "(" + ", ".join(f"{c + 0.0:.3g}" for c in np.asarray(v)) + ")"  # + 0.0: no "-0"


def format_table(
    path: str,
    sites: list[GripperSite],
    slots: list[GripperSlot],
    grasp_lines: list[GraspLine] = (),
    articulations: list[GripperArticulation | None] = (),
) -> str:
    """Human-readable summary of sites (with their articulations), slots and grasp lines."""
    head = f"{path}: {len(sites)} gripper site(s), {len(slots)} grasp slot(s)"
    if grasp_lines:
        head += f", {len(grasp_lines)} grasp line(s)"
    lines = [head]
    articulations = list(articulations) or [None] * len(sites)
    for site, articulation in zip(sites, articulations, strict=True):
        opening = "missing" if site.max_opening is None else f"{site.max_opening:g} m"
        lines.append(
            f"  site <{site.path}>  max opening {opening} ({site.max_opening_source or '-'})"
        )
        for label, curve in (("forward", site.forward_axis), ("grip line", site.grip_line)):
            if curve is None:
                lines.append(f"    {label:<10} missing")
            else:
                lines.append(
                    f"    {label:<10} {_fmt(curve.direction)} from {curve.child}, "
                    f"length {curve.length:.4g} m"
                )
        for label, value, unit, source in (
            ("payload", site.max_payload, "kg", site.max_payload_source),
            ("grip force", site.max_grip_force, "N", MAX_GRIP_FORCE_ATTRS[0]),
        ):
            shown = "not authored" if value is None else f"{value:g} {unit} ({source})"
            lines.append(f"    {label:<10} {shown}")
        if site.grasp_frame is not None:
            lines.append(
                f"    grasp G    origin {_fmt(site.grasp_frame[:3, 3])} "
                f"X {_fmt(site.grasp_frame[:3, 0])} Z {_fmt(site.grasp_frame[:3, 2])}"
            )
        lines.extend(f"    warning: {w}" for w in site.warnings)
        if articulation is not None:
            lines.extend(format_articulation(articulation))
    for slot in slots:
        group = slot.group or "(ungrouped)"
        lines.append(
            f"  slot <{slot.prim}> {slot.name!r} [{slot.source}] group {group}, {slot.lr_token}"
        )
        problems = check_slot(slot)
        if problems:  # its world values would be NaN or infinite: say why instead
            lines.extend(f"    unusable: {problem.message}" for problem in problems)
            continue
        lines.append(
            f"    center {_fmt(slot.center)} forward {_fmt(slot.forward)} "
            f"span {_fmt(slot.span_axis)} up {_fmt(slot.up_axis)}"
        )
        lines.append(
            f"    up range {slot.up_range:.4g} m, input angle {slot.slot_input_angle:g} deg"
        )
    for line in grasp_lines:
        layout = "" if line.layout == "curve" else f" [{line.layout} layout]"
        lines.append(f"  grasp line <{line.path}>{layout} object <{line.object_path}>")
        if line.point_count < 2:
            lines.append(f"    unusable: {line.point_count} point(s); expected 2")
        else:
            extra = f" (+{line.point_count - 2} unused)" if line.point_count > 2 else ""
            lines.append(
                f"    p0 {_fmt(line.points_world[0])} p1 {_fmt(line.points_world[1])}{extra}, "
                f"length {line.length:.4g} m"
            )
        lines.extend(f"    problem: {name}: {text}" for name, text in sorted(line.problems.items()))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="USD file (.usd, .usda, .usdc, .usdz)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import open_input, reading
    from usdgrip.usd.articulation import read_gripper_articulation
    from usdgrip.usd.grasp_lines import find_grasp_lines
    from usdgrip.usd.sites import find_gripper_sites
    from usdgrip.usd.slots import iter_slot_prims, read_gripper_slots

    stage = open_input(args.file)
    with reading(args.file):
        sites = find_gripper_sites(stage)
        slots = [slot for prim in iter_slot_prims(stage) for slot in read_gripper_slots(prim)]
        grasp_lines = find_grasp_lines(stage)
        scope_cache: dict = {}
        articulations = [
            read_gripper_articulation(
                stage.GetPrimAtPath(site.path),
                grasp_frame=site.grasp_frame,
                scope_cache=scope_cache,
            )
            for site in sites
        ]
    if args.json:
        site_data = []
        for site, articulation in zip(sites, articulations, strict=True):
            entry = compute_site_json(site)
            if shows_articulation(articulation):
                entry["articulation"] = compute_articulation_json(articulation)
            site_data.append(entry)
        data = {
            "sites": site_data,
            "slots": [compute_slot_json(s) for s in slots],
            "grasp_lines": [compute_grasp_line_json(g) for g in grasp_lines],
        }
        json.dump(compute_strict_json(data), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print(format_table(args.file, sites, slots, grasp_lines, articulations))
    return 0
