"""Benchmark: usdgrip validate vs bare traversal vs the NVIDIA engine with our plugin.

Generates one stage (default 100,000 prims with 1,000 gripper sites and 1,000
slotted objects, a tenth of each deliberately broken), then reports in one run:

- bare Python traversal (``for prim in stage.Traverse()``) of the opened stage;
- ``usdgrip.validate(stage)`` on the same opened stage (all rules);
- ``usd_validation_nvidia.ValidationEngine`` with the usdgrip plugin and the
  ``usdgrip.grippers`` capability (the same rules) on the same stage;
- optionally (``--cli``) both command lines on the file, wall clock.

Targets (issue 3): usdgrip within 8x of bare traversal, and >= 5x faster than
the NVIDIA engine. A breakdown splits usdgrip's time into the candidate scan
and the reading + rules of the candidates, and times ``scan="traverse"`` (no
write to the stage) for comparison. Usage::

    .venv/bin/python bench/bench_validate.py            # 100k prims
    .venv/bin/python bench/bench_validate.py --small    # 10k prims, quick
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HEADER = '#usda 1.0\n(\n    defaultPrim = "World"\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n\n'

SITE = """        def Xform "site_{i}" (
            prepend apiSchemas = ["GripperSiteAPI"]
        )
        {{
            float gripper:maxOpening = 0.085
            double3 xformOp:translate = ({x}, 0, 0.13)
            uniform token[] xformOpOrder = ["xformOp:translate"]

            def BasisCurves "gripper_forward_axis"
            {{
                int[] curveVertexCounts = [2]
                point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
                uniform token type = "linear"
            }}
{grip_line}        }}
"""

GRIP_LINE = """
            def BasisCurves "gripper_grip_line"
            {{
                int[] curveVertexCounts = [2]
                point3f[] points = [(0, -0.011, 0), (0, 0.011, 0)]
                uniform token type = "linear"
            }}
"""

SLOTTED = """        def Xform "object_{i}" (
            prepend apiSchemas = ["GripperSlotAPI:left_edge", "GripperSlotAPI:right_edge"]
        )
        {{
            point3d gripperSlot:left_edge:center = (-0.195, 0, 0.15)
            vector3d gripperSlot:left_edge:forward = (0, 0, -1)
            string gripperSlot:left_edge:groupName = "carry"
            uniform token gripperSlot:left_edge:lr = "left"
            double gripperSlot:left_edge:slotInputAngle = 30
            vector3d gripperSlot:left_edge:spanAxis = (1, 0, 0)
            double gripperSlot:left_edge:upRange = {up_range}
            point3d gripperSlot:right_edge:center = (0.195, 0, 0.15)
            vector3d gripperSlot:right_edge:forward = (0, 0, -1)
            string gripperSlot:right_edge:groupName = "carry"
            uniform token gripperSlot:right_edge:lr = "right"
            double gripperSlot:right_edge:slotInputAngle = 30
            vector3d gripperSlot:right_edge:spanAxis = (-1, 0, 0)
            double gripperSlot:right_edge:upRange = 0.2
            double3 xformOp:translate = ({x}, 1, 0)
            uniform token[] xformOpOrder = ["xformOp:translate"]

            def Cube "body"
            {{
                double size = 0.3
            }}
        }}
"""

FILLER = '        def Xform "node_{i}"\n        {{\n        }}\n'


def write_bench_stage(path: Path, prims: int, sites: int, slotted: int, group: int = 100) -> int:
    """Write the benchmark stage as usda text; return the number of prims written.

    Every tenth site lacks its grip line (GR.003) and every tenth slotted
    object has a negative up range (GS.002), so every engine has findings.
    """
    special = sites * 3 - sites // 10 + slotted * 2
    parts = [HEADER, 'def Xform "World"\n{\n']
    items: list[str] = []
    for i in range(sites):
        grip = "" if i % 10 == 9 else GRIP_LINE.format()
        items.append(SITE.format(i=i, x=i * 0.01, grip_line=grip))
    for i in range(slotted):
        up_range = -0.2 if i % 10 == 9 else 0.2
        items.append(SLOTTED.format(i=i, x=i * 0.01, up_range=up_range))
    # Groups are prims too: solve filler + groups = prims - 1 (World) - special.
    budget = prims - 1 - special
    n_groups = max(1, -(-(budget + len(items)) // (group + 1)))
    filler = budget - n_groups
    items.extend(FILLER.format(i=i) for i in range(max(0, filler)))
    written = 1 + n_groups + special + max(0, filler)
    for g in range(n_groups):
        chunk = items[g * group : (g + 1) * group] if g < n_groups - 1 else items[g * group :]
        parts.append(f'    def Scope "group_{g}"\n    {{\n')
        parts.extend(chunk)
        parts.append("    }\n")
    parts.append("}\n")
    path.write_text("".join(parts))
    return written


def _best(fn, repeat: int) -> tuple[float, object]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _best_interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best time of each function over ``repeat`` rounds that run them all in turn.

    One untimed round first (caches, first-touch of the stage's memory); then every
    round times each function once, so slow and quiet spells of the shared machine
    fall on all of them alike and the ratios compare like with like.
    """
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def _count_codes_usdgrip(report) -> Counter:
    return Counter(issue.code for issue in report.issues)


def _count_codes_nvidia(result) -> Counter:
    return Counter(issue.code for issue in result.issues if issue.code)


def _floor_pass(stage) -> tuple[list, list]:
    """The USD work any validation of these rules on this stage makes, once, with no checks.

    What ``usdgrip.validate`` cannot do without: find the API prims with the
    C++ path expression, prove from the layer texts that no other prim holds a
    marker property or child (arcs absent, marker names counted; without that
    proof every prim is queried from Python), then make only the USD calls the
    rules need of each candidate (for the proofs too: the marker property's and
    children's stacks) and keep the values. No records, no numpy, no rules: a
    floor for the ratio, measured in the same run.
    """
    from pxr import Usd, UsdGeom

    from usdgrip.lambdasim import CUSTOM_DATA_PATH
    from usdgrip.usd.discovery import (
        MARKER_TOKENS,
        _compute_hints,
        _compute_included_paths,
        _has_remapping_arcs,
        _LayerTexts,
        _make_membership_queries,
        read_prim_facts,
    )
    from usdgrip.usd.names import (
        FORWARD_AXIS_NAMES,
        GRIP_LINE_NAMES,
        MAX_OPENING_ATTRS,
        SITE_API,
        SLOT_API,
        SLOT_NAMESPACE,
    )
    from usdgrip.usd.stage import TRAVERSAL

    texts = _LayerTexts.read(stage)
    _compute_hints(texts)
    _has_remapping_arcs(texts)
    for kind in ("props", "children"):
        sum(texts.count(token) for token in MARKER_TOKENS[kind])
    (query,) = _make_membership_queries(stage, [f"//{{hasAPI({SITE_API}, {SLOT_API})}}"])
    get_prim, get_attr, get = stage.GetPrimAtPath, Usd.Prim.GetAttribute, Usd.Attribute.Get
    names, type_name = Usd.Prim.GetAuthoredPropertyNames, Usd.Prim.GetTypeName
    cache = UsdGeom.XformCache()
    sites, slotted = [], []
    slot_prefix = f"{SLOT_API}:"
    for path in _compute_included_paths(stage, query):
        prim = get_prim(path)
        schemas = prim.GetAppliedSchemas()
        if SITE_API in schemas:
            facts = read_prim_facts(prim)
            opening = get_attr(prim, MAX_OPENING_ATTRS[0])
            curves = []
            for child_name in (FORWARD_AXIS_NAMES[0], GRIP_LINE_NAMES[0]):
                if child_name in facts.children:
                    child = prim.GetChild(child_name)
                    child.GetPrimStack(), TRAVERSAL(child), names(child)
                    attrs = (get_attr(child, a) for a in ("points", "type", "curveVertexCounts"))
                    curves.append((type_name(child), *map(get, attrs)))
            sites.append(
                (
                    facts,
                    opening.GetPropertyStack(),
                    get(opening),
                    opening.GetTypeName(),
                    prim.IsDefined(),
                    type_name(prim),
                    cache.GetLocalToWorldTransform(prim),
                    curves,
                )
            )
        instances = [s[len(slot_prefix) :] for s in schemas if s.startswith(slot_prefix)]
        if instances:
            values = [
                list(map(get, prim.GetPropertiesInNamespace(f"{SLOT_NAMESPACE}:{name}")))
                for name in instances
            ]
            world = cache.GetLocalToWorldTransform(prim)  # GS.001 checks the world frame
            slotted.append((path, prim.GetCustomDataByKey(CUSTOM_DATA_PATH), values, world))
    return sites, slotted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="10,000 prims, 100 sites/objects")
    parser.add_argument("--prims", type=int, default=100_000)
    parser.add_argument("--sites", type=int, default=1_000)
    parser.add_argument("--slotted", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    parser.add_argument("--cli", action="store_true", help="also time both command lines")
    parser.add_argument("--profile", action="store_true", help="print cProfile of both engines")
    args = parser.parse_args(argv)
    if args.small:
        args.prims, args.sites, args.slotted = 10_000, 100, 100

    import usd_validation_nvidia as nv

    import usdgrip  # registers the schema before any stage is opened
    from usdgrip.usd.discovery import (
        MARKER_TOKENS,
        _compute_included_paths,
        _make_membership_queries,
        find_marked_prims,
    )
    from usdgrip.usd.names import SITE_API, SLOT_API
    from usdgrip.usd.stage import open_stage
    from usdgrip.validators.nvidia import CAPABILITY_ID

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.usda"
        count = write_bench_stage(path, args.prims, args.sites, args.slotted)
        stage = open_stage(path)
        total = sum(1 for _ in stage.Traverse())
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"load average: {load} on {os.cpu_count()} CPUs (timings: best of --repeat rounds "
            "that run every measurement in turn, after one untimed round)"
        )
        print(
            f"stage: {count} prims written, {total} traversed, {args.sites} sites, "
            f"{args.slotted} slotted objects ({path.stat().st_size / 1e6:.1f} MB usda)"
        )

        found = find_marked_prims(stage, set(MARKER_TOKENS))
        floor_sites, floor_slotted = _floor_pass(stage)
        if (len(floor_sites), len(floor_slotted)) != (
            sum(1 for _, maybe_site, _ in found if maybe_site),
            sum(1 for _, _, maybe_slot in found if maybe_slot),
        ):
            raise SystemExit("floor pass and scan disagree on the candidates: fix the bench")
        queries = _make_membership_queries(stage, [f"//{{hasAPI({SITE_API}, {SLOT_API})}}"])
        times = _best_interleaved(
            {
                "bare": lambda: [None for _ in stage.Traverse()],
                "validate": lambda: usdgrip.validate(stage, scan="collection"),
                "scan": lambda: find_marked_prims(stage, set(MARKER_TOKENS)),
                "floor": lambda: _floor_pass(stage),
                "expression": lambda: _compute_included_paths(stage, queries[0]),
                "traverse": lambda: usdgrip.validate(stage, scan="traverse"),
            },
            args.repeat,
        )
        t_bare, t_grip, t_scan = times["bare"], times["validate"], times["scan"]
        t_floor, t_expr, t_slow = times["floor"], times["expression"], times["traverse"]
        report = usdgrip.validate(stage, scan="collection")

        capability = nv.CapabilityRegistry().find(CAPABILITY_ID)
        engine = nv.ValidationEngine(init_rules=False)
        engine.enable_capability(capability)
        t_nv, result = _best(lambda: engine.validate(stage), 1)  # slow: one run

        grip_codes = _count_codes_usdgrip(report)
        nv_codes = _count_codes_nvidia(result)
        print(f"bare traversal          {t_bare:8.3f} s")
        print(
            f"usdgrip.validate        {t_grip:8.3f} s   {t_grip / t_bare:6.1f}x bare (target <= 8x)"
        )
        print(
            f"  of which candidates     {t_scan:8.3f} s   {t_scan / t_bare:6.1f}x bare "
            "(find_marked_prims: C++ path expression + layer-text proofs)"
        )
        t_rest = max(t_grip - t_scan, 0.0)
        print(
            f"  of which reading+rules  {t_rest:8.3f} s   {t_rest / t_bare:6.1f}x bare "
            f"({args.sites} sites, {args.slotted} slotted objects)"
        )
        print(
            f"  floor (no checks)       {t_floor:8.3f} s   {t_floor / t_bare:6.1f}x bare "
            "(the scan's C++ expression and text proofs + only the USD calls the rules need, "
            f"values kept, no rules; the expression alone {t_expr / t_bare:.1f}x)"
        )
        print(
            f"usdgrip.validate, scan='traverse' {t_slow:6.3f} s   {t_slow / t_bare:6.1f}x bare "
            "(Python queries per prim, never writes)"
        )
        print(
            f"NVIDIA engine + plugin  {t_nv:8.3f} s   {t_nv / t_grip:6.1f}x usdgrip (target >= 5x)"
        )
        print(f"findings usdgrip: {dict(sorted(grip_codes.items()))}")
        print(f"findings NVIDIA:  {dict(sorted(nv_codes.items()))}")
        print(f"same findings: {'yes' if grip_codes == nv_codes else 'NO'}")

        if args.cli:
            bindir = Path(sys.executable).parent
            commands = {
                "usdgrip validate (CLI)": [str(bindir / "usdgrip"), "validate", str(path)],
                "nvidia_usd_validate (CLI)": [
                    str(bindir / "nvidia_usd_validate"),
                    "--capability",
                    CAPABILITY_ID,
                    str(path),
                ],
            }
            walls = {}
            for label, command in commands.items():
                start = time.perf_counter()
                subprocess.run(command, capture_output=True, check=False)
                walls[label] = time.perf_counter() - start
                print(f"{label:26s}{walls[label]:8.3f} s wall (includes interpreter start-up)")
            a, b = walls.values()
            print(f"CLI ratio: {b / a:.1f}x")

        if args.profile:
            for label, fn in (
                ("usdgrip", lambda: usdgrip.validate(stage, scan="collection")),
                ("NVIDIA", lambda: engine.validate(stage)),
            ):
                profiler = cProfile.Profile()
                profiler.runcall(fn)
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
                print(f"--- profile: {label} ---\n{out.getvalue()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
