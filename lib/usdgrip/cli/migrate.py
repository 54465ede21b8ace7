"""``usdgrip migrate FILE``: convert legacy gripper authoring to the usdGrip schema."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "migrate"
ORDER = 80
HELP = "convert legacy attributes, unprefixed curves and LambdaSim records to the schema"
DESCRIPTION = """Convert legacy gripper authoring in FILE's root layer to the usdGrip schema:
apply GripperSiteAPI, move gripper_maxOpening/custom:maxOpening/gripper_maxPayload to
gripper:*, rename forward_axis/grip_line to gripper_*, turn LambdaSim gripper_slots
records into GripperSlotAPI instances; with --lines-to-slots, also author one
GripperSlotAPI instance per SimReady grasp vector line (grasp_identifier*) on its object
(centre between the surfaces the line lands on, span axis along the line, forward
straight down, 1 cm up range, 90 degrees of approach tilt; see docs/graspable-props.md).
Nothing authored is lost: what cannot be converted losslessly is kept and listed.

By default the result goes to a new file (FILE.migrated.usda beside it, or -o PATH,
which may not be FILE itself nor a layer file it reads; in another folder, relative
asset paths are re-anchored so they still resolve, listed as moved:); --in-place
rewrites FILE (atomically; a symbolic link stays a link and its target is rewritten;
the mode, owner and group are kept; a read-only file is refused, and so is a FILE that
changed while it was migrated). -o - writes the layer (usda) to standard output and
the report to standard error; -o may also be a named pipe or a device, written in place.
USD keeps no comments: the comment block right after `#usda 1.0` (a licence header)
is carried into the result, other comments are dropped with a warning.
A .usdz package cannot be written: migrate the package's source layer, or write the
result with -o OUT.usda. The changed:, left: and moved: lines are printed after the
write, so a failed write reports no change.

Exit 0 when written or nothing to convert (left: lines do not change it), 2 on unusable
input or output (nothing is written: read-only, changed underneath, disk full)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="USD file to migrate")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("-o", "--output", help="write the migrated layer here")
    target.add_argument("--in-place", action="store_true", help="rewrite FILE itself")
    parser.add_argument(
        "--lines-to-slots",
        action="store_true",
        help="also author a GripperSlotAPI instance per grasp vector line (grasp_identifier*)",
    )


def _target_path(args: argparse.Namespace) -> Path:
    """Where the migrated layer goes (FILE.migrated.usda by default)."""
    from usdgrip.cli._layer_output import resolve_layer_output

    source = Path(args.file)
    output = args.output
    if not args.in_place and not output:
        output = source.with_name(f"{source.stem}.migrated{source.suffix}")
    return resolve_layer_output(source, output, args.in_place, verb="migrate", suffix="migrated")


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import open_input, print_notes, take_snapshot
    from usdgrip.fileio import (
        display_path,
        find_usda_comments,
        is_standard_output,
        is_streamed,
    )
    from usdgrip.migration import compute_layer_for, migrate_stage
    from usdgrip.usd.layer_files import export_layer

    target = _target_path(args)
    written = str(args.output) if args.output else target
    report_to = sys.stderr if is_standard_output(written) else sys.stdout
    # --in-place rewrites the root layer on purpose, only if it is still what was read.
    snapshot = take_snapshot(args.file) if args.in_place else None
    stage = open_input(args.file, None if args.in_place else target)
    comments = find_usda_comments(args.file)
    root = stage.GetRootLayer()
    was_dirty = root.dirty
    moved: list[str] = []
    try:
        report = (
            migrate_stage(stage, lines_to_slots=True)
            if args.lines_to_slots
            else migrate_stage(stage)
        )
        if report.changed:
            # A stream (-, a pipe, a device) keeps FILE's relative paths: it has no folder.
            anchor = Path(args.file) if is_streamed(written) else target
            layer, moved = compute_layer_for(root, anchor)
            notes = export_layer(layer, written, unchanged=snapshot, comments=comments)
            print_notes(args.file, notes)
    finally:
        # USD shares a file's layer within a process: whoever else holds it open (usdview,
        # Kit, a library caller) sees the file again, not the migration (or the new file).
        if root.dirty and not was_dirty:
            root.Reload(force=True)
    for line in report.changes:
        print(f"changed: {line}", file=report_to)
    for line in report.left:
        print(f"left:    {line}", file=report_to)
    for line in moved:
        print(
            f"moved:   {line} (relative asset path re-anchored to the output's folder)",
            file=report_to,
        )
    if report.changed:
        print(f"wrote {display_path(written)}", file=report_to)
    elif report.left:
        print(
            f"{args.file}: nothing converted; the items above are left as they are, "
            "no file written",
            file=report_to,
        )
    else:
        print(f"{args.file}: nothing to migrate", file=report_to)
    return 0
