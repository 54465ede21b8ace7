"""What flows between the planner's steps: the object's data, proposals, ids and seeds."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np

from usdgrip.contracts import (
    GripperRef,
)
from usdgrip.frames import Mat4, Poses

#: Backends, in the order they run for each gripper (append only: the index seeds streams).
METHODS = ("antipodal", "slots", "lines")


@dataclass
class _Proposals:
    """Candidates of one gripper before ranking (arrays aligned on axis 0)."""

    ids: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    poses: list[Mat4] = field(default_factory=list)  # T_M_G
    widths: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # diversity group (contact pair)

    def extend(self, ids, method, poses, widths, scores, groups=None) -> None:
        """Append proposals; ``groups`` (N,) labels the proposals of one contact pair.

        Without ``groups`` each proposal is a group of its own (no soft-NMS).
        """
        base = max(self.groups, default=-1) + 1
        labels = (
            np.arange(len(ids)) if groups is None else np.unique(groups, return_inverse=True)[1]
        )
        self.ids.extend(ids)
        self.methods.extend([method] * len(ids))
        self.poses.extend(np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4))
        self.widths.extend(float(w) for w in widths)
        self.scores.extend(float(s) for s in scores)
        self.groups.extend(int(base + g) for g in np.ravel(labels))

    def __len__(self) -> int:
        return len(self.ids)

    def keep(self, mask: Sequence[bool]) -> _Proposals:
        kept = _Proposals()
        for i, flag in enumerate(mask):
            if flag:
                kept.ids.append(self.ids[i])
                kept.methods.append(self.methods[i])
                kept.poses.append(self.poses[i])
                kept.widths.append(self.widths[i])
                kept.scores.append(self.scores[i])
                kept.groups.append(self.groups[i])
        return kept

    def keep_order(self, order: Sequence[int]) -> _Proposals:
        mask_free = _Proposals()
        for i in order:
            mask_free.ids.append(self.ids[i])
            mask_free.methods.append(self.methods[i])
            mask_free.poses.append(self.poses[i])
            mask_free.widths.append(self.widths[i])
            mask_free.scores.append(self.scores[i])
            mask_free.groups.append(self.groups[i])
        return mask_free

    @property
    def pose_array(self) -> Poses:
        return np.array(self.poses, dtype=np.float64).reshape(-1, 4, 4)


@dataclass(frozen=True)
class ObjectData:
    """What the planner needs from the object asset (world metres unless said)."""

    prim_path: str
    world_frame: Mat4
    """Frame M: the object prim's world transform with scale removed (4, 4)."""
    vertices: np.ndarray | None
    """(V, 3) surface vertices in M, or ``None`` without a mesh."""
    faces: np.ndarray | None
    mesh_paths: tuple[str, ...]
    slots: tuple[Any, ...]
    """GripperSlots of the object (world snapshots)."""
    notes: tuple[str, ...]
    """Why a backend cannot use the object (no mesh, bad slots...)."""
    up: np.ndarray | None = None
    """(3,) the stage's authored up axis expressed in M (stands for the support normal)."""
    grasp_lines: tuple[tuple[str, np.ndarray, np.ndarray], ...] = ()
    """SimReady grasp vector lines of the object: ``(name, p0, p1)``, points (3,) in M."""


def compute_gripper_key(gripper: GripperRef) -> str:
    """8 hex digits naming ``gripper`` in candidate ids (SHA-256 of asset path and prim path)."""
    text = f"{gripper.asset_path}\n{gripper.prim_path}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def compute_stream_key(gripper: GripperRef) -> str:
    """8 hex digits seeding ``gripper``'s random streams: its file name and prim path.

    Independent of the directory, so results do not change when assets move.
    """
    text = f"{PurePath(gripper.asset_path).name}\n{gripper.prim_path}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _make_rng(seed: int, key: str, method: str) -> np.random.Generator:
    entropy = [int(seed), int(key, 16), METHODS.index(method)]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def _id_part(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "_"


def parse_methods(text: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """Parse ``"antipodal,slots"`` (or a sequence) into known method names; ``None`` stays None.

    Raises:
        ValueError: an unknown or repeated method, or an empty list.
    """
    if text is None:
        return None
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in names if n]
    if not names:
        raise ValueError(
            f"no method given; expected a comma-separated list of {', '.join(METHODS)}"
        )
    for name in names:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; expected one of {', '.join(METHODS)}")
    if len(set(names)) != len(names):
        raise ValueError(f"method list {','.join(names)} repeats a method")
    return tuple(names)
