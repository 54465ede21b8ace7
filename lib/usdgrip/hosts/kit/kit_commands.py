"""The Grippers menu's commands on one Kit ``UsdContext`` (no Qt).

:class:`KitGrippers` holds one method per menu entry; each calls the same
:mod:`usdgrip.views.actions` functions as the usdview commands
(:data:`USDVIEW_COMMANDS` pairs them). :mod:`usdgrip.hosts.kit.kit_extension` builds
it when the extension starts. Sampling and planning run in a worker thread
(``loop.run_in_executor``) of Kit's asyncio loop; reading the stage and authoring
overlays stay on the main thread. Validate Stage lists its issues in an ``omni.ui``
window with a Fix button per fixable issue when ``omni.ui`` is given (else the
issues go to the log). Add Slot…, Edit Slot…, Add Gripper Site…, Add Grasp Line… and
Remove… open the forms of :mod:`usdgrip.hosts.kit.kit_authoring` (Kit commands with undo).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pxr import Usd

from usdgrip.views import actions, overlays
from usdgrip.views.glyphs import DEFAULT_OPEN_WIDTH
from usdgrip.views.grasp_set import GraspSet

SETTINGS_ROOT = "/exts/usdgrip.kit"
#: Settings of the extension (``--/exts/usdgrip.kit/NAME=VALUE`` on Kit's command line).
DEFAULT_SETTINGS: dict[str, Any] = {
    "gripper": "",  # FILE:/Site for Plan Grasps; empty: the first gripper site of the stage
    "sample_count": 8,
    "sample_seed": 7,
    "plan_max_candidates": 20,
    "plan_seed": 0,
}
#: (label, method of :class:`KitGrippers`): the menu, in order.
MENU_ENTRIES = (
    ("Validate Stage", "validate_stage"),
    ("Show Slots", "show_slots"),
    ("Clear Overlays", "clear_overlays"),
    ("Sample Slot Grasps", "sample_slot_grasps"),
    ("Plan Grasps", "plan_grasps"),
    ("Export Grasps", "export_grasps"),
    ("Add Slot…", "add_slot"),
    ("Edit Slot…", "edit_slot"),
    ("Add Gripper Site…", "add_gripper_site"),
    ("Add Grasp Line…", "add_grasp_line"),
    ("Remove…", "remove_authored"),
    ("Save Edit Layers", "save_edit_layers"),
)
#: The usdview command (:mod:`usdgrip.hosts.usdview.usdview_commands`) doing each entry's job.
USDVIEW_COMMANDS = {
    "validate_stage": "validate_stage",
    "show_slots": "show_slots",
    "clear_overlays": "clear_overlays",
    "sample_slot_grasps": "sample_slot_grasps",
    "plan_grasps": "plan_grasps",
    "export_grasps": "export_grasps",
    "add_slot": "add_slot",
    "edit_slot": "edit_slot",
    "add_gripper_site": "add_gripper_site",
    "add_grasp_line": "add_grasp_line",
    "remove_authored": "remove_authored",
}
#: The line shown when a form needs omni.ui and Kit has none.
NEEDS_UI = (
    "usdgrip: {label} needs omni.ui (a form); from a script: "
    "omni.kit.commands.execute('{command}', edit=..., layer='root') (docs/kit.md)"
)

log = logging.getLogger("usdgrip.kit")


class KitGrippers:
    """The Grippers commands on one Kit ``UsdContext``.

    Args:
        usd_context: ``omni.usd.get_context()`` (``get_stage()``,
            ``get_selection().get_selected_prim_paths()``).
        settings: returns the current values of :data:`DEFAULT_SETTINGS` (read at each
            command; missing keys use the defaults).
        ui: ``omni.ui`` for the results window and the forms, or ``None`` (issues go to
            the log; the forms are not offered).
        notify: where status lines go (default: the ``usdgrip.kit`` logger, which
            Kit routes to its console).
        kit_commands: ``omni.kit.commands`` (the forms run its commands: Edit > Undo), or
            ``None`` (the forms run the same command objects themselves; :meth:`undo`).
    """

    def __init__(
        self,
        usd_context: Any,
        settings: Callable[[], Mapping[str, Any]] | None = None,
        ui: Any = None,
        notify: Callable[[str], None] | None = None,
        kit_commands: Any = None,
    ) -> None:
        from usdgrip.views.saving import EditLayerFiles

        self.usd_context = usd_context
        self.kit_commands = kit_commands
        self.edit_layers = EditLayerFiles()
        self.form: Any = None
        self._picked_slot: str | None = None
        self.done: list[Any] = []
        """Commands run without omni.kit.commands, last last (:meth:`undo` takes one back)."""
        self._read_settings = settings or dict
        self.ui = ui
        self.notify = notify or log.info
        self.grasps: GraspSet | None = None
        self.report: Any = None
        self.window: Any = None
        self.tasks: set[asyncio.Task] = set()

    # --- helpers ----------------------------------------------------------------

    def setting(self, name: str) -> Any:
        """The current value of setting ``name`` (its default when unset)."""
        return {**DEFAULT_SETTINGS, **self._read_settings()}[name]

    def _stage(self) -> Usd.Stage | None:
        stage = self.usd_context.get_stage()
        if stage is None:
            self.notify("usdgrip: open a stage first.")
        return stage

    def _selected_paths(self) -> list[str]:
        return [str(p) for p in self.usd_context.get_selection().get_selected_prim_paths()]

    def _start(self, coroutine: Any) -> asyncio.Task:
        """Schedule ``coroutine`` on Kit's (running) asyncio loop and keep it referenced."""
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # --- entries ----------------------------------------------------------------

    def validate_stage(self) -> Any:
        """Validate the stage; list the issues (code, severity, prim, message, Fix)."""
        from usdgrip.rules import validate

        if (stage := self._stage()) is None:
            return None
        # Kit's stage is read by the renderer and other extensions' threads: no selection is
        # switched on it (the issues under variant prims say which selection showed them).
        self.report = validate(stage, variants="selected")
        counts = ", ".join(f"{n} {s}" for s, n in self.report.counts.items())
        self.notify(f"usdgrip: {len(self.report.issues)} issue(s) ({counts})")
        if self.ui is not None:
            self._build_results_window(stage)
        else:
            for issue in self.report.issues:
                self.notify(issue.describe())
        return self.report

    def fix_issue(self, index: int) -> str:
        """Apply the first fix of issue ``index`` on the stage's edit target, then re-validate."""
        issue = self.report.issues[index]
        if not issue.fixes:
            raise ValueError(f"{issue.code} <{issue.prim}> has no fix")
        stage = self.usd_context.get_stage()
        done = issue.fixes[0].apply(stage.GetEditTarget())
        self.notify(f"usdgrip: fixed: {done}")
        self.validate_stage()
        return done

    def _build_results_window(self, stage: Usd.Stage) -> None:
        ui = self.ui
        if self.window is None:
            self.window = ui.Window("Grippers: validation", width=720, height=320)
        self.window.frame.clear()  # rebuilt on each run (after a Fix too)
        with self.window.frame, ui.ScrollingFrame(), ui.VStack(height=0, spacing=2):
            ui.Label(f"{stage.GetRootLayer().identifier}: {len(self.report.issues)} issue(s)")
            for index, issue in enumerate(self.report.issues):
                with ui.HStack(height=0, spacing=6):
                    ui.Label(issue.code, width=60)
                    ui.Label(issue.severity, width=60)
                    variant = f" [{issue.variant}]" if getattr(issue, "variant", None) else ""
                    ui.Label(f"<{issue.prim}>{variant}", width=200)
                    ui.Label(issue.message, word_wrap=True)
                    if issue.fixable:
                        ui.Button("Fix", width=40, clicked_fn=lambda i=index: self.fix_issue(i))
        self.window.visible = True

    def show_slots(self) -> actions.SlotOverlays | None:
        """Overlay the slots and grasp lines of the selection and under it (all when none is)."""
        if (stage := self._stage()) is None:
            return None
        selected = self._selected_paths()
        paths = actions.find_slot_prims(stage, selected)
        shown = actions.show_slot_overlays(stage, paths, selected)
        self.notify(shown.status)
        return shown

    def clear_overlays(self) -> None:
        """Remove every usdgrip overlay from the session layer and forget the grasps."""
        if (stage := self._stage()) is None:
            return
        self.grasps = None
        overlays.clear_overlays(stage)
        self.notify("usdgrip: overlays cleared")

    def sample_slot_grasps(self) -> asyncio.Task | None:
        """Sample grasps of the selected object (else the first with slots) off the main thread."""
        if (stage := self._stage()) is None:
            return None
        selected = self._selected_paths()
        candidates = actions.find_slot_prims(stage, selected) or actions.find_slot_prims(stage)
        try:
            sampling = actions.read_sampling_input(stage, candidates[0] if candidates else "")
        except (ValueError, OSError) as exc:  # GripperError is a ValueError
            self.notify(f"usdgrip: {exc}")
            return None
        width = actions.find_default_open_width(stage) or DEFAULT_OPEN_WIDTH
        count, seed = int(self.setting("sample_count")), int(self.setting("sample_seed"))
        job = lambda: actions.sample_grasp_set(sampling, count, seed, width)  # noqa: E731
        return self._start(self._run_and_show(stage, job, f"sampling {sampling.object_path}"))

    def plan_grasps(self) -> asyncio.Task | None:
        """Plan grasps for the selected object with the configured gripper, off the main thread."""
        from usdgrip.contracts import parse_gripper

        if (stage := self._stage()) is None:
            return None
        selected = self._selected_paths()
        try:
            if gripper := str(self.setting("gripper")):
                ref = parse_gripper(gripper)
                gripper_asset, site = ref.asset_path, ref.prim_path
            else:
                from usdgrip.usd.sites import find_gripper_sites

                sites = find_gripper_sites(stage, strict=False)
                gripper_asset, site = "", sites[0].path if sites else ""
            request = actions.build_plan_request(
                stage,
                selected[0] if selected else "",
                gripper_asset,
                site,
                int(self.setting("plan_max_candidates")),
                int(self.setting("plan_seed")),
            )
        except (ValueError, OSError) as exc:
            self.notify(f"usdgrip: {exc} (gripper: setting {SETTINGS_ROOT}/gripper = FILE:/Site)")
            return None
        job = lambda: actions.plan_grasp_set(request)  # noqa: E731
        what = f"planning {request.object.geometry.prim_path}"
        return self._start(self._run_and_show(stage, job, what))

    async def _run_and_show(self, stage: Usd.Stage, job: Callable[[], GraspSet], what: str):
        self.notify(f"usdgrip: {what}…")
        loop = asyncio.get_running_loop()
        try:
            grasps = await loop.run_in_executor(None, job)
        except Exception as exc:  # shown to the user, never lost in the worker
            self.notify(f"usdgrip: {what} failed: {exc}")
            return None
        # Back on the main thread: author the overlays on the (same) stage.
        if self.usd_context.get_stage() is not stage:
            self.notify(f"usdgrip: {what}: the stage changed meanwhile; result dropped")
            return None
        self.grasps = grasps
        actions.author_grasp_set_overlays(stage, grasps)
        self.notify(f"usdgrip: {len(grasps)} grasp candidate(s) on {grasps.object_path}")
        return grasps

    def export_grasps(self, path: str | Path | None = None) -> Path | None:
        """Write the shown planned grasps as Isaac-Grasp YAML (default: ``<stage>_grasps.yaml``)."""
        if (stage := self._stage()) is None:
            return None
        if path is None:
            real = stage.GetRootLayer().realPath
            path = Path(real).with_name(Path(real).stem + "_grasps.yaml") if real else None
        try:
            if path is None:
                raise ValueError("the stage is not saved to a file; save it first")
            written = actions.export_grasp_set(self.grasps, path)
        except (ValueError, OSError) as exc:
            self.notify(str(exc) if str(exc).startswith("usdgrip:") else f"usdgrip: {exc}")
            return None
        self.notify(f"usdgrip: wrote {len(self.grasps)} grasps to {written}")
        return written

    # --- authoring ----------------------------------------------------------------

    def _form(self, kind: str, command: str, label: str, values: dict[str, Any], path: str):
        from usdgrip.hosts.kit.kit_authoring import KitEditForm

        if self.form is not None:
            self.form.close()
        self.form = KitEditForm(
            self.ui, kind, self.usd_context.get_stage(), path, values, self.run_command,
            self.notify, command,
        )  # fmt: skip
        return self.form

    def _authoring_target(self, label: str, command: str, what: str) -> str | None:
        """The selected prim for a form, or ``None`` (why notified)."""
        if self._stage() is None:
            return None
        if self.ui is None:
            self.notify(NEEDS_UI.format(label=label, command=command))
            return None
        selected = self._selected_paths()
        if not selected:
            self.notify(f"usdgrip: select {what} first.")
            return None
        # a picked overlay stands for what it draws (the object and its slot, a line, a site)
        path, self._picked_slot = overlays.resolve_overlay_target(
            self.usd_context.get_stage(), selected[0]
        )
        return path

    def add_slot(self) -> Any:
        """Add Slot…: a form for a new slot of the selected object (UsdgripAddSlot)."""
        from usdgrip.views.edit_previews import NEW_SLOT, compute_new_slot_name

        path = self._authoring_target("Add Slot…", "UsdgripAddSlot", "the object prim")
        if path is None:
            return None
        prim = self.usd_context.get_stage().GetPrimAtPath(path)
        values = {**NEW_SLOT, "name": compute_new_slot_name(prim), "layer": "edit target"}
        return self._form("slot", "UsdgripAddSlot", "Add Slot…", values, path)

    def edit_slot(self) -> Any:
        """Edit Slot…: the picked slot overlay's slot, else the selected object's first."""
        from usdgrip.usd.slots import list_slot_names
        from usdgrip.views.edit_previews import NEW_SLOT, read_slot_values

        path = self._authoring_target("Edit Slot…", "UsdgripEditSlot", "an object with a slot")
        if path is None:
            return None
        prim = self.usd_context.get_stage().GetPrimAtPath(path)
        names = list_slot_names(prim) if prim else []
        if not names:
            self.notify("usdgrip: select an object prim with a slot to edit.")
            return None
        name = self._picked_slot if self._picked_slot in names else names[0]
        values = {**NEW_SLOT, **read_slot_values(prim, name)}
        values.update(name=name, layer="edit target")
        return self._form("slot", "UsdgripEditSlot", "Edit Slot…", values, path)

    def add_gripper_site(self) -> Any:
        """Add Gripper Site…: the selected prim's site, or a new one (UsdgripAddGripperSite)."""
        from usdgrip.views.edit_previews import (
            NEW_SITE,
            compute_site_path,
            is_site_prim,
            read_site_values,
        )

        label = "Add Gripper Site…"
        path = self._authoring_target(label, "UsdgripAddGripperSite", "the site prim")
        if path is None:
            return None
        prim = self.usd_context.get_stage().GetPrimAtPath(path)
        values = {**NEW_SITE, **(read_site_values(prim) if is_site_prim(prim) else {})}
        values.update(prim=compute_site_path(prim), layer="edit target")
        values["define"] = "yes"
        return self._form("site", "UsdgripAddGripperSite", label, values, path)

    def add_grasp_line(self) -> Any:
        """Add Grasp Line…: a line grasp_identifier_NN under the selected prop."""
        from usdgrip.views.edit_previews import compute_next_line_name

        path = self._authoring_target("Add Grasp Line…", "UsdgripAddGraspLine", "the prop")
        if path is None:
            return None
        stage = self.usd_context.get_stage()
        values = {"name": compute_next_line_name(stage), "p0": (0.0, 0.0, 0.0)}
        values.update(p1=(0.0, 0.0, 0.0), layer="edit target")
        return self._form("line", "UsdgripAddGraspLine", "Add Grasp Line…", values, path)

    def remove_authored(self) -> Any:
        """Remove…: the site, a slot or a grasp line of the selected prim (UsdgripRemove)."""
        from usdgrip.views.actions import list_removables

        path = self._authoring_target("Remove…", "UsdgripRemove", "the prim")
        if path is None:
            return None
        found = [label for label, _ in list_removables(self.usd_context.get_stage(), path)]
        picked = f"slot {self._picked_slot}"
        item = picked if picked in found else (found[0] if found else "")
        values = {"item": item, "layer": "edit target"}
        return self._form("remove", "UsdgripRemove", "Remove…", values, path)

    def run_command(self, command: str, edit: Any, layer: str) -> Any:
        """Run Kit command ``command`` on ``edit`` (the forms' OK); its verdict.

        The layer is resolved first (an edits layer file refused says why, here); with
        ``omni.kit.commands`` the command goes through Kit (undoable), else it runs here.

        Raises:
            AuthoringError, ValueError, OSError: refused; nothing was authored.
        """
        from usdgrip.authoring.edits import find_target_problem
        from usdgrip.authoring.plans import plan_edit
        from usdgrip.hosts.kit.kit_authoring import COMMANDS, make_command_class, resolve_layer

        stage = self.usd_context.get_stage()
        target = resolve_layer(stage, layer, self.edit_layers)
        problem = find_target_problem(stage, plan_edit(stage, edit), target)
        if problem is not None:  # said here: Kit's execute only logs a failing command
            raise ValueError(problem)
        keywords = {"edit": edit, "layer": layer, "usd_context": self.usd_context}
        keywords["edit_layers"] = self.edit_layers
        spec = next(s for s in COMMANDS if s.name == command)
        done = make_command_class(spec)(**keywords)
        done.check(stage)  # said here too: Kit's execute only logs a failing command
        if self.kit_commands is not None:
            result = self.kit_commands.execute(command, **keywords)
            ran, verdict = (
                result if isinstance(result, tuple) and len(result) == 2 else (True, result)
            )
            if not ran or verdict is None:
                raise ValueError(f"{command} did not run (see Kit's console)")
        else:
            verdict = done.do()
            self.done.append(done)
        state = "removed from" if getattr(edit, "remove", False) else "authored into"
        where = self.edit_layers.find(target)
        shown = where.path.name if where is not None else target.identifier
        self.notify(f"usdgrip: {edit.label} {state} {shown}")
        actions.show_slot_overlays(stage, actions.find_slot_prims(stage), [])
        return verdict

    def undo(self) -> bool:
        """Take back the last command run without omni.kit.commands (Kit's own undo otherwise)."""
        if not self.done:
            return False
        self.done.pop().undo()
        return True

    def save_edit_layers(self) -> list[Path] | None:
        """Save Edit Layers: write every edits layer file the forms authored into.

        ``--layer``'s rules: atomic, read-only and changed-on-disk refused. Returns the
        files written.
        """
        from usdgrip.authoring.edit_layers import save_edits_layer

        if (stage := self._stage()) is None:
            return None
        written = []
        attached = self.edit_layers.on(stage)
        if not attached:
            self.notify("usdgrip: no edits layer file to save (author into one first).")
        for edits in attached:
            try:
                notes = save_edits_layer(edits)
            except (ValueError, OSError) as exc:
                self.notify(f"usdgrip: not saved: {exc}")
                continue
            note = f" ({'; '.join(notes)})" if notes else ""
            self.notify(f"usdgrip: saved {edits.path}{note}")
            written.append(edits.path)
        return written
