"""The outcomes of a physics trial: what a report's ``physics`` records may say.

Pure and light (``typing`` only): the simulation workers load it without the
contracts' pydantic models (:mod:`usdgrip.contracts` re-exports these names).
"""

from __future__ import annotations

from typing import Literal, get_args

#: Outcome of a physics trial (docs/physics.md, "Protocol").
PhysicsOutcome = Literal[
    "held",
    "collides_open",
    "missed",
    "dropped_lift",
    "slipped_lift",
    "dropped_shake",
    "slipped_shake",
    "unstable",
]
#: The outcomes in report order (``usdgrip.grasping.physics.OUTCOMES`` is this tuple).
PHYSICS_OUTCOMES: tuple[str, ...] = get_args(PhysicsOutcome)
#: What the open hand hit when a trial ``collides_open``.
OpenHit = Literal["object", "support"]
