"""The Grippers menu commands; each takes usdview's ``usdviewApi``.

Every command follows the same few steps: wrap usdviewApi in a
:class:`~usdgrip.hosts.usdview.usdview_host.UsdviewHost`, get the window's
:class:`~usdgrip.views.session.GrippersSession`, hand the stage (and
selection) to a panel or dialog, show it. The plugin module maps usdview's
camelCase callback names onto these.
"""

from __future__ import annotations

from typing import Any

from usdgrip.hosts.usdview.usdview_host import UsdviewHost
from usdgrip.views import actions
from usdgrip.views.qt import QAction
from usdgrip.views.session import GrippersSession, get_session

#: objectName of the menu's checkable "Overlays visible" action (set by the plugin).
OVERLAYS_VISIBLE_ACTION = "usdgripOverlaysVisible"


def _session(usdview_api: Any) -> GrippersSession | None:
    host = UsdviewHost(usdview_api)
    if host.stage is None:
        host.status("usdgrip: open a stage first.")
        return None
    return get_session(host)


def validate_stage(usdview_api: Any) -> None:
    """Validate the whole stage and show the results panel."""
    if (session := _session(usdview_api)) is not None:
        panel = session.results_panel()
        panel.setStage(session.host.stage)
        session.show_widget(panel)


def validate_selection(usdview_api: Any) -> None:
    """Validate, listing only issues on or under the selected prims."""
    if (session := _session(usdview_api)) is not None:
        paths = session.host.selected_paths
        panel = session.results_panel()
        panel.setStage(session.host.stage, paths or None)
        session.show_widget(panel)


def show_slots(usdview_api: Any) -> None:
    """Overlay the slots and grasp vector lines of the selection and under it (all when none is)."""
    if (session := _session(usdview_api)) is not None:
        selected = list(session.host.selected_paths)
        paths = actions.find_slot_prims(session.host.stage, selected)
        session.show_slots(paths, selected)
        session.host.status(session.last_slots.status)


def sample_slot_grasps(usdview_api: Any) -> None:
    """Open the sample dialog for the selected object."""
    if (session := _session(usdview_api)) is not None:
        dialog = session.dialog("sample")
        dialog.setStage(session.host.stage, session.host.selected_paths)
        session.show_widget(dialog)


def plan_grasps(usdview_api: Any) -> None:
    """Open the planning dialog for the selected object."""
    if (session := _session(usdview_api)) is not None:
        dialog = session.dialog("plan")
        dialog.setStage(session.host.stage, session.host.selected_paths)
        session.show_widget(dialog)


def add_slot(usdview_api: Any) -> None:
    """Open the Add Slot… dialog on the selected object prim."""
    if (session := _session(usdview_api)) is not None:
        session.slot_dialog()


def edit_slot(usdview_api: Any) -> None:
    """Open Edit Slot… on the picked slot overlay's slot, else the selected object's first."""
    if (session := _session(usdview_api)) is not None:
        from usdgrip.usd.slots import list_slot_names

        path, slot = session.target()
        prim = session.host.stage.GetPrimAtPath(path) if path else None
        names = list_slot_names(prim) if prim else []
        if not names:
            session.host.status("usdgrip: select an object prim with a slot to edit.")
            return
        session.slot_dialog(slot if slot in names else names[0])


def add_gripper_site(usdview_api: Any) -> None:
    """Open Add Gripper Site… on the selected prim (its site, or a new one)."""
    if (session := _session(usdview_api)) is not None:
        session.site_dialog()


def add_grasp_line(usdview_api: Any) -> None:
    """Open Add Grasp Line… under the selected prop (or on the selected line)."""
    if (session := _session(usdview_api)) is not None:
        session.line_dialog()


def remove_authored(usdview_api: Any) -> None:
    """Open Remove…: the site, a slot or a grasp line of the selected prim."""
    if (session := _session(usdview_api)) is not None:
        session.remove_dialog()


def discard_session_edits(usdview_api: Any) -> None:
    """Remove what was authored into the session layer "to try" (overlays stay)."""
    if (session := _session(usdview_api)) is not None:
        session.discard_session_edits()


def suggest_slots(usdview_api: Any) -> None:
    """Open the Suggest Slots… dialog (plan, simulate, prove in a worker; preview; author)."""
    if (session := _session(usdview_api)) is not None:
        session.suggest_slots()


def load_grasps(usdview_api: Any) -> None:
    """Open the Load Grasps dialog: an Isaac-Grasp file of any writer, on the selected object."""
    if (session := _session(usdview_api)) is not None:
        session.load_grasps()


def export_grasps(usdview_api: Any) -> None:
    """Write the shown planned grasps as Isaac-Grasp YAML (asks for the file)."""
    if (session := _session(usdview_api)) is not None:
        session.export_grasps()


def clear_overlays(usdview_api: Any) -> None:
    """Remove every usdgrip overlay from the session layer."""
    if (session := _session(usdview_api)) is not None:
        session.clear()
        session.host.status("usdgrip: overlays cleared")


def toggle_overlays(usdview_api: Any) -> None:
    """Follow the menu's checkable "Overlays visible" action (toggle when it is absent)."""
    if (session := _session(usdview_api)) is not None:
        action = session.host.window.findChild(QAction, OVERLAYS_VISIBLE_ACTION)
        session.set_visible(action.isChecked() if action is not None else not session.visible)
