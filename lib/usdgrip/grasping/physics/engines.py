"""The simulator seam: what a grasp-and-lift engine is, and the table of engines.

An engine is built once per (object, gripper, scene, hand count, parameters) and then runs
trials: one (:meth:`GraspEngine.run_trial`) or a whole :class:`TrialBatch` of candidates ×
trials at once (:meth:`GraspEngine.run_batch`). The evaluation
(:func:`usdgrip.grasping.physics.evaluate_candidates`) draws every trial's perturbation
itself (seeded per candidate), so an engine only simulates; its outcomes are those of
:data:`usdgrip.physics_outcomes.PHYSICS_OUTCOMES`.

Engines are :class:`EngineRecord` rows of :data:`ENGINES`, each naming the module that
builds it, imported only when the engine is used (like trimesh's optional ray backends):

- ``mujoco`` (:mod:`usdgrip.grasping.physics.mujoco_engine`): MuJoCo on the CPU, one
  compiled model per worker process, trials one after another; the evaluation spreads
  candidates over worker processes (``jobs``).
- ``mjwarp`` (:mod:`usdgrip.grasping.physics.mjwarp_engine`, the ``gpu`` extra): MuJoCo
  Warp, every candidate × trial one world, all stepped together on a Warp device (a CUDA
  GPU, else Warp's CPU device).

A batched engine (``batched=True``, e.g. MuJoCo Warp stepping candidates × trials together
on a GPU) receives every candidate's trials in one :meth:`GraspEngine.run_batch` call in
the calling process; adding one is one module with ``build_engine`` and
``describe_engine`` plus one record here (``docs/architecture.md``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

#: What the open hand hit when a trial ``collides_open``.
OPEN_HITS = ("object", "support")


class TrialResult(NamedTuple):
    """One trial's outcome and measurements."""

    outcome: str
    """One of :data:`usdgrip.physics_outcomes.PHYSICS_OUTCOMES`."""
    displacement: float
    """Largest object displacement relative to the first hand after closing, m (NaN before)."""
    opening: float
    """Jaw opening of the first hand when the fingers stalled, m (NaN before closing)."""
    hit: str | None = None
    """For ``collides_open``: what the open hand penetrated deepest (:data:`OPEN_HITS`)."""


class TrialBatch(NamedTuple):
    """Every trial of a set of candidates, in the object frame (rows: candidates, then trials)."""

    poses: NDArray[np.float64]
    """(N, T, H, 4, 4) hand poses ``object_from_G`` per candidate, trial and hand."""
    friction_scales: NDArray[np.float64]
    """(N, T) factor on the object's friction."""
    mass_scales: NDArray[np.float64]
    """(N, T) factor on the object's mass and inertia."""


class GraspEngine(Protocol):
    """A grasp-and-lift world for one object, gripper, scene, hand count and parameters."""

    params: Any
    """The :class:`~usdgrip.grasping.physics.EvaluationParams` it was built with."""
    hands: int
    """Hands per candidate."""

    def run_trial(
        self, poses: NDArray[np.float64], friction_scale: float = 1.0, mass_scale: float = 1.0
    ) -> TrialResult:
        """One trial with hands at ``poses`` ``(hands, 4, 4)``."""
        ...

    def run_batch(self, batch: TrialBatch) -> list[list[TrialResult]]:
        """Every trial of ``batch``: per candidate, its trials' results in order."""
        ...


@dataclass(frozen=True)
class EngineRecord:
    """One engine: its name and the module that builds it.

    The module defines ``build_engine(obj, gripper, scene, hands, params) -> GraspEngine``
    and ``describe_engine(params) -> dict`` (engine name, versions and parameters for
    ``metadata.physics``); with ``checks=True`` also ``check_engine()`` (raise ValueError,
    one line, for what the engine cannot run without: a package, a device). What an
    engine does not simulate (a gripper's articulation, say) its ``build_engine`` refuses.
    """

    name: str
    module: str
    """Import path of the module (imported on first use)."""
    batched: bool = False
    """True: one ``run_batch`` call takes every candidate × trial (no worker processes)."""
    checks: bool = False
    """True: the module defines ``check_engine`` (else :meth:`check` imports nothing: the
    default engine's module loads only when it simulates)."""

    def load(self) -> ModuleType:
        """The engine's module.

        Raises:
            ValueError: it cannot be imported (the message says why).
        """
        try:
            return importlib.import_module(self.module)
        except ImportError as exc:
            raise ValueError(f"physics engine {self.name!r} is unavailable: {exc}") from None

    def check(self) -> None:
        """Refuse, in one line, an engine that cannot run here (before any file is read).

        Raises:
            ValueError: its module, a package or a device it needs is missing.
        """
        if self.checks:
            self.load().check_engine()

    def build(self, obj: Any, gripper: Any, scene: Any, hands: int, params: Any) -> GraspEngine:
        """Build the engine's world (compile errors surface here)."""
        return self.load().build_engine(obj, gripper, scene, hands, params)

    def describe(self, params: Any) -> dict[str, Any]:
        """``metadata.physics``'s engine part: name, versions, every parameter."""
        return self.load().describe_engine(params)


#: Engines by name.
ENGINES: dict[str, EngineRecord] = {
    record.name: record
    for record in (
        EngineRecord("mujoco", "usdgrip.grasping.physics.mujoco_engine"),
        EngineRecord("mjwarp", "usdgrip.grasping.physics.mjwarp_engine", batched=True, checks=True),
    )
}


def get_engine(name: str) -> EngineRecord:
    """The record of engine ``name``.

    Raises:
        ValueError: no such engine (the message lists them).
    """
    try:
        return ENGINES[name]
    except KeyError:
        raise ValueError(f"physics engine {name!r}; expected one of {', '.join(ENGINES)}") from None
