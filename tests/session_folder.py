"""One folder per pytest session that every pytest-xdist worker of it shares, under a lock."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def shared_session_folder(tmp_path_factory, name: str) -> Iterator[Path]:
    """Hold ``NAME.lock`` and yield ``NAME/`` in this session's temp root.

    Under xdist each worker's basetemp is ``pytest-N/popen-gwK``: their parent is the
    session's. Without xdist the basetemp is ``pytest-N`` itself (its parent holds every
    session's, so a folder there would outlive the run and be read by the next one).
    """
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    shared = root / name
    shared.mkdir(exist_ok=True)
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield shared
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
