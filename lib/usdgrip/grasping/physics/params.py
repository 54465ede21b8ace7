"""Every number of the grasp-and-lift evaluation, in two frozen dataclasses.

Units: metres, seconds, kilograms, newtons, degrees, hertz. The defaults are
documented in ``docs/physics.md``; :meth:`EvaluationParams.as_dict` gives them
to a report (``metadata.physics``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from usdgrip.grasping import gripper_defaults as defaults

#: Density (kg/m³) used when a caller gives neither a mass nor a density.
DEFAULT_DENSITY = 400.0
#: Coulomb friction coefficient used when a caller gives none.
DEFAULT_FRICTION = 0.8
#: Grip force per finger (N) used when a caller gives none.
DEFAULT_GRIP_FORCE = defaults.DEFAULT_GRIP_FORCE
#: Strongest grip force per finger simulated (N; :mod:`usdgrip.grasping.gripper_defaults`).
MAX_GRIP_FORCE = defaults.MAX_GRIP_FORCE
#: The object's mass and principal moments of inertia must reach these (kg, kg·m²): the
#: MuJoCo compiler refuses a moving body lighter than ``mjMINVAL`` (1e-15) and a
#: ``fullinertia`` whose smallest eigenvalue is below ``mjEPS`` (1e-14). The model is
#: checked against them before it is built, so the refusal names the object and the cause.
MIN_OBJECT_MASS = 1e-15
MIN_OBJECT_INERTIA = 1e-14
#: The heaviest object simulated, kg: MuJoCo's ``mjMAXVAL`` (1e10); far above it the
#: solver's numbers break down (a 1.6e16 kg box is ``missed`` instead of dropped).
MAX_OBJECT_MASS = 1e10

#: Proxy finger dimensions (metres), the planner's collision proxy's
#: (:mod:`usdgrip.grasping.gripper_defaults`).
DEFAULT_PAD_THICKNESS = defaults.FINGER_THICKNESS
DEFAULT_PAD_DEPTH = defaults.FINGER_LENGTH
DEFAULT_TIP_OFFSET = defaults.TIP_OFFSET
DEFAULT_PAD_WIDTH = defaults.DEFAULT_PAD_WIDTH


def _check_number(owner: str, name: str, value: Any, *, minimum: float, strict: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{owner}.{name} is {value!r}; expected a number")
    low_ok = value > minimum if strict else value >= minimum
    if not math.isfinite(value) or not low_ok:
        relation = ">" if strict else ">="
        raise ValueError(
            f"{owner}.{name} is {value!r}; expected a finite number {relation} {minimum}"
        )


@dataclass(frozen=True)
class EvaluationParams:
    """Simulation and protocol parameters of one evaluation (all documented in docs/physics.md).

    Raises:
        TypeError: a field is not a number (``integrator``/``cone`` not a string).
        ValueError: a field is out of range; the message names it.
    """

    # --- simulation (MuJoCo options)
    timestep: float = 0.002
    """Integration step, s."""
    integrator: str = "implicitfast"
    """MuJoCo integrator: ``euler``, ``implicit``, ``implicitfast`` or ``RK4``."""
    cone: str = "elliptic"
    """Friction cone: ``elliptic`` (accurate) or ``pyramidal``."""
    impratio: float = 10.0
    """Ratio of frictional to normal constraint impedance (> 1 reduces creep in grasps)."""
    solver_iterations: int = 50
    """Constraint solver iterations per step."""
    contact_time_constant: float = 0.004
    """Contact stiffness as a time constant (``solref[0]``), s; at least 2 × timestep."""
    contact_damping_ratio: float = 1.0
    """Contact damping ratio (``solref[1]``)."""
    contact_impedance: float = 0.99
    """Constraint impedance (``solimp`` dmin = dmax) of contacts, joint limits and couplings, in
    (0, 1): closer to 1 is harder (less penetration under the grip force)."""
    torsional_friction: float = 0.005
    """Torsional friction per contact (``condim`` 4), metres: torque = this × normal force."""

    # --- gripper dynamics
    hand_mass: float = 1.0
    """Mass of each hand body (welded to its trajectory target, gravity-compensated), kg."""
    finger_mass: float = 1.0
    """Mass of each finger, kg: the drive's reflected inertia (lighter fingers chatter against
    MuJoCo's soft contacts at the grip force)."""
    closing_speed: float = 0.15
    """Free closing speed of each finger, m/s (finger damping = grip force / this)."""

    # --- protocol
    settle_time: float = 0.1
    """Object settling on its support (only with a table or support), s."""
    penetration_tolerance: float = 0.001
    """Open-jaw penetration deeper than this is ``collides_open``, m."""
    close_time: float = 0.6
    """Longest closing phase, s (ends earlier at stall)."""
    stall_speed: float = 0.005
    """Fingers slower than this (m/s) after touching have stalled."""
    hold_time: float = 0.15
    """Hold with gravity on before lifting, s (part of the lift phase)."""
    lift_height: float = 0.10
    """Lift distance along the up axis, m."""
    lift_time: float = 0.3
    """Lift duration (smooth cosine profile), s."""
    shake_time: float = 0.5
    """Shake duration, s."""
    shake_frequency: float = 3.0
    """Shake frequency, Hz."""
    shake_amplitude: float = 0.01
    """Shake translation amplitude along the up axis, m."""
    shake_angle: float = 10.0
    """Shake rotation amplitude about the (first) hand's closing axis, degrees."""
    slip_tolerance: float = 0.02
    """Object displacement relative to the hand that counts as slipping, m."""
    drop_distance: float = 0.05
    """Displacement relative to the hand past which the object has dropped (early stop), m."""
    touch_distance: float = 0.001
    """A finger touches the object when their distance is below this, m: a pad with no
    contact is measured (``mujoco.mj_geomDistance`` to each object piece), so a pad a hair
    off the object still touches it."""
    contact_window: float = 0.05
    """A pad has lost the object at the end of a phase only when it touched it at no check
    in the last ``contact_window`` seconds: at high force contacts come and go (about
    every 30 ms at 235 N), and one step is not a verdict."""
    max_speed: float = 20.0
    """Object speed (m/s) above which the simulation counts as diverged (``unstable``)."""
    max_penetration: float = 0.005
    """Contact penetration (m) past which the simulation counts as failed (``unstable``): pads
    pushed through the object by a force its soft contacts cannot resist."""

    # --- trials
    trials: int = 1
    """Trials per candidate: trial 0 is the nominal pose, the others are perturbed."""
    position_sigma: float = 0.002
    """Std. dev. of the hand position perturbation per axis, m."""
    angle_sigma: float = 2.0
    """Std. dev. of the hand rotation perturbation (random axis), degrees."""
    friction_spread: float = 0.1
    """Friction scaled by a uniform factor in [1 - s, 1 + s]."""
    mass_spread: float = 0.1
    """Object mass (and inertia) scaled by a uniform factor in [1 - s, 1 + s]."""

    def __post_init__(self) -> None:
        owner = "EvaluationParams"
        if self.integrator not in ("euler", "implicit", "implicitfast", "RK4"):
            raise ValueError(
                f"{owner}.integrator is {self.integrator!r}; expected one of "
                "'euler', 'implicit', 'implicitfast', 'RK4'"
            )
        if self.cone not in ("elliptic", "pyramidal"):
            raise ValueError(f"{owner}.cone is {self.cone!r}; expected 'elliptic' or 'pyramidal'")
        for name in ("solver_iterations", "trials"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{owner}.{name} is {value!r}; expected an integer")
            if value < 1:
                raise ValueError(f"{owner}.{name} is {value}; expected an integer >= 1")
        strict = [
            "timestep",
            "contact_time_constant",
            "contact_damping_ratio",
            "hand_mass",
            "finger_mass",
            "closing_speed",
            "close_time",
            "stall_speed",
            "lift_time",
            "shake_frequency",
            "slip_tolerance",
            "drop_distance",
            "touch_distance",
            "contact_window",
            "max_speed",
            "max_penetration",
        ]
        loose = [
            "settle_time",
            "penetration_tolerance",
            "hold_time",
            "lift_height",
            "shake_time",
            "shake_amplitude",
            "shake_angle",
            "torsional_friction",
            "position_sigma",
            "angle_sigma",
            "friction_spread",
            "mass_spread",
        ]
        for name in strict:
            _check_number(owner, name, getattr(self, name), minimum=0.0, strict=True)
        for name in loose:
            _check_number(owner, name, getattr(self, name), minimum=0.0, strict=False)
        _check_number(owner, "impratio", self.impratio, minimum=1.0, strict=False)
        if self.contact_time_constant < 2 * self.timestep:
            raise ValueError(
                f"{owner}.contact_time_constant is {self.contact_time_constant} s; expected at "
                f"least 2 × timestep = {2 * self.timestep} s (MuJoCo contacts go unstable below)"
            )
        if not 0 < self.contact_impedance < 1:
            raise ValueError(
                f"{owner}.contact_impedance is {self.contact_impedance!r}; "
                "expected a number in (0, 1)"
            )
        for name in ("friction_spread", "mass_spread"):
            if getattr(self, name) >= 1.0:
                raise ValueError(f"{owner}.{name} is {getattr(self, name)}; expected < 1")
        if self.drop_distance <= self.slip_tolerance:
            raise ValueError(
                f"{owner}.drop_distance is {self.drop_distance} m; expected more than "
                f"slip_tolerance ({self.slip_tolerance} m)"
            )

    def as_dict(self) -> dict[str, Any]:
        """Every parameter by name (for reports)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class DecompositionParams:
    """Convex decomposition of non-convex parts (CoACD) and the convexity test.

    The CoACD fields are passed to ``coacd.run_coacd`` under the same names.
    """

    threshold: float = 0.05
    """CoACD concavity threshold (smaller: more, tighter pieces)."""
    max_convex_hull: int = 32
    """Most pieces per part (-1: no limit)."""
    preprocess_mode: str = "auto"
    """CoACD manifold preprocessing: ``auto``, ``on`` or ``off``."""
    preprocess_resolution: int = 50
    """CoACD preprocessing voxel resolution."""
    resolution: int = 2000
    """CoACD surface sampling resolution."""
    mcts_iterations: int = 150
    """CoACD tree-search iterations."""
    mcts_nodes: int = 20
    """CoACD tree-search nodes."""
    mcts_max_depth: int = 3
    """CoACD tree-search depth."""
    seed: int = 0
    """CoACD random seed (fixed: the same mesh gives the same pieces)."""
    convex_tolerance: float = 1e-5
    """Convexity test tolerance relative to the part's bounding-box diagonal."""
    flat_thickness: float = 0.001
    """Thickness (m) given to a flat part (no volume), which MuJoCo cannot collide."""

    def __post_init__(self) -> None:
        owner = "DecompositionParams"
        if self.preprocess_mode not in ("auto", "on", "off"):
            raise ValueError(
                f"{owner}.preprocess_mode is {self.preprocess_mode!r}; "
                "expected 'auto', 'on' or 'off'"
            )
        for name in (
            "max_convex_hull",
            "preprocess_resolution",
            "resolution",
            "mcts_iterations",
            "mcts_nodes",
            "mcts_max_depth",
            "seed",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{owner}.{name} is {value!r}; expected an integer")
        if self.max_convex_hull == 0 or self.max_convex_hull < -1:
            raise ValueError(
                f"{owner}.max_convex_hull is {self.max_convex_hull}; expected -1 or >= 1"
            )
        _check_number(owner, "threshold", self.threshold, minimum=0.0, strict=True)
        _check_number(owner, "convex_tolerance", self.convex_tolerance, minimum=0.0, strict=False)
        _check_number(owner, "flat_thickness", self.flat_thickness, minimum=0.0, strict=True)

    def coacd_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``coacd.run_coacd``."""
        return {
            "threshold": self.threshold,
            "max_convex_hull": self.max_convex_hull,
            "preprocess_mode": self.preprocess_mode,
            "preprocess_resolution": self.preprocess_resolution,
            "resolution": self.resolution,
            "mcts_iterations": self.mcts_iterations,
            "mcts_nodes": self.mcts_nodes,
            "mcts_max_depth": self.mcts_max_depth,
            "seed": self.seed,
        }

    def as_dict(self) -> dict[str, Any]:
        """Every parameter by name (for reports and the cache key)."""
        return dataclasses.asdict(self)
