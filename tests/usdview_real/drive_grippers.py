"""Drive the Grippers menu in a real usdview: run by ``testusdview --testScript`` (one process).

usdview calls :func:`testUsdviewInputFunction` with its ``AppController`` once the
stage is open. Everything goes through the menu bar (find "Grippers", trigger an
entry by its text), the dialogs' own buttons and usdview's File menu, the way a
user would; only what usdview's window shows (widgets, status bar, viewport
pixels) and the stage's layers are read back. The findings are written as JSON
to ``$USDGRIP_E2E_OUT`` for tests/test_usdview_real.py to assert on.

Settings come from ``$USDGRIP_E2E`` (JSON): ``broken`` (files), ``fixable`` (a
copy of a file with a fixable issue, fixed into its root layer and saved),
``gripper``, ``count``, ``seed`` (planning), ``export`` (YAML path), ``editor`` (a Grasp
Editor file for Load Grasps…), ``shots``
(folder for viewport grabs) and, optionally, ``screenshots`` (folder for the
README's pictures).
"""

import json
import os
import sys
import time
import traceback


def testUsdviewInputFunction(appController):
    config = json.loads(os.environ["USDGRIP_E2E"])
    out = {"exceptions": [], "steps": {}}
    hook = sys.excepthook

    def record(kind, value, tb):  # exceptions raised in Qt slots land here
        out["exceptions"].append("".join(traceback.format_exception(kind, value, tb)))
        hook(kind, value, tb)

    sys.excepthook = record
    try:
        _drive(appController, config, out)
    except Exception:
        out["exceptions"].append(traceback.format_exc())
    finally:
        sys.excepthook = hook
        with open(os.environ["USDGRIP_E2E_OUT"], "w") as handle:
            json.dump(out, handle, indent=1)


def _drive(app, config, out):
    from pxr import Gf, UsdGeom
    from pxr.Usdviewq.qt import QtCore, QtWidgets

    api = app._usdviewApi
    window = api.qMainWindow
    steps = out["steps"]
    shots = config["shots"]
    readme = config.get("screenshots")
    app._stageView.setFixedSize(760, 420)
    window.setGeometry(0, 0, 1440, 980)

    def settle(seconds=0.0):
        end = time.monotonic() + seconds
        while True:
            app._processEvents(5)
            if time.monotonic() >= end:
                return

    def wait_for(condition, timeout=90.0):
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                raise TimeoutError("timed out waiting in usdview")
            QtWidgets.QApplication.processEvents()
            time.sleep(0.01)
        settle()

    def menu(title):
        for action in window.menuBar().actions():
            if action.text().replace("&", "") == title and action.menu() is not None:
                return action.menu()
        raise LookupError(f"no menu {title!r} in usdview's menu bar")

    def trigger(title, text):
        for action in menu(title).actions():
            if action.text() == text:
                action.trigger()
                settle()
                return action
        raise LookupError(f"no entry {text!r} in the {title} menu")

    def status():
        return window.statusBar().currentMessage()

    def layers():
        stage = api.stage
        root = stage.GetRootLayer()
        return {
            "session": "__usdgrip_overlays" in stage.GetSessionLayer().ExportToString(),
            "root": "__usdgrip_overlays" in root.ExportToString(),
            "root_dirty": root.dirty,
            "slots": children(stage, "/__usdgrip_overlays/slots"),
            "grasps": children(stage, "/__usdgrip_overlays/grasps"),
            "preview": children(stage, "/__usdgrip_overlays/preview"),
        }

    def select(*paths):
        api.ClearPrimSelection()
        for path in paths:
            api.AddPrimToSelection(api.stage.GetPrimAtPath(path))
        settle()

    def grab(name):
        app._stageView.updateGL()
        settle(0.3)
        image = api.GrabViewportShot()
        path = os.path.join(shots, name)
        image.save(path, "PNG")
        return path

    def screenshot(name, widget=None):
        """A README picture: the screen (menus are their own windows), or one widget."""
        if not readme:
            return
        settle(0.5)
        screen = QtWidgets.QApplication.primaryScreen()
        if widget is None:
            geometry = window.frameGeometry()
            image = screen.grabWindow(
                0, geometry.x(), geometry.y(), geometry.width(), geometry.height()
            )
        else:
            top_left = widget.mapToGlobal(QtCore.QPoint(0, 0))
            image = screen.grabWindow(
                0, top_left.x(), top_left.y(), widget.width(), widget.height()
            )
        image.save(os.path.join(readme, name), "PNG")

    def overlay_pixels():
        """Viewport pixels of every overlay point, projected with the camera usdview drew with."""
        camera = api.currentGfCamera
        frustum = camera.frustum
        matrix = frustum.ComputeViewMatrix() * frustum.ComputeProjectionMatrix()
        width, height = api.viewportSize
        stage = api.stage
        points = []  # overlay points are written in stage units at the stage's root
        root = stage.GetPrimAtPath("/__usdgrip_overlays")
        for prim in (p for p in _iter(root) if p.GetTypeName() == "BasisCurves"):
            for point in prim.GetAttribute("points").Get():
                ndc = matrix.Transform(Gf.Vec3d(point))
                points.append(((ndc[0] + 1) / 2 * width, (1 - ndc[1]) / 2 * height))
        return points

    def _iter(prim):
        for child in prim.GetChildren():
            yield child
            yield from _iter(child)

    def frame_tote():  # Camera > Frame Selected on the tote, then tumble (as an Alt+drag does)
        select("/Tote")
        app._ui.actionFrame_Selected.trigger()
        api.dataModel.viewSettings.freeCamera.Tumble(30.0, 20.0)
        select()

    # --- start: the tote, nothing overlaid, framed -------------------------------------------
    frame_tote()
    grippers = menu("Grippers")
    steps["menu"] = [a.text() for a in grippers.actions()]
    steps["window"] = [window.width(), window.height()]
    steps["start"] = {"layers": layers(), "bbox": _range(app._stageView._bbox)}
    steps["start"]["display_guide"] = api.dataModel.viewSettings.displayGuide

    # --- validation ------------------------------------------------------------------
    trigger("Grippers", "Validate Stage")
    from usdgrip.views.panels import CandidatesPanel, ResultsPanel

    results = window.findChild(ResultsPanel)
    steps["validate_stage"] = {
        "issues": [f"{i.code} {i.prim}" for i in results.issues()],
        "summary": results.findChild(QtWidgets.QLabel, "summary").text(),
        "visible": results.isVisible(),
    }
    select("/Tote")
    trigger("Grippers", "Validate Selection")
    steps["validate_selection"] = {
        "scope": results.scope(),
        "summary": results.findChild(QtWidgets.QLabel, "summary").text(),
    }
    if readme:
        bar = window.menuBar()
        grippers.popup(bar.mapToGlobal(bar.actionGeometry(grippers.menuAction()).bottomLeft()))
        settle(0.5)
        screenshot("usdview_grippers_menu.png")
        grippers.hide()

    # --- slots on the tote ---------------------------------------------------------------
    select()
    trigger("Grippers", "Show Slots")
    steps["show_slots"] = {"status": status(), "layers": layers()}
    steps["show_slots"]["display_guide"] = api.dataModel.viewSettings.displayGuide
    steps["show_slots"]["purpose"] = UsdGeom.Imageable(
        api.stage.GetPrimAtPath("/__usdgrip_overlays")
    ).ComputePurpose()
    screenshot("usdview_slots.png")

    # --- every broken example: open it (File > Reopen Stage on that file), Show Slots -------
    tote = app._parserData.usdFile
    steps["broken"] = {}
    for path in config["broken"]:
        app._parserData.usdFile = path
        trigger("File", "Reopen Stage")
        rebuilt = status()
        select()
        trigger("Grippers", "Show Slots")
        steps["broken"][os.path.basename(path)] = {
            "after_reopen": rebuilt,
            "status": status(),
            "layers": layers(),
            "results_follow": results._stage is api.stage,
        }
    # --- fix into the root layer and Save (a copy of a broken file with a fixable issue) ----------
    app._parserData.usdFile = config["fixable"]
    trigger("File", "Reopen Stage")
    select()
    trigger("Grippers", "Validate Stage")
    before = [f"{i.code}{' fixable' if i.fixes else ''}" for i in results.issues()]
    results.findChild(QtWidgets.QComboBox, "targetLayer").setCurrentText("Root layer")
    save = results.findChild(QtWidgets.QPushButton, "save")
    offered = save.isVisible() and save.isEnabled()
    results.findChild(QtWidgets.QPushButton, "fixAll").click()
    settle()
    fixed = {"status": status(), "dirty": api.stage.GetRootLayer().dirty}
    screenshot("usdview_results_panel.png")
    save.click()
    settle()
    steps["save"] = {
        "issues_before": before,
        "offered_before_fix": offered,
        "after_fix": fixed,
        "status": status(),
        "dirty": api.stage.GetRootLayer().dirty,
        "issues_after": [str(i.code) for i in results.issues()],
    }

    app._parserData.usdFile = tote
    trigger("File", "Reopen Stage")
    select()
    trigger("Grippers", "Show Slots")
    frame_tote()

    # --- sample ----------------------------------------------------------------------------
    select("/Tote")
    trigger("Grippers", "Sample Slot Grasps…")
    sample = _dialog(QtWidgets, window, "Grippers: sample slot grasps")
    sample.findChild(QtWidgets.QPushButton, "run").click()
    wait_for(lambda: not sample.isRunning())
    candidates = window.findChild(CandidatesPanel)
    steps["sample"] = {
        "message": sample.findChild(QtWidgets.QLabel, "message").text(),
        "rows": candidates.rowCount(),
        "layers": layers(),
    }
    sample.findChild(QtWidgets.QPushButton, "cancel").click()  # Close

    # --- plan ------------------------------------------------------------------------------
    trigger("Grippers", "Plan Grasps…")
    plan = _dialog(QtWidgets, window, "Grippers: plan grasps")
    edit = plan.findChild(QtWidgets.QLineEdit, "gripperAsset")
    edit.setText(config["gripper"])
    edit.editingFinished.emit()
    plan.findChild(QtWidgets.QSpinBox, "count").setValue(config["count"])
    plan.findChild(QtWidgets.QSpinBox, "seed").setValue(config["seed"])
    settle()
    steps["plan_form"] = {
        "object": plan.findChild(QtWidgets.QComboBox, "object").currentText(),
        "site": plan.findChild(QtWidgets.QComboBox, "site").currentText(),
    }
    if readme:
        screenshot("usdview_plan_dialog.png", plan)
    plan.findChild(QtWidgets.QPushButton, "run").click()
    wait_for(lambda: not plan.isRunning())
    steps["plan"] = {
        "message": plan.findChild(QtWidgets.QLabel, "message").text(),
        "rows": candidates.rowCount(),
        "labels": [candidates.table().item(r, 1).text() for r in range(candidates.rowCount())],
        "status": status(),
        "layers": layers(),
    }
    plan.findChild(QtWidgets.QPushButton, "cancel").click()

    # --- highlight from the list, pick in the viewport -----------------------------------------
    candidates.table().setFocus()
    candidates.selectCandidate(2)
    settle()
    highlighted = api.stage.GetPrimAtPath("/__usdgrip_overlays/grasps/g0002")
    color = highlighted.GetAttribute("primvars:displayColor").Get()[0]
    select("/__usdgrip_overlays/grasps/g0003")
    steps["pick"] = {
        "highlight_color": [round(c, 3) for c in color],
        "row_after_pick": candidates.currentRow(),
    }
    select()
    if readme:
        results.parentWidget().hide()  # the candidates dock gets the width
        screenshot("usdview_planned_grasps.png")
        results.parentWidget().show()

    # --- export through the file dialog -----------------------------------------------------------
    def fill_dialog():
        dialog = QtWidgets.QApplication.activeModalWidget()
        if isinstance(dialog, QtWidgets.QFileDialog):  # type the name, press Save
            dialog.findChild(QtWidgets.QLineEdit, "fileNameEdit").setText(config["export"])
            buttons = dialog.findChild(QtWidgets.QDialogButtonBox)
            buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Save).click()
        else:
            QtCore.QTimer.singleShot(50, fill_dialog)

    QtCore.QTimer.singleShot(50, fill_dialog)
    trigger("Grippers", "Export Grasps…")
    steps["export"] = {"status": status(), "exists": os.path.isfile(config["export"])}

    # --- Storm drew the overlays: viewport with Overlays visible on and off ------------------------
    on = grab("overlays_on.png")
    toggle = trigger("Grippers", "Overlays visible")
    off = grab("overlays_off.png")
    steps["visible_off"] = {"checked": toggle.isChecked(), "visibility": _visibility(api)}
    trigger("Grippers", "Overlays visible")
    on_again = grab("overlays_on_again.png")
    steps["storm"] = {
        "on": on,
        "off": off,
        "on_again": on_again,
        "points": overlay_pixels(),
        "viewport": list(api.viewportSize),
    }

    # --- File > Reopen Stage: the panels and overlays follow -------------------------------------
    old_stage = api.stage
    trigger("File", "Reopen Stage")
    steps["reopen"] = {
        "new_stage": api.stage is not old_stage,
        "results_follow": results._stage is api.stage,
        "results_issues": len(results.issues()),
        "layers": layers(),
        "rows": candidates.rowCount(),
        "status": status(),
    }

    # --- Load Grasps…: another writer's file (Isaac Sim's Grasp Editor), converted to G ----------
    trigger("Grippers", "Load Grasps…")
    load = _dialog(QtWidgets, window, "Grippers: load grasps")
    load.findChild(QtWidgets.QLineEdit, "graspFile").setText(config["editor"])
    edit = load.findChild(QtWidgets.QLineEdit, "gripperAsset")
    edit.setText(config["gripper"])
    edit.editingFinished.emit()
    load.findChild(QtWidgets.QComboBox, "site").setCurrentText("/Gripper/tcp")
    settle()
    load.findChild(QtWidgets.QPushButton, "run").click()
    wait_for(lambda: not load.isRunning())
    loaded = candidates.grasps()
    steps["load"] = {
        "message": load.findChild(QtWidgets.QLabel, "message").text(),
        "rows": candidates.rowCount(),
        "labels": [candidates.table().item(r, 1).text() for r in range(candidates.rowCount())],
        "status": status(),
        "poses": loaded.poses.tolist() if loaded is not None else None,
        "layers": layers(),
    }
    load.findChild(QtWidgets.QPushButton, "cancel").click()

    # --- Clear ----------------------------------------------------------------------------------
    trigger("Grippers", "Clear Overlays")
    settle(0.3)
    steps["clear"] = {
        "layers": layers(),
        "status": status(),
        "rows": candidates.rowCount(),
        "display_guide": api.dataModel.viewSettings.displayGuide,
        "bbox": _range(app._stageView._bbox),
    }

    # --- Add Slot…: pick on a copy of the tote, author into the root layer, Save ---------------
    import importlib

    # usdview's own Qt binding's QtTest: the viewport takes a real click
    QtTest = importlib.import_module(QtCore.__name__.rsplit(".", 1)[0] + ".QtTest")

    from usdgrip.views.edit_dialogs import SlotDialog

    app._parserData.usdFile = config["author_tote"]
    trigger("File", "Reopen Stage")
    frame_tote()
    select("/Tote")
    trigger("Grippers", "Add Slot…")
    slot = window.findChild(SlotDialog)
    slot.nameEdit.setText("front_rim")
    slot.pickButton.click()
    camera = api.currentGfCamera
    frustum = camera.frustum
    matrix = frustum.ComputeViewMatrix() * frustum.ComputeProjectionMatrix()
    width, height = api.viewportSize
    ndc = matrix.Transform(Gf.Vec3d(0.6, -0.145, 0.15))  # the front wall's top, world
    pixel = QtCore.QPoint(round((ndc[0] + 1) / 2 * width), round((1 - ndc[1]) / 2 * height))
    picking = slot.isPicking()
    QtTest.QTest.mouseClick(
        app._stageView,
        QtCore.Qt.MouseButton.LeftButton,
        QtCore.Qt.KeyboardModifier.NoModifier,
        pixel,
    )
    settle(0.3)
    picked = {
        "picking_before": picking,
        "picking_after": slot.isPicking(),
        "center": [s.value() for s in slot.center],
        "forward": [s.value() for s in slot.forward],
        "verdict": slot.verdictText(),
        "ok": slot.okEnabled(),
        "layers": layers(),
    }
    slot.move(window.mapToGlobal(QtCore.QPoint(0, 90)))  # over the prim tree: the viewport shows
    picked["display_guide"] = api.dataModel.viewSettings.displayGuide
    screenshot("usdview_add_slot.png")
    slot.layerCombo.setCurrentText("Root layer")
    slot.findChild(QtWidgets.QPushButton, "ok").click()
    settle()
    picked["authored_status"] = status()
    picked["dialog_visible"] = slot.isVisible()
    results.findChild(QtWidgets.QPushButton, "save").click()
    settle()
    picked["saved_status"] = status()
    picked["after_save"] = layers()
    steps["add_slot"] = picked

    # --- Add Grasp Line…: pick p0 and p1 on opposite faces of a copy of the prop, Save --------
    from usdgrip.views.site_line_dialogs import LineDialog

    app._parserData.usdFile = config["author_prop"]
    trigger("File", "Reopen Stage")
    settle(0.5)
    select("/Block")
    app._ui.actionFrame_Selected.trigger()
    api.dataModel.viewSettings.freeCamera.Tumble(30.0, 20.0)
    settle(0.5)
    trigger("Grippers", "Add Grasp Line…")
    line = window.findChild(LineDialog)
    #: The block's side faces (centre at mid height, outward normal), world = its frame.
    faces = [
        ((0.025, 0.0, 0.06), (1.0, 0.0, 0.0)),
        ((-0.025, 0.0, 0.06), (-1.0, 0.0, 0.0)),
        ((0.0, 0.025, 0.06), (0.0, 1.0, 0.0)),
        ((0.0, -0.025, 0.06), (0.0, -1.0, 0.0)),
    ]

    def pick_facing_face(button):
        """Click the side face that faces the camera most, with ``button`` pressed."""
        camera = api.currentGfCamera
        eye = camera.frustum.position
        point, normal = max(
            faces, key=lambda f: sum(f[1][i] * (eye[i] - f[0][i]) for i in range(3))
        )
        frustum = camera.frustum
        matrix = frustum.ComputeViewMatrix() * frustum.ComputeProjectionMatrix()
        width, height = api.viewportSize
        ndc = matrix.Transform(Gf.Vec3d(*point))
        pixel = QtCore.QPoint(round((ndc[0] + 1) / 2 * width), round((1 - ndc[1]) / 2 * height))
        button.click()
        before = line.isPicking()
        QtTest.QTest.mouseClick(
            app._stageView,
            QtCore.Qt.MouseButton.LeftButton,
            QtCore.Qt.KeyboardModifier.NoModifier,
            pixel,
        )
        settle(0.3)
        return {"face": list(normal), "picking_before": before, "picking_after": line.isPicking()}

    drawn = {"name": line.nameEdit.text(), "p0_pick": pick_facing_face(line.pick0)}
    api.dataModel.viewSettings.freeCamera.Tumble(180.0, 0.0)  # round to the opposite face
    app._stageView.updateGL()
    settle(0.3)
    drawn["p1_pick"] = pick_facing_face(line.pick1)
    drawn.update(
        p0=[s.value() for s in line.p0],
        p1=[s.value() for s in line.p1],
        verdict=line.verdictText(),
        ok=line.okEnabled(),
        preview=children(api.stage, "/__usdgrip_overlays/preview"),
    )
    line.move(window.mapToGlobal(QtCore.QPoint(0, 90)))
    screenshot("usdview_add_grasp_line.png")
    line.layerCombo.setCurrentText("Root layer")
    line.findChild(QtWidgets.QPushButton, "ok").click()
    settle()
    drawn["authored_status"] = status()
    drawn["dialog_visible"] = line.isVisible()
    results.findChild(QtWidgets.QPushButton, "save").click()
    settle()
    drawn["saved_status"] = status()
    drawn["after_save"] = layers()
    steps["add_line"] = drawn


def children(stage, path):
    prim = stage.GetPrimAtPath(path)
    return [str(child.GetPath()) for child in prim.GetChildren()] if prim else []


def _dialog(QtWidgets, window, title):
    for dialog in window.findChildren(QtWidgets.QDialog):
        if dialog.windowTitle() == title:
            return dialog
    raise LookupError(f"no dialog {title!r}")


def _visibility(api):
    prim = api.stage.GetPrimAtPath("/__usdgrip_overlays")
    return str(prim.GetAttribute("visibility").Get()) if prim else None


def _range(bbox):
    box = bbox.ComputeAlignedRange()
    return [list(box.GetMin()), list(box.GetMax())]
