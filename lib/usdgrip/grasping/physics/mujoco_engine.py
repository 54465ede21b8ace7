"""The ``mujoco`` engine: the MuJoCo model and the grasp-and-lift protocol of one trial.

:class:`MujocoEngine` (a :class:`~usdgrip.grasping.physics.engines.GraspEngine`) compiles
one model per (object, gripper, scene, hand count, parameters) and reuses it for every
trial: each trial resets the data,
sets the perturbed friction and mass, places the hands and runs the protocol
(see docs/physics.md):

1. hands at their poses with jaws open; penetration deeper than
   ``penetration_tolerance`` → ``collides_open`` (``hit`` says whether the deepest
   penetration is into the object or the support);
2. with a support, the object settles under gravity (else gravity stays off);
3. close with the grip force until the fingers stall; a finger at its stop or
   not touching the object → ``missed``;
4. gravity on, hold, lift ``lift_height`` along up → ``dropped_lift`` /
   ``slipped_lift``;
5. shake (translation along up, rotation about the first hand's closing axis)
   → ``dropped_shake`` / ``slipped_shake``;
6. otherwise ``held``. NaN, divergence or a MuJoCo warning → ``unstable``.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from usdgrip.grasping.physics.articulated_hand import (
    STOP_FRACTION,
    ArticulatedHand,
    add_articulated_hand,
)
from usdgrip.grasping.physics.engines import TrialBatch, TrialResult
from usdgrip.grasping.physics.params import EvaluationParams
from usdgrip.grasping.physics.world import PhysicsGripper, PhysicsObject, PhysicsScene
from usdgrip.physics_outcomes import PHYSICS_OUTCOMES

GRAVITY = 9.81
#: Outcomes of a trial, in protocol order (defined once, with the result contract).
OUTCOMES = PHYSICS_OUTCOMES

# Collision bits: the object collides with hands and supports; hands collide with supports.
_OBJECT_BITS = (1, 1 | 2)
_HAND_BITS = (2, 4)
_SUPPORT_BITS = (4, 1)
#: A finger within this of its closed stop has closed on nothing (m).
_STOP_MARGIN = 0.001
#: Steps between checks (displacement, contacts, divergence).
CHECK_EVERY = 5


def _fmt(values: NDArray[np.float64] | tuple[float, ...]) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(values))


def build_mjcf(
    obj: PhysicsObject,
    gripper: PhysicsGripper,
    scene: PhysicsScene,
    hands: int,
    params: EvaluationParams,
) -> str:
    """MJCF text of the world: object (free body), ``hands`` mocap hands, table, supports."""
    mu = obj.friction
    solref = f"{params.contact_time_constant!r} {params.contact_damping_ratio!r}"
    solimp = f"{params.contact_impedance!r} {params.contact_impedance!r} 0.001"
    assets, world = [], []
    for i, points in enumerate(obj.pieces):
        assets.append(f'<mesh name="object_{i}" vertex="{_fmt(points)}"/>')
    for i, points in enumerate(scene.support_pieces):
        assets.append(f'<mesh name="support_{i}" vertex="{_fmt(points)}"/>')
    for h in range(hands):
        for k, shape in enumerate(() if gripper.articulation is not None else gripper.palm):
            if shape.kind == "convex":
                assets.append(f'<mesh name="palm_{h}_{k}" vertex="{_fmt(shape.points)}"/>')
    support = f'contype="{_SUPPORT_BITS[0]}" conaffinity="{_SUPPORT_BITS[1]}" friction="0 0 0"'
    if scene.table:
        height = min(float((p @ scene.up).min()) for p in obj.pieces)
        world.append(
            f'<geom name="table" type="plane" size="0 0 1" pos="{_fmt(scene.up * height)}" '
            f'zaxis="{_fmt(scene.up)}" {support}/>'
        )
    for i in range(len(scene.support_pieces)):
        world.append(f'<geom name="support_{i}" type="mesh" mesh="support_{i}" {support}/>')
    inertia = obj.inertia
    full = (
        inertia[0, 0],
        inertia[1, 1],
        inertia[2, 2],
        inertia[0, 1],
        inertia[0, 2],
        inertia[1, 2],
    )
    body = [
        '<body name="object">',
        "<freejoint/>",
        f'<inertial pos="{_fmt(obj.center_of_mass)}" mass="{obj.mass!r}" '
        f'fullinertia="{_fmt(full)}"/>',
    ]
    for i in range(len(obj.pieces)):
        body.append(
            f'<geom name="object_{i}" type="mesh" mesh="object_{i}" contype="{_OBJECT_BITS[0]}" '
            f'conaffinity="{_OBJECT_BITS[1]}" condim="4" '
            f'friction="{mu!r} {params.torsional_friction!r} 0"/>'
        )
    body.append("</body>")
    world.extend(body)
    w, t, p = gripper.max_opening, gripper.pad_thickness, gripper.pad_width
    depth, tip = gripper.pad_depth, gripper.tip_offset
    hand_geom = (
        f'contype="{_HAND_BITS[0]}" conaffinity="{_HAND_BITS[1]}" friction="0 0 0" condim="4"'
    )
    damping = gripper.grip_force / params.closing_speed
    finger_inertia = params.finger_mass * (t * t + depth * depth) / 12
    equalities, actuators = [], []
    for h in range(hands):
        world.append(f'<body name="target_{h}" mocap="true"/>')
        world.append(
            f'<body name="hand_{h}" gravcomp="1"><freejoint name="hand_{h}_free"/>'
            f'<inertial pos="0 0 0" mass="{params.hand_mass!r}" '
            f'diaginertia="{_fmt((params.hand_mass * 0.01,) * 3)}"/>'
        )
        equalities.append(f'<weld body1="hand_{h}" body2="target_{h}"/>')
        if gripper.articulation is not None:  # its links go under hand_{h} (MujocoEngine)
            world.append("</body>")
            continue
        for k, shape in enumerate(gripper.palm):
            quat = np.empty(4)
            mujoco.mju_mat2Quat(quat, np.ascontiguousarray(shape.pose[:3, :3]).ravel())
            placement = f'pos="{_fmt(shape.pose[:3, 3])}" quat="{_fmt(quat)}"'
            if shape.kind == "box":
                world.append(
                    f'<geom name="palm_{h}_{k}" type="box" size="{_fmt(shape.size / 2)}" '
                    f"{placement} {hand_geom}/>"
                )
            else:
                world.append(
                    f'<geom name="palm_{h}_{k}" type="mesh" mesh="palm_{h}_{k}" '
                    f"{placement} {hand_geom}/>"
                )
        for side, sign in (("left", -1.0), ("right", 1.0)):
            centre = (sign * (w + t) / 2, 0.0, tip - depth / 2)
            world.append(
                f'<body name="finger_{h}_{side}" pos="{_fmt(centre)}" gravcomp="1">'
                f'<joint name="slide_{h}_{side}" type="slide" axis="{-sign!r} 0 0" '
                f'range="0 {w / 2!r}" damping="{damping!r}"/>'
                f'<inertial pos="0 0 0" mass="{params.finger_mass!r}" '
                f'diaginertia="{_fmt((finger_inertia,) * 3)}"/>'
                f'<geom name="pad_{h}_{side}" type="box" size="{_fmt((t / 2, p / 2, depth / 2))}" '
                f"{hand_geom}/></body>"
            )
            actuators.append(
                f'<motor name="grip_{h}_{side}" joint="slide_{h}_{side}" '
                f'ctrlrange="0 {gripper.grip_force!r}"/>'
            )
        world.append("</body>")
        equalities.append(
            f'<joint joint1="slide_{h}_left" joint2="slide_{h}_right" polycoef="0 1 0 0 0"/>'
        )
    return "\n".join(
        [
            '<mujoco model="usdgrip_grasp">',
            '<compiler angle="radian" autolimits="true" inertiafromgeom="false"/>',
            f'<option timestep="{params.timestep!r}" integrator="{params.integrator}" '
            f'cone="{params.cone}" impratio="{params.impratio!r}" '
            f'iterations="{params.solver_iterations}" gravity="0 0 0"/>',
            f'<default><geom solref="{solref}" solimp="{solimp}"/>'
            f'<joint solreflimit="{solref}" solimplimit="{solimp}"/>'
            f'<equality solref="{solref}" solimp="{solimp}"/></default>',
            "<asset>",
            *assets,
            "</asset>",
            "<worldbody>",
            *world,
            "</worldbody>",
            "<equality>",
            *equalities,
            "</equality>",
            "<actuator>",
            *actuators,
            "</actuator>",
            "</mujoco>",
        ]
    )


def _quat_from_matrix(rotation: NDArray[np.float64]) -> NDArray[np.float64]:
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rotation).ravel())
    return quat


class MujocoEngine:
    """A compiled MuJoCo world for one object, gripper, scene and hand count; runs trials.

    Not thread-safe (one ``MjData``); worker processes build their own.
    """

    def __init__(
        self,
        obj: PhysicsObject,
        gripper: PhysicsGripper,
        scene: PhysicsScene,
        hands: int,
        params: EvaluationParams,
    ) -> None:
        self.obj, self.gripper, self.scene, self.hands, self.params = (
            obj,
            gripper,
            scene,
            hands,
            params,
        )
        self.xml = build_mjcf(obj, gripper, scene, hands, params)
        #: Per hand, the names of its articulated parts (empty for the pad gripper).
        self.articulated: list[ArticulatedHand] = []
        if gripper.articulation is None:
            self.model = mujoco.MjModel.from_xml_string(self.xml)
        else:
            spec = mujoco.MjSpec.from_string(self.xml)
            for h in range(hands):
                self.articulated.append(
                    add_articulated_hand(
                        spec,
                        spec.body(f"hand_{h}"),
                        gripper.articulation,
                        prefix=f"hand_{h}_",
                        contype=_HAND_BITS[0],
                        conaffinity=_HAND_BITS[1],
                        force_limit=gripper.grip_force,
                    )
                )
            self.model = spec.compile()
            self.xml = spec.to_xml()
        self.data = mujoco.MjData(self.model)
        m = self.model
        body, geom, joint = (
            mujoco.mjtObj.mjOBJ_BODY,
            mujoco.mjtObj.mjOBJ_GEOM,
            mujoco.mjtObj.mjOBJ_JOINT,
        )

        def ids(kind: mujoco.mjtObj, pattern: str) -> NDArray[np.int64]:
            """(hands, 2) ids of ``pattern`` formatted with hand and side."""
            return np.array(
                [
                    [
                        mujoco.mj_name2id(m, kind, pattern.format(h=h, s=s))
                        for s in ("left", "right")
                    ]
                    for h in range(hands)
                ]
            )

        self._object_body = mujoco.mj_name2id(m, body, "object")
        geom_body = m.geom_bodyid
        self._object_geoms = np.flatnonzero(geom_body == self._object_body)
        self._object_geom_mask = geom_body == self._object_body
        hand_bodies = [mujoco.mj_name2id(m, body, f"hand_{h}") for h in range(hands)]
        self._hand_bodies = np.array(hand_bodies)
        self._hand_qpos = m.jnt_qposadr[m.body_jntadr[self._hand_bodies]]
        targets = [mujoco.mj_name2id(m, body, f"target_{h}") for h in range(hands)]
        self._hand_mocap = m.body_mocapid[targets]
        if not self.articulated:
            pads = ids(geom, "pad_{h}_{s}")
            #: Per hand and side, the ids of the pad geoms.
            self._pad_sets = [[pads[h, s : s + 1] for s in range(2)] for h in range(hands)]
            finger_bodies = geom_body[pads.ravel()]
            self._hand_geom_mask = np.isin(geom_body, [*hand_bodies, *finger_bodies])
            slides = ids(joint, "slide_{h}_{s}")
            self._slide_qpos = m.jnt_qposadr[slides]
            self._slide_dof = m.jnt_dofadr[slides]
            self._finger_dofs = self._slide_dof.ravel()
        else:
            self._pad_sets = [
                [np.array([m.geom(n).id for n in names]) for names in hand.pad_geoms]
                for hand in self.articulated
            ]
            self._hand_geom_mask = np.zeros(m.ngeom, dtype=bool)
            for hand in self.articulated:
                self._hand_geom_mask[[m.geom(n).id for n in hand.geoms]] = True
            driven = [
                (m.joint(hand.joints[j]).id, m.actuator(a).id, hand, j)
                for hand in self.articulated
                for j, a in hand.actuators.items()
            ]
            self._driven_qpos = np.array([m.jnt_qposadr[j] for j, _, _, _ in driven])
            self._finger_dofs = np.array([m.jnt_dofadr[j] for j, _, _, _ in driven])
            self._driven_ctrl = np.array([a for _, a, _, _ in driven])
            self._driven_open = np.array([hand.open_positions[j] for _, _, hand, j in driven])
            self._driven_closed = np.array([hand.closed_positions[j] for _, _, hand, j in driven])
            self._driven_target = np.array([hand.close_targets[j] for _, _, hand, j in driven])
            self._pad_open_x = None  # pad centres along closing in the open hand (first trial)
        #: (ngeom, hands * 2): whether a geom belongs to hand h's side s (column 2h + s).
        self._pad_membership = np.zeros((m.ngeom, 2 * hands), dtype=bool)
        for h in range(hands):
            for s in range(2):
                self._pad_membership[self._pad_sets[h][s], 2 * h + s] = True
        self._base_mass = float(m.body_mass[self._object_body])
        self._base_inertia = m.body_inertia[self._object_body].copy()
        self._base_friction = m.geom_friction[self._object_geoms, 0].copy()
        self._object_dof = m.jnt_dofadr[m.body_jntadr[self._object_body]]

    # ------------------------------------------------------------------ helpers
    def _set_mocap(self, poses: NDArray[np.float64], *, hands_too: bool = False) -> None:
        """Move the hands' targets (and with ``hands_too`` the hands themselves) to ``poses``."""
        d = self.data
        for h, mocap in enumerate(self._hand_mocap):
            quat = _quat_from_matrix(poses[h, :3, :3])
            d.mocap_pos[mocap] = poses[h, :3, 3]
            d.mocap_quat[mocap] = quat
            if hands_too:
                a = self._hand_qpos[h]
                d.qpos[a : a + 3] = poses[h, :3, 3]
                d.qpos[a + 3 : a + 7] = quat

    def _contacts(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        d = self.data
        n = d.ncon
        if n == 0:
            return np.empty((0, 2), dtype=np.int64), np.empty(0)
        return d.contact.geom[:n].copy(), d.contact.dist[:n].copy()

    def _fingers_touching(self) -> NDArray[np.bool_]:
        """(hands, 2) whether each pad touches the object."""
        geoms, dist = self._contacts()
        touching = np.zeros((self.hands, 2), dtype=bool)
        if len(geoms) == 0:
            return touching
        close = dist < self.params.touch_distance
        on_object = self._object_geom_mask[geoms] & close[:, None]
        member = self._pad_membership
        hit = (member[geoms[:, 0]] & on_object[:, 1:2]) | (member[geoms[:, 1]] & on_object[:, 0:1])
        touching = hit.any(axis=0).reshape(self.hands, 2)
        for h, s in np.argwhere(~touching):  # no contact: a gap below touch_distance counts
            touching[h, s] = any(
                mujoco.mj_geomDistance(
                    self.model, self.data, int(pad), int(piece), self.params.touch_distance, None
                )
                < self.params.touch_distance
                for pad in self._pad_sets[h][s]
                for piece in self._object_geoms
            )
        return touching

    def _pad_x(self) -> NDArray[np.float64]:
        """(hands, 2) centre of each side's pad geoms along its hand's closing axis (X)."""
        d = self.data
        out = np.empty((self.hands, 2))
        for h, body in enumerate(self._hand_bodies):
            rotation = d.xmat[body].reshape(3, 3)
            for s in range(2):
                centre = d.geom_xpos[self._pad_sets[h][s]].mean(axis=0)
                out[h, s] = (rotation.T @ (centre - d.xpos[body]))[0]
        return out

    def _closure(self) -> tuple[float, bool]:
        """The first hand's jaw opening (m) and whether a finger closed to its stop."""
        d = self.data
        if not self.articulated:
            closure = d.qpos[self._slide_qpos]
            opening = float(self.gripper.max_opening - closure[0].sum())
            return opening, bool((closure >= self.gripper.max_opening / 2 - _STOP_MARGIN).any())
        travel = self._pad_x() - self._pad_open_x
        opening = float(self.articulated[0].opening_open - (travel[0, 0] - travel[0, 1]))
        q = d.qpos[self._driven_qpos]
        span = np.abs(self._driven_closed - self._driven_open)
        at_stop = np.abs(q - self._driven_closed) <= STOP_FRACTION * span
        return opening, bool(at_stop.any())

    def _deepest_hand_penetration(self) -> tuple[float, str | None]:
        """Deepest hand penetration (m) and what it is into: ``object`` or ``support``."""
        geoms, dist = self._contacts()
        if len(geoms) == 0:
            return 0.0, None
        hand = self._hand_geom_mask[geoms]
        pairs = np.flatnonzero(hand[:, 0] ^ hand[:, 1])  # hand against object or support
        if not len(pairs):
            return 0.0, None
        deepest = pairs[np.argmin(dist[pairs])]
        other = geoms[deepest, 1] if hand[deepest, 0] else geoms[deepest, 0]
        return float(-dist[deepest]), "object" if self._object_geom_mask[other] else "support"

    def _diverged(self) -> bool:
        d = self.data
        if d.warning.number.any():
            return True
        if not (np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all()):
            return True
        if d.ncon and d.contact.dist[: d.ncon].min() < -self.params.max_penetration:
            return True  # soft contacts overpowered: a pad is sinking through the object
        speed = np.linalg.norm(d.qvel[self._object_dof : self._object_dof + 3])
        return bool(speed > self.params.max_speed)

    def _object_in_hand(self) -> NDArray[np.float64]:
        """Object centre of mass in the first hand's frame."""
        d = self.data
        body = self._hand_bodies[0]
        rotation = d.xmat[body].reshape(3, 3)
        return rotation.T @ (d.xipos[self._object_body] - d.xpos[body])

    def scene_xml(self, poses: NDArray[np.float64]) -> str:
        """MJCF of this world with the hands (and their targets) at ``poses`` ``(hands, 4, 4)``.

        Loadable by ``mujoco.MjModel.from_xml_path``; gravity as in the lift phase.
        """
        spec = mujoco.MjSpec.from_string(self.xml)
        for h in range(self.hands):
            quat = _quat_from_matrix(poses[h, :3, :3])
            for name in (f"hand_{h}", f"target_{h}"):
                body = spec.body(name)
                body.pos, body.quat = poses[h, :3, 3], quat
        spec.option.gravity = -GRAVITY * self.scene.up
        return spec.to_xml()

    # ------------------------------------------------------------------ trial
    def run_trial(
        self, poses: NDArray[np.float64], friction_scale: float = 1.0, mass_scale: float = 1.0
    ) -> TrialResult:
        """One grasp-and-lift trial with hands at ``poses`` ``(hands, 4, 4)`` (object frame)."""
        m, d, p = self.model, self.data, self.params
        m.body_mass[self._object_body] = self._base_mass * mass_scale
        m.body_inertia[self._object_body] = self._base_inertia * mass_scale
        m.geom_friction[self._object_geoms, 0] = self._base_friction * friction_scale
        mujoco.mj_resetData(m, d)
        m.opt.gravity[:] = 0.0
        self._set_mocap(poses, hands_too=True)
        if self.articulated:
            d.ctrl[self._driven_ctrl] = self._driven_open  # hold the fingers open
        mujoco.mj_forward(m, d)
        if self.articulated and self._pad_open_x is None:
            self._pad_open_x = self._pad_x()
        nan = float("nan")
        depth, hit = self._deepest_hand_penetration()
        if depth > p.penetration_tolerance:
            return TrialResult("collides_open", nan, nan, hit)
        gravity = -GRAVITY * self.scene.up
        dt = m.opt.timestep
        if self.scene.has_support:
            m.opt.gravity[:] = gravity
            if not self._advance(round(p.settle_time / dt)):
                return TrialResult("unstable", nan, nan)
        # close to stall: the pads' motors push with the grip force; an articulation's
        # position drives aim at the closed limits, within their force limits
        if self.articulated:
            d.ctrl[self._driven_ctrl] = self._driven_target
        else:
            d.ctrl[:] = self.gripper.grip_force
        close_steps = max(1, round(p.close_time / dt))
        dofs = self._finger_dofs
        step = 0
        while step < close_steps:
            if not self._advance(CHECK_EVERY):
                return TrialResult("unstable", nan, nan)
            step += CHECK_EVERY
            if np.abs(d.qvel[dofs]).max() < p.stall_speed and step * dt > 0.05:
                break
        opening, at_stop = self._closure()
        if at_stop or not self._fingers_touching().all():
            return TrialResult("missed", nan, opening)
        # gravity on: hold, lift, shake (the hands move together, rigidly)
        m.opt.gravity[:] = gravity
        reference = self._object_in_hand()
        start = poses.copy()
        pivot = start[:, :3, 3].mean(axis=0)
        axis = start[0, :3, 0]
        hold = round(p.hold_time / dt)
        lift = max(1, round(p.lift_time / dt))
        lift_steps = np.arange(1, hold + lift + 1)
        lift_profile = np.where(
            lift_steps <= hold,
            0.0,
            (1 - np.cos(np.pi * np.clip((lift_steps - hold) / lift, 0, 1))) / 2,
        )
        shake_steps = round(p.shake_time / dt)
        wave = np.sin(2 * np.pi * p.shake_frequency * np.arange(1, shake_steps + 1) * dt)
        phases = {
            "lift": self._trajectory(
                start, pivot, axis, p.lift_height * lift_profile, 0 * lift_profile
            ),
            "shake": self._trajectory(
                start,
                pivot,
                axis,
                p.lift_height + p.shake_amplitude * wave,
                math.radians(p.shake_angle) * wave,
            ),
        }
        worst = 0.0
        mocap = self._hand_mocap
        window = max(1, round(p.contact_window / dt))
        for phase, (positions, quats) in phases.items():
            failed = False
            steps = len(positions)
            last_touch = np.full((self.hands, 2), -(10**9))  # step of each pad's last contact
            for i in range(steps):
                d.mocap_pos[mocap] = positions[i]
                d.mocap_quat[mocap] = quats[i]
                mujoco.mj_step(m, d)
                if (i + 1) % CHECK_EVERY and i + 1 < steps:
                    continue
                if self._diverged():
                    return TrialResult("unstable", worst, opening)
                shift = float(np.linalg.norm(self._object_in_hand() - reference))
                worst = max(worst, shift)
                if shift > p.drop_distance:
                    return TrialResult(f"dropped_{phase}", worst, opening)
                failed = failed or shift >= p.slip_tolerance
                if i + 1 > steps - window - CHECK_EVERY:  # the window at the phase's end
                    last_touch[self._fingers_touching()] = i
            touching = last_touch >= steps - window
            if failed or not touching.all():
                kind = "dropped" if not touching.any() else "slipped"
                return TrialResult(f"{kind}_{phase}", worst, opening)
        return TrialResult("held", worst, opening)

    def run_batch(self, batch: TrialBatch) -> list[list[TrialResult]]:
        """Every trial of ``batch``, one after another in this process."""
        return [
            [
                self.run_trial(poses, float(friction), float(mass))
                for poses, friction, mass in zip(trials, frictions, masses, strict=True)
            ]
            for trials, frictions, masses in zip(
                batch.poses, batch.friction_scales, batch.mass_scales, strict=True
            )
        ]

    def _trajectory(
        self,
        start: NDArray[np.float64],
        pivot: NDArray[np.float64],
        axis: NDArray[np.float64],
        heights: NDArray[np.float64],
        angles: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Hand targets per step, positions ``(T, H, 3)`` and quaternions ``(T, H, 4)``.

        ``start`` poses ``(H, 4, 4)`` turned by ``angles`` about ``axis`` through ``pivot``
        and raised by ``heights`` along up; quaternions w first, as MuJoCo stores them.
        """
        cos, sin = np.cos(angles), np.sin(angles)
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        rotations = np.eye(3) + sin[:, None, None] * k + (1 - cos)[:, None, None] * (k @ k)
        positions = np.einsum("tij,hj->thi", rotations, start[:, :3, 3] - pivot) + pivot
        positions += heights[:, None, None] * self.scene.up
        # q(t) = q_axis(angle) ⊗ q_start (Hamilton product)
        q0 = np.array([_quat_from_matrix(pose[:3, :3]) for pose in start])[None]  # (1, H, 4)
        qa = np.column_stack([np.cos(angles / 2), np.sin(angles / 2)[:, None] * axis])[:, None]
        w1, v1 = qa[..., :1], qa[..., 1:]
        w2, v2 = q0[..., :1], q0[..., 1:]
        w = w1 * w2 - np.sum(v1 * v2, axis=-1, keepdims=True)
        v = w1 * v2 + w2 * v1 + np.cross(v1, v2)
        return positions, np.concatenate([w, v], axis=-1)

    def _advance(self, steps: int) -> bool:
        """Step ``steps`` times; False when the simulation diverged."""
        if steps > 0:
            mujoco.mj_step(self.model, self.data, nstep=steps)
        return not self._diverged()


#: The engine's former name (``usdgrip.grasping.physics.GraspSimulator``).
GraspSimulator = MujocoEngine


def build_engine(
    obj: PhysicsObject,
    gripper: PhysicsGripper,
    scene: PhysicsScene,
    hands: int,
    params: EvaluationParams,
) -> MujocoEngine:
    """The ``mujoco`` engine's world (``EngineRecord.build``)."""
    return MujocoEngine(obj, gripper, scene, hands, params)


def describe_engine(params: EvaluationParams) -> dict[str, Any]:
    """Engine name and versions plus every parameter, for a report's ``metadata.physics``."""
    from usdgrip.grasping.physics.decompose import coacd_version

    return {
        "engine": "mujoco",
        "engine_version": mujoco.__version__,
        "decomposition": "coacd",
        "decomposition_version": coacd_version(),
        "parameters": params.as_dict(),
    }
