"""Kit extension ``usdgrip.kit``: start and stop :mod:`usdgrip.hosts.kit`."""

from usdgrip_kit.extension import GrippersExtension

__all__ = ["GrippersExtension"]
