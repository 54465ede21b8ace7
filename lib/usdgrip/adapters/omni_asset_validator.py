"""Deprecated: Kit Asset Validator rules moved to :mod:`usdgrip.validators.omni_asset_validator`."""

from usdgrip.adapters import alias_validator_module

alias_validator_module(__name__)
