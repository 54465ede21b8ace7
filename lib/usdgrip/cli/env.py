"""``usdgrip env``: the export lines that point usdview or Kit at usdgrip."""

from __future__ import annotations

import argparse
import os
import shlex

from usdgrip._plugin import share_dir, usdview_plugin_dir

NAME = "env"
ORDER = 90
HELP = "print the export lines (PXR_PLUGINPATH_NAME, PYTHONPATH) for usdview or Kit"
DESCRIPTION = """Print shell `export` lines that register the usdGrip schema and the usdview
Grippers menu in a process that does not import usdgrip first (usdview, Kit,
a UsdValidation client). Use:  eval "$(usdgrip env)" && usdview examples/tote.usda"""


def compute_env_lines() -> list[str]:
    """The ``export`` lines, appending usdgrip's entries AFTER any existing values.

    The host's own paths keep their place in front: a usdview, Kit or Houdini
    build's ``pxr`` on ``PYTHONPATH`` is never shadowed, even when usdgrip is
    installed beside usd-core's ``pxr`` (the ``usd`` extra) and the package's
    folder is a whole site-packages.
    """
    import usdgrip

    package_parent = os.path.dirname(os.path.dirname(usdgrip.__file__))
    # plugins/usdValidation holds the module Plug imports for the UsdValidation validators.
    validation_dir = share_dir() / "plugins" / "usdValidation"
    python_path = [package_parent, str(usdview_plugin_dir()), str(validation_dir)]
    lines = []
    for var, entries in (
        ("PXR_PLUGINPATH_NAME", [str(share_dir())]),
        ("PYTHONPATH", python_path),
    ):
        value = os.pathsep.join(entries)
        lines.append(f"export {var}=${{{var}:+${var}{os.pathsep}}}{shlex.quote(value)}")
    return lines


#: Enabling usdgrip.kit enables usdgrip.schema first (its dependency, [core] order -100).
KIT_EXTENSIONS = ("usdgrip.kit",)


def compute_kit_arguments() -> list[str]:
    """Kit command-line arguments that load the usdgrip extensions at startup.

    The same for ``kit``, Isaac Sim's ``isaac-sim.sh`` and USD Composer's launcher:
    ``--ext-folder <share>/exts --enable usdgrip.kit``.
    """
    arguments = ["--ext-folder", str(share_dir() / "exts")]
    for name in KIT_EXTENSIONS:
        arguments += ["--enable", name]
    return arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kit",
        action="store_true",
        help="print the Kit arguments instead (--ext-folder, --enable) for kit, Isaac Sim's "
        'isaac-sim.sh or USD Composer, e.g.  eval ./isaac-sim.sh "$(usdgrip env --kit)"',
    )


def run(args: argparse.Namespace) -> int:
    if args.kit:
        print(shlex.join(compute_kit_arguments()))
        return 0
    print("\n".join(compute_env_lines()))
    return 0
