"""Adapters that run the usdgrip rules inside validators people already use.

- :mod:`usdgrip.adapters.nvidia`: a plugin for NVIDIA's ``usd-validation-nvidia``
  (``nvidia_usd_validate --requirement GR.003`` / ``--capability usdgrip.grippers``).
- :mod:`usdgrip.adapters.usdvalidation`: OpenUSD ``UsdValidation`` validators
  (keyword ``usdgrip``), loaded by Plug from ``plugins/usdValidation``.

The rule logic lives once, in :mod:`usdgrip.rules`; these modules only
translate records, issues and fixes. Nothing is imported here so that each
entry point loads only the validator it serves.
"""
