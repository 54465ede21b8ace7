"""Generate the codeless usdGrip schema files with usd-core's own usdGenSchema.

``python -m usdgrip.schema_gen [OUTDIR]`` runs ``pxr.Usd.usdGenSchema`` on
``schemas/usdGrip/schema.usda`` and fills the CMake placeholders in the
generated ``plugInfo.json`` (a codeless resource plugin has no library). Used
by ``make schema`` and by the staleness test.

usdGenSchema's output changes between OpenUSD releases, so one release is the
generator: :data:`GENERATOR_USD`, the newest supported (the Makefile's
``NEWEST_USD``, which ``make test`` runs on). ``make schema`` on another release
is refused; the staleness test skips there, saying so.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from usdgrip._plugin import schema_dir

GENERATED_FILES = ("generatedSchema.usda", "plugInfo.json")
#: The OpenUSD release whose usdGenSchema writes the checked-in files (Makefile: NEWEST_USD).
GENERATOR_USD = (0, 26, 11)
_PLACEHOLDERS = {
    "@PLUG_INFO_LIBRARY_PATH@": "",
    "@PLUG_INFO_RESOURCE_PATH@": ".",
    "@PLUG_INFO_ROOT@": ".",
}


def generate_schema(out_dir: Path, source: Path | None = None) -> list[Path]:
    """Write ``generatedSchema.usda`` and ``plugInfo.json`` for ``source`` into ``out_dir``.

    Args:
        out_dir: directory to write into (created if missing).
        source: the schema source; defaults to the packaged ``schema.usda``.

    Returns:
        The paths written.

    Raises:
        RuntimeError: usdGenSchema failed (its stderr is included).
    """
    source = source or schema_dir() / "schema.usda"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.run(
            [sys.executable, "-m", "pxr.Usd.usdGenSchema", str(source), scratch],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"usdGenSchema failed on {source}:\n{proc.stderr.strip()}")
        written = []
        for name in GENERATED_FILES:
            text = (Path(scratch) / name).read_text()
            for placeholder, value in _PLACEHOLDERS.items():
                text = text.replace(placeholder, value)
            target = out_dir / name
            target.write_text(text)
            written.append(target)
    return written


def check_generator() -> None:
    """Refuse to write the checked-in files with another release's usdGenSchema.

    Raises:
        RuntimeError: the running OpenUSD is not :data:`GENERATOR_USD`.
    """
    from pxr import Usd

    if Usd.GetVersion()[:3] != GENERATOR_USD:
        have, want = (".".join(map(str, v[1:3])) for v in (Usd.GetVersion(), GENERATOR_USD))
        raise RuntimeError(
            f"schemas/usdGrip/generated* are written by OpenUSD {want}'s usdGenSchema; this is "
            f"OpenUSD {have} (run `make schema`, whose .venv has usd-core {want})"
        )


if __name__ == "__main__":
    target_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else schema_dir()
    if len(sys.argv) == 1:
        try:
            check_generator()
        except RuntimeError as exc:
            sys.exit(f"usdgrip.schema_gen: {exc}")
    for path in generate_schema(target_dir):
        print(f"wrote {path}")
