"""SimReady's FET028 gripper test (``gripper_close_lift_cube`` / ``_sphere``) on the CPU, in MuJoCo.

The gripper's own articulation (:func:`~usdgrip.grasping.physics.articulated_hand.
add_articulated_hand`) hangs from a Z-axis gantry, approach pointing down; a cube (or a
sphere) of ``size_fraction`` x the max opening and ``payload_fraction`` x the max payload,
friction 2.0, rests on the floor with its centre at the grasp centre. The hand closes
(drives to their closed limits), the gantry lifts 20 cm in 1 s, shakes along Z (2 Hz,
2 cm, 2 s) and the hand opens. Pass: the close stalls on the object, it follows the lift
(< 5 cm vertical, < 5 cm horizontal), stays above 2 cm and slips < 3 cm in the shake, and
falls >= 5 cm after the release. Every number is a field of :class:`GripperTestParams`;
``docs/physics.md`` ("Gripper test") compares this with SimReady's harness.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import mujoco
import numpy as np

from usdgrip.grasping.physics.articulated_hand import add_articulated_hand
from usdgrip.gripper_articulation import GripperArticulation

GRAVITY = 9.81
SHAPES = ("cube", "sphere")


@dataclass(frozen=True, kw_only=True)
class GripperTestParams:
    """FET028's numbers (SimReady test version 1.4.0), each a parameter."""

    size_fraction: float = 0.7
    """Object edge (cube) / diameter (sphere) as a fraction of the max opening."""
    payload_fraction: dict = field(default_factory=lambda: {"cube": 0.85, "sphere": 0.5})
    """Object mass as a fraction of ``gripper:maxPayload``, per shape."""
    payload_per_opening: float = 50.0
    """kg per metre of max opening when no maxPayload is authored (SimReady's heuristic)."""
    payload_range: tuple[float, float] = (0.1, 50.0)
    """kg: the heuristic payload is clamped to this."""
    friction: float = 2.0
    """Object friction (static and dynamic in SimReady; MuJoCo's sliding friction)."""
    settle_time: float = 0.2
    close_time: float = 1.0
    lift_height: float = 0.2
    lift_time: float = 1.0
    shake_frequency: float = 2.0
    """Hz, along Z."""
    shake_amplitude: float = 0.02
    shake_time: float = 2.0
    release_time: float = 1.0
    follow_tolerance: float = 0.05
    """m: vertical error and horizontal drift allowed in the lift."""
    min_height: float = 0.02
    """m: the object's centre stays above this over its resting height in the shake."""
    slip_tolerance: float = 0.03
    """m: most object displacement relative to the hand in the shake."""
    release_drop: float = 0.05
    """m: the object falls at least this after the open command."""
    timestep: float = 0.002
    impratio: float = 10.0
    """MuJoCo's frictional-to-normal impedance ratio: above 1 soft friction creeps less
    (a held object slides slowly down pads at impratio 1)."""
    gantry_gain: float = 2.0e4
    """N/m per kg of hand and object: the gantry's position servo."""

    def to_dict(self) -> dict:
        """JSON-ready values (the report's ``params``)."""
        data = asdict(self)
        data["payload_range"] = list(self.payload_range)
        return data


@dataclass(frozen=True)
class GripperTestResult:
    """One object's trial."""

    shape: str
    passed: bool
    outcome: str
    """``held`` or the first failed stage: ``no_contact``, ``dropped_lift``,
    ``slipped_shake``, ``dropped_shake``, ``not_released``, ``unstable``."""
    size: float
    mass: float
    displacement: float
    """Largest object displacement relative to the hand after the close (lift + shake), m."""
    lift_error: float
    pad_force: float
    """Mean normal force of the pads on the object during the shake, N."""
    release_drop: float

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def resolve_payload(max_payload: float | None, max_opening: float, params: GripperTestParams):
    """``(payload kg, from_heuristic)``: the site's maxPayload, else SimReady's heuristic."""
    if max_payload is not None:
        return float(max_payload), False
    low, high = params.payload_range
    return float(min(max(params.payload_per_opening * max_opening, low), high)), True


def run_gripper_test(
    articulation: GripperArticulation,
    max_opening: float,
    payload: float,
    shape: str,
    params: GripperTestParams | None = None,
    offset: tuple[float, float] = (0.0, 0.0),
) -> GripperTestResult:
    """One FET028 trial of ``shape`` with the gripper's articulation.

    ``offset`` (m) moves the object off the grasp centre in the floor plane (the perturbed
    trials of ``--trials``).

    Raises:
        ValueError: an unknown shape or an articulation without an opening report.
    """
    params = params or GripperTestParams()
    if shape not in SHAPES:
        raise ValueError(f"shape {shape!r}; expected one of {', '.join(SHAPES)}")
    if articulation.opening is None or not articulation.opening.driven:
        raise ValueError("the gripper has no driven finger joints")
    size = params.size_fraction * max_opening
    mass = params.payload_fraction[shape] * payload
    half = size / 2
    spec = mujoco.MjSpec()
    spec.option.timestep = params.timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.gravity = [0, 0, -GRAVITY]
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = params.impratio
    world = spec.worldbody
    world.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1, 1, 0.1], contype=1, conaffinity=1)
    obj = world.add_body(name="object", pos=[offset[0], offset[1], half])
    obj.add_freejoint()
    obj.add_geom(
        name="object_geom",
        type=mujoco.mjtGeom.mjGEOM_BOX if shape == "cube" else mujoco.mjtGeom.mjGEOM_SPHERE,
        size=[half, half, half] if shape == "cube" else [half, 0, 0],
        mass=mass,
        friction=[params.friction, 0.005, 0.0001],
        contype=1 | 2,
        conaffinity=1 | 4,
        condim=4,
    )
    carrier = world.add_body(name="carrier", pos=[0, 0, half], quat=[0, 1, 0, 0])
    carrier.add_joint(name="gantry", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 0, -1])
    carrier.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.005, 0, 0], mass=0.5,
                     contype=0, conaffinity=0)  # fmt: skip
    hand = add_articulated_hand(spec, carrier, articulation, prefix="hand_", conaffinity=1 | 4)
    hand_mass = sum(link.mass or 0.1 for link in articulation.links) + 0.5
    gain = params.gantry_gain * (hand_mass + mass)
    spec.add_actuator(
        name="gantry_servo",
        target="gantry",
        trntype=mujoco.mjtTrn.mjTRN_JOINT,
        gainprm=[gain] + [0] * 9,
        biasprm=[0, -gain, -2 * math.sqrt(gain * (hand_mass + mass))] + [0] * 7,
        biastype=mujoco.mjtBias.mjBIAS_AFFINE,
    )
    model = spec.compile()
    data = mujoco.MjData(model)
    drives = {model.actuator(name).id: j for j, name in hand.actuators.items()}
    gantry = model.actuator("gantry_servo").id
    body = model.body("object").id
    palm = model.body("carrier").id
    geom = model.geom("object_geom").id
    pads = {model.geom(g).id for side in hand.pad_geoms for g in side}

    def set_hand(positions: dict[int, float]) -> None:
        for actuator, joint in drives.items():
            data.ctrl[actuator] = positions[joint]

    def step(seconds: float, gantry_at=None, watch=None) -> bool:
        start = data.time
        for _ in range(max(1, round(seconds / params.timestep))):
            if gantry_at is not None:
                data.ctrl[gantry] = gantry_at(data.time - start)  # slide +: world up
            mujoco.mj_step(model, data)
            if not np.all(np.isfinite(data.qpos)) or np.abs(data.qvel).max() > 50:
                return False
            if watch is not None:
                watch()
        return True

    def relative() -> np.ndarray:
        return data.xpos[body] - data.xpos[palm]

    def pad_force() -> float:
        total = 0.0
        force = np.zeros(6)
        for i in range(data.ncon):
            c = data.contact[i]
            if (c.geom1 == geom and c.geom2 in pads) or (c.geom2 == geom and c.geom1 in pads):
                mujoco.mj_contactForce(model, data, i, force)
                total += abs(force[0])
        return total

    result = {"displacement": 0.0, "lift_error": 0.0, "pad_force": 0.0, "release_drop": 0.0}

    def finish(outcome: str) -> GripperTestResult:
        return GripperTestResult(
            shape, outcome == "held", outcome, size, mass,
            result["displacement"], result["lift_error"], result["pad_force"],
            result["release_drop"],
        )  # fmt: skip

    set_hand(hand.open_positions)
    if not step(params.settle_time, lambda t: 0.0):
        return finish("unstable")
    set_hand(hand.close_targets)  # past the closed limit: the drives push at maxForce
    if not step(params.close_time, lambda t: 0.0):
        return finish("unstable")
    if pad_force() <= 0.0:
        return finish("no_contact")
    held = relative().copy()

    def track() -> None:
        result["displacement"] = max(
            result["displacement"], float(np.linalg.norm(relative() - held))
        )

    rest = data.xpos[body].copy()

    def lift(t: float) -> float:
        return params.lift_height * min(1.0, t / params.lift_time)

    if not step(params.lift_time + 0.2, lift, track):
        return finish("unstable")
    expected = rest[2] + params.lift_height
    error = abs(data.xpos[body][2] - expected)
    drift = float(np.linalg.norm(data.xpos[body][:2] - rest[:2]))
    result["lift_error"] = float(max(error, drift))
    if result["lift_error"] > params.follow_tolerance:
        return finish("dropped_lift")
    forces = []
    lowest = [np.inf]

    def shake_watch() -> None:
        track()
        forces.append(pad_force())
        lowest[0] = min(lowest[0], data.xpos[body][2] - rest[2])

    def shake(t: float) -> float:
        w = 2 * math.pi * params.shake_frequency
        return params.lift_height + params.shake_amplitude * math.sin(w * t)

    if not step(params.shake_time, shake, shake_watch):
        return finish("unstable")
    result["pad_force"] = float(np.mean(forces)) if forces else 0.0
    if lowest[0] < params.min_height:
        return finish("dropped_shake")
    if result["displacement"] > params.slip_tolerance:
        return finish("slipped_shake")
    before = data.xpos[body][2]
    set_hand(hand.open_positions)
    if not step(params.release_time, lambda t: params.lift_height):
        return finish("unstable")
    result["release_drop"] = float(before - data.xpos[body][2])
    if result["release_drop"] < params.release_drop:
        return finish("not_released")
    return finish("held")


def run_gripper_tests(
    articulation: GripperArticulation,
    max_opening: float,
    payload: float,
    trials: int = 1,
    params: GripperTestParams | None = None,
    seed: int = 0,
) -> dict[str, list[GripperTestResult]]:
    """``trials`` trials of each shape, the object centred, then off centre.

    Trial 0 is centred; the others move the object off the grasp centre by
    :data:`OFFSET_SIGMA` per floor axis (a seeded ``numpy`` generator).
    """
    if trials < 1:
        raise ValueError(f"trials is {trials}; expected at least 1")
    rng = np.random.default_rng(seed)
    offsets = [(0.0, 0.0)] + [tuple(rng.normal(0.0, OFFSET_SIGMA, 2)) for _ in range(trials - 1)]
    return {
        shape: [
            run_gripper_test(articulation, max_opening, payload, shape, params, o) for o in offsets
        ]
        for shape in SHAPES
    }


#: Standard deviation (m) of the object's offset in the perturbed trials.
OFFSET_SIGMA = 0.001
