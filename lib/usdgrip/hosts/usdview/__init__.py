"""usdview host: the Grippers menu's commands on usdview's ``usdviewApi``.

:mod:`.usdview_host` wraps ``usdviewApi`` as a :class:`usdgrip.views.viewer.Viewer`;
:mod:`.usdview_commands` holds one function per menu entry (each takes
``usdviewApi``). The Plug plugin ``plugins/usdview/usdGripUsdview`` maps usdview's
camelCase callbacks onto them and imports this package only when a command first
runs (``deferredImport``). Needs ``pxr`` and a Qt binding (``usdgrip[qt]``, or
usdview's own); nothing here imports usdview's modules.
"""

from __future__ import annotations

from usdgrip.hosts.usdview.usdview_host import UsdviewHost

__all__ = ["UsdviewHost"]
