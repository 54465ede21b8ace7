"""What flows between the planner's steps: backend records, their proposals, ids and seeds.

A planning backend is one :class:`Backend` record (name, when it applies, ``propose``)
in :data:`usdgrip.grasping.backends.registry.BACKENDS`; its ``propose`` returns one
:class:`ProposalBatch` (arrays aligned on axis 0). The planner gathers the batches of
one gripper into :class:`Proposals`, where every row carries its
:class:`~usdgrip.grasping.provenance.Provenance` through fit, ranking and checks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from usdgrip.contracts import GripperRef
from usdgrip.frames import Poses
from usdgrip.grasping.provenance import Note, Provenance


class ProposalSettings(NamedTuple):
    """The planning options a backend may read (checked by ``PlanningOptions``)."""

    clearance: float
    """Antipodal opening kept free beyond the contact width, metres."""
    ray_backend: str
    """Resolved antipodal ray caster: ``embree`` or ``triangle``."""
    support_normal: NDArray[np.float64] | None = None
    """(3,) upward normal of what the object rests on, in M: the table's, else the stage's
    authored up axis; ``None`` without either (no support term in the approach ranking)."""


class ProposalBatch(NamedTuple):
    """One backend's proposals for one gripper, in the object frame M (rows aligned)."""

    names: tuple[str, ...]
    """(N,) id suffix of each proposal, unique within the backend and gripper
    (``0007``, ``handle_0044``): the id is ``g_<gripper key>_<backend>_<name>``."""
    poses: Poses
    """(N, 4, 4) grasp frames G in M (``T_M_G``), metres."""
    widths: NDArray[np.float64]
    """(N,) jaw opening each needs, metres."""
    scores: NDArray[np.float64]
    """(N,) ranking score in [0, 1], higher first."""
    groups: NDArray[np.int64]
    """(N,) diversity group (>= 0: proposals sharing one are thinned by the soft-NMS, e.g.
    one antipodal contact pair; -1: the proposal is a group of its own)."""
    sources: tuple[str | None, ...]
    """(N,) what each came from, as :attr:`Backend.source` says (a slot name, a grasp
    line's prim path), else ``None``."""
    notes: tuple[Note, ...] = ()
    """What the backend skipped, and why."""

    @classmethod
    def empty(cls, notes: Sequence[Note] = ()) -> ProposalBatch:
        """No proposal (with the notes saying why)."""
        none = np.zeros(0)
        return cls((), np.zeros((0, 4, 4)), none, none, np.zeros(0, np.int64), (), tuple(notes))


Propose = Callable[..., ProposalBatch]
"""``propose(obj, gripper, *, count, rng, settings) -> ProposalBatch``: ``obj`` an
:class:`~usdgrip.grasping.inputs.ObjectInputs`, ``gripper`` a
:class:`~usdgrip.grasping.inputs.Gripper`, ``count`` the proposals wanted, ``rng`` the
backend's own ``numpy.random.Generator``, ``settings`` a :class:`ProposalSettings`."""


@dataclass(frozen=True)
class Backend:
    """One planning backend: its name, when it applies, and how it proposes.

    Modelled on trimesh's loader table: the registry is a list of these records, and a
    new backend is one module defining one (``docs/architecture.md``).
    """

    name: str
    """Method name (``--method``), also the id part ``g_<h>_<name>_...``."""
    seed_index: int
    """Index in the random-stream entropy ``[seed, gripper stream, seed_index]``: fixed
    per backend so that adding a backend never changes another's draws."""
    applies: Callable[[Any], str | None]
    """``applies(obj)``: ``None`` when the object has what the backend needs, else why not
    (the whole message after ``FILE: ``; asking for the backend then is bad input)."""
    propose: Propose
    refuse: Callable[[Any, bool], str | None] = lambda obj, asked: None
    """``refuse(obj, asked)``: when the backend runs (asked for, or chosen by default),
    why it must not (bad input, message after ``FILE: ``), else ``None``."""
    source: Literal["slot", "grasp_line"] | None = None
    """What :attr:`ProposalBatch.sources` names, copied into each candidate's provenance."""
    skip_note: str | None = None
    """Warning when no method is asked and this backend does not apply (``None``: silent)."""


@dataclass
class Proposals:
    """Every backend's proposals of one gripper before ranking, rows aligned."""

    ids: list[str] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)
    poses: list[NDArray[np.float64]] = field(default_factory=list)
    """(4, 4) ``T_M_G`` each."""
    widths: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    """Diversity group across backends (soft-NMS), unique per backend group."""

    def extend(self, key: str, backend: Backend, batch: ProposalBatch) -> None:
        """Append one backend's batch; ``key`` names the gripper in the ids."""
        local = np.asarray(batch.groups, dtype=np.int64).reshape(-1)
        base = max(self.groups, default=-1) + 1
        # Groups of the batch, renumbered after the ones already here; -1 rows get one each.
        labels = np.where(local >= 0, local, local.max(initial=-1) + 1 + np.arange(len(local)))
        labels = np.unique(labels, return_inverse=True)[1].reshape(-1)
        self.ids.extend(f"g_{key}_{backend.name}_{name}" for name in batch.names)
        for g, source in zip(local, batch.sources, strict=True):
            self.provenance.append(
                Provenance(
                    backend.name,
                    slot=source if backend.source == "slot" else None,
                    grasp_line=source if backend.source == "grasp_line" else None,
                    group=int(g) if g >= 0 else None,
                )
            )
        self.poses.extend(np.asarray(batch.poses, dtype=np.float64).reshape(-1, 4, 4))
        self.widths.extend(float(w) for w in batch.widths)
        self.scores.extend(float(s) for s in batch.scores)
        self.groups.extend(int(base + g) for g in labels)

    def __len__(self) -> int:
        return len(self.ids)

    def keep(self, mask: Sequence[bool]) -> Proposals:
        """The rows where ``mask`` is true, in order."""
        return self.keep_order([i for i, flag in enumerate(mask) if flag])

    def keep_order(self, order: Sequence[int]) -> Proposals:
        """The rows ``order`` names, in that order."""
        kept = Proposals()
        for i in order:
            kept.ids.append(self.ids[i])
            kept.provenance.append(self.provenance[i])
            kept.poses.append(self.poses[i])
            kept.widths.append(self.widths[i])
            kept.scores.append(self.scores[i])
            kept.groups.append(self.groups[i])
        return kept

    @property
    def pose_array(self) -> Poses:
        """(N, 4, 4) ``T_M_G``."""
        return np.array(self.poses, dtype=np.float64).reshape(-1, 4, 4)


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


def make_rng(seed: int, stream: str, seed_index: int) -> np.random.Generator:
    """The generator of one (seed, gripper stream, backend): ``SeedSequence([seed, s, i])``."""
    entropy = [int(seed), int(stream, 16), int(seed_index)]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def compute_id_part(name: str) -> str:
    """``name`` made safe for a candidate id: characters outside ``[A-Za-z0-9_.-]`` become ``_``."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "_"
