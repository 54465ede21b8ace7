"""Run by ``testusdview --testScript`` after ``eval "$(usdgrip env)"``: which pxr and usdgrip load.

Writes ``pxr``, ``usdviewq``, ``usdgrip`` (module files), the Grippers menu entries
and the status after Show Slots as JSON to ``$USDGRIP_E2E_OUT``.
"""

import json
import os


def testUsdviewInputFunction(appController):
    import pxr
    import pxr.Usdviewq

    window = appController._mainWindow
    out = {"pxr": pxr.__file__, "usdviewq": pxr.Usdviewq.__file__, "menu": []}
    for action in window.menuBar().actions():
        if action.text() == "Grippers":
            out["menu"] = [a.text() for a in action.menu().actions()]
            show = next(a for a in action.menu().actions() if a.text() == "Show Slots")
            show.trigger()
            appController._processEvents(5)
    import usdgrip

    out["usdgrip"] = usdgrip.__file__
    out["status"] = window.statusBar().currentMessage()
    with open(os.environ["USDGRIP_E2E_OUT"], "w") as handle:
        json.dump(out, handle)
