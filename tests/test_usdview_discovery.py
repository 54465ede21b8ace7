"""usdview's plugin loading path finds the Grippers container and builds every menu entry.

usd-core ships no usdview, so a subprocess installs a stand-in ``pxr.Usdviewq``
(tests/fake_usdviewq) and runs usdview's steps: Plug registry (from
PXR_PLUGINPATH_NAME = the repository) → derived types of PluginContainer →
plugin.Load() → pythonClass() → registerPlugins + configureView. Where a real
``pxr.Usdviewq`` imports, the same script runs against it.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from real_usdview import requires_usdview, usdview_python_path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tests" / "fake_usdviewq" / "load_plugins.py"
CONTAINER = REPO / "plugins" / "usdview" / "usdGripUsdview" / "__init__.py"

EXPECTED_MENU = [
    "Validate Stage",
    "Validate Selection",
    "",
    "Show Slots",
    "Sample Slot Grasps…",
    "Plan Grasps…",
    "Load Grasps…",
    "Export Grasps…",
    "",
    "Add Slot…",
    "Edit Slot…",
    "Add Gripper Site…",
    "Add Grasp Line…",
    "Remove…",
    "Discard Session Edits",
    "Suggest Slots…",
    "",
    "Clear Overlays",
    "Overlays visible",
]


def _load(
    *extra: str,
    plugin_path: str | None = None,
    pythonpath: str | None = os.environ.get("PYTHONPATH"),
) -> dict:
    env = dict(os.environ)
    env["PXR_PLUGINPATH_NAME"] = plugin_path if plugin_path is not None else str(REPO)
    # The parent's PYTHONPATH is kept (a source-built USD puts its pxr there), after ours.
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "plugins" / "usdview"), str(REPO / "lib"), *filter(None, [pythonpath])]
    )
    env["QT_QPA_PLATFORM"] = "offscreen"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def loaded(tmp_path_factory) -> dict:
    shot = tmp_path_factory.mktemp("menu") / "usdview_grippers_menu.png"
    out = _load("--menu-shot", str(shot), str(REPO / "examples" / "tote.usda"), "/Tote")
    out["menu_png"] = shot
    return out


def test_loading_path_finds_and_loads_the_container(loaded):
    calls = [tuple(c) for c in loaded["calls"]]
    assert ("loadPlugin", "usdGripUsdview") in calls
    assert ("container", "usdGripUsdview.GrippersPluginContainer") in calls
    assert loaded["registry"] is True
    # order: load, instantiate, register every command, then build the menu
    kinds = [c[0] for c in calls]
    assert kinds.index("container") < kinds.index("registerCommandPlugin")
    assert max(i for i, k in enumerate(kinds) if k == "registerCommandPlugin") < kinds.index(
        "findOrCreateMenu"
    )


def test_every_command_is_registered_once_with_the_prefix(loaded):
    names = [c[1] for c in loaded["calls"] if c[0] == "registerCommandPlugin"]
    assert len(names) == 16
    assert len(set(names)) == len(names)
    assert all(n.startswith("Grippers.") for n in names)
    added = [c[2] for c in loaded["calls"] if c[0] == "addItem"]
    assert added == names, "every registered command is in the menu, in order"


def test_one_grippers_menu_with_every_entry(loaded):
    assert list(loaded["menus"]) == ["Grippers"]
    actions = loaded["menus"]["Grippers"]
    assert [a["text"] for a in actions] == EXPECTED_MENU
    assert [a["separator"] for a in actions] == [t == "" for t in EXPECTED_MENU]
    assert all(a["toolTip"] for a in actions if not a["separator"])
    toggle = actions[-1]
    assert toggle["checkable"] and toggle["checked"]
    assert toggle["objectName"] == "usdgripOverlaysVisible"
    assert not any(a["checkable"] for a in actions[:-1])


def test_menu_screenshot(loaded):
    shot = loaded["menu_png"]
    assert loaded["menu_shot"] is True
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 1000


def test_menu_actions_run_the_library_commands(loaded):
    steps = loaded["steps"]
    shown = steps["Show Slots"]
    assert shown["in_session"] and not shown["in_root"]
    assert shown["children"] == [
        "/__usdgrip_overlays/slots",
        "/__usdgrip_overlays/slots/Tote_left_edge",
        "/__usdgrip_overlays/slots/Tote_right_edge",
    ]
    assert steps["Overlays visible"]["visibility"] == "invisible"  # unchecked → hidden
    assert steps["Clear Overlays"] == {
        "in_session": False,
        "in_root": False,
        "children": [],
        "visibility": None,
    }
    assert loaded["status"] == [
        "usdgrip: 2 slot(s) shown on 1 prim(s)",
        "usdgrip: overlays cleared",
    ]


def test_usdview_before_23_02_still_starts_and_toggles_without_a_check_mark():
    # PluginMenu.addItem returned None before OpenUSD 23.02; configureView must not raise
    # (an exception there stops usdview from starting), and the toggle still works.
    out = _load("--add-item-returns-none", str(REPO / "examples" / "tote.usda"), "/Tote")
    actions = out["menus"]["Grippers"]
    assert [a["text"] for a in actions] == EXPECTED_MENU
    assert not any(a["checkable"] for a in actions)
    assert out["steps"]["Show Slots"]["in_session"]
    assert out["steps"]["Overlays visible"]["visibility"] == "invisible"  # toggled: hidden


def test_without_the_plugin_path_nothing_is_loaded():
    out = _load(str(REPO / "examples" / "tote.usda"), plugin_path=str(REPO / "schemas"))
    assert out["registry"] is False
    assert out["menus"] == {}


def test_every_menu_callback_is_a_function_of_the_usdview_host():
    # The container's table and command_function, run without pxr.Usdviewq.
    namespace: dict = {}
    for node in ast.parse(CONTAINER.read_text()).body:
        if isinstance(node, ast.Assign | ast.FunctionDef):
            exec(compile(ast.Module([node], []), str(CONTAINER), "exec"), namespace)
    assert namespace["COMMANDS_MODULE"] == "usdgrip.hosts.usdview.usdview_commands"
    module = importlib.import_module(namespace["COMMANDS_MODULE"])
    functions = [namespace["command_function"](entry[0]) for entry in namespace["COMMANDS"]]
    assert functions[:2] == ["validate_stage", "validate_selection"]
    assert all(callable(getattr(module, name)) for name in functions), functions


def test_container_imports_only_tf_and_the_usdview_plugin_module():
    tree = ast.parse(CONTAINER.read_text())
    imports = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imports.update(f"{node.module}.{a.name}" for a in node.names)
    assert imports == {"pxr.Tf", "pxr.Usdviewq.plugin.PluginContainer"}
    last = tree.body[-1]
    assert (
        isinstance(last, ast.Expr)
        and ast.unparse(last) == "Tf.Type.Define(GrippersPluginContainer)"
    )


def test_plug_info_declares_the_container_type():
    info = json.loads((REPO / "plugins" / "usdview" / "plugInfo.json").read_text())
    (plugin,) = info["Plugins"]
    assert plugin["Type"] == "python"
    assert plugin["Name"] == "usdGripUsdview"
    types = plugin["Info"]["Types"]
    assert types["usdGripUsdview.GrippersPluginContainer"]["bases"] == [
        "pxr.Usdviewq.plugin.PluginContainer"
    ]
    root = json.loads((REPO / "plugInfo.json").read_text())
    assert "plugins/*/" in root["Includes"]


@requires_usdview
def test_stand_in_is_used_even_beside_a_real_usdview():
    # The real pxr (with its Usdviewq) on PYTHONPATH, as with a source-built USD: the
    # stand-in tests still run the stand-in, with that pxr.
    out = _load(str(REPO / "examples" / "tote.usda"), "/Tote", pythonpath=usdview_python_path())
    assert out["pxr"].startswith(usdview_python_path())
    assert "fake_usdviewq" in out["usdviewq"]
    assert ("container", "usdGripUsdview.GrippersPluginContainer") in [
        tuple(c) for c in out["calls"]
    ]
    assert out["steps"]["Show Slots"]["in_session"]


@requires_usdview
def test_real_usdview_plugin_module_loads_the_grippers_menu():
    out = _load(
        "--real", str(REPO / "examples" / "tote.usda"), "/Tote", pythonpath=usdview_python_path()
    )
    assert out["usdviewq"].startswith(usdview_python_path())
    assert out["registry"] is True
    assert [a["text"] for a in out["menus"]["Grippers"]] == EXPECTED_MENU
    assert out["steps"]["Show Slots"]["in_session"]
    assert not out["steps"]["Show Slots"]["in_root"]
