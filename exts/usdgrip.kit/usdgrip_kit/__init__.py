"""Kit extension ``usdgrip.kit``: start and stop :mod:`usdgrip.views.kit`."""

from usdgrip_kit.extension import GrippersExtension

__all__ = ["GrippersExtension"]
