"""Viewer-side code: overlays, pictures and Qt widgets for the usdview Grippers menu.

Nothing here imports usdview. :mod:`usdgrip.views.shapes` is pure numpy,
:mod:`usdgrip.views.overlays` needs only ``pxr``; the Qt widgets
(:mod:`usdgrip.views.panels`, :mod:`usdgrip.views.dialogs`) need PySide6
(``usdgrip[qt]``) and talk to their viewer through :class:`usdgrip.views.viewer.Viewer`.
"""
