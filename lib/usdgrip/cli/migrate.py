"""``usdgrip migrate FILE``: convert legacy gripper authoring to the usdGrip schema."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "migrate"
ORDER = 80
HELP = "convert legacy attributes, unprefixed curves and LambdaSim records to the schema"
DESCRIPTION = """Convert legacy gripper authoring in FILE's root layer to the usdGrip schema:
apply GripperSiteAPI, move gripper_maxOpening/custom:maxOpening/gripper_maxPayload to
gripper:*, rename forward_axis/grip_line to gripper_*, turn LambdaSim gripper_slots
records into GripperSlotAPI instances. Nothing authored is lost: what cannot be
converted losslessly is kept and listed.

By default the result goes to a new file (FILE.migrated.usda beside it, or -o PATH,
which may not be FILE itself nor a layer file it reads; in another folder, relative
asset paths are re-anchored so they still resolve, listed as moved:); --in-place
rewrites FILE (atomically; a symbolic link stays a link and its target is rewritten).
A .usdz package cannot be written: migrate the package's source layer, or write the
result with -o OUT.usda. The changed:, left: and moved: lines are printed after the
write, so a failed write reports no change.

Exit 0 when written or nothing to convert (left: lines do not change it), 2 on unusable
input or output (nothing is written)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="USD file to migrate")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("-o", "--output", help="write the migrated layer here")
    target.add_argument("--in-place", action="store_true", help="rewrite FILE itself")


def _target_path(args: argparse.Namespace) -> Path:
    """Where the migrated layer goes; refuses a .usdz package and ``-o FILE``."""
    from usdgrip.fileio import check_output_path
    from usdgrip.usd.names import USD_SUFFIXES

    source = Path(args.file)
    if args.in_place:
        target = source
    elif args.output:
        target = Path(args.output)
    else:
        target = source.with_name(f"{source.stem}.migrated{source.suffix}")
    if target.suffix.lower() == ".usdz":
        raise ValueError(
            f"{target}: usdz packages cannot be written; migrate the package's source layer, "
            f"or write the result with -o {source.stem}.migrated.usda"
        )
    if target.suffix.lower() not in USD_SUFFIXES:
        raise ValueError(
            f"{target}: not a USD file name (suffix {target.suffix or 'none'!r}); the migrated "
            f"layer is written as USD: name it .usda or .usdc"
        )
    if not args.in_place:
        try:
            check_output_path(target, [source])
        except ValueError as exc:
            raise ValueError(f"{exc}; --in-place rewrites FILE itself") from None
    return target


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import open_input
    from usdgrip.fileio import display_path, export_layer_atomically
    from usdgrip.migrate import compute_layer_for, migrate_stage

    target = _target_path(args)
    # --in-place rewrites the root layer on purpose.
    stage = open_input(args.file, None if args.in_place else target)
    report = migrate_stage(stage)
    moved: list[str] = []
    if report.changed:
        layer, moved = compute_layer_for(stage.GetRootLayer(), target)
        export_layer_atomically(layer, target)
    for line in report.changes:
        print(f"changed: {line}")
    for line in report.left:
        print(f"left:    {line}")
    for line in moved:
        print(f"moved:   {line} (relative asset path re-anchored to the output's folder)")
    if report.changed:
        print(f"wrote {display_path(target)}")
    elif report.left:
        print(
            f"{args.file}: nothing converted; the items above are left as they are, no file written"
        )
    else:
        print(f"{args.file}: nothing to migrate")
    return 0
