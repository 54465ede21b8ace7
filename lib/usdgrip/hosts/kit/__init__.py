"""Kit host: the Grippers menu and the usdgrip rules in Omniverse Kit, without Qt.

:mod:`.kit_commands` holds the menu's commands (:class:`KitGrippers`, on one
``UsdContext``); :mod:`.kit_extension` is what the ``usdgrip.kit`` extension
(``exts/usdgrip.kit``) starts and stops (:func:`start`, :class:`KitExtension`).
Kit's modules are imported only by :func:`start`, so this package imports
outside Kit (the tests drive it with stand-ins).
"""

from __future__ import annotations

from usdgrip.hosts.kit.kit_commands import (
    DEFAULT_SETTINGS,
    MENU_ENTRIES,
    SETTINGS_ROOT,
    USDVIEW_COMMANDS,
    KitGrippers,
)
from usdgrip.hosts.kit.kit_extension import MENU, KitExtension, start

__all__ = [
    "DEFAULT_SETTINGS",
    "MENU",
    "MENU_ENTRIES",
    "SETTINGS_ROOT",
    "USDVIEW_COMMANDS",
    "KitExtension",
    "KitGrippers",
    "start",
]
