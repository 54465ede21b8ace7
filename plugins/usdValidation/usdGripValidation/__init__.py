"""Plug module of the usdGripValidation plugin: registers usdgrip's UsdValidation validators.

Plug imports this module the first time a client asks for one of the
validators declared in ``../plugInfo.json``; the tasks live in the library
(:mod:`usdgrip.validators.usdvalidation`).
"""

from usdgrip.validators.usdvalidation import register_validators

register_validators()
