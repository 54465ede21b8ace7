"""The house (docs/architecture.md): rooms, the arrows between them, and names, checked by parsing.

:data:`ROOMS` is the one table: the modules each room holds, the rooms (or single
modules) it may import, and whether it may import ``pxr``. Every module of
``lib/usdgrip`` is parsed; function-level (lazy) imports count as much as top-level
ones, so do ``importlib.import_module("usdgrip.x")`` with a literal name and
``import usdgrip`` followed by ``usdgrip.NAME`` (the module the package exports NAME
from). Besides the arrows, the checks fail on an import circle, on a private name
(``_x``) imported from another module, and on two modules sharing a file stem.
The checker is plain functions over any package folder, and
:func:`test_the_checker_finds_each_kind_of_break` runs it on a small broken package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parent.parent
LIB = REPO / "lib"
PACKAGE = "usdgrip"


class Room(NamedTuple):
    """One room: its modules, what they may import, and whether they may import pxr."""

    modules: tuple[str, ...]
    """Module names; ``pkg.sub.*`` means the package ``pkg.sub`` and everything under it."""
    may_import: frozenset[str] = frozenset()
    """Rooms (or single modules, by full name) the room's modules may import, besides
    their own room and the package itself (``import usdgrip``)."""
    pxr: bool = True
    """Whether its modules may import ``pxr``."""


PURE = (
    "usdgrip.errors",
    "usdgrip.site_records",
    "usdgrip.frames",
    "usdgrip.fileio",
    "usdgrip.file_names",
    "usdgrip.input_reading",
    "usdgrip.contracts",
    "usdgrip.jsontext",
    "usdgrip.yamltext",
    "usdgrip.lambdasim",
    "usdgrip.sampling",
    "usdgrip.slot_checks",
    "usdgrip.site_limits",
    "usdgrip.grasp_line_geometry",
    "usdgrip.extras",
    "usdgrip.gripper_articulation",
    "usdgrip.gripper_kinematics",
    "usdgrip.gripper_opening",
    "usdgrip.surface_pick",
    "usdgrip.gripper_joint_values",
    "usdgrip.interrupts",
    "usdgrip.progress_reporter",
    "usdgrip.physics_outcomes",
)

#: The rooms of lib/usdgrip and the arrows between them (docs/architecture.md draws this).
ROOMS: dict[str, Room] = {
    "package": Room(("usdgrip",), frozenset({"plugin"})),  # lazy exports (strings) only
    # Kit's usdgrip.schema loads _plugin.py on its own: it may import nothing from usdgrip.
    "plugin": Room(("usdgrip._plugin",)),
    "pure": Room(PURE, pxr=False),
    "usd": Room(("usdgrip.usd.*",), frozenset({"pure"})),
    "rules": Room(("usdgrip.rules.*",), frozenset({"pure", "usd"})),
    "grasping": Room(("usdgrip.grasping.*",), frozenset({"pure", "usd"}), pxr=False),
    "migration": Room(("usdgrip.migration",), frozenset({"pure", "usd"})),
    # Checked authoring: the rules judge an edit on a private stage, then usd/ writes it.
    "authoring": Room(("usdgrip.authoring.*",), frozenset({"pure", "usd", "rules"})),
    # Suggest: plans and simulates (grasping), then authors through the rules (authoring).
    "suggest": Room(("usdgrip.suggest.*",), frozenset({"pure", "usd", "grasping", "authoring"})),
    "views": Room(
        ("usdgrip.views.*",),
        frozenset({"pure", "usd", "rules", "grasping", "authoring", "suggest"}),
    ),
    # render draws with the overlays' glyphs and grasp sets (pure numpy), no other views/.
    "render": Room(
        ("usdgrip.render.*",),
        frozenset({"pure", "usd", "grasping", "usdgrip.views.glyphs", "usdgrip.views.grasp_set"}),
    ),
    "validators": Room(("usdgrip.validators.*",), frozenset({"pure", "usd", "rules"})),
    "batch": Room(("usdgrip.batch.*",), frozenset({"pure", "usd", "rules", "grasping"}), pxr=False),
    "hosts": Room(("usdgrip.hosts",)),
    "hosts/usdview": Room(
        ("usdgrip.hosts.usdview.*",), frozenset({"pure", "usd", "rules", "views", "authoring"})
    ),
    "hosts/kit": Room(
        ("usdgrip.hosts.kit.*",),
        frozenset({"pure", "usd", "rules", "views", "validators", "authoring"}),
    ),
    "cli": Room(
        ("usdgrip.cli.*",),
        frozenset(
            {
                "plugin",
                "pure",
                "usd",
                "rules",
                "grasping",
                "migration",
                "authoring",
                "render",
                "batch",
                "suggest",
            }
        ),
    ),
    "entry": Room(("usdgrip.__main__", "usdgrip.schema_gen"), frozenset({"cli", "plugin"})),
    # Deprecated names of validators/ (one release): a finder, no import statement.
    "adapters": Room(("usdgrip.adapters",), pxr=False),
}

#: Known breaks, in one place: helper A's rebuild of grasping/ (issue #20) removed the
#: grasping/ and cli/plan <-> cli/evaluate ones; helper C's discovery rework (#20, one
#: traversal) removes the usd/discovery ones. The lead deletes each entry after merging; an entry
#: that no longer happens fails test_known_exceptions_still_happen.
KNOWN_CIRCLES: set[frozenset[str]] = set()
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()
#: File stems used twice: none left (helper A renamed grasping's, #20).
KNOWN_SHARED_STEMS: set[str] = set()


# --- the checker ------------------------------------------------------------------------


@dataclass
class Package:
    """What parsing a package's files found."""

    imports: dict[str, set[str]] = field(default_factory=dict)
    """Module -> the package's modules it imports (lazily or not)."""
    private: set[tuple[str, str, str]] = field(default_factory=set)
    """``(importer, module, name)`` for every ``from module import _name`` across modules."""
    pxr: set[str] = field(default_factory=set)
    """Modules importing ``pxr``."""
    files: dict[str, Path] = field(default_factory=dict)
    """Module -> its file."""


def _module_name(lib: Path, path: Path) -> str:
    parts = path.relative_to(lib).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_exports(lib: Path, package: str) -> dict[str, str]:
    """The package's ``_EXPORTS`` table (public name -> module), when its __init__ has one."""
    tree = ast.parse((lib / package / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets):
            return ast.literal_eval(node.value)
    return {}


def scan_package(lib: Path, package: str) -> Package:
    """Parse every module of ``lib/package`` and record its imports of the package."""
    found = Package()
    for path in sorted((lib / package).rglob("*.py")):
        found.files[_module_name(lib, path)] = path
    exports = _package_exports(lib, package)
    for module, path in found.files.items():
        is_package = path.name == "__init__.py"
        here = module if is_package else module.rpartition(".")[0]
        targets: set[str] = set()

        def add(
            name: str, imported: str | None = None, module: str = module, targets=targets
        ) -> None:
            """Record ``import name`` (``from name import imported`` when given)."""
            if imported is not None and f"{name}.{imported}" in found.files:
                targets.add(f"{name}.{imported}")
                return
            if imported is not None and name == package and imported in exports:
                targets.add(exports[imported])
                return
            if imported is not None and imported.startswith("_") and not imported.endswith("__"):
                found.private.add((module, name, imported))
            while name and name not in found.files:  # import pkg.mod.Class -> pkg.mod
                name = name.rpartition(".")[0]
            if name:
                targets.add(name)

        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports_package = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "pxr" or alias.name.startswith("pxr."):
                        found.pxr.add(module)
                    if alias.name.split(".")[0] == package:
                        imports_package |= alias.name == package
                        add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's own package up
                    anchor = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                if base == "pxr" or base.startswith("pxr."):
                    found.pxr.add(module)
                if base.split(".")[0] == package:
                    for alias in node.names:
                        add(base, alias.name)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).split(".")[0] == package
            ):
                add(str(node.args[0].value))
        if imports_package:  # import usdgrip; usdgrip.plan_grasps(...) imports its module
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == package
                    and node.attr in exports
                ):
                    targets.add(exports[node.attr])
        found.imports[module] = targets - {module}
    return found


def _matches(module: str, entry: str) -> bool:
    if entry.endswith(".*"):
        stem = entry[:-2]
        return module == stem or module.startswith(stem + ".")
    return module == entry


def room_of(module: str, rooms: Mapping[str, Room]) -> str | None:
    """The room holding ``module`` (the most specific entry wins), or ``None``."""
    best: tuple[int, str] | None = None
    for name, room in rooms.items():
        for entry in room.modules:
            if _matches(module, entry) and (best is None or len(entry) > best[0]):
                best = (len(entry), name)
    return best[1] if best else None


def find_homeless_modules(found: Package, rooms: Mapping[str, Room]) -> list[str]:
    return sorted(m for m in found.imports if room_of(m, rooms) is None)


def find_wrong_arrows(
    found: Package, rooms: Mapping[str, Room], package: str
) -> list[tuple[str, str]]:
    """``(importer, imported)`` for every import the table does not allow."""
    wrong = []
    for module, targets in found.imports.items():
        room = room_of(module, rooms)
        if room is None:
            continue
        allowed = rooms[room].may_import
        for target in targets:
            other = room_of(target, rooms)
            if target == package or other == room or other in allowed or target in allowed:
                continue
            wrong.append((module, target))
    return sorted(wrong)


def find_pxr_breaks(found: Package, rooms: Mapping[str, Room]) -> list[str]:
    return sorted(m for m in found.pxr if (r := room_of(m, rooms)) and not rooms[r].pxr)


def find_circles(found: Package) -> set[frozenset[str]]:
    """Every group of modules importing each other, directly or round a loop (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: set[frozenset[str]] = set()

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(found.imports.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.add(frozenset(group))

    for module in sorted(found.imports):
        if module not in index:
            visit(module)
    return circles


def find_shared_stems(found: Package) -> dict[str, list[str]]:
    """File stem -> the modules using it, for stems used more than once."""
    by_stem: dict[str, list[str]] = {}
    for module, path in found.files.items():
        if path.stem not in ("__init__", "__main__"):
            by_stem.setdefault(path.stem, []).append(module)
    return {stem: sorted(ms) for stem, ms in by_stem.items() if len(ms) > 1}


#: A module longer than this is split along its jobs (issue 20: every module <= ~600 lines).
MAX_MODULE_LINES = 600


def find_long_modules(found: Package, limit: int = MAX_MODULE_LINES) -> dict[str, int]:
    """Module -> its line count, for the modules longer than ``limit`` lines."""
    counts = {
        m: len(path.read_text(encoding="utf-8").splitlines()) for m, path in found.files.items()
    }
    return {m: n for m, n in sorted(counts.items()) if n > limit}


# --- the house ----------------------------------------------------------------------------

FOUND = scan_package(LIB, PACKAGE)


def _describe(pairs: Iterable[object]) -> str:
    return "\n  ".join(map(str, pairs))


def test_every_module_is_in_one_room():
    homeless = find_homeless_modules(FOUND, ROOMS)
    assert not homeless, f"add to a room of ROOMS (docs/architecture.md):\n  {_describe(homeless)}"
    for room in ROOMS.values():
        for entry in room.modules:
            assert any(_matches(m, entry) for m in FOUND.imports), f"{entry}: no such module"


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_rooms_import_only_what_the_table_allows(room):
    wrong = [
        (importer, target)
        for importer, target in find_wrong_arrows(FOUND, ROOMS, PACKAGE)
        if room_of(importer, ROOMS) == room
    ]
    described = [f"{a} imports {b} ({room_of(b, ROOMS)}/)" for a, b in wrong]
    assert not wrong, f"{room}/ may import only {sorted(ROOMS[room].may_import)}:\n  " + _describe(
        described
    )


def test_rooms_without_pxr_import_none():
    # grasping/ reads stages only through usd/; pure modules and batch/ never touch USD.
    assert find_pxr_breaks(FOUND, ROOMS) == []


def test_no_import_circle():
    circles = find_circles(FOUND) - KNOWN_CIRCLES
    assert not circles, "modules importing each other:\n  " + _describe(
        sorted(map(sorted, circles))
    )


def test_no_private_name_imported_across_modules():
    private = FOUND.private - KNOWN_PRIVATE_IMPORTS
    assert not private, "make it public or keep it in its module:\n  " + _describe(sorted(private))


def test_no_two_modules_share_a_file_stem():
    shared = {s: ms for s, ms in find_shared_stems(FOUND).items() if s not in KNOWN_SHARED_STEMS}
    assert not shared, f"name each module for its job: {shared}"


def test_every_module_is_at_most_600_lines():
    long = find_long_modules(FOUND)
    assert not long, (
        f"split along its jobs (docs/architecture.md, at most {MAX_MODULE_LINES} lines): {long}"
    )


def test_known_exceptions_still_happen():
    # A fixed exception must leave the lists, so that it cannot come back unnoticed.
    assert not KNOWN_CIRCLES - find_circles(FOUND)
    assert not KNOWN_PRIVATE_IMPORTS - FOUND.private
    assert not KNOWN_SHARED_STEMS - set(find_shared_stems(FOUND))


def test_only_the_entry_points_import_the_cli():
    importers = {
        room_of(m, ROOMS)
        for m, targets in FOUND.imports.items()
        if any(room_of(t, ROOMS) == "cli" for t in targets)
    }
    assert importers == {"cli", "entry"}


def test_docs_architecture_names_every_room_and_rule():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    for room in ROOMS:
        assert f"`{room}`" in text or f"{room}/" in text, room
    assert "tests/test_architecture.py" in text


# --- the checker can fail -----------------------------------------------------------------

BROKEN = {
    "__init__.py": "",
    "low.py": "from fakepkg.high import run\n",  # wrong arrow (low may import nothing)
    "high.py": (
        "def run():\n"
        "    from fakepkg.low import helper  # lazy: half of a circle\n"
        "    return helper\n"
    ),
    "pure.py": "import pxr.Usd\nfrom fakepkg.high import _secret\n",
    "x/__init__.py": "",
    "x/util.py": "import importlib\nimportlib.import_module('fakepkg.y.util')\n",
    "y/__init__.py": "",
    "y/util.py": "from . import helpers\nfrom ..low import _cache\n",
    "y/helpers.py": "",
    "stray.py": "",
}
BROKEN_ROOMS = {
    "package": Room(("fakepkg",)),
    "low": Room(("fakepkg.low", "fakepkg.pure"), pxr=False),
    "high": Room(("fakepkg.high",), frozenset({"low"})),
    "x": Room(("fakepkg.x.*",), frozenset({"low"})),
    "y": Room(("fakepkg.y.*",), frozenset({"low"})),
}


def test_the_checker_finds_each_kind_of_break(tmp_path):
    for name, text in BROKEN.items():
        (tmp_path / "fakepkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fakepkg" / name).write_text(text)
    found = scan_package(tmp_path, "fakepkg")
    assert find_homeless_modules(found, BROKEN_ROOMS) == ["fakepkg.stray"]
    assert find_wrong_arrows(found, BROKEN_ROOMS, "fakepkg") == [
        ("fakepkg.low", "fakepkg.high"),
        ("fakepkg.pure", "fakepkg.high"),
        ("fakepkg.x.util", "fakepkg.y.util"),  # through importlib.import_module
    ]
    assert find_pxr_breaks(found, BROKEN_ROOMS) == ["fakepkg.pure"]
    assert find_circles(found) == {frozenset({"fakepkg.low", "fakepkg.high"})}
    assert found.private == {
        ("fakepkg.pure", "fakepkg.high", "_secret"),
        ("fakepkg.y.util", "fakepkg.low", "_cache"),  # a relative import, resolved
    }
    assert found.imports["fakepkg.y.util"] == {"fakepkg.y.helpers", "fakepkg.low"}
    assert find_shared_stems(found) == {"util": ["fakepkg.x.util", "fakepkg.y.util"]}


def test_the_checker_counts_module_lines(tmp_path):
    (tmp_path / "fakepkg").mkdir()
    (tmp_path / "fakepkg" / "__init__.py").write_text("")
    (tmp_path / "fakepkg" / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "fakepkg" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    found = scan_package(tmp_path, "fakepkg")
    assert find_long_modules(found) == {"fakepkg.long": MAX_MODULE_LINES + 1}


def test_the_package_exports_count_as_imports(tmp_path):
    (tmp_path / "fakepkg").mkdir()
    (tmp_path / "fakepkg" / "__init__.py").write_text('_EXPORTS = {"run": "fakepkg.high"}\n')
    (tmp_path / "fakepkg" / "high.py").write_text("def run(): ...\n")
    (tmp_path / "fakepkg" / "low.py").write_text(
        "def f():\n    import fakepkg\n    return fakepkg.run()\n"
    )
    (tmp_path / "fakepkg" / "other.py").write_text("from fakepkg import run\n")
    found = scan_package(tmp_path, "fakepkg")
    assert found.imports["fakepkg.low"] == {"fakepkg", "fakepkg.high"}
    assert found.imports["fakepkg.other"] == {"fakepkg.high"}
