"""Benchmark: usdgrip validate vs bare traversal vs the NVIDIA engine with our plugin.

Generates one stage (default 100,000 prims with 1,000 gripper sites and 1,000
slotted objects, a tenth of each deliberately broken; by default issue 20's shape:
1,000 groups each of a site, a slotted object and plain Xforms, units not authored,
so GA.002 reads the sites, slots and grasp lines too; ``--layout blocks --units`` is the
earlier shape: sites, then slotted objects, then fillers, units authored), then reports
in one run:

- bare Python traversal (``for prim in stage.Traverse()``) of the opened stage;
- ``usdgrip.validate(stage)`` on the same opened stage (all rules);
- ``usd_validation_nvidia.ValidationEngine`` with the usdgrip plugin and the
  ``usdgrip.grippers`` capability (the same rules) on the same stage;
- optionally (``--cli``) both command lines on the file, wall clock;
- optionally (``--compare CHECKOUT``, repeatable) ``usdgrip.validate(stage)`` and a bare
  traversal in one child process per checkout (this one included), each importing
  usdgrip from its checkout's ``lib/``, timed in interleaved rounds on the same file:
  the ratio to bare of another commit (``git worktree add /tmp/prev <commit>``) and of
  this one, measured in the same run; with ``--same-rules`` also this checkout running
  only the rules each compared checkout runs (the same checks, later rules left out).

Targets (issue 3): usdgrip within 8x of bare traversal, and >= 5x faster than
the NVIDIA engine. A breakdown splits usdgrip's time into the candidate scan
and the reading + rules of the candidates, and times ``scan="traverse"`` (no
write to the stage) for comparison. Usage::

    .venv/bin/python bench/bench_validate.py            # 100k prims
    .venv/bin/python bench/bench_validate.py --small    # 10k prims, quick
    .venv/bin/python bench/bench_validate.py --compare /tmp/prev --compare /tmp/main
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
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
HEADER_NO_UNITS = '#usda 1.0\n(\n    defaultPrim = "World"\n)\n\n'

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


def write_bench_stage(
    path: Path,
    prims: int,
    sites: int,
    slotted: int,
    group: int = 100,
    *,
    layout: str = "blocks",
    units: bool = True,
) -> int:
    """Write the benchmark stage as usda text; return the number of prims written.

    Every tenth site lacks its grip line (GR.003) and every tenth slotted
    object has a negative up range (GS.002), so every engine has findings.
    ``layout="blocks"``: groups of ``group`` items, sites first, then slotted objects,
    then fillers. ``layout="mixed"`` (issue 20): ``max(sites, slotted)`` groups, each
    holding one site and one slotted object (while they last) and fillers.
    ``units=False`` authors neither metersPerUnit nor upAxis.
    """
    special = sites * 3 - sites // 10 + slotted * 2
    parts = [HEADER if units else HEADER_NO_UNITS, 'def Xform "World"\n{\n']
    site_items = [
        SITE.format(i=i, x=i * 0.01, grip_line="" if i % 10 == 9 else GRIP_LINE.format())
        for i in range(sites)
    ]
    slot_items = [
        SLOTTED.format(i=i, x=i * 0.01, up_range=-0.2 if i % 10 == 9 else 0.2)
        for i in range(slotted)
    ]
    budget = prims - 1 - special  # filler + groups = prims - 1 (World) - special
    if layout == "mixed":
        n_groups = max(1, sites, slotted)
        filler = max(0, budget - n_groups)
        groups: list[list[str]] = [[] for _ in range(n_groups)]
        for g in range(n_groups):
            groups[g].extend(site_items[g : g + 1] + slot_items[g : g + 1])
        for i in range(filler):
            groups[i * n_groups // filler].append(FILLER.format(i=i))
    elif layout == "blocks":
        items = site_items + slot_items
        n_groups = max(1, -(-(budget + len(items)) // (group + 1)))
        filler = max(0, budget - n_groups)
        items.extend(FILLER.format(i=i) for i in range(filler))
        groups = [
            items[g * group : (g + 1) * group] if g < n_groups - 1 else items[g * group :]
            for g in range(n_groups)
        ]
    else:
        raise ValueError(f"layout is {layout!r}; expected 'mixed' or 'blocks'")
    written = 1 + n_groups + special + filler
    for g, chunk in enumerate(groups):
        parts.append(f'    def Scope "group_{g}"\n    {{\n')
        parts.extend(chunk)
        parts.append("    }\n")
    parts.append("}\n")
    path.write_text("".join(parts))
    return written


def _child(path: str, rules: str | None = None) -> int:
    """``--child FILE``: time bare traversal and ``usdgrip.validate(stage)`` per stdin line.

    Uses only what every release has (``import usdgrip``, ``usdgrip.validate``), so the
    same code times any checkout: the parent puts that checkout's ``lib/`` first on
    ``PYTHONPATH``. ``rules`` (comma-separated codes): validate only those. The ready line
    names the rules the checkout ran.
    """
    from pxr import Usd

    import usdgrip  # registers the schema before the stage is opened

    selected = rules.split(",") if rules else None
    stage = Usd.Stage.Open(path)
    # warm: first touch of the stage's memory, lazy imports
    ran = usdgrip.validate(stage, selected).rules
    print(json.dumps({"ready": usdgrip.__file__, "rules": list(ran)}), flush=True)
    for _ in sys.stdin:
        start = time.perf_counter()
        for _ in stage.Traverse():
            pass
        bare = time.perf_counter() - start
        start = time.perf_counter()
        report = usdgrip.validate(stage, selected)
        took = time.perf_counter() - start
        print(
            json.dumps({"bare": bare, "validate": took, "issues": len(report.issues)}), flush=True
        )
    return 0


def _start_child(path: Path, checkout: str, rules: list[str] | None = None) -> tuple:
    """A ``--child`` process importing usdgrip from ``checkout``'s ``lib/``, and its ready line."""
    lib = Path(checkout).resolve() / "lib"
    if not (lib / "usdgrip").is_dir():
        raise SystemExit(f"--compare {checkout}: no lib/usdgrip in it (a usdgrip checkout?)")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(lib), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, __file__, "--child", str(path)]
    if rules:
        command += ["--child-rules", ",".join(rules)]
    child = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    ready = json.loads(child.stdout.readline() or "{}")
    if "ready" not in ready:
        raise SystemExit(f"--compare {checkout}: the child did not start")
    return child, ready


def compare_checkouts(
    path: Path, checkouts: list[str], repeat: int, same_rules: bool = False
) -> dict[str, dict]:
    """Best bare and ``validate(stage)`` times of each checkout, rounds interleaved.

    ``same_rules``: also time this checkout running only the rules each other checkout
    runs (what it checks too), labelled ``this checkout, the rules of CHECKOUT``.
    """
    here = str(Path(__file__).resolve().parents[1])
    children = {}
    for checkout in [here, *checkouts]:
        child, ready = _start_child(path, checkout)
        label = "this checkout" if checkout == here else checkout
        children[label] = (child, ready["ready"])
        if same_rules and checkout != here:
            child, ready = _start_child(path, here, ready["rules"])
            children[f"this checkout, the rules of {checkout}"] = (child, ready["ready"])
    best: dict[str, dict] = {
        label: {"bare": float("inf"), "validate": float("inf")} for label in children
    }
    for _ in range(repeat):
        for label, (child, _) in children.items():
            child.stdin.write("go\n")
            child.stdin.flush()
            row = json.loads(child.stdout.readline())
            entry = best[label]
            entry["bare"] = min(entry["bare"], row["bare"])
            entry["validate"] = min(entry["validate"], row["validate"])
            entry["issues"] = row["issues"]
    for label, (child, module) in children.items():
        child.stdin.close()
        child.wait()
        best[label]["module"] = module
        best[label]["ratio"] = best[label]["validate"] / best[label]["bare"]
    return best


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
        _compute_included_paths,
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
    from usdgrip.usd.text_proofs import LayerTexts, compute_hints, has_remapping_arcs

    texts = LayerTexts.read(stage)
    compute_hints(texts)
    has_remapping_arcs(texts)
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
    parser.add_argument(
        "--layout",
        choices=("mixed", "blocks"),
        default="mixed",
        help="mixed (default, issue 20): each group a site, a slotted object and fillers; "
        "blocks: sites, then slotted objects, then fillers",
    )
    parser.add_argument(
        "--units", action="store_true", help="author metersPerUnit and upAxis (default: not)"
    )
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="CHECKOUT",
        help="also time usdgrip.validate(stage) of another usdgrip checkout (its lib/), "
        "interleaved with this one's, on the same file (repeatable)",
    )
    parser.add_argument(
        "--same-rules",
        action="store_true",
        help="with --compare: also time this checkout running only the rules each compared "
        "checkout runs (the same checks; later rules left out)",
    )
    parser.add_argument("--no-nvidia", action="store_true", help="skip the NVIDIA engine")
    parser.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--child-rules", metavar="CODES", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child, args.child_rules)
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
        count = write_bench_stage(
            path, args.prims, args.sites, args.slotted, layout=args.layout, units=args.units
        )
        stage = open_stage(path)
        total = sum(1 for _ in stage.Traverse())
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"load average: {load} on {os.cpu_count()} CPUs (timings: best of --repeat rounds "
            "that run every measurement in turn, after one untimed round)"
        )
        print(
            f"stage: {count} prims written, {total} traversed, {args.sites} sites, "
            f"{args.slotted} slotted objects ({path.stat().st_size / 1e6:.1f} MB usda; layout "
            f"{args.layout}, units {'authored' if args.units else 'not authored'})"
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
                "default": lambda: usdgrip.validate(stage),
                "scan": lambda: find_marked_prims(stage, set(MARKER_TOKENS)),
                "floor": lambda: _floor_pass(stage),
                "expression": lambda: _compute_included_paths(stage, queries[0]),
                "traverse": lambda: usdgrip.validate(stage, scan="traverse"),
            },
            args.repeat,
        )
        t_bare, t_grip, t_scan = times["bare"], times["validate"], times["scan"]
        t_floor, t_expr, t_slow = times["floor"], times["expression"], times["traverse"]
        t_default = times["default"]
        report = usdgrip.validate(stage, scan="collection")

        capability = nv.CapabilityRegistry().find(CAPABILITY_ID)
        engine = nv.ValidationEngine(init_rules=False)
        engine.enable_capability(capability)
        if not args.no_nvidia:
            t_nv, result = _best(lambda: engine.validate(stage), 1)  # slow: one run

        grip_codes = _count_codes_usdgrip(report)
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
            f"usdgrip.validate(stage) {t_default:8.3f} s   {t_default / t_bare:6.1f}x bare "
            "(the default for a caller's stage: scan='traverse'; issue 20: <= 24x)"
        )
        print(f"findings usdgrip: {dict(sorted(grip_codes.items()))}")
        if not args.no_nvidia:
            nv_codes = _count_codes_nvidia(result)
            print(
                f"NVIDIA engine + plugin  {t_nv:8.3f} s   {t_nv / t_grip:6.1f}x usdgrip "
                "(target >= 5x)"
            )
            print(f"findings NVIDIA:  {dict(sorted(nv_codes.items()))}")
            print(f"same findings: {'yes' if grip_codes == nv_codes else 'NO'}")

        if args.compare:
            print(
                f"usdgrip.validate(stage) per checkout, child processes, {args.repeat} "
                "interleaved rounds (best of each; ratio: best validate / best bare):"
            )
            compared = compare_checkouts(path, args.compare, args.repeat, args.same_rules)
            # The children traverse the same file: the best bare of all is the common baseline.
            bare = min(entry["bare"] for entry in compared.values())
            here = compared["this checkout"]["validate"]
            for label, entry in compared.items():
                print(
                    f"  {entry['validate']:7.3f} s  bare {entry['bare']:6.3f} s  "
                    f"{entry['ratio']:5.1f}x its bare, {entry['validate'] / bare:5.1f}x the "
                    f"common bare  this checkout {here / entry['validate']:4.2f}x  "
                    f"{entry['issues']} issues  {label} ({entry['module']})"
                )

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
                if label == "NVIDIA" and args.no_nvidia:
                    continue
                profiler = cProfile.Profile()
                profiler.runcall(fn)
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
                print(f"--- profile: {label} ---\n{out.getvalue()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
