"""Shared fixtures: real usd-core stages written into tmp_path."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pxr import Usd

import usdgrip  # noqa: F401  (registers the schema before any stage is opened)

REPO = Path(__file__).resolve().parent.parent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A child process that failed (``check=True``, a timeout) shows its stderr and stdout."""
    outcome = yield
    exc = call.excinfo.value if call.excinfo else None
    if not isinstance(exc, subprocess.CalledProcessError | subprocess.TimeoutExpired):
        return
    report = outcome.get_result()
    command = exc.cmd if isinstance(exc.cmd, str) else shlex.join(map(str, exc.cmd))
    for name in ("stderr", "stdout"):
        text = getattr(exc, name, None)
        if isinstance(text, bytes):
            text = text.decode("utf-8", "backslashreplace")
        report.sections.append((f"child {name}: {command[:200]}", text or "(nothing captured)"))


EXAMPLES = REPO / "examples"

USDA_HEADER = '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n'


@pytest.fixture
def write_usda(tmp_path: Path) -> Callable[..., Path]:
    """Write a .usda body (header added unless it starts with #usda) and return its path."""

    def write(body: str, name: str = "asset.usda") -> Path:
        text = textwrap.dedent(body).strip() + "\n"
        if not text.startswith("#usda"):
            text = USDA_HEADER + "\n" + text
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def open_usda(write_usda) -> Callable[..., Usd.Stage]:
    """Write a .usda body into tmp_path and open it as a stage."""

    def open_(body: str, name: str = "asset.usda") -> Usd.Stage:
        return Usd.Stage.Open(str(write_usda(body, name)))

    return open_


@pytest.fixture
def shared_folder():
    """A folder every user may write (tmp_path's parents are private to root)."""
    if os.geteuid() != 0:
        pytest.skip("switching to an unprivileged user needs root")
    folder = Path(tempfile.mkdtemp(prefix="usdgrip-shared-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs at ``tmp_path/disk``, mode 0700 (root; skipped when it cannot be mounted)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=700", "tmpfs", str(disk)],
        capture_output=True,
    )
    if mount.returncode:
        pytest.skip(f"cannot mount a tmpfs: {mount.stderr.decode().strip()}")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)
