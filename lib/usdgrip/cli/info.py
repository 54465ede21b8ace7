"""``usdgrip info FILE``: the gripper sites and grasp slots usdgrip finds, as a table or JSON."""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from usdgrip.grasp_line_geometry import GraspLine
from usdgrip.sampling import check_slot
from usdgrip.site_records import GripperSite, GripperSlot
from usdgrip.usd.names import MAX_GRIP_FORCE_ATTRS

NAME = "info"
ORDER = 10
HELP = "list the gripper sites, grasp slots and grasp vector lines in a USD file"
DESCRIPTION = """List every gripper site (with its max opening, axes, max payload, max grip
force and grasp frame), every grasp slot (in world space) and every SimReady grasp vector
line (grasp_identifier*: its object, both points in world metres, its length) that
usdgrip finds in FILE. --json prints the same data for scripts as strict JSON: a number
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
) -> str:
    """Human-readable summary of sites, slots and grasp vector lines."""
    head = f"{path}: {len(sites)} gripper site(s), {len(slots)} grasp slot(s)"
    if grasp_lines:
        head += f", {len(grasp_lines)} grasp line(s)"
    lines = [head]
    for site in sites:
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
    from usdgrip.usd.grasp_lines import find_grasp_lines
    from usdgrip.usd.sites import find_gripper_sites
    from usdgrip.usd.slots import iter_slot_prims, read_gripper_slots

    stage = open_input(args.file)
    with reading(args.file):
        sites = find_gripper_sites(stage)
        slots = [slot for prim in iter_slot_prims(stage) for slot in read_gripper_slots(prim)]
        grasp_lines = find_grasp_lines(stage)
    if args.json:
        data = {
            "sites": [compute_site_json(s) for s in sites],
            "slots": [compute_slot_json(s) for s in slots],
            "grasp_lines": [compute_grasp_line_json(g) for g in grasp_lines],
        }
        json.dump(compute_strict_json(data), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print(format_table(args.file, sites, slots, grasp_lines))
    return 0
