"""Run usdview's plugin start-up in this process and print what it built, as JSON.

Usage: python load_plugins.py [--real] [--add-item-returns-none] [--menu-shot PNG] STAGE
       [SELECT_PATH]

Without ``--real`` the stand-in ``pxr.Usdviewq`` of this folder is installed
first; with it, the real ``pxr.Usdviewq`` must import. Either way the steps
are usdview's: ``pxr.Usdviewq.plugin.loadPlugins(usdviewApi, mainWindow)``
(Plug registry → derived types of PluginContainer → plugin.Load() →
pythonClass() → registerPlugins + configureView). Then every Grippers action
is listed and "Show Slots", "Overlays visible" and "Clear Overlays" are
triggered, recording the session layer after each.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

real = "--real" in sys.argv
old_add_item = "--add-item-returns-none" in sys.argv  # usdview before 23.02
args = [a for a in sys.argv[1:] if a not in ("--real", "--add-item-returns-none")]
menu_shot = None
if "--menu-shot" in args:
    at = args.index("--menu-shot")
    menu_shot = args[at + 1]
    del args[at : at + 2]
if not real:
    import fake_usdviewq

    fake_usdviewq.install()

from pxr import Usd  # noqa: E402
from pxr.Usdviewq import plugin  # noqa: E402
from pxr.Usdviewq.qt import QtWidgets  # noqa: E402

from fake_usdviewq.fake_api import FakeUsdviewApi  # noqa: E402

if old_add_item:
    _add_item = plugin.PluginMenu.addItem

    def _add_item_without_result(self, *args, **kwargs):
        _add_item(self, *args, **kwargs)  # as PluginMenu.addItem did before OpenUSD 23.02

    plugin.PluginMenu.addItem = _add_item_without_result

app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
window = QtWidgets.QMainWindow()
stage = Usd.Stage.Open(args[0])
api = FakeUsdviewApi(stage, window)
registry = plugin.loadPlugins(api, window)

import pxr  # noqa: E402

out: dict = {
    "registry": registry is not None,
    "menus": {},
    "calls": [],
    "pxr": pxr.__file__,
    "usdviewq": plugin.__file__,
}
for menu in window.menuBar().findChildren(QtWidgets.QMenu):
    out["menus"][menu.title()] = [
        {
            "text": a.text(),
            "separator": a.isSeparator(),
            "checkable": a.isCheckable(),
            "checked": a.isChecked(),
            "toolTip": a.toolTip(),
            "objectName": a.objectName(),
        }
        for a in menu.actions()
    ]
if menu_shot:
    grippers = [
        m for m in window.menuBar().findChildren(QtWidgets.QMenu) if m.title() == "Grippers"
    ]
    if grippers:
        grippers[0].adjustSize()
        out["menu_shot"] = bool(grippers[0].grab().save(menu_shot))
if hasattr(plugin, "CALLS"):
    out["calls"] = [list(c) for c in plugin.CALLS]


def overlay_state() -> dict:
    session = stage.GetSessionLayer().ExportToString()
    prim = stage.GetPrimAtPath("/__usdgrip_overlays")
    return {
        "in_session": "__usdgrip_overlays" in session,
        "in_root": "__usdgrip_overlays" in stage.GetRootLayer().ExportToString(),
        "children": [str(p.GetPath()) for p in Usd.PrimRange(prim)][1:] if prim else [],
        "visibility": prim.GetAttribute("visibility").Get() if prim else None,
    }


actions = {a.text(): a for m in window.menuBar().findChildren(QtWidgets.QMenu) for a in m.actions()}
if len(args) > 1:
    api.select(args[1])
steps = {}
for name in ("Show Slots", "Overlays visible", "Clear Overlays"):
    if name in actions:
        actions[name].trigger()
        steps[name] = overlay_state()
out["steps"] = steps
out["status"] = api.status
print(json.dumps(out))
