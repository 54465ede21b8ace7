"""``usdgrip suggest slots|lines FILE --object PRIM --gripper FILE:/SITE``: proven annotations."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from usdgrip.cli._layer_output import LayerTarget
from usdgrip.cli.common import add_support_arguments

NAME = "suggest"
ORDER = 76
HELP = "suggest grasp slots or SimReady grasp lines that hold in physics, and author them"
DESCRIPTION = """Suggest GripperSlotAPI slots for an object from physics, and author them:

  usdgrip suggest slots examples/pan.usda --object /Pan \\
      --gripper examples/gripper.usda:/Gripper/tcp --layer pan.edits.usda

Plans --candidates grasps for the gripper on the object's surface (antipodal), simulates
each --trials times (grasp, lift, shake, as `usdgrip evaluate`), clusters the grasps that
held at least --min-success into regions, and proves each region's slot: its samples
(`usdgrip sample`'s) are simulated, and a slot whose samples hold less than --min-success
is not authored (the summary says why). At most --max-slots slots are authored, named by
where they are on the object (rim_px, ... across a thin wall at its edge; handle on a thin
part sticking out; middle; top, bottom, side_px, ...), each checked by the rules first
(GS.001-GS.009) and with its evidence in the object's customData
(usdgrip:suggestion:NAME: gripper, trials, samples, success rate, seed, usdgrip version).

--hands 2 --group NAME, for an object one hand cannot lift (the tote at --force 50):
one two-slot group (groupName NAME, LR left/right) on opposite sides of the centre of
mass, proven with both hands closing, lifting and shaking together on its joint samples
(as `usdgrip evaluate --targets`), authored only when they hold at least --min-success.
--table, or --scene FILE --support PRIM: what the object rests on, as for `usdgrip
plan`/`evaluate` (planning's obstacle and the physics' support, screening and proofs).

Where the slots go: --in-place, -o OUT or --layer EDITS.usda, as `usdgrip author`;
--dry-run prints the layer and writes nothing. Deterministic for a --seed.

`usdgrip suggest lines FILE --object PRIM --gripper FILE:/SITE ...` does the same for a
SimReady graspable prop: one grasp_identifier_NN line per region (p0 and p1 5 mm outside
the contacts), proven by `usdgrip evaluate --lines`, so `usdgrip validate` (GSP.001, GP.*)
and `usdgrip evaluate --lines` pass on the result.

Exit 0 slots (or lines) suggested and written, 1 nothing held (nothing written, the
reasons printed), 2 bad input."""


def _add_common(sub: argparse.ArgumentParser, what: str) -> None:
    from usdgrip.suggest import (
        DEFAULT_CANDIDATES,
        DEFAULT_MAX_SLOTS,
        DEFAULT_MIN_SUCCESS,
        DEFAULT_TRIALS,
    )

    sub.add_argument("file", help="USD file holding the object")
    sub.add_argument("--object", required=True, metavar="PRIM", help="object prim, e.g. /Pan")
    sub.add_argument("--gripper", required=True, metavar="FILE:/SITE", help="gripper site")
    sub.add_argument(
        f"--max-{what}",
        dest="max_count",
        type=int,
        default=DEFAULT_MAX_SLOTS,
        metavar="N",
        help=f"{what} authored at most (default {DEFAULT_MAX_SLOTS})",
    )
    sub.add_argument(
        "--min-success",
        type=float,
        default=DEFAULT_MIN_SUCCESS,
        metavar="P",
        help=f"held share a region and its proof need (default {DEFAULT_MIN_SUCCESS})",
    )
    sub.add_argument(
        "--trials",
        type=int,
        default=DEFAULT_TRIALS,
        metavar="N",
        help=f"trials per grasp (default {DEFAULT_TRIALS})",
    )
    sub.add_argument(
        "--candidates",
        type=int,
        default=DEFAULT_CANDIDATES,
        metavar="N",
        help=f"grasps planned and simulated (default {DEFAULT_CANDIDATES})",
    )
    sub.add_argument("--seed", type=int, default=0)
    add_support_arguments(
        sub, scene_help="USD file holding the --support prim (planning's obstacles too)"
    )
    sub.add_argument(
        "--force",
        type=float,
        metavar="N",
        help="grip force per finger, N (default: the site's gripper:maxGripForce, else 50)",
    )
    if what == "slots":
        sub.add_argument(
            "--hands",
            type=int,
            default=1,
            metavar="N",
            help="1: a slot per region (default); 2: one two-handed group (--group), "
            "proven with both hands closing together (evaluate --targets)",
        )
        sub.add_argument(
            "--group", metavar="NAME", help="the two-handed group's name (with --hands 2)"
        )
    target = sub.add_mutually_exclusive_group(required=True)
    target.add_argument("--in-place", action="store_true", help="rewrite FILE")
    target.add_argument("-o", "--output", help=f"write FILE with the {what} here (- for stdout)")
    target.add_argument("--layer", metavar="EDITS", help=f"write only the {what} into EDITS")
    sub.add_argument("--dry-run", action="store_true", help="print the layer; write nothing")
    sub.add_argument("--format", choices=("text", "json"), default="text")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    subparsers = parser.add_subparsers(
        dest="what", metavar="WHAT", required=True, parser_class=type(parser)
    )
    for what, help_text in (
        ("slots", "suggest GripperSlotAPI slots, proven on their samples"),
        ("lines", "suggest SimReady grasp vector lines, proven by evaluate --lines"),
    ):
        _add_common(subparsers.add_parser(what, help=help_text, description=help_text), what)


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
                "lr": s.lr,
                "group": s.group,
            }
            for s in getattr(found, "slots", ())
        ],
        "lines": [
            {"name": x.name, "p0": list(x.p0), "p1": list(x.p1), "proven_success": x.proven_success}
            for x in getattr(found, "lines", ())
        ],
        "left_out": [{"name": x.name, "reason": x.reason} for x in found.left_out],
        "advice": getattr(found, "advice", None),
    }


def _print_text(found: Any, stream: Any) -> None:
    seconds = ", ".join(f"{k} {v:.1f} s" for k, v in found.seconds.items())
    stream.write(
        f"{found.object}: {found.held} of {found.planned} planned grasps held ({seconds})\n"
    )
    for x in getattr(found, "lines", ()):
        stream.write(
            f"  line {x.name!r}: best grasp held {x.proven_success:.0%} of its trials; p0 "
            f"({', '.join(f'{v:.4g}' for v in x.p0)}), p1 ({', '.join(f'{v:.4g}' for v in x.p1)})\n"
        )
    for s in getattr(found, "slots", ()):
        hands = f" (group {s.group!r}, {s.lr}: both hands together)" if s.group else ""
        stream.write(
            f"  slot {s.name!r}{hands}: samples held {s.proven_success:.0%} of "
            f"{s.samples} x {s.evidence['trials']} trials; centre "
            f"({', '.join(f'{v:.4g}' for v in s.center)}), up range {s.up_range:.3f} m, "
            f"angle {s.slot_input_angle:.0f} deg\n"
        )
    for x in found.left_out:
        stream.write(f"  left out {x.name!r}: {x.reason}\n")


def run(args: argparse.Namespace) -> int:
    import usdgrip  # noqa: F401  (registers the schema before a stage opens)
    from usdgrip.cli import EXIT_FINDINGS, EXIT_OK
    from usdgrip.cli.plan import build_request
    from usdgrip.contracts import parse_gripper
    from usdgrip.fileio import display_path
    from usdgrip.grasping.options import OptionError
    from usdgrip.suggest import (
        SuggestOptions,
        author_line_suggestions,
        author_slot_suggestions,
        suggest_lines,
        suggest_slots,
    )

    try:
        options = SuggestOptions(
            max_slots=args.max_count, min_success=args.min_success, trials=args.trials,
            candidates=args.candidates, seed=args.seed, table=args.table, scene=args.scene,
            support=args.support, force=args.force, hands=getattr(args, "hands", 1),
            group=getattr(args, "group", None),
        )  # fmt: skip
    except OptionError as exc:  # worded with the flag typed (`suggest lines` has --max-lines)
        raise ValueError(exc.cli_message().replace("--max-slots", f"--max-{args.what}")) from None
    gripper = parse_gripper(args.gripper)
    # The request contract's checks (prim path, seed, candidate count), one line each, first.
    build_request(args.file, args.object, [gripper], args.candidates, args.seed)
    target = LayerTarget(args)  # refusals (read-only, usdz, -o FILE) before any work
    suggest, author = (
        (suggest_slots, author_slot_suggestions)
        if args.what == "slots"
        else (suggest_lines, author_line_suggestions)
    )
    found = suggest(args.file, args.object, gripper, options)
    made = found.slots if args.what == "slots" else found.lines
    kind = args.what[:-1] if options.hands == 1 else "two-handed group"
    report_to = sys.stderr if args.dry_run or args.output == "-" else sys.stdout
    if args.format == "json":
        report_to.write(json.dumps(_summary(found), indent=2) + "\n")
    else:
        _print_text(found, report_to)
    for note in found.notes:
        print(f"warning: {note}", file=sys.stderr)
    if not made:
        advice = getattr(found, "advice", None)
        print(
            f"usdgrip suggest: {display_path(args.file)}: <{args.object}>: no {kind} held; "
            f"nothing written{f'; {advice}' if advice else ''}",
            file=sys.stderr,
        )
        return EXIT_FINDINGS
    stage = target.stage
    root = stage.GetRootLayer()
    was_dirty = root.dirty
    try:
        author(stage, found, layer=root)
        layer, moved = target.layer_to_write()
        if args.dry_run:
            sys.stdout.write(layer.ExportToString())
            print(f"dry run: would write {display_path(target.path)}", file=sys.stderr)
            return EXIT_OK
        target.write(layer)
    finally:
        if not target.created and root.dirty and not was_dirty:
            root.Reload(force=True)
    target.print_moved(moved, report_to)
    names = ", ".join(repr(item.name) for item in made)
    what = f"{kind}(s) {names}" if options.hands == 1 else f"{kind} {options.group!r} ({names})"
    print(f"wrote {display_path(target.path)}: {what} on <{args.object}>", file=report_to)
    return EXIT_OK
