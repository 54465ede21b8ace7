"""Hosts: each viewer's own wiring of the host-neutral :mod:`usdgrip.views` core.

- :mod:`usdgrip.hosts.usdview`: the usdview Grippers menu (``plugins/usdview``);
- :mod:`usdgrip.hosts.kit`: the Kit extension ``usdgrip.kit`` (``exts/usdgrip.kit``),
  its Grippers menu and the rules in Kit's Asset Validator
  (:mod:`usdgrip.validators.omni_asset_validator`).

A host composes ``views/`` (actions, overlays, widgets) with ``validators/``; the
entry points outside ``lib/`` (Plug plugins, Kit extensions) only import one host.
"""
