"""The Grippers menu in Omniverse Kit (Kit, Isaac Sim, USD Composer), without Qt.

The ``usdgrip.kit`` extension (``exts/usdgrip.kit``) calls :func:`start` in
``on_startup`` and :meth:`KitExtension.shutdown` in ``on_shutdown``; nothing
else. Every entry calls the same :mod:`usdgrip.views.actions` functions as the
usdview commands. Kit modules are imported here, when the extension starts, and
only ``omni.usd`` is required:

- ``omni.asset_validator.core``: the usdgrip rules are registered in its
  ``ValidationRulesRegistry`` (category ``usdgrip``), so the Asset Validator
  window runs them (:mod:`usdgrip.adapters.omni_asset_validator`);
- ``omni.kit.menu.utils``: the **Grippers** menu (``MenuItemDescription`` and
  ``add_menu_items`` / ``remove_menu_items``);
- ``omni.ui``: Validate Stage lists its issues in a small window with a Fix
  button per fixable issue (without it, the issues go to the log);
- ``omni.kit.notification_manager``: status lines also pop up (they always go to
  the ``usdgrip.kit`` logger);
- ``carb.settings``: the ``/exts/usdgrip.kit/*`` settings of the extension.

Without one of the optional modules the extension still starts and logs one
line saying what is missing. Sampling and planning run in a worker thread
(``loop.run_in_executor``) of Kit's asyncio loop; reading the stage and
authoring overlays stay on the main thread.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pxr import Usd

from usdgrip.views import actions, overlays
from usdgrip.views.grasp_set import GraspSet
from usdgrip.views.shapes import DEFAULT_OPEN_WIDTH

MENU = "Grippers"
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
#: The usdview command (:mod:`usdgrip.views.commands`) doing the same job as each entry.
USDVIEW_COMMANDS = {
    "validate_stage": "validate_stage",
    "show_slots": "show_slots",
    "clear_overlays": "clear_overlays",
    "sample_slot_grasps": "sample_slot_grasps",
    "plan_grasps": "plan_grasps",
    "export_grasps": "export_grasps",
}

log = logging.getLogger("usdgrip.kit")


def _import_optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


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
        self.report = validate(stage)
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
                    ui.Label(f"<{issue.prim}>", width=200)
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


@dataclass
class KitExtension:
    """What :func:`start` set up, undone by :meth:`shutdown`."""

    grippers: KitGrippers
    menu_utils: Any = None
    menu: list[Any] = field(default_factory=list)
    validator_core: Any = None
    checkers: list[type] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def shutdown(self) -> None:
        """Remove the menu, deregister the rules, close the window, cancel running tasks."""
        from usdgrip.adapters.omni_asset_validator import deregister_rules

        if self.menu_utils is not None and self.menu:
            self.menu_utils.remove_menu_items(self.menu, MENU)
        self.menu = []
        if self.validator_core is not None and self.checkers:
            deregister_rules(self.validator_core, self.checkers)
        self.checkers = []
        for task in list(self.grippers.tasks):
            task.cancel()
        if self.grippers.window is not None:
            self.grippers.window.visible = False
            self.grippers.window = None


def _read_settings() -> dict[str, Any]:
    carb_settings = _import_optional("carb.settings")
    if carb_settings is None:
        return {}
    settings = carb_settings.get_settings()
    values = {name: settings.get(f"{SETTINGS_ROOT}/{name}") for name in DEFAULT_SETTINGS}
    return {name: value for name, value in values.items() if value is not None}


def start(ext_id: str = "usdgrip.kit") -> KitExtension:
    """Set up the extension: rules in the Asset Validator, the Grippers menu (when present).

    Args:
        ext_id: the id Kit passes to ``on_startup`` (only logged).
    """
    import omni.usd

    ui = _import_optional("omni.ui")
    notifications = _import_optional("omni.kit.notification_manager")

    def notify(text: str) -> None:
        log.info(text)
        if notifications is not None:
            notifications.post_notification(text)

    grippers = KitGrippers(omni.usd.get_context(), _read_settings, ui, notify)
    extension = KitExtension(grippers)

    core = _import_optional("omni.asset_validator.core")
    if core is not None:
        from usdgrip.adapters.omni_asset_validator import register_rules

        extension.validator_core = core
        extension.checkers = register_rules(core)
    else:
        extension.missing.append("omni.asset_validator.core (rules not in the Asset Validator)")

    menu_utils = _import_optional("omni.kit.menu.utils")
    if menu_utils is not None:
        extension.menu_utils = menu_utils
        extension.menu = [
            menu_utils.MenuItemDescription(name=label, onclick_fn=getattr(grippers, method))
            for label, method in MENU_ENTRIES
        ]
        menu_utils.add_menu_items(extension.menu, MENU)
    else:
        extension.missing.append("omni.kit.menu.utils (no Grippers menu)")
    if ui is None:
        extension.missing.append("omni.ui (validation issues go to the log)")
    log.info(
        "%s started%s",
        ext_id,
        "; without " + ", ".join(extension.missing) if extension.missing else "",
    )
    return extension
