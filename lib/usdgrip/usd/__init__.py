"""Everything that touches a USD stage for sites and slots, one job per module.

:mod:`~usdgrip.usd.stage` (open, units, transforms, values) · :mod:`~usdgrip.usd.discovery`
(the marker scan) · :mod:`~usdgrip.usd.sites` · :mod:`~usdgrip.usd.slots` ·
:mod:`~usdgrip.usd.authoring` · :mod:`~usdgrip.usd.dependencies` (files a stage reads) ·
:mod:`~usdgrip.usd.geometry` (meshes and collision shapes) · :mod:`~usdgrip.usd.names`.
Besides ``rules``, ``views``, ``adapters`` and the plugins, only this package imports ``pxr``.
"""
