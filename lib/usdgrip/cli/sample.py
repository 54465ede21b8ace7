"""``usdgrip sample FILE --prim PATH``: seeded end-effector targets from an object's grasp slots."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import IO

import numpy as np

from usdgrip import sampling
from usdgrip.fileio import check_output, display_path, is_standard_output, write_output
from usdgrip.sampling import SlotSamples, sample_gripper_groups
from usdgrip.site_records import GripperSlot

NAME = "sample"
ORDER = 30
HELP = "sample joint end-effector targets from an object's grasp slots"
DESCRIPTION = """Read the grasp slots of the object prim --prim in FILE (GripperSlotAPI and
LambdaSim records, in world space) and sample COUNT candidates; each candidate is one
target per slot (slot i -> ee id i) to solve jointly with batch IK. Slots sharing a
group get the same offset, tilt and flip. Output: JSON (default) with poses as 4x4
row-major matrices (translation in the last column), quaternions (w, x, y, z), and the
drawn offset (m, along Up), tilt (degrees) and flip; npz with the arrays; or a short
text summary. Same FILE, slots, count and seed -> identical output.
Seeds and ee ids are integers from 0 to 2**63-1.
Exit 0 ok, 2 bad input (file, prim, slot names, ee ids, seed, malformed slot)."""

FORMATS = ("json", "npz", "text")
#: Limits of one run: the sampler's own (see usdgrip.sampling).
MAX_COUNT, MAX_TARGETS, MAX_ID = sampling.MAX_COUNT, sampling.MAX_TARGETS, sampling.MAX_ID


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="USD file (.usd, .usda, .usdc, .usdz)")
    parser.add_argument("--prim", required=True, help="object prim holding the slots, e.g. /Tote")
    parser.add_argument(
        "--slots",
        help="comma-separated slot names to sample, in ee order (default: all, authoring order)",
    )
    parser.add_argument(
        "--ee-ids",
        help=f"comma-separated end-effector ids 0 to {MAX_ID}, one per slot (default: 0,1,...,n-1)",
    )
    parser.add_argument(
        "--count",
        type=int,
        default=50,
        help=f"number of candidates, 1 to {MAX_COUNT}, and at most {MAX_TARGETS} targets "
        "(count x slots) (default 50)",
    )
    parser.add_argument(
        "--seed", type=int, default=7, help=f"random seed, 0 to {MAX_ID} (default 7)"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="output format (default: npz when --output ends in .npz, else json)",
    )
    parser.add_argument(
        "-o",
        "--output",
        help="write here instead of stdout (atomically; a device or named pipe is written in "
        "place; - is stdout)",
    )


def parse_ee_ids(text: str) -> list[int]:
    """Parse ``"0,1"`` into ``[0, 1]``.

    Raises:
        ValueError: an entry is not an integer from 0 to :data:`MAX_ID`.
    """
    items = [t.strip() for t in text.split(",")]
    try:
        ids = [int(t) for t in items]
    except ValueError:
        raise ValueError(
            f"--ee-ids {text!r}: expected comma-separated integers, e.g. 0,1"
        ) from None
    for value in ids:
        if not 0 <= value <= MAX_ID:
            raise ValueError(f"--ee-ids {text!r}: id {value} is outside 0 to {MAX_ID}")
    return ids


def select_slots(
    slots: Sequence[GripperSlot],
    names_text: str | None,
    where: str,
    available_names: Sequence[str] | None = None,
) -> list[GripperSlot]:
    """Pick and order slots by name (``None`` = all, in authoring order).

    ``available_names``: every slot name of the prim, for the message, when
    ``slots`` holds only the requested ones.

    Raises:
        ValueError: no slots, an unknown or repeated name (lists the available names).
    """
    if not slots and not available_names:
        raise ValueError(
            f"{where} has no grasp slots (GripperSlotAPI or customData "
            "lambdasim:gripper_slots); `usdgrip info FILE` lists the prims that have some"
        )
    if names_text is None:
        return list(slots)
    by_name = {s.name: s for s in slots}
    available = ", ".join(available_names if available_names is not None else by_name)
    names = [n.strip() for n in names_text.split(",")]
    picked = []
    for name in names:
        if name not in by_name:
            raise ValueError(f"{where}: no slot named {name!r}; available: {available}")
        if by_name[name] in picked:
            raise ValueError(f"--slots {names_text!r}: slot {name!r} is listed twice")
        picked.append(by_name[name])
    return picked


def _fmt(v) -> str:
    return "(" + ", ".join(f"{float(c) + 0.0:.4f}" for c in v) + ")"


def format_text(samples: SlotSamples, header: str) -> str:
    """A short readable summary: a header, then one block per candidate."""
    groups = [f"{n} -> ee {e}" + (f' (group "{g}")' if g else "") for n, e, g in zip(
        samples.slot_names, samples.ee_ids, samples.groups, strict=True
    )]  # fmt: skip
    lines = [
        f"{header}: {samples.count} candidates, seed {samples.seed}",
        "  slots: " + ", ".join(groups),
    ]
    width = max(len(n) for n in samples.slot_names)
    for i, targets in enumerate(samples.candidates):
        lines.append(f"candidate {i}")
        for t in targets:
            head = f"  ee {t.ee_id} {t.slot:<{width}}  "
            lines.append(
                f"{head}point {_fmt(t.position)} m  offset {t.offset:+.4f} m  "
                f"tilt {t.tilt_deg:+6.2f}°  {'flipped' if t.flipped else 'unflipped'}"
            )
            lines.append(
                f"{'':<{len(head)}}approach {_fmt(t.pose[:3, 2])}  closing {_fmt(t.pose[:3, 0])}"
            )
    return "\n".join(lines) + "\n"


def save_npz(samples: SlotSamples, file: IO[bytes]) -> None:
    """Save the sample arrays as an uncompressed npz (loadable without pickle).

    Keys: ``poses``, ``offsets``, ``tilts_deg``, ``flipped``, ``ee_ids``,
    ``slots``, ``groups``, ``seed`` (-1 when none) and ``count``.
    """
    np.savez(
        file,
        poses=samples.poses,
        offsets=samples.offsets,
        tilts_deg=samples.tilts_deg,
        flipped=samples.flipped,
        ee_ids=np.asarray(samples.ee_ids, dtype=np.int64),
        slots=np.asarray(samples.slot_names, dtype=str),
        groups=np.asarray(samples.groups, dtype=str),
        seed=np.int64(-1 if samples.seed is None else samples.seed),
        count=np.int64(samples.count),
    )


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import open_input, reading
    from usdgrip.usd.slots import list_slot_names, read_gripper_slots
    from usdgrip.usd.stage import get_prim

    fmt = args.format or (
        "npz" if args.output and str(args.output).lower().endswith(".npz") else "json"
    )
    if fmt == "npz" and not args.output:
        raise ValueError("--format npz writes a binary file; give --output PATH.npz")
    if args.count > MAX_COUNT:  # the sampler itself refuses a count < 1
        raise ValueError(
            f"--count {args.count}: expected 1 to {MAX_COUNT} candidates; "
            "for more, run again with other --seed values"
        )
    if args.seed > MAX_ID:  # the sampler itself refuses a negative seed
        raise ValueError(f"--seed {args.seed}: expected an integer from 0 to {MAX_ID}")
    if args.output:
        try:
            check_output(args.output, binary=fmt == "npz")
        except ValueError as exc:
            raise ValueError(f"-o {exc}") from None
    stage = open_input(args.file, args.output)
    prim = get_prim(stage, args.prim)
    where = f"{args.file}: <{args.prim}>"
    with reading(args.file):
        if args.slots is None:
            slots = select_slots(read_gripper_slots(prim), None, where)
        else:  # only the named slots are read: another, broken slot does not refuse them
            names = [name.strip() for name in args.slots.split(",")]
            slots = select_slots(
                read_gripper_slots(prim, names=names), args.slots, where, list_slot_names(prim)
            )
    if args.count * len(slots) > MAX_TARGETS:  # before any array is allocated
        raise ValueError(
            f"{where}: --count {args.count} x {len(slots)} slots is "
            f"{args.count * len(slots):,} targets; expected at most {MAX_TARGETS:,} per run "
            f"(memory): lower --count to {max(1, MAX_TARGETS // len(slots)):,} or pick slots "
            "with --slots"
        )
    ee_ids = parse_ee_ids(args.ee_ids) if args.ee_ids is not None else list(range(len(slots)))
    try:
        samples = sample_gripper_groups(slots, ee_ids=ee_ids, count=args.count, seed=args.seed)
        if fmt == "npz":
            write_output(args.output, lambda f: save_npz(samples, f), binary=True)
        else:
            text = (
                json.dumps(samples.to_dict()) + "\n"
                if fmt == "json"
                else format_text(samples, f"{args.file} <{args.prim}>")
            )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    except MemoryError:
        raise ValueError(
            f"{where}: not enough memory for {args.count} candidates x {len(slots)} slots "
            f"({fmt}); lower --count"
        ) from None
    if fmt != "npz":
        if not args.output:
            sys.stdout.write(text)
            return 0
        write_output(args.output, lambda f: f.write(text.encode("utf-8")))
    print(
        f"wrote {samples.count} candidates x {len(samples.ee_ids)} targets ({fmt}) to "
        f"{display_path(args.output)}",
        file=sys.stderr if is_standard_output(args.output) else sys.stdout,
    )
    return 0
