"""The stages of one run: each USD file opened once, its grasp vector lines found once."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from usdgrip.errors import GripperError
from usdgrip.grasp_line_geometry import GraspLine


class StageSource:
    """The stages of one run: each USD file opened once, its grasp vector lines found once.

    Stages the caller has open already (the CLI, the usdview dialog) are used as
    they are, so no file is opened (and no USD warning printed) twice.
    """

    def __init__(self, stages: Mapping[str | os.PathLike[str], Any] | None = None) -> None:
        """``stages``: already opened ``Usd.Stage`` objects keyed by the path the request names."""
        if isinstance(stages, StageSource):
            self._stages: dict[str, Any] = stages._stages
            self._lines: dict[str, list[GraspLine]] = stages._lines
            return
        self._stages = {os.fspath(path): stage for path, stage in (stages or {}).items()}
        self._lines = {}

    def open(self, path: str | os.PathLike[str]) -> Any:
        """The stage of ``path`` (:func:`usdgrip.usd.stage.open_stage` on first use).

        Raises:
            StageOpenError: as ``open_stage``.
        """
        key = os.fspath(path)
        stage = self._stages.get(key)
        if stage is None:
            from usdgrip.usd.stage import open_stage

            stage = self._stages[key] = open_stage(path)
        return stage

    def grasp_lines(self, path: str | os.PathLike[str]) -> list[GraspLine]:
        """Every grasp vector line of the file, found on first use.

        :func:`usdgrip.usd.grasp_lines.find_grasp_lines` runs once per file.

        Raises:
            GripperError: the lines cannot be placed (an unusable metersPerUnit), naming the file.
        """
        key = os.fspath(path)
        if key not in self._lines:
            from usdgrip.usd.grasp_lines import find_grasp_lines

            try:
                self._lines[key] = find_grasp_lines(self.open(path))
            except GripperError as exc:
                raise GripperError(f"{path}: {exc}") from None
        return self._lines[key]


def is_same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (``os.path.samefile``; normalised text when missing)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normpath(a) == os.path.normpath(b)
