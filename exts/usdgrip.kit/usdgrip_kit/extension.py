"""The ``omni.ext.IExt`` of ``usdgrip.kit``; the work is in :mod:`usdgrip.hosts.kit`."""

from __future__ import annotations

try:
    import omni.ext
except ModuleNotFoundError as exc:
    if exc.name not in ("omni", "omni.ext"):
        raise
    raise ImportError(
        "usdgrip_kit is the Kit extension usdgrip.kit: it runs inside Omniverse Kit "
        "(Kit, Isaac Sim, USD Composer), and Kit's omni.ext is not importable here. Enable it in "
        "Kit (`--enable usdgrip.kit`, see docs/kit.md); outside Kit, use the usdgrip package "
        "(the extension's work is usdgrip.hosts.kit)"
    ) from None


class GrippersExtension(omni.ext.IExt):
    """Adds the Grippers menu and the Asset Validator rules while enabled."""

    def on_startup(self, ext_id: str) -> None:
        from usdgrip.hosts.kit import start

        self._extension = start(ext_id)

    def on_shutdown(self) -> None:
        self._extension.shutdown()
        self._extension = None
