"""The gripper-site limit checks, once (pure): max opening, max payload, max grip force.

Used by the GR validation rules (GR.004; GR.010 and GR.012 through
:mod:`usdgrip.usd.sites`, which reads a site's limits with them) and by the planner,
which refuses a site whose max opening fails them. Each function
returns a problem text naming the attribute, the value found and the value expected.
"""

from __future__ import annotations

import math

#: Largest plausible gripper max opening, metres: wider than any robot hand; a larger value
#: is a unit mistake (mm, µm) and makes the planner's gripper model absurd (GR.004 fails it;
#: the planner refuses it). ``DEFAULT_PARAMS["max_opening_max_m"]`` in the rules.
MAX_OPENING_M = 2.0


def get_max_opening_problem(
    value: float, name: str = "gripper:maxOpening", maximum: float = MAX_OPENING_M
) -> str | None:
    """A max opening must be a finite number in ``(0, maximum]`` (metres)."""
    if not (math.isfinite(value) and value > 0):
        return f"{name} is {value:g} m; expected a finite value > 0 m"
    if value > maximum:
        return (
            f"{name} is {value:g} m; expected at most {maximum:g} m (a wider opening is "
            "implausible: a unit mistake?)"
        )
    return None


#: Strongest grip force per finger (N) planned and simulated with: 100 kN, beyond any robot
#: gripper (the strongest industrial parallel grippers close with tens of kN); a larger
#: ``gripper:maxGripForce`` or ``--force`` is a unit mistake, and MuJoCo stops on a control
#: above 1e10 ("huge value in CTRL"). GR.012 warns above it; physics uses its default force.
MAX_GRIP_FORCE = 1e5


def get_grip_force_limit_problem(force: float) -> str | None:
    """The words for an authored ``gripper:maxGripForce`` above :data:`MAX_GRIP_FORCE`."""
    if not force > MAX_GRIP_FORCE:
        return None
    return (
        f"gripper:maxGripForce is {force:g} N; expected at most {MAX_GRIP_FORCE:g} N, the "
        "strongest plausible grip: a unit mistake?"
    )


def get_site_limit_problem(value: float, name: str, unit: str) -> str | None:
    """An optional site limit (max payload in kg, max grip force in N) must be finite and > 0."""
    if math.isfinite(value) and value > 0:
        return None
    return f"{name} is {value:g} {unit}; expected a finite value > 0 {unit} (or do not author it)"
