"""``usdgrip render FILE -o view.png``: a picture of the object, sites, slots and grasps."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "render"
ORDER = 60
HELP = "draw an object, its gripper sites, slots and grasps to a PNG (no viewer needed)"
DESCRIPTION = """Draw FILE to a PNG with matplotlib (headless): the object's meshes (--prim,
default the stage's default prim; its outline seen from --view and its creases), every
gripper site's grasp frame (X red = closing, Y green, Z blue = approach), with --slots
the object's grasp slots (offset range along Up, tilt fan, closing axis; colour = group),
and with --grasps gripper wireframes at the open width.

--grasps takes an Isaac-Grasp YAML of any writer (usdgrip plan or evaluate, Isaac Sim's
Grasp Editor, GraspGen, GraspDataGen), `usdgrip sample --format json` output or `usdgrip
evaluate --targets` output (told apart by content; a candidate's hands are joined by a
line). Colours (--color-by; a legend says which): success = measured success rate, red
0% to green 100% (the default for evaluated grasps); confidence = red lowest to green
highest of the file (the default otherwise); samples, which have neither, one colour per
candidate. Grasp poses are relative to the object prim (the file's metadata.pose_frame
when --prim is not given). Poses of another gripper frame (the file's gripper_frame /
gripper_frame_link, or --gripper-frame) are converted to the grasp frame of --gripper
FILE:/SITE; without --gripper they are drawn as they are, with a warning.

The PNG is written atomically (a device or named pipe, /dev/stdout too, is written in
place; `-` is refused: a PNG is binary).
Exit 0 ok, 2 bad input (file, prim, grasps file, gripper frame, --color-by without the
values, output path)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="USD file (.usd, .usda, .usdc, .usdz)")
    parser.add_argument("--prim", help="object prim, e.g. /Tote (default: the default prim)")
    parser.add_argument(
        "--grasps",
        help="grasps to draw: Isaac-Grasp YAML (any writer), `usdgrip sample --format json` or "
        "`usdgrip evaluate --targets` output",
    )
    parser.add_argument(
        "--color-by",
        choices=("confidence", "success"),
        help="colour the grasps by confidence or measured success (default: success when "
        "they were evaluated, else confidence)",
    )
    parser.add_argument(
        "--gripper",
        metavar="FILE:/SITE",
        help="the gripper site another tool's poses are converted to (and its opening drawn)",
    )
    parser.add_argument(
        "--gripper-frame",
        metavar="PRIM",
        help="with --gripper: the prim of its file the poses are of (default: the file's "
        "gripper_frame / gripper_frame_link, else the site's grasp frame)",
    )
    parser.add_argument("--slots", action="store_true", help="draw the object's grasp slots")
    parser.add_argument("--no-sites", action="store_true", help="do not draw gripper sites")
    parser.add_argument("-o", "--output", required=True, help="PNG to write, e.g. view.png")
    parser.add_argument(
        "--view",
        default="24,-58",
        metavar="ELEV,AZIM",
        help="camera elevation and azimuth in degrees (default 24,-58)",
    )
    parser.add_argument(
        "--size",
        default="8x6",
        metavar="WxH",
        help="inches (default 8x6; at most 16384 pixels per side at --dpi)",
    )
    parser.add_argument("--dpi", type=int, default=110, help="resolution, 1 to 1200 (default 110)")


def _pair(text: str, sep: str, option: str) -> tuple[float, float]:
    parts = text.split(sep)
    try:
        a, b = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"{option} {text!r}: expected two numbers separated by {sep!r}") from None
    return a, b


def run(args: argparse.Namespace) -> int:
    import usdgrip  # noqa: F401  (registers the schema before the stage opens)
    from usdgrip.cli import open_input
    from usdgrip.fileio import check_output, check_output_path, display_path
    from usdgrip.render import check_view_options, render_view

    elevation, azimuth = _pair(args.view, ",", "--view")
    width, height = _pair(args.size.lower(), "x", "--size")
    try:
        check_view_options((width, height), args.dpi, elevation, azimuth)
    except ValueError as exc:
        raise ValueError(f"--{exc}") from None  # its messages start with the option name
    from usdgrip.contracts import parse_gripper

    gripper = parse_gripper(args.gripper) if args.gripper else None
    if args.grasps:
        check_output_path(args.output, [args.grasps])
    if Path(args.output).is_dir():
        raise ValueError(f"-o {args.output}: is a directory; expected a PNG file path")
    try:
        check_output(args.output, binary=True)
    except ValueError as exc:
        raise ValueError(f"-o {exc}") from None
    stage = open_input(args.file, args.output)
    summary = render_view(
        stage,
        args.output,
        prim_path=args.prim,
        grasps=args.grasps,
        show_slots=args.slots,
        show_sites=not args.no_sites,
        size=(width, height),
        dpi=args.dpi,
        elevation=elevation,
        azimuth=azimuth,
        gripper=gripper,
        gripper_frame=args.gripper_frame,
        color_by=args.color_by,
    )
    parts = [f"{summary.triangles} triangles"]
    if not args.no_sites:
        parts.append(f"{len(summary.sites)} site(s)")
    if args.slots:
        parts.append(f"{len(summary.slots)} slot(s)")
    if args.grasps:
        parts.append(f"{summary.grasps} grasp(s)")
    shown = display_path(summary.output)
    print(f"wrote {shown}: {summary.object_path or 'stage'}, {', '.join(parts)}")
    for text in (*summary.notes, *summary.skipped):  # never silent: assumed, left out
        print(f"warning: {text}", file=sys.stderr)
    return 0
