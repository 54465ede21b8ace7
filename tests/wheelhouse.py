"""Wheels of the distributions installed in this environment, for offline ``pip install`` tests.

``pip install --no-index --find-links DIR 'usdgrip[usd]'`` into a clean venv needs the
wheels of usdgrip's dependencies. Pip's cache may be empty (a clean CI clone) and the
test must not need the network, so each dependency is packed back into a wheel from the
files this environment installed for it (its ``dist-info`` ``RECORD``): the same
versions, the same metadata, so pip resolves the requirements for real. Stored (not
compressed) for speed; ``RECORD`` is written again for the files packed. Files installed
outside site-packages (console scripts) are left out: pip writes scripts again from
``entry_points.txt``.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import re
import sysconfig
import zipfile
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import Requirement

#: What pip writes into a dist-info at install time; a wheel does not hold them.
_INSTALL_RECORDS = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: metadata.Distribution, extras: Iterable[str]) -> list[Requirement]:
    wanted = []
    for text in dist.requires or []:
        req = Requirement(text)
        envs = [{"extra": e} for e in ("", *extras)]
        if req.marker is None or any(req.marker.evaluate(env) for env in envs):
            wanted.append(req)
    return wanted


def dependency_closure(requirements: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions that ``requirements`` need, transitively (markers evaluated).

    Raises:
        LookupError: a requirement is not installed here.
    """
    found: dict[str, metadata.Distribution] = {}
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        key = _normalize(req.name)
        if key in found:
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            raise LookupError(
                f"{req} is not installed in {sysconfig.get_paths()['purelib']}"
            ) from None
        found[key] = dist
        todo.extend(_requirements(dist, req.extras))
    return list(found.values())


def pack_installed(dist: metadata.Distribution, out: Path) -> Path:
    """Write ``dist`` (installed here) back as a wheel in ``out``; return its path."""
    info = Path(dist._path)  # type: ignore[attr-defined]  # the .dist-info folder
    site = info.parent
    wheel_text = (info / "WHEEL").read_text()
    tags = [
        line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")
    ]
    interpreters, abis, platforms = (
        ".".join(sorted({t.split("-")[i] for t in tags})) for i in range(3)
    )
    name = re.sub(r"[-.]+", "_", dist.metadata["Name"])
    path = out / f"{name}-{dist.version}-{interpreters}-{abis}-{platforms}.whl"
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as wheel:
        for file in dist.files or []:
            source = (site / file).resolve()
            arcname = Path(file).as_posix()
            if arcname.startswith("..") or "__pycache__" in arcname:
                continue
            if Path(arcname).parent == Path(info.name) and Path(arcname).name in _INSTALL_RECORDS:
                continue
            if not source.is_file():
                continue
            data = source.read_bytes()
            wheel.writestr(arcname, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arcname},sha256={digest},{len(data)}")
        record.append(f"{info.name}/RECORD,,")
        wheel.writestr(f"{info.name}/RECORD", "\n".join(record) + "\n")
    return path


def build_wheelhouse(requirements: Iterable[str], out: Path) -> list[Path]:
    """Wheels of every installed distribution ``requirements`` need, written to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    return [pack_installed(dist, out) for dist in dependency_closure(requirements)]
