"""Deprecated: NVIDIA's usd-validation-nvidia plugin moved to :mod:`usdgrip.validators.nvidia`."""

from usdgrip.adapters import alias_validator_module

alias_validator_module(__name__)
