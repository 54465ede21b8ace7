"""The ``usdgrip.kit`` extension's start and stop in Omniverse Kit (Kit, Isaac Sim, USD Composer).

The extension (``exts/usdgrip.kit``) calls :func:`start` in ``on_startup`` and
:meth:`KitExtension.shutdown` in ``on_shutdown``; nothing else. Kit modules are
imported here, when the extension starts, and only ``omni.usd`` is required:

- ``omni.asset_validator.core``: the usdgrip rules are registered in its
  ``ValidationRulesRegistry`` (category ``usdgrip``), so the Asset Validator
  window runs them (:mod:`usdgrip.validators.omni_asset_validator`);
- ``omni.kit.menu.utils``: the **Grippers** menu (``MenuItemDescription`` and
  ``add_menu_items`` / ``remove_menu_items``) over
  :class:`~usdgrip.hosts.kit.kit_commands.KitGrippers`;
- ``omni.ui``: Validate Stage lists its issues in a small window with a Fix
  button per fixable issue (without it, the issues go to the log); the authoring
  entries (Add Slot…, Edit Slot…, Add Gripper Site…, Add Grasp Line…, Remove…) open
  small forms (without it they say so, and the commands stay usable from scripts);
- ``omni.kit.commands``: the authoring commands (``UsdgripAddSlot``...,
  :data:`usdgrip.hosts.kit.kit_authoring.COMMANDS`) are registered, so the forms'
  edits go through Kit's undo;
- ``omni.kit.notification_manager``: status lines also pop up (they always go to
  the ``usdgrip.kit`` logger);
- ``carb.settings``: the ``/exts/usdgrip.kit/*`` settings of the extension.

Without one of the optional modules the extension still starts and logs one
line saying what is missing.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from usdgrip.hosts.kit.kit_commands import (
    DEFAULT_SETTINGS,
    MENU_ENTRIES,
    SETTINGS_ROOT,
    KitGrippers,
    log,
)

MENU = "Grippers"


def _import_optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@dataclass
class KitExtension:
    """What :func:`start` set up, undone by :meth:`shutdown`."""

    grippers: KitGrippers
    menu_utils: Any = None
    menu: list[Any] = field(default_factory=list)
    validator_core: Any = None
    checkers: list[type] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    kit_commands: Any = None
    commands: list[type] = field(default_factory=list)

    def shutdown(self) -> None:
        """Remove the menu, deregister the rules, close the window, cancel running tasks."""
        from usdgrip.validators.omni_asset_validator import deregister_rules

        if self.menu_utils is not None and self.menu:
            self.menu_utils.remove_menu_items(self.menu, MENU)
        self.menu = []
        if self.validator_core is not None and self.checkers:
            deregister_rules(self.validator_core, self.checkers)
        self.checkers = []
        if self.kit_commands is not None and self.commands:
            from usdgrip.hosts.kit.kit_authoring import unregister_commands

            unregister_commands(self.kit_commands, self.commands)
        self.commands = []
        if self.grippers.form is not None:
            self.grippers.form.close()
            self.grippers.form = None
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

    kit_commands = _import_optional("omni.kit.commands")
    grippers = KitGrippers(omni.usd.get_context(), _read_settings, ui, notify, kit_commands)
    extension = KitExtension(grippers)

    core = _import_optional("omni.asset_validator.core")
    if core is not None:
        from usdgrip.validators.omni_asset_validator import register_rules

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
        extension.missing.append("omni.ui (validation issues go to the log; no forms)")
    if kit_commands is not None:
        from usdgrip.hosts.kit.kit_authoring import register_commands

        extension.kit_commands = kit_commands
        extension.commands = register_commands(kit_commands)
    else:
        extension.missing.append("omni.kit.commands (authoring without Kit's undo)")
    log.info(
        "%s started%s",
        ext_id,
        "; without " + ", ".join(extension.missing) if extension.missing else "",
    )
    return extension
