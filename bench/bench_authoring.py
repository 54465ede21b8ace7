"""Benchmark: what authoring and GS.009 cost, as ratios against baselines of the same run.

1. GS.009 in validation: ``usdgrip.validate`` of ``bench_validate.py``'s stage (default
   100,000 prims, 1,000 sites, 1,000 slotted objects with a cube each) with every rule,
   against every rule but GS.009 (GS.009 reads each slotted object's surface).
2. The checker a dialog calls on every change: ``check_edit`` of a slot on the example
   tote with a reused ``ProposalStage``, with a fresh one, and ``apply_gripper_slot``
   (check + one change block), against ``validate`` of the same stage.

Rounds are interleaved (each round times every function once), best of ``--repeat``.
Usage::

    .venv/bin/python bench/bench_authoring.py           # 100k prims
    .venv/bin/python bench/bench_authoring.py --small   # 10k prims, 100 objects
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_validate import write_bench_stage  # noqa: E402


def _interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="10,000 prims, 100 objects")
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    args = parser.parse_args()
    from pxr import Usd

    import usdgrip  # noqa: F401
    from usdgrip.authoring import ProposalStage, SlotEdit, apply_gripper_slot, check_edit
    from usdgrip.rules import RULES, validate
    from usdgrip.usd.stage import open_stage

    prims, sites, slotted = (10_000, 100, 100) if args.small else (100_000, 1_000, 1_000)
    with tempfile.TemporaryDirectory(prefix="usdgrip-bench-") as folder:
        path = Path(folder) / "bench.usda"
        write_bench_stage(path, prims, sites, slotted)
        stage = open_stage(path)
        every = sorted(RULES)
        without = [c for c in every if c != "GS.009"]
        times = _interleaved(
            {
                "all rules": lambda: validate(stage, rules=every),
                "all but GS.009": lambda: validate(stage, rules=without),
            },
            args.repeat,
        )
        base = times["all but GS.009"]
        print(f"validation, {prims:,} prims, {slotted:,} slotted objects (best of {args.repeat}):")
        print(f"  all but GS.009  {base:.3f} s   1.00x")
        print(f"  all rules       {times['all rules']:.3f} s   {times['all rules'] / base:.2f}x")
        print(f"  GS.009's share  {(times['all rules'] - base) / slotted * 1e3:.3f} ms per object")

        tote = Path(folder) / "tote.usda"
        shutil.copy(HERE.parent / "examples" / "tote.usda", tote)
        stage = Usd.Stage.Open(str(tote))
        scratch = ProposalStage(stage)
        edit = SlotEdit("/Tote", "front", (0, -0.145, 0.12), (0, 0, -1), (0, 1, 0), 0.2)
        prim = stage.GetPrimAtPath("/Tote")

        def author() -> None:
            apply_gripper_slot(prim, "front", center=(0, -0.145, 0.12), forward=(0, 0, -1),
                               span_axis=(0, 1, 0), up_range=0.2)  # fmt: skip

        times = _interleaved(
            {
                "validate": lambda: validate(stage),
                "check (reused)": lambda: check_edit(stage, edit, scratch=scratch),
                "check (fresh)": lambda: check_edit(stage, edit),
                "apply_gripper_slot": author,
            },
            max(args.repeat, 20),
        )
        base = times["validate"]
        print(f"a slot on examples/tote.usda (best of {max(args.repeat, 20)}):")
        for name, seconds in times.items():
            print(f"  {name:<19} {seconds * 1e3:7.2f} ms   {seconds / base:5.2f}x validate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
