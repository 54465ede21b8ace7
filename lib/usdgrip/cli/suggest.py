"""``usdgrip suggest slots FILE --object PRIM --gripper FILE:/SITE``: physics-proven slots."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from usdgrip.cli._layer_output import LayerTarget

NAME = "suggest"
ORDER = 76
HELP = "suggest grasp slots that hold in physics, and author them"
DESCRIPTION = """Suggest GripperSlotAPI slots for an object from physics, and author them:

  usdgrip suggest slots examples/pan.usda --object /Pan \\
      --gripper examples/gripper.usda:/Gripper/tcp --layer pan.edits.usda

Plans --candidates grasps for the gripper on the object's surface (antipodal), simulates
each --trials times (grasp, lift, shake, as `usdgrip evaluate`), clusters the grasps that
held at least --min-success into regions, and proves each region's slot: its samples
(`usdgrip sample`'s) are simulated, and a slot whose samples hold less than --min-success
is not authored (the summary says why). At most --max-slots slots are authored, named by
the side of the object they are on (top, bottom, side_px, ...), each checked by the rules
first (GS.001-GS.009) and with its evidence in the object's customData
(usdgrip:suggestion:NAME: gripper, trials, samples, success rate, seed, usdgrip version).

Where the slots go: --in-place, -o OUT or --layer EDITS.usda, as `usdgrip author`;
--dry-run prints the layer and writes nothing. Deterministic for a --seed.

Exit 0 slots suggested (and written), 1 nothing held (nothing written, the reasons
printed), 2 bad input."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from usdgrip.suggest import (
        DEFAULT_CANDIDATES,
        DEFAULT_MAX_SLOTS,
        DEFAULT_MIN_SUCCESS,
        DEFAULT_TRIALS,
    )

    subparsers = parser.add_subparsers(
        dest="what", metavar="WHAT", required=True, parser_class=type(parser)
    )
    slots = subparsers.add_parser(
        "slots", help="suggest GripperSlotAPI slots", description="suggest slots"
    )
    slots.add_argument("file", help="USD file holding the object")
    slots.add_argument("--object", required=True, metavar="PRIM", help="object prim, e.g. /Pan")
    slots.add_argument("--gripper", required=True, metavar="FILE:/SITE", help="gripper site")
    slots.add_argument("--max-slots", type=int, default=DEFAULT_MAX_SLOTS, metavar="N")
    slots.add_argument(
        "--min-success",
        type=float,
        default=DEFAULT_MIN_SUCCESS,
        metavar="P",
        help=f"held share a region and its samples need (default {DEFAULT_MIN_SUCCESS})",
    )
    slots.add_argument(
        "--trials", type=int, default=DEFAULT_TRIALS, metavar="N", help="trials per grasp"
    )
    slots.add_argument(
        "--candidates",
        type=int,
        default=DEFAULT_CANDIDATES,
        metavar="N",
        help=f"grasps planned and simulated (default {DEFAULT_CANDIDATES})",
    )
    slots.add_argument("--seed", type=int, default=0)
    slots.add_argument("--table", action="store_true", help="the object rests on a table")
    target = slots.add_mutually_exclusive_group(required=True)
    target.add_argument("--in-place", action="store_true", help="rewrite FILE")
    target.add_argument("-o", "--output", help="write FILE with the slots here (- for stdout)")
    target.add_argument("--layer", metavar="EDITS", help="write only the slots into EDITS")
    slots.add_argument("--dry-run", action="store_true", help="print the layer; write nothing")
    slots.add_argument("--format", choices=("text", "json"), default="text")


def _summary(found: Any) -> dict[str, Any]:
    return {
        "object": found.object,
        "gripper": found.gripper,
        "planned": found.planned,
        "held": found.held,
        "seconds": {k: round(v, 3) for k, v in found.seconds.items()},
        "slots": [
            {
                "name": s.name,
                "center": list(s.center),
                "forward": list(s.forward),
                "span_axis": list(s.span_axis),
                "up_range_m": s.up_range,
                "slot_input_angle_deg": s.slot_input_angle,
                "proven_success": s.proven_success,
                "samples": s.samples,
            }
            for s in found.slots
        ],
        "left_out": [{"name": x.name, "reason": x.reason} for x in found.left_out],
    }


def _print_text(found: Any, stream: Any) -> None:
    seconds = ", ".join(f"{k} {v:.1f} s" for k, v in found.seconds.items())
    stream.write(
        f"{found.object}: {found.held} of {found.planned} planned grasps held ({seconds})\n"
    )
    for s in found.slots:
        stream.write(
            f"  slot {s.name!r}: samples held {s.proven_success:.0%} of "
            f"{s.samples} x {s.evidence['trials']} trials; centre "
            f"({', '.join(f'{v:.4g}' for v in s.center)}), up range {s.up_range:.3f} m, "
            f"angle {s.slot_input_angle:.0f} deg\n"
        )
    for x in found.left_out:
        stream.write(f"  left out {x.name!r}: {x.reason}\n")


def run(args: argparse.Namespace) -> int:
    import usdgrip  # noqa: F401  (registers the schema before a stage opens)
    from usdgrip.cli import EXIT_FINDINGS, EXIT_OK, print_notes
    from usdgrip.contracts import parse_gripper
    from usdgrip.fileio import display_path
    from usdgrip.suggest import SuggestOptions, author_slot_suggestions, suggest_slots
    from usdgrip.usd.layer_files import export_layer

    options = SuggestOptions(
        max_slots=args.max_slots, min_success=args.min_success, trials=args.trials,
        candidates=args.candidates, seed=args.seed, table=args.table,
    )  # fmt: skip
    gripper = parse_gripper(args.gripper)
    target = LayerTarget(args)  # refusals (read-only, usdz, -o FILE) before any work
    found = suggest_slots(args.file, args.object, gripper, options)
    report_to = sys.stderr if args.dry_run or args.output == "-" else sys.stdout
    if args.format == "json":
        report_to.write(json.dumps(_summary(found), indent=2) + "\n")
    else:
        _print_text(found, report_to)
    for note in found.notes:
        print(f"warning: {note}", file=sys.stderr)
    if not found.slots:
        print(
            f"usdgrip suggest: {display_path(args.file)}: <{args.object}>: no slot held; "
            "nothing written",
            file=sys.stderr,
        )
        return EXIT_FINDINGS
    stage = target.stage
    root = stage.GetRootLayer()
    was_dirty = root.dirty
    try:
        author_slot_suggestions(stage, found, layer=root)
        layer, moved = target.layer_to_write()
        if args.dry_run:
            sys.stdout.write(layer.ExportToString())
            print(f"dry run: would write {display_path(target.path)}", file=sys.stderr)
            return EXIT_OK
        notes = export_layer(
            layer, target.path, unchanged=target.snapshot, comments=target.comments
        )
        print_notes(target.path, notes)
    finally:
        if not target.created and root.dirty and not was_dirty:
            root.Reload(force=True)
    for line in moved:
        print(
            f"moved:   {line} (relative asset path re-anchored to the output's folder)",
            file=report_to,
        )
    names = ", ".join(repr(s.name) for s in found.slots)
    print(f"wrote {display_path(target.path)}: slot(s) {names} on <{args.object}>", file=report_to)
    return EXIT_OK
