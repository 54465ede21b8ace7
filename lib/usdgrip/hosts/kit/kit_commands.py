"""The Grippers menu's commands on one Kit ``UsdContext`` (no Qt).

:class:`KitGrippers` holds one method per menu entry; each calls the same
:mod:`usdgrip.views.actions` functions as the usdview commands
(:data:`USDVIEW_COMMANDS` pairs them). :mod:`usdgrip.hosts.kit.kit_extension` builds
it when the extension starts. Sampling and planning run in a worker thread
(``loop.run_in_executor``) of Kit's asyncio loop; reading the stage and authoring
overlays stay on the main thread. Validate Stage lists its issues in an ``omni.ui``
window with a Fix button per fixable issue when ``omni.ui`` is given (else the
issues go to the log).
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
)
#: The usdview command (:mod:`usdgrip.hosts.usdview.usdview_commands`) doing each entry's job.
USDVIEW_COMMANDS = {
    "validate_stage": "validate_stage",
    "show_slots": "show_slots",
    "clear_overlays": "clear_overlays",
    "sample_slot_grasps": "sample_slot_grasps",
    "plan_grasps": "plan_grasps",
    "export_grasps": "export_grasps",
}

log = logging.getLogger("usdgrip.kit")


class KitGrippers:
    """The Grippers commands on one Kit ``UsdContext``.

    Args:
        usd_context: ``omni.usd.get_context()`` (``get_stage()``,
            ``get_selection().get_selected_prim_paths()``).
        settings: returns the current values of :data:`DEFAULT_SETTINGS` (read at each
            command; missing keys use the defaults).
        ui: ``omni.ui`` for the results window, or ``None`` (issues go to the log).
        notify: where status lines go (default: the ``usdgrip.kit`` logger, which
            Kit routes to its console).
    """

    def __init__(
        self,
        usd_context: Any,
        settings: Callable[[], Mapping[str, Any]] | None = None,
        ui: Any = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.usd_context = usd_context
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
