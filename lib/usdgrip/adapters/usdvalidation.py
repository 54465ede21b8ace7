"""Deprecated: OpenUSD UsdValidation validators moved to :mod:`usdgrip.validators.usdvalidation`."""

from usdgrip.adapters import alias_validator_module

alias_validator_module(__name__)
