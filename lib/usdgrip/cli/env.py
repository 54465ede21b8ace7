"""``usdgrip env``: the export lines that point usdview or Kit at usdgrip.

``PYTHONPATH`` never gets a site-packages: for a normal install that folder also holds
usd-core's ``pxr`` (the ``usd`` extra), which would shadow the host's (usdview then fails
with ``cannot import name 'Usdviewq' from 'pxr'``) when the host's ``lib/python`` comes
after it. Instead ``usdgrip env`` writes a folder of symbolic links under
``${XDG_CACHE_HOME:-~/.cache}/usdgrip/env/<key>/``:

- ``python/usdgrip`` → the usdgrip package: the one ``PYTHONPATH`` entry of usdgrip
  (with the usdview and UsdValidation plugin modules' own folders, which hold only
  usdgrip's modules);
- ``deps/`` → every installed distribution that usdgrip and its ``plan`` and ``physics``
  extras need (what the Grippers menu's Plan and Evaluate import): numpy, pydantic,
  PyYAML, trimesh, ... and their own dependencies, never usd-core's ``pxr`` nor a Qt
  binding or PyOpenGL (the host brings its own). ``USDGRIP_DEPS_PATH`` names it, and
  ``import usdgrip`` appends it to the END of ``sys.path``: whatever the host has
  (its numpy too) is found first, these only fill in what it lacks.

So ``eval "$(usdgrip env)"`` may come before or after the host's own ``PYTHONPATH``
lines. numpy, pydantic-core and the other compiled packages in ``deps/`` are built for
the python that runs ``usdgrip env``: a host that lacks them must run that same
Python version (a usdview built for it does). The key is a hash of the links, so a
reinstall that moves or upgrades anything gets a new folder; old ones are links only
and may be deleted.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata as metadata
import json
import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

from usdgrip._plugin import DEPENDENCIES_ENV, share_dir, usdview_plugin_dir

NAME = "env"
ORDER = 90
HELP = "print the export lines (PXR_PLUGINPATH_NAME, PYTHONPATH) for usdview or Kit"
DESCRIPTION = """Print shell `export` lines that register the usdGrip schema and the usdview
Grippers menu in a process that does not import usdgrip first (usdview, Kit,
a UsdValidation client). Use:  eval "$(usdgrip env)" && usdview examples/tote.usda

PYTHONPATH gets usdgrip alone (a folder of links under ~/.cache/usdgrip/env), never a
site-packages: the host's pxr is never shadowed, whether these lines come before or
after the host's own PYTHONPATH lines."""

#: usdgrip's extras whose modules a host's Grippers menu imports (Plan, Evaluate).
HOST_EXTRAS = ("plan", "physics")
#: Distributions never linked: the host brings its own OpenUSD, Qt and OpenGL.
HOST_OWNED = frozenset(
    {"usd-core", "usd-exchange", "pyside6", "pyside6-essentials", "pyside6-addons",
     "shiboken6", "pyside2", "shiboken2", "pyopengl"}
)  # fmt: skip


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse_requirement(text: str) -> tuple[str, set[str], set[str]]:
    """``name``, its ``[extras]`` and the ``extra == "x"`` names of its marker."""
    spec, _, marker = text.partition(";")
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", spec)
    name = match[1] if match else spec.strip()
    extras = {e.strip() for e in (match[2] or "").split(",") if e.strip()} if match else set()
    return name, extras, set(re.findall(r"extra\s*==\s*[\"']([^\"']+)[\"']", marker))


def find_dependencies(extras: tuple[str, ...] = HOST_EXTRAS) -> list[metadata.Distribution]:
    """The installed distributions ``usdgrip[extras]`` needs, transitively, but usdgrip.

    Requirements that are not installed are left out (the command that needs one names
    its extra); so are :data:`HOST_OWNED` ones. Markers other than ``extra`` are not
    evaluated: a requirement whose marker is false here is not installed either.
    """
    done: dict[str, set[str]] = {}
    found: dict[str, metadata.Distribution] = {}
    todo = [("usdgrip", set(extras))]
    while todo:
        name, wanted = todo.pop()
        key = _normalize(name)
        if key in HOST_OWNED or (key in done and wanted <= done[key]):
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        done[key] = done.get(key, set()) | wanted
        if key != "usdgrip":
            found[key] = dist
        for text in dist.requires or []:
            req, req_extras, markers = _parse_requirement(text)
            if not markers or markers & wanted:
                todo.append((req, req_extras))
    return [found[key] for key in sorted(found)]


def _top_level_entries(dist: metadata.Distribution) -> dict[str, Path]:
    """What ``dist`` installed at the top of its site-packages: name -> path."""
    entries = {}
    for file in dist.files or []:
        top = Path(file).parts[0] if Path(file).parts else ""
        if not top or top in ("..", "__pycache__", "pxr") or top.endswith(".pth"):
            continue
        path = Path(dist.locate_file(top))
        if path.exists():
            entries[top] = path
    return entries


def compute_links() -> dict[str, dict[str, str]]:
    """``{"python": {name: target}, "deps": {name: target}}``: the folder's links."""
    import usdgrip

    package = Path(usdgrip.__file__).resolve().parent
    deps: dict[str, str] = {}
    for dist in find_dependencies():
        for name, path in _top_level_entries(dist).items():
            deps.setdefault(name, str(path))
    return {"python": {"usdgrip": str(package)}, "deps": deps}


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "usdgrip" / "env"


def _holds(folder: Path, links: dict[str, dict[str, str]]) -> bool:
    try:
        return all(
            os.readlink(folder / part / name) == target
            for part, entries in links.items()
            for name, target in entries.items()
        )
    except OSError:
        return False


def write_env_folder(root: Path | None = None) -> Path:
    """The folder of links (written once per set of links); returns it.

    Raises:
        OSError: the folder cannot be written (the message names it).
    """
    links = compute_links()
    root = root or _cache_root()
    key = hashlib.sha256(json.dumps(links, sort_keys=True).encode()).hexdigest()[:16]
    folder = root / key
    if _holds(folder, links):
        return folder
    try:
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    except OSError as exc:
        raise OSError(
            f"cannot write the usdgrip env folder under {root}: {exc.strerror or exc} "
            "(set XDG_CACHE_HOME to a folder you may write)"
        ) from None
    try:
        for part, entries in links.items():
            (scratch / part).mkdir()
            for name, target in entries.items():
                (scratch / part / name).symlink_to(target)
        os.chmod(scratch, 0o755)  # mkdtemp's 0700 would hide it from a host run as another user
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(folder)  # a stale or partial one
        with contextlib.suppress(FileExistsError, OSError):
            os.rename(scratch, folder)  # another `usdgrip env` may have won the race
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not _holds(folder, links):
        raise OSError(f"cannot write the usdgrip env folder {folder}")
    return folder


def compute_env_lines() -> list[str]:
    """The ``export`` lines, appending usdgrip's entries AFTER any existing values.

    ``PYTHONPATH`` gets :func:`write_env_folder`'s ``python`` folder (usdgrip alone)
    and the two plugin modules' folders; ``USDGRIP_DEPS_PATH`` its ``deps`` folder,
    which ``import usdgrip`` appends to the end of ``sys.path``.
    """
    folder = write_env_folder()
    # plugins/usdValidation holds the module Plug imports for the UsdValidation validators.
    validation_dir = share_dir() / "plugins" / "usdValidation"
    python_path = [str(folder / "python"), str(usdview_plugin_dir()), str(validation_dir)]
    lines = []
    for var, entries in (
        ("PXR_PLUGINPATH_NAME", [str(share_dir())]),
        ("PYTHONPATH", python_path),
    ):
        value = os.pathsep.join(entries)
        lines.append(f"export {var}=${{{var}:+${var}{os.pathsep}}}{shlex.quote(value)}")
    lines.append(f"export {DEPENDENCIES_ENV}={shlex.quote(str(folder / 'deps'))}")
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
