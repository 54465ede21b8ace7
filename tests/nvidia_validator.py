"""NVIDIA's usd-validation-nvidia for the tests that run usdgrip inside it.

The NVIDIA adapter is optional (the ``nvidia`` extra): where usd-validation-nvidia is not
installed, or cannot be imported with this OpenUSD, the test modules that import this one
skip, saying so in one line, and the rest of the suite runs.
"""

from __future__ import annotations

import pytest

nv = pytest.importorskip(
    "usd_validation_nvidia",
    reason="usd-validation-nvidia cannot be imported here (pip install 'usdgrip[nvidia]'); "
    "the NVIDIA adapter tests skip",
)

from usd_validation_nvidia._parameters import UserParameter  # noqa: E402
from usd_validation_nvidia.capabilities import Requirement  # noqa: E402

__all__ = ["Requirement", "UserParameter", "nv"]
