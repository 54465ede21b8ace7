"""The ``omni.ext.IExt`` of ``usdgrip.kit``; the work is in :mod:`usdgrip.hosts.kit`."""

from __future__ import annotations

import omni.ext


class GrippersExtension(omni.ext.IExt):
    """Adds the Grippers menu and the Asset Validator rules while enabled."""

    def on_startup(self, ext_id: str) -> None:
        from usdgrip.hosts.kit import start

        self._extension = start(ext_id)

    def on_shutdown(self) -> None:
        self._extension.shutdown()
        self._extension = None
