"""The usdgrip rules inside validators people already use (one module per validator).

- :mod:`usdgrip.validators.nvidia`: a plugin for NVIDIA's ``usd-validation-nvidia``
  (``nvidia_usd_validate --requirement GR.003`` / ``--capability usdgrip.grippers``).
- :mod:`usdgrip.validators.usdvalidation`: OpenUSD ``UsdValidation`` validators
  (keyword ``usdgrip``), loaded by Plug from ``plugins/usdValidation``.
- :mod:`usdgrip.validators.omni_asset_validator`: rule checkers for Kit's Asset
  Validator (``omni.asset_validator.core``), registered by the Kit host.

The rule logic lives once, in :mod:`usdgrip.rules`; these modules only
translate records, issues and fixes. Nothing is imported here so that each
entry point loads only the validator it serves. ``usdgrip.adapters.*`` (the old
names) still import for one release, with a ``DeprecationWarning``.
"""
