"""Stand-in of Kit's ``omni.ext``: the extension interface."""


class IExt:
    """Base of a Kit extension's Python entry point."""

    def on_startup(self, ext_id: str) -> None:
        """Called once the extension's dependencies are started."""

    def on_shutdown(self) -> None:
        """Called when the extension is disabled."""
