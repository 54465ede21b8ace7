"""Enable the usdgrip Kit extensions and report what a user would see, as one JSON line.

Stand-in (what ``tests/test_kit_extensions.py`` runs, one subprocess per case)::

    python -S scenario.py CASE        # CASE: kit, wrong_order, schema_late, bare

``-S`` with ``PYTHONPATH=<site-packages>`` keeps any installed usdgrip away, so the
``usdgrip.schema`` extension has to find the package the way it does in Kit.

Real Kit (the same checks; the extensions are enabled at startup by the command line)::

    kit --ext-folder exts --enable usdgrip.kit --no-window \\
        --exec "tests/kit_standin/scenario.py kit --real"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXAMPLES = REPO / "examples"


def _manager(real: bool, folders: list[Path]):
    if not real:
        sys.path.insert(0, str(HERE / "core"))
    import omni.kit.app

    manager = omni.kit.app.get_app().get_extension_manager()
    for folder in folders:
        manager.add_path(str(folder))
    return manager


def _schema_state() -> dict:
    """What the trap hides: the schema, the tote's slots through omni.usd, GS findings."""
    import omni.usd
    from pxr import Usd

    registry = Usd.SchemaRegistry()
    state = {
        "site_api_defined": registry.FindAppliedAPIPrimDefinition("GripperSiteAPI") is not None,
        "slot_api_defined": registry.FindAppliedAPIPrimDefinition("GripperSlotAPI") is not None,
    }
    context = omni.usd.get_context()
    context.open_stage(str(EXAMPLES / "tote.usda"))
    tote = context.get_stage().GetPrimAtPath("/Tote")
    state["tote_has_slot_api"] = bool(tote.HasAPI("GripperSlotAPI", "left_edge"))
    state["peer_api_defined"] = registry.FindAppliedAPIPrimDefinition("PeerAPI") is not None
    return state


def _codes_by_file(grippers, core) -> dict:
    """For each broken example: the codes of the Grippers menu and of the Asset Validator."""
    import omni.usd

    context = omni.usd.get_context()
    found = {}
    for path in sorted((EXAMPLES / "broken").glob("*.usda")):
        context.open_stage(str(path))
        entry = {}
        if grippers is not None:
            report = grippers.validate_stage()
            entry["menu"] = sorted({issue.code for issue in report.issues})
        if core is not None:
            issues = core.ValidationEngine().validate(context.get_stage())
            entry["asset_validator"] = sorted({i.message.split(" ", 1)[0] for i in issues})
        else:
            from usdgrip.rules import validate

            entry["library"] = sorted({i.code for i in validate(context.get_stage()).issues})
        found[path.name] = entry
    return found


def _menu_item(label: str):
    from omni.kit.menu.utils import find_menu_item

    return find_menu_item("Grippers", label)


async def _click_everything(out: dict, tmp: Path) -> None:
    """Every Grippers entry, through the menu, recording the shared functions each calls."""
    import omni.ui
    import omni.usd

    sys.path.insert(0, str(HERE))
    from spy import spy_shared_functions

    context = omni.usd.get_context()
    calls: dict[str, list[str]] = {}
    with spy_shared_functions() as recorder:
        context.open_stage(str(EXAMPLES / "tote.usda"))
        _menu_item("Show Slots").onclick_fn()
        calls["show_slots"] = recorder.take()
        from usdgrip.views import overlays

        out["slot_overlays"] = overlays.list_overlays(context.get_stage(), "slots")
        task = _menu_item("Sample Slot Grasps").onclick_fn()
        sampled = await task
        calls["sample_slot_grasps"] = recorder.take()
        out["sampled"] = len(sampled)
        out["sample_overlays"] = len(overlays.list_overlays(context.get_stage(), "grasps"))

        import carb.settings

        gripper = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
        carb.settings.get_settings().set("/exts/usdgrip.kit/gripper", gripper)
        carb.settings.get_settings().set("/exts/usdgrip.kit/plan_max_candidates", 6)
        mug = tmp / "mug.usda"  # Export Grasps writes <stage>_grasps.yaml beside the stage
        mug.write_bytes((EXAMPLES / "mug.usda").read_bytes())
        context.open_stage(str(mug))
        context.get_selection().set_selected_prim_paths(["/Mug"])
        main = threading.get_ident()
        planned = await _menu_item("Plan Grasps").onclick_fn()
        out["plan_threads"] = {
            "plan_off_main": main not in recorder.threads("plan_grasp_set"),
            "overlays_on_main": recorder.threads("author_grasp_set_overlays") == {main},
        }
        calls["plan_grasps"] = recorder.take()
        out["planned"] = len(planned)
        out["exported"] = str(_menu_item("Export Grasps").onclick_fn())
        calls["export_grasps"] = recorder.take()
        _menu_item("Clear Overlays").onclick_fn()
        calls["clear_overlays"] = recorder.take()
        out["overlays_after_clear"] = overlays.list_overlays(context.get_stage(), "grasps")
        _menu_item("Validate Stage").onclick_fn()
        calls["validate_stage"] = recorder.take()
    out["calls"] = calls

    # GR.011 (a site found only by legacy markers) has a fix: the window's Fix button
    # applies GripperSiteAPI, which raises when the schema is unknown (the trap).
    context.open_stage(str(EXAMPLES / "broken" / "GR.003-gripper-grip-line.usda"))
    grippers = _menu_item("Validate Stage").onclick_fn.__self__
    grippers.validate_stage()
    window = omni.ui.WINDOWS[-1]
    buttons = [w for w in window.frame.walk() if isinstance(w, omni.ui.Button)]
    before = sorted(i.code for i in grippers.report.issues)
    out["fix_buttons"] = len(buttons)
    if buttons:
        out["fixed"] = buttons[0].click()
        out["root_layer_dirty"] = context.get_stage().GetRootLayer().dirty
    out["codes_before_fix"] = before
    out["codes_after_fix"] = sorted(i.code for i in grippers.report.issues)


def _click(form, label: str):
    import omni.ui

    (button,) = [
        w for w in form.window.frame.walk() if isinstance(w, omni.ui.Button) and w.text == label
    ]
    return button.click()


def _author_everything(out: dict, tmp: Path) -> None:
    """The authoring entries: forms, the rules' verdict, OK through omni.kit.commands, undo."""
    import omni.kit.commands
    import omni.kit.undo
    import omni.usd

    import usdgrip
    from usdgrip.views import overlays

    context = omni.usd.get_context()
    selection = context.get_selection()
    got: dict = {}
    got["registered"] = sorted(n for n in omni.kit.commands.REGISTRY if n.startswith("Usdgrip"))
    for name in ("tote.usda", "gripper.usda", "graspable_prop.usda"):
        (tmp / name).write_bytes((EXAMPLES / name).read_bytes())

    context.open_stage(str(tmp / "tote.usda"))
    stage = context.get_stage()
    selection.set_selected_prim_paths(["/Tote"])
    form = _menu_item("Add Slot…").onclick_fn()
    got["slot_fields"] = list(form.models)
    got["slot_name"] = form.value("name")
    form.set_value("center", "0, 5, 0.12")
    got["far_slot"] = [form.ok_enabled(), "GS.009" in form.message]
    got["far_slot_ok_click"] = _click(form, "OK")
    form.set_value("center", "nan, 0, 0")
    got["nan_slot"] = [form.ok_enabled(), form.message.splitlines()[0]]
    form.set_value("center", "0, 0.145")
    got["short_vector"] = form.message
    form.set_value("center", "0, 0.145, 0.12")
    form.set_value("layer", "root")
    got["slot_ok"] = form.ok_enabled()
    got["slot_preview"] = overlays.list_overlays(stage, "preview")
    verdict = _click(form, "OK")
    got["slot_verdict_ok"] = bool(verdict is not None and verdict.ok)
    got["preview_after_ok"] = overlays.list_overlays(stage, "preview")
    names = lambda: [s.name for s in usdgrip.read_gripper_slots(stage.GetPrimAtPath("/Tote"))]  # noqa: E731
    got["slots_after_add"] = names()
    got["root_has_slot1"] = "slot1" in stage.GetRootLayer().ExportToString()
    got["undo"] = omni.kit.undo.undo()
    got["slots_after_undo"] = names()
    form = _menu_item("Edit Slot…").onclick_fn()
    got["edit_values"] = [form.value("name"), form.value("up_range"), form.value("lr")]
    form.set_value("up_range", "0.15")
    form.set_value("layer", "root")
    _click(form, "OK")
    got["edited_up_range"] = (
        stage.GetPrimAtPath("/Tote").GetAttribute("gripperSlot:left_edge:upRange").Get()
    )

    context.open_stage(str(tmp / "gripper.usda"))
    stage = context.get_stage()
    selection.set_selected_prim_paths(["/Gripper/tcp"])
    form = _menu_item("Add Gripper Site…").onclick_fn()
    got["site_values"] = [form.value("max_opening"), form.value("max_payload")]
    form.set_value("max_opening", "0")
    got["site_zero"] = [form.ok_enabled(), "GR.004" in form.message]
    form.set_value("max_opening", "0.1")
    form.set_value("layer", "root")
    got["site_preview"] = overlays.list_overlays(stage, "preview")
    _click(form, "OK")
    got["site_opening"] = (
        stage.GetPrimAtPath("/Gripper/tcp").GetAttribute("gripper:maxOpening").Get()
    )
    form = _menu_item("Remove…").onclick_fn()
    got["remove_item"] = form.value("item")
    form.set_value("layer", "session")
    got["remove_from_session"] = _click(form, "OK") is None and "authored in" in form.message
    form.set_value("layer", "root")
    _click(form, "OK")
    got["site_after_remove"] = stage.GetPrimAtPath("/Gripper/tcp").HasAPI("GripperSiteAPI")
    omni.kit.undo.undo()
    got["site_after_undo"] = stage.GetPrimAtPath("/Gripper/tcp").HasAPI("GripperSiteAPI")

    context.open_stage(str(tmp / "graspable_prop.usda"))
    stage = context.get_stage()
    selection.set_selected_prim_paths(["/Block"])
    form = _menu_item("Add Grasp Line…").onclick_fn()
    got["line_name"] = form.value("name")
    form.set_value("name", "grasp_identifier_01")
    got["line_clash"] = [form.ok_enabled(), form.message.splitlines()[0]]
    form.set_value("name", "grasp_identifier_03")
    form.set_value("p0", "-0.05, 0, 0.06")
    form.set_value("p1", "0.05, 0, 0.06")
    edits = tmp / "prop.edits.usda"
    form.set_value("layer", str(edits))
    _click(form, "OK")
    got["line_in_stage"] = bool(stage.GetPrimAtPath("/Block/grasp_identifier_03"))
    got["root_untouched"] = "grasp_identifier_03" not in stage.GetRootLayer().ExportToString()
    got["saved"] = [str(p) for p in _menu_item("Save Edit Layers").onclick_fn()]
    text = edits.read_text() if edits.exists() else ""
    got["edits_file"] = ["@./graspable_prop.usda@" in text, "grasp_identifier_03" in text]
    out["authoring"] = got


def run(case: str, real: bool, tmp: Path, exts: Path = REPO / "exts") -> dict:
    standin = HERE / "exts"
    out: dict = {"case": case}
    if case == "kit" and real:  # enabled at startup by the command line
        manager = _manager(real, [exts])
        out["enabled"] = manager.set_extension_enabled_immediate("usdgrip.kit", True)
    elif case == "kit":  # with another schema extension at order -100, started after ours
        manager = _manager(real, [standin, exts, HERE / "peer"])
        out["enabled"] = manager.enable_at_startup(["usdgrip.kit", "zz.peer.schema"])
    elif case == "wrong_order":
        manager = _manager(real, [standin, HERE / "wrong_order"])
        out["enabled"] = manager.set_extension_enabled_immediate("usdgrip.wrong_order", True)
    elif case == "schema_late":
        manager = _manager(real, [standin, exts])
        manager.set_extension_enabled_immediate("omni.usd", True)
        out["enabled"] = manager.set_extension_enabled_immediate("usdgrip.schema", True)
    elif case == "bare":  # only what usdgrip.kit requires: no menu, no validator, no omni.ui
        bare = tmp / "exts_bare"
        bare.mkdir(exist_ok=True)
        for name in ("omni.usd.libs", "omni.usd"):
            link = bare / name
            if not link.exists():
                link.symlink_to(standin / name)
        manager = _manager(real, [bare, exts])
        out["enabled"] = manager.set_extension_enabled_immediate("usdgrip.kit", True)
    else:
        raise SystemExit(f"unknown case {case!r}")
    # Only the stand-in records these; a real Kit logs them.
    out["startup_order"] = list(getattr(manager, "startup_order", []))
    out["late_schema_plugins"] = list(getattr(manager, "late_schema_plugins", []))
    out["errors"] = list(getattr(manager, "errors", []))
    if not out["enabled"]:
        return out

    import omni.usd

    import usdgrip

    out["usdgrip_file"] = usdgrip.__file__
    out.update(_schema_state())
    core = None  # in a real Kit, the engine's results differ: the library's codes are used
    if not real and manager.is_extension_enabled("omni.asset_validator.core"):
        import omni.asset_validator.core as core
    out["asset_validator_rules"] = (
        sorted(r.__name__ for r in core.ValidationRulesRegistry.rules("usdgrip")) if core else None
    )
    item, out["menu"] = None, None
    if not real and manager.is_extension_enabled("omni.kit.menu.utils"):
        from omni.kit.menu.utils import MENUS

        item = _menu_item("Validate Stage")
        out["menu"] = [i.name for items in MENUS.get("Grippers", []) for i in items]
    grippers = item.onclick_fn.__self__ if item is not None else None
    out["codes"] = _codes_by_file(grippers, core)
    if not real:  # usdgrip.schema also registered the usdview-free UsdValidation plugin
        from pxr import Usd, UsdValidation

        stage = Usd.Stage.Open(str(EXAMPLES / "broken" / "GR.003-gripper-grip-line.usda"))
        errors = UsdValidation.ValidationContext(keywords=["usdgrip"]).Validate(stage)
        out["usd_validation_errors"] = sorted({e.GetName() for e in errors})
    if case == "wrong_order":  # GR.011 offers no fix, and applying the API fails
        from usdgrip.rules import validate

        stage = omni.usd.get_context().get_stage()
        stage = stage.Open(str(EXAMPLES / "broken" / "GR.002-gripper-forward-axis.usda"))
        issues = [i for i in validate(stage).issues if i.code == "GR.011"]
        out["gr011_fixable"] = [i.fixable for i in issues]
        try:
            out["apply_site_api"] = repr(
                stage.GetPrimAtPath(issues[0].prim).ApplyAPI("GripperSiteAPI")
            )
        except Exception as exc:
            out["apply_site_api"] = f"{type(exc).__name__}: {exc}"
    if case == "kit" and not real:
        asyncio.run(_click_everything(out, tmp))
        _author_everything(out, tmp)
        manager.set_extension_enabled_immediate("usdgrip.kit", False)
        from omni.kit.menu.utils import MENUS

        out["menu_after_shutdown"] = "Grippers" in MENUS
        out["rules_after_shutdown"] = list(core.ValidationRulesRegistry.rules("usdgrip"))
        import omni.kit.commands

        out["commands_after_shutdown"] = [
            n for n in omni.kit.commands.REGISTRY if n.startswith("Usdgrip")
        ]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("case")
    parser.add_argument("--real", action="store_true", help="inside a real Kit")
    parser.add_argument("--tmp", default=".", help="folder for written files")
    parser.add_argument("--exts", default=str(REPO / "exts"), help="the usdgrip extensions")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    result = run(args.case, args.real, Path(args.tmp), Path(args.exts))
    print(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
