"""Registers the usdGrip schema in on_startup, after omni.usd: the wrong order."""

import sys
from pathlib import Path

import omni.ext

LIB = Path(__file__).resolve().parents[5] / "lib"


class TooLateExtension(omni.ext.IExt):
    def on_startup(self, ext_id: str) -> None:
        sys.path.append(str(LIB))
        import usdgrip  # noqa: F401  (registers the schema now: too late, and warns)
