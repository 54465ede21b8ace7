"""The house (docs/architecture.md): imports point one way, checked by parsing every module.

pure -> usd -> grasping / rules / migrate -> views / render / batch / adapters -> cli.
Function-level (lazy) imports count as much as top-level ones.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parent.parent / "lib"
PURE = {
    "usdgrip.errors",
    "usdgrip.model",
    "usdgrip.frames",
    "usdgrip.fileio",
    "usdgrip.contracts",
    "usdgrip.jsontext",
    "usdgrip.yamltext",
    "usdgrip.lambdasim",
    "usdgrip.sampling",
    "usdgrip.slot_checks",
    "usdgrip.grasp_lines",
}
#: Room -> rooms it must not import (directly or lazily).
FORBIDDEN = {
    "usd": ("grasping", "rules", "migrate", "views", "render", "batch", "adapters", "cli"),
    "grasping": ("rules", "migrate", "views", "render", "batch", "adapters", "cli"),
    "rules": ("grasping", "migrate", "views", "render", "batch", "adapters", "cli"),
    "migrate": ("grasping", "views", "render", "batch", "adapters", "cli"),
    "views": ("batch", "adapters", "cli"),
    "render": ("batch", "adapters", "cli"),
    "batch": ("views", "render", "adapters", "cli"),
    "adapters": ("grasping", "views", "render", "batch", "cli"),
    "hosts": ("batch", "cli"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(LIB).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every absolute module a file imports (``from a import b`` also counts ``a.b``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def room_of(module: str) -> str:
    """``usdgrip.grasping.collision.scene`` -> ``grasping``; top-level modules by name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


MODULES = {module_name(p): imported_modules(p) for p in sorted(LIB.rglob("*.py"))}


def usdgrip_imports(module: str) -> set[str]:
    return {m for m in MODULES[module] if m.startswith("usdgrip.")}


def test_every_module_is_in_a_known_room():
    rooms = {room_of(m) for m in MODULES} - {""}
    top_level = {
        m for m in MODULES if m.count(".") == 1 and not (LIB / "usdgrip" / room_of(m)).is_dir()
    }
    entry = {"usdgrip.__main__", "usdgrip._plugin", "usdgrip.schema_gen"}
    assert top_level - entry - {"usdgrip.migrate"} == PURE, (
        "a new top-level module: add it to a room (docs/architecture.md)"
    )
    assert rooms - {room_of(m) for m in PURE | entry} == set(FORBIDDEN) | {"cli"}


@pytest.mark.parametrize("module", sorted(PURE))
def test_pure_modules_import_no_pxr_and_nothing_above_them(module):
    imports = MODULES[module]
    assert not {m for m in imports if m == "pxr" or m.startswith("pxr.")}, module
    assert {".".join(m.split(".")[:2]) for m in usdgrip_imports(module)} <= PURE | {module}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if room_of(m) in FORBIDDEN))
def test_rooms_import_only_downward(module):
    room = room_of(module)
    wrong = sorted(m for m in usdgrip_imports(module) if room_of(m) in FORBIDDEN[room])
    assert not wrong, f"{module} ({room}/) imports {wrong}; see docs/architecture.md"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if room_of(m) == "grasping"))
def test_grasping_reads_usd_only_through_the_usd_room(module):
    assert not {m for m in MODULES[module] if m == "pxr" or m.startswith("pxr.")}, module


def test_only_entry_points_import_the_cli():
    importers = {m for m in MODULES if any(room_of(i) == "cli" for i in usdgrip_imports(m))}
    assert {m for m in importers if room_of(m) != "cli"} == {"usdgrip.__main__"}


def test_the_arrow_test_can_fail(tmp_path):
    # The same parse on a module that breaks a rule finds it.
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from usdgrip.grasping.planner import plan_grasps\n")
    assert "usdgrip.grasping.planner" in imported_modules(bad)
    assert room_of("usdgrip.grasping.planner") in FORBIDDEN["usd"]
