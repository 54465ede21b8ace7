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

By default the result goes to a new file (FILE.migrated.usda beside it, or -o PATH);
--in-place rewrites FILE (atomically). Exit 0 when written (or nothing to do), 2 on
unreadable input."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="USD file to migrate")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("-o", "--output", help="write the migrated layer here")
    target.add_argument("--in-place", action="store_true", help="rewrite FILE itself")


def run(args: argparse.Namespace) -> int:
    from usdgrip.migrate import migrate_stage, write_layer_atomically
    from usdgrip.usd_io import open_stage

    stage = open_stage(args.file)
    report = migrate_stage(stage)
    for line in report.changes:
        print(f"changed: {line}")
    for line in report.left:
        print(f"left:    {line}")
    if not report.changed:
        print(f"{args.file}: nothing to migrate")
        return 0
    source = Path(args.file)
    if args.in_place:
        target = source
    elif args.output:
        target = Path(args.output)
    else:
        target = source.with_name(f"{source.stem}.migrated{source.suffix}")
    write_layer_atomically(stage.GetRootLayer(), target)
    print(f"wrote {target}")
    return 0
