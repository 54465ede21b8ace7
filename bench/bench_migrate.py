"""Benchmark: `usdgrip migrate` of LambdaSim records, time per record at 1,000 and 10,000.

One object prim carries N version-2 records (distinct names, valid values) in
``customData["lambdasim"]["gripper_slots"]``, written as a .usda file; the
benchmark times what ``usdgrip migrate FILE -o OUT`` does: open the stage,
:func:`usdgrip.migrate_stage` (N ``GripperSlotAPI`` instances authored in one
``Sdf.ChangeBlock``, the records removed) and the export. It checks that every
record became a slot, and prints the time per record at each size and their
ratio: linear work keeps the ratio near 1 (it was O(N^3): 250 records took 6 s,
1,000 did not finish in 100 s).

Target (issue 13): 10,000 records in under 10 s, per-record ratio (10,000 vs
1,000) at most 2. Usage::

    .venv/bin/python bench/bench_migrate.py
    .venv/bin/python bench/bench_migrate.py --sizes 1000 10000 50000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from pxr import Gf, Sdf

import usdgrip  # noqa: F401  (registers the schema before any stage is opened)
import usdgrip as usd_io  # the public names
from usdgrip.migration import migrate_stage

TARGET_SECONDS = 10.0
TARGET_RATIO = 2.0


def write_records(path: Path, count: int) -> None:
    """A usda file whose /Obj prim carries ``count`` LambdaSim records."""
    records = [
        {
            "center": [0.001 * i, 0.0, 0.05],
            "forward": [-1.0, 0.0, 0.0],
            "span_axis": [0.0, 1.0, 0.0],
            "up_range": 0.04,
            "slot_input_angle": 20.0,
            "LR": i % 2,
            "GroupName": "",
            "version": 2,
            "name": f"s{i}",
        }
        for i in range(count)
    ]
    path.write_text(
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n\ndef Xform "Obj" (\n'
        "    customData = {\n        dictionary lambdasim = {\n"
        f"            string gripper_slots = '{json.dumps(records)}'\n"
        "        }\n    }\n)\n{\n}\n"
    )


def time_migrate(folder: Path, count: int) -> float:
    """Seconds to open, migrate and export ``count`` records; checks every slot exists."""
    source, target = folder / f"in_{count}.usda", folder / f"out_{count}.usda"
    write_records(source, count)
    started = time.perf_counter()
    stage = usd_io.open_stage(source)
    report = migrate_stage(stage)
    stage.GetRootLayer().Export(str(target))
    seconds = time.perf_counter() - started
    # Checked on the written layer: composing a prim with 10,000 API instances
    # (GetAppliedSchemas) is USD's own cost, quadratic in the instance count.
    layer = Sdf.Layer.FindOrOpen(str(target))
    spec = layer.GetPrimAtPath("/Obj")
    slots = spec.GetInfo("apiSchemas").prependedItems
    values = [spec.attributes[f"gripperSlot:s{i}:center"].default for i in (0, count - 1)]
    if len(slots) != count or report.left or "lambdasim" in spec.customData:
        raise SystemExit(f"{count} records: {len(slots)} slots, left {report.left[:3]}")
    if values != [Gf.Vec3d(0, 0, 0.05), Gf.Vec3d(0.001 * (count - 1), 0, 0.05)]:
        raise SystemExit(f"{count} records: centres {values}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    args = parser.parse_args(argv)
    per_record = {}
    with tempfile.TemporaryDirectory() as folder:
        for count in args.sizes:
            seconds = time_migrate(Path(folder), count)
            per_record[count] = seconds / count
            print(f"{count:>8} records  {seconds:8.3f} s  {1e3 * seconds / count:.3f} ms/record")
    smallest, largest = min(per_record), max(per_record)
    ratio = per_record[largest] / per_record[smallest]
    total = per_record[largest] * largest
    print(f"per-record time {largest} vs {smallest}: x{ratio:.2f} (linear: about 1)")
    ok = ratio <= TARGET_RATIO and total <= TARGET_SECONDS
    print(
        f"target: {largest} records < {TARGET_SECONDS:g} s, ratio <= {TARGET_RATIO:g}: "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
