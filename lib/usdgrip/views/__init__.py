"""The host-neutral viewer core of the Grippers menu: actions, overlays, pictures, Qt widgets.

Each host (:mod:`usdgrip.hosts.usdview`, :mod:`usdgrip.hosts.kit`) wires these into its
own menu; nothing here imports a host or usdview. :mod:`~usdgrip.views.actions` is each
menu entry's job without Qt; :mod:`~usdgrip.views.glyphs` and
:mod:`~usdgrip.views.grasp_set` are pure numpy; :mod:`~usdgrip.views.overlays` needs only
``pxr``; the Qt widgets (:mod:`~usdgrip.views.session`, :mod:`~usdgrip.views.panels`,
:mod:`~usdgrip.views.dialogs`) need PySide6 (``usdgrip[qt]``) or the host's binding and
talk to their viewer through :class:`usdgrip.views.viewer.Viewer`.
"""
