"""``usdgrip author slot|site|line FILE ...``: add, edit or remove what the schema describes."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from usdgrip.cli._layer_output import LayerTarget

NAME = "author"
ORDER = 75
HELP = "add, edit or remove a grasp slot, a gripper site or a grasp line (values checked first)"
DESCRIPTION = """Author one grasp slot (GripperSlotAPI), gripper site (GripperSiteAPI) or SimReady
grasp vector line in FILE, through the schema:

  usdgrip author slot FILE --prim /Tote --name left_edge --center=-0.195,0,0.12 \\
      --forward 0,0,-1 --span=-1,0,0 --up-range 0.2 --angle 30 --lr left --group carry \\
      --layer tote.edits.usda
  usdgrip author site FILE --prim /Gripper/tcp --define --max-opening 0.085 \\
      --forward 0,0,1 --grip-line 0,1,0 --pad-width 0.02 --payload 5 --grip-force 235 --in-place
  usdgrip author line FILE --prim /Block --name grasp_identifier_03 \\
      --p0=-0.04,0,0.02 --p1 0.04,0,0.02 -o block.lines.usda

An existing slot, site or line gets only the values given; --remove removes a slot
(its instance and properties, nothing else), a site (GripperSiteAPI, its gripper:*
attributes and its two curves; the prim stays) or a line. Every value is checked before
anything is written, by the rules themselves on what FILE would be: a slot by GS.001-
GS.009, a site by GR.001-GR.012, a line by GSP.001 and GP.001-GP.003. A failure (and a
payload, grip force or line the rules warn about) refuses the edit: exit 2, the option
and the rule named, nothing written; other warnings are printed.

Where the edits go (one of): --in-place rewrites FILE; -o OUT writes FILE with the
edits to OUT (as `usdgrip migrate -o`: relative asset paths re-anchored, -o - is
standard output); --layer EDITS.usda writes only the new opinions into EDITS, a layer
that sublayers FILE (created with FILE's stage metadata, or extended if it already
sublayers FILE), leaving FILE untouched: open EDITS to see FILE with the edits.
--dry-run prints the layer that would be written and writes nothing. Writes are atomic;
a read-only file, and one that changed while the command ran, are refused; the comment
block after `#usda 1.0` is kept, other comments are dropped with a warning.

Units: points (--center, --p0, --p1) in stage units; --up-range, --max-opening and
--pad-width in metres; --angle degrees; --payload kg; --grip-force N. Values are in the
prim's frame; --frame world takes them in the stage's world space (stage units) and
converts them (docs/authoring.md). A value starting with '-' may be written --center=-1,0,0.

Exit 0 written (or --dry-run), 2 refused or bad input (nothing written)."""

#: Edit field -> the option that gives it (named in messages).
OPTIONS = {
    "prim": "--prim",
    "name": "--name",
    "center": "--center",
    "forward": "--forward",
    "span_axis": "--span",
    "up_range": "--up-range",
    "slot_input_angle": "--angle",
    "lr": "--lr",
    "group": "--group",
    "max_opening": "--max-opening",
    "max_payload": "--payload",
    "max_grip_force": "--grip-force",
    "grip_line": "--grip-line",
    "pad_width": "--pad-width",
    "forward_length": "--forward",
    "p0": "--p0",
    "p1": "--p1",
}
#: A negative number or vector as an option's value (argparse takes "-1,0,0" for an option).
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def _vector(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected X,Y,Z (three numbers separated by commas, e.g. 0,0,-1)"
        )
    return values  # type: ignore[return-value]


def _subparser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help_text, description=help_text)
    parser._negative_number_matcher = _NEGATIVE_VALUE
    parser.add_argument("file", help="USD file to author in")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--in-place", action="store_true", help="rewrite FILE")
    target.add_argument("-o", "--output", help="write FILE with the edits here (- for stdout)")
    target.add_argument(
        "--layer", metavar="EDITS", help="write only the edits into EDITS, which sublayers FILE"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the layer that would be written; write nothing",
    )
    parser.add_argument(
        "--frame",
        choices=("object", "world"),
        default="object",
        help="frame of the values given: the prim's (default) or the stage's world space",
    )
    parser.add_argument("--prim", required=True, help=_PRIM_HELP[name])
    return parser


_PRIM_HELP = {
    "slot": "the object prim the slot belongs to, e.g. /Tote",
    "site": "the gripper site prim, e.g. /Gripper/tcp",
    "line": "the prim the line is a child of (the prop or a prim under the default prim)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    subparsers = parser.add_subparsers(
        dest="what", metavar="WHAT", required=True, parser_class=type(parser)
    )
    slot = _subparser(subparsers, "slot", "add, edit or remove a GripperSlotAPI instance")
    slot.add_argument("--name", required=True, help="instance name, e.g. left_edge")
    slot.add_argument("--center", type=_vector, metavar="X,Y,Z", help="slot centre (stage units)")
    slot.add_argument("--forward", type=_vector, metavar="X,Y,Z", help="insertion direction")
    slot.add_argument("--span", type=_vector, metavar="X,Y,Z", help="closing direction")
    slot.add_argument("--up-range", type=float, metavar="M", help="total range along Up (m)")
    slot.add_argument("--angle", type=float, metavar="DEG", help="slot input angle (degrees)")
    slot.add_argument("--lr", choices=("left", "right"), help="which hand")
    slot.add_argument("--group", metavar="NAME", help='group name ("" for none)')
    slot.add_argument("--remove", action="store_true", help="remove the instance")
    site = _subparser(subparsers, "site", "apply GripperSiteAPI and author a gripper site")
    site.add_argument("--define", action="store_true", help="define the prim as an Xform")
    site.add_argument("--max-opening", type=float, metavar="M", help="max opening (m)")
    site.add_argument("--forward", type=_vector, metavar="X,Y,Z", help="approach direction")
    site.add_argument("--grip-line", type=_vector, metavar="X,Y,Z", help="grip line direction")
    site.add_argument("--pad-width", type=float, metavar="M", help="grip line length (m)")
    site.add_argument("--payload", type=float, metavar="KG", help="max payload (kg)")
    site.add_argument("--grip-force", type=float, metavar="N", help="max grip force (N)")
    site.add_argument(
        "--remove", action="store_true", help="remove GripperSiteAPI, gripper:* and the curves"
    )
    line = _subparser(subparsers, "line", "add, edit or remove a SimReady grasp vector line")
    line.add_argument("--name", required=True, help="line name, e.g. grasp_identifier_03")
    line.add_argument("--p0", type=_vector, metavar="X,Y,Z", help="where the first pad starts")
    line.add_argument("--p1", type=_vector, metavar="X,Y,Z", help="where the second pad starts")
    line.add_argument("--remove", action="store_true", help="remove the line")


def _check_text(args: argparse.Namespace) -> None:
    """Refuse option text that is not UTF-8 (USD names and strings are UTF-8)."""
    from usdgrip.fileio import display_path

    for option in ("prim", "name", "group"):
        value = getattr(args, option, None)
        if isinstance(value, str) and display_path(value) != value:
            raise ValueError(
                f"--{option} '{display_path(value)}': not valid UTF-8 (bytes shown as \\x "
                "escapes); USD names and strings are UTF-8"
            )


def _edit_from(args: argparse.Namespace, meters_per_unit: float) -> Any:
    from usdgrip.authoring import LineEdit, SiteEdit, SlotEdit
    from usdgrip.authoring.edit_records import FORWARD_LENGTH_M

    if args.what == "slot":
        values = {
            "center": args.center,
            "forward": args.forward,
            "span_axis": args.span,
            "up_range": args.up_range,
            "slot_input_angle": args.angle,
            "lr": args.lr,
            "group": args.group,
        }
        given = [OPTIONS[k] for k, v in values.items() if v is not None]
        if args.remove and given:
            raise ValueError(f"--remove takes no values (given: {', '.join(given)})")
        return SlotEdit(args.prim, args.name, remove=args.remove, **values)
    if args.what == "line":
        if args.remove and (args.p0 is not None or args.p1 is not None):
            raise ValueError("--remove takes no points")
        return LineEdit(args.prim, args.name, args.p0, args.p1, remove=args.remove)
    if args.remove:
        values = ("max_opening", "payload", "grip_force", "forward", "grip_line", "pad_width")
        given = [f"--{v.replace('_', '-')}" for v in values if getattr(args, v) is not None]
        if given or args.define:
            raise ValueError(
                f"--remove takes no values (given: {', '.join(given or ['--define'])})"
            )
        return SiteEdit(args.prim, remove=True)
    if (args.grip_line is None) != (args.pad_width is None):
        raise ValueError("--grip-line and --pad-width go together (the direction and its length)")
    pad = args.pad_width / meters_per_unit if args.pad_width is not None else 0.0
    return SiteEdit(
        args.prim,
        define=args.define,
        max_opening=args.max_opening,
        max_payload=args.payload,
        max_grip_force=args.grip_force,
        forward=args.forward,
        grip_line=args.grip_line,
        forward_length=FORWARD_LENGTH_M / meters_per_unit,
        pad_width=pad,
    )


def _check_new_slot(stage: Any, edit: Any) -> None:
    """A new slot needs its geometry: --center, --forward, --span and --up-range."""
    from usdgrip.usd.slots import list_slot_instances

    prim = stage.GetPrimAtPath(edit.prim) if isinstance(edit.prim, str) else None
    if edit.remove or not prim or edit.name in list_slot_instances(prim):
        return
    missing = [
        OPTIONS[f]
        for f in ("center", "forward", "span_axis", "up_range")
        if getattr(edit, f) is None
    ]
    if missing:
        raise ValueError(
            f"<{edit.prim}> has no slot {edit.name!r} yet: a new slot needs {', '.join(missing)} "
            "(the schema's fallbacks are no place on an object); --angle, --lr and --group "
            "default to 0, left and none"
        )


def _summary(edit: Any, existing: bool) -> str:
    from usdgrip.authoring import LineEdit, SlotEdit

    removed = getattr(edit, "remove", False)
    state = "removed" if removed else ("changed" if existing else "added")
    if isinstance(edit, SlotEdit):
        return f"{state} slot {edit.name!r} on <{edit.prim}>"
    if isinstance(edit, LineEdit):
        return f"{state} grasp line <{edit.path}>"
    return f"{state} gripper site <{edit.prim}>"


def run(args: argparse.Namespace) -> int:
    import usdgrip  # noqa: F401  (registers the schema before a stage opens)
    from usdgrip.authoring import AuthoringError, author_edit
    from usdgrip.authoring.plans import plan_edit
    from usdgrip.authoring.world_frame import convert_edit_from_world
    from usdgrip.fileio import display_path, is_standard_output
    from usdgrip.usd.stage import get_meters_per_unit

    _check_text(args)
    target = LayerTarget(args)
    stage = target.stage
    edit = _edit_from(args, get_meters_per_unit(stage))
    if args.what == "slot":
        _check_new_slot(stage, edit)
    if args.frame == "world":
        edit = convert_edit_from_world(stage, edit)
    existing = plan_edit(stage, edit).existing
    root = stage.GetRootLayer()
    was_dirty = root.dirty
    shown = display_path(args.file)
    try:
        try:
            verdict = author_edit(stage, edit, layer=root)
        except AuthoringError as exc:
            lines = [exc.verdict.describe(item, OPTIONS) for item in exc.verdict.refused]
            raise ValueError(
                f"{shown}: {edit.label}: " + "; ".join(lines) + "; nothing was written"
            ) from None
        layer, moved = target.layer_to_write()
        written = target.path
        report_to = sys.stderr if (args.dry_run or is_standard_output(written)) else sys.stdout
        for item in verdict.items:
            print(f"warning: {shown}: {verdict.describe(item, OPTIONS)}", file=sys.stderr)
        if args.dry_run:
            sys.stdout.write(layer.ExportToString())
            print(
                f"dry run: would write {display_path(written)}: {_summary(edit, existing)}",
                file=sys.stderr,
            )
            return 0
        target.write(layer)
    finally:
        # USD shares a layer within a process: whoever else holds FILE (usdview, Kit, a
        # library caller) sees the file again, not the edit.
        if not target.created and root.dirty and not was_dirty:
            root.Reload(force=True)
    target.print_moved(moved, report_to)
    created = " (new edits layer: open it to see FILE with the edits)" if target.created else ""
    print(f"wrote {display_path(written)}: {_summary(edit, existing)}{created}", file=report_to)
    return 0
