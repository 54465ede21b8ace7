"""The ``mjwarp`` engine: every candidate × trial of a file stepped together as MuJoCo Warp worlds.

:class:`MjwarpEngine` (a batched :class:`~usdgrip.grasping.physics.engines.GraspEngine`)
compiles the ``mujoco`` engine's model (:class:`MujocoEngine`, the same MJCF) and puts it on
a Warp device with one world per trial: the perturbed mass, inertia and friction are
per-world model rows, gravity is per world (it turns on when a world's phase does), and
the hands' targets, controls and initial poses are per-world data rows. Every world runs
the protocol of :meth:`MujocoEngine.run_trial` on its own clock (docs/physics.md): the
phases, their steps, the checks every ``CHECK_EVERY`` steps and the outcomes are the
same; a world whose trial has ended keeps stepping but is no longer read.

The frequent checks (divergence, the object's shift in the hand, the fingers' stall) are
numpy over all worlds; the rare ones (the open hand's penetration, the jaws' closure, the
pads touching the object) load one world's state into the CPU engine's ``MjData`` and run
its own checks, so both engines judge a state alike. The gripper's own articulation runs
too (its drives' open and close targets per world), except one with closed loops
(:func:`check_combination`).

Needs the ``gpu`` extra (``mujoco-warp``, ``warp-lang``; a MuJoCo Warp of the installed
MuJoCo's version). The device is Warp's preferred one (a CUDA GPU, else the CPU), or
``USDGRIP_WARP_DEVICE`` (``cpu``, ``cuda:0``). Warp compiles its kernels on first use and
caches them in its kernel cache (``WARP_CACHE_PATH``, else ``$XDG_CACHE_HOME/warp``, else
``~/.cache/warp``).
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from usdgrip.grasping.physics.engines import TrialBatch, TrialResult
from usdgrip.grasping.physics.mujoco_engine import (
    CHECK_EVERY,
    GRAVITY,
    MujocoEngine,
)
from usdgrip.grasping.physics.params import EvaluationParams
from usdgrip.grasping.physics.world import PhysicsGripper, PhysicsObject, PhysicsScene

#: Environment variable naming the Warp device (``cpu``, ``cuda:0``); default: Warp's preferred.
DEVICE_VARIABLE = "USDGRIP_WARP_DEVICE"
#: Contacts allocated per world (MuJoCo Warp's contact buffer is shared by all worlds) and
#: constraint rows per world and hand (weld, limits, mimic) besides the contacts' rows: room
#: for 32 contacts of condim 4 per hand (the CPU engine's peak on the bench's mug of 44
#: convex pieces: 18 contacts, 79 rows). A world that overflows either is ``unstable``,
#: as a MuJoCo warning makes a CPU trial; more rows cost every world time (the solver's
#: dense rows: 4 rows per contact doubled a step on Warp's CPU device).
CONTACTS_PER_WORLD = 64
ROWS_PER_HAND = 144
#: Worlds stepped together at most; more trials run in batches of this size (bounds the
#: memory: contacts, constraint rows and the hands' targets grow with the worlds, about
#: 0.1 MB per world and hand).
MAX_WORLDS = 4096

_SETTLE, _CLOSE, _LIFT, _SHAKE, _DONE = range(5)
_PHASE_NAMES = {_LIFT: "lift", _SHAKE: "shake"}


def _modules() -> tuple[Any, Any]:
    """``(warp, mujoco_warp)``.

    Raises:
        ValueError: one of them is missing or does not match the installed MuJoCo.
    """
    from usdgrip.extras import MODULES

    missing: ImportError | None = None
    try:
        wp = importlib.import_module("warp")
        mjw = importlib.import_module("mujoco_warp")
    except ImportError as exc:
        missing = exc
    if missing is not None:  # raised here, not in the handler: this line is the message
        name = missing.name if missing.name in ("warp", "mujoco_warp") else "mujoco_warp"
        raise ValueError(f"--engine mjwarp needs {MODULES[name]}: pip install 'usdgrip[gpu]'")
    from importlib.metadata import PackageNotFoundError, version

    try:
        warp_mujoco = version("mujoco-warp")
    except PackageNotFoundError:  # a source checkout: trust it
        warp_mujoco = mujoco.__version__
    if warp_mujoco.split(".")[:2] != mujoco.__version__.split(".")[:2]:
        raise ValueError(
            f"--engine mjwarp: mujoco-warp {warp_mujoco} does not match mujoco "
            f"{mujoco.__version__}; install matching releases (pip install 'usdgrip[gpu]')"
        )
    return wp, mjw


def _device(wp: Any) -> Any:
    """The Warp device to run on.

    Raises:
        ValueError: ``USDGRIP_WARP_DEVICE`` names a device Warp does not have.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wp.config.quiet = True
        wp.config.log_level = wp.LOG_WARNING  # no line per kernel module loaded
        try:
            wp.init()
        except OSError as exc:  # its kernel cache cannot be made
            where = os.environ.get("WARP_CACHE_PATH", exc.filename)
            raise ValueError(
                f"--engine mjwarp: Warp's kernel cache {where}: {exc.strerror} "
                "(set WARP_CACHE_PATH to a writable folder)"
            ) from None
    wanted = os.environ.get(DEVICE_VARIABLE, "").strip()
    if not wanted:
        return wp.get_preferred_device()
    devices = [str(d) for d in wp.get_devices()]
    if wanted not in devices:
        raise ValueError(
            f"--engine mjwarp: {DEVICE_VARIABLE}={wanted} is not a Warp device here "
            f"(devices: {', '.join(devices)})"
        )
    return wp.get_device(wanted)


def check_engine() -> None:
    """Refuse early, in one line, what this engine cannot run without (``EngineRecord.check``).

    Raises:
        ValueError: mujoco-warp or warp-lang missing or mismatched, or no such device.
    """
    wp, _ = _modules()
    _device(wp)


def check_combination(cpu: MujocoEngine) -> None:
    """Refuse what MuJoCo Warp was not found to simulate like the CPU engine.

    Raises:
        ValueError: the gripper's articulation has closed loops (connect constraints).
    """
    loops = int(np.count_nonzero(cpu.model.eq_type == mujoco.mjtEq.mjEQ_CONNECT))
    if cpu.articulated and loops:
        raise ValueError(
            f"--engine mjwarp does not simulate a gripper articulation with closed loops "
            f"({loops // cpu.hands} connect constraint(s) per hand: held / not held did not "
            "agree with the CPU engine); use --engine mujoco, or --gripper-model proxy or "
            "geometry"
        )


class MjwarpEngine:
    """MuJoCo Warp worlds for one object, gripper, scene and hand count; runs trial batches."""

    def __init__(
        self,
        obj: PhysicsObject,
        gripper: PhysicsGripper,
        scene: PhysicsScene,
        hands: int,
        params: EvaluationParams,
    ) -> None:
        self.wp, self.mjw = _modules()
        self.device = _device(self.wp)
        #: The CPU engine of the same world: its model, ids and the rare checks.
        self.cpu = MujocoEngine(obj, gripper, scene, hands, params)
        check_combination(self.cpu)
        self.params, self.hands, self.scene = params, hands, scene

    def run_trial(
        self, poses: NDArray[np.float64], friction_scale: float = 1.0, mass_scale: float = 1.0
    ) -> TrialResult:
        """One trial (a batch of one world)."""
        batch = TrialBatch(
            np.asarray(poses, dtype=np.float64)[None, None],
            np.array([[friction_scale]], dtype=np.float64),
            np.array([[mass_scale]], dtype=np.float64),
        )
        return self.run_batch(batch)[0][0]

    # ------------------------------------------------------------------ one world on the CPU
    def _load(self, qpos: NDArray[np.float64], mocap: tuple[Any, Any] | None = None) -> None:
        """The CPU data at world state ``qpos`` (positions, contacts; no dynamics)."""
        cpu = self.cpu
        m, d = cpu.model, cpu.data
        d.qpos[:] = qpos
        if mocap is not None:
            d.mocap_pos[:], d.mocap_quat[:] = mocap
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)

    # ------------------------------------------------------------------ the batch
    def run_batch(self, batch: TrialBatch) -> list[list[TrialResult]]:
        """Every trial of ``batch``: up to :data:`MAX_WORLDS` worlds stepped together at a time."""
        n, trials = batch.friction_scales.shape
        worlds = n * trials
        poses = np.asarray(batch.poses, dtype=np.float64).reshape(worlds, self.hands, 4, 4)
        friction = np.asarray(batch.friction_scales, dtype=np.float64).reshape(worlds)
        mass = np.asarray(batch.mass_scales, dtype=np.float64).reshape(worlds)
        results: list[TrialResult] = []
        for start in range(0, worlds, MAX_WORLDS):
            chunk = slice(start, start + MAX_WORLDS)
            results += self._run_worlds(poses[chunk], friction[chunk], mass[chunk])
        return [results[c * trials : (c + 1) * trials] for c in range(n)]

    def _run_worlds(
        self,
        poses: NDArray[np.float64],
        friction: NDArray[np.float64],
        mass: NDArray[np.float64],
    ) -> list[TrialResult]:
        """One trial per world (poses ``(W, H, 4, 4)``), all stepped together."""
        wp, mjw, cpu, p = self.wp, self.mjw, self.cpu, self.params
        worlds = len(poses)
        m, d = cpu.model, cpu.data
        nan = float("nan")
        results: list[TrialResult | None] = [None] * worlds

        # initial states and the open-hand check, on the CPU (no dynamics yet)
        qpos0 = np.empty((worlds, m.nq))
        mocap_pos0 = np.empty((worlds, m.nmocap, 3))
        mocap_quat0 = np.empty((worlds, m.nmocap, 4))
        for w in range(worlds):
            mujoco.mj_resetData(m, d)
            cpu._set_mocap(poses[w], hands_too=True)
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
            if cpu.articulated and cpu._pad_open_x is None:  # as the CPU engine's first trial
                cpu._pad_open_x = cpu._pad_x()
            depth, hit = cpu._deepest_hand_penetration()
            if depth > p.penetration_tolerance:
                results[w] = TrialResult("collides_open", nan, nan, hit)
            qpos0[w], mocap_pos0[w], mocap_quat0[w] = d.qpos, d.mocap_pos, d.mocap_quat
        active = np.array([r is None for r in results])
        if not active.any():
            return self._finished(results)
        # an ended world is parked: the object away from the hands and the support, at
        # rest without gravity, so it adds no contacts to the buffer all worlds share
        object_qpos = m.jnt_qposadr[m.body_jntadr[cpu._object_body]]
        away = qpos0.copy()
        away[:, object_qpos : object_qpos + 3] += 10.0 * np.asarray(self.scene.up)
        qpos0[~active] = away[~active]

        dt = m.opt.timestep
        gravity = -GRAVITY * np.asarray(self.scene.up, dtype=np.float64)
        settle_steps = round(p.settle_time / dt) if self.scene.has_support else 0
        close_steps = max(1, round(p.close_time / dt))
        hold = round(p.hold_time / dt)
        lift = max(1, round(p.lift_time / dt))
        shake_steps = round(p.shake_time / dt)
        window = max(1, round(p.contact_window / dt))
        lift_steps = np.arange(1, hold + lift + 1)
        lift_profile = np.where(
            lift_steps <= hold,
            0.0,
            (1 - np.cos(np.pi * np.clip((lift_steps - hold) / lift, 0, 1))) / 2,
        )
        wave = np.sin(2 * np.pi * p.shake_frequency * np.arange(1, shake_steps + 1) * dt)
        phase_len = {_LIFT: hold + lift, _SHAKE: shake_steps}

        # the device worlds: per-world mass, inertia, friction, gravity; state, targets
        body, geoms = cpu._object_body, cpu._object_geoms
        body_mass = np.tile(m.body_mass, (worlds, 1))
        body_mass[:, body] = cpu._base_mass * mass
        body_inertia = np.tile(m.body_inertia, (worlds, 1, 1))
        body_inertia[:, body] = cpu._base_inertia[None] * mass[:, None]
        geom_friction = np.tile(m.geom_friction, (worlds, 1, 1))
        geom_friction[:, geoms, 0] = cpu._base_friction[None] * friction[:, None]
        with wp.ScopedDevice(self.device), warnings.catch_warnings():
            # MuJoCo Warp warns of the hands' zero friction (a contact takes the larger)
            warnings.simplefilter("ignore")
            rows = dict.fromkeys(("body_mass", "body_inertia", "geom_friction"), worlds)
            wm = mjw.put_model(m, batch_sizes=rows)
            wm.body_mass.assign(body_mass)
            wm.body_inertia.assign(body_inertia)
            wm.geom_friction.assign(geom_friction)
            wm.opt.gravity = wp.zeros(worlds, dtype=wp.vec3)
            wm.opt.warn_overflow = 0  # read per world from ``overflow``: that trial is unstable
            wd = mjw.make_data(
                m,
                nworld=worlds,
                naconmax=CONTACTS_PER_WORLD * worlds,
                njmax=ROWS_PER_HAND * self.hands,
            )
        wd.qpos.assign(qpos0)
        wd.mocap_pos.assign(mocap_pos0)
        wd.mocap_quat.assign(mocap_quat0)

        phase = np.full(worlds, _SETTLE if settle_steps else _CLOSE)
        phase[~active] = _DONE
        steps_in = np.zeros(worlds, dtype=np.int64)  # steps taken in the current phase
        gravity_on = np.zeros(worlds, dtype=bool)
        ctrl = np.zeros((worlds, m.nu))
        if cpu.articulated:  # the drives hold the fingers open until the close
            ctrl[:, cpu._driven_ctrl] = cpu._driven_open
        worst = np.zeros(worlds)
        opening = np.full(worlds, nan)
        failed = np.zeros(worlds, dtype=bool)
        last_touch = np.full((worlds, self.hands, 2), -(10**9))
        reference = np.zeros((worlds, 3))
        # per world, the hands' targets of its lift then shake (filled when its lift begins)
        motion_steps = phase_len[_LIFT] + phase_len[_SHAKE]
        target_pos = np.zeros((worlds, motion_steps, self.hands, 3))
        target_quat = np.zeros((worlds, motion_steps, self.hands, 4))
        mocap_pos, mocap_quat = mocap_pos0.copy(), mocap_quat0.copy()
        mocap_ids = cpu._hand_mocap
        hand0 = cpu._hand_bodies[0]
        obj_dof = cpu._object_dof
        if cpu.articulated:  # position drives aim at the closed limits, within their forces
            close_ctrl = ctrl[0].copy()
            close_ctrl[cpu._driven_ctrl] = cpu._driven_target
        else:  # the pads' motors push with the grip force
            close_ctrl = np.full(m.nu, cpu.gripper.grip_force)

        parked: list[int] = []

        def finish(w: int, outcome: str, displacement: float, gap: float) -> None:
            """World ``w``'s trial ended: its result; it is parked before the next step."""
            results[w] = TrialResult(outcome, displacement, gap)
            phase[w] = _DONE
            parked.append(w)

        def in_hand(xpos: NDArray[Any], xmat: NDArray[Any], xipos: NDArray[Any]) -> Any:
            rotation = xmat[:, hand0]  # (W, 3, 3)
            offset = xipos[:, body] - xpos[:, hand0]
            return np.einsum("wji,wj->wi", rotation, offset)

        def start_lift(w: int, q: NDArray[np.float64], state: dict[str, Any]) -> None:
            """The close ended in world ``w``: missed, or gravity on and the lift begins."""
            self._load(q, (mocap_pos[w], mocap_quat[w]))
            gap, at_stop = cpu._closure()
            opening[w] = gap
            if at_stop or not cpu._fingers_touching().all():
                finish(w, "missed", nan, gap)
                return
            reference[w] = state["in_hand"][w]
            start = poses[w]
            pivot = start[:, :3, 3].mean(axis=0)
            axis = start[0, :3, 0]
            lifted = cpu._trajectory(
                start, pivot, axis, p.lift_height * lift_profile, 0 * lift_profile
            )
            shaken = cpu._trajectory(
                start,
                pivot,
                axis,
                p.lift_height + p.shake_amplitude * wave,
                np.radians(p.shake_angle) * wave,
            )
            target_pos[w] = np.concatenate([lifted[0], shaken[0]])
            target_quat[w] = np.concatenate([lifted[1], shaken[1]])
            phase[w], steps_in[w] = _LIFT, 0
            last_touch[w] = -(10**9)
            failed[w] = False

        if self.scene.has_support:
            gravity_on[:] = True
        ctrl_device = wd.ctrl
        gravity_rows = np.zeros((worlds, 3))
        while (phase != _DONE).any():
            running = phase != _DONE
            # what each world's next step is given: gravity, controls, the hands' targets
            gravity_rows[:] = 0.0
            gravity_rows[gravity_on] = gravity
            wm.opt.gravity.assign(gravity_rows)
            ctrl[running & (phase >= _CLOSE)] = close_ctrl
            ctrl_device.assign(ctrl)
            moving = np.flatnonzero(running & (phase >= _LIFT))
            if len(moving):
                offset = steps_in[moving] + np.where(phase[moving] == _LIFT, 0, phase_len[_LIFT])
                rows = moving[:, None]
                mocap_pos[rows, mocap_ids[None]] = target_pos[moving, offset]
                mocap_quat[rows, mocap_ids[None]] = target_quat[moving, offset]
                wd.mocap_pos.assign(mocap_pos)
                wd.mocap_quat.assign(mocap_quat)
            with wp.ScopedDevice(self.device):
                mjw.step(wm, wd)
            steps_in[running] += 1

            # which worlds check now (the CPU engine's check points on each world's clock)
            settle_end = running & (phase == _SETTLE) & (steps_in == settle_steps)
            close_check = running & (phase == _CLOSE) & (steps_in % CHECK_EVERY == 0)
            length = np.where(phase == _SHAKE, phase_len[_SHAKE], phase_len[_LIFT])
            motion_check = (
                running & (phase >= _LIFT) & ((steps_in % CHECK_EVERY == 0) | (steps_in == length))
            )
            checking = settle_end | close_check | motion_check
            if not checking.any():
                continue
            state = self._state(wd, worlds)
            diverged = self._diverged(state, obj_dof)
            for w in np.flatnonzero(checking & diverged):
                finish(w, "unstable", worst[w] if phase[w] >= _LIFT else nan, opening[w])
            checking &= ~diverged
            for w in np.flatnonzero(checking & settle_end):
                phase[w], steps_in[w] = _CLOSE, 0
            if (checking & close_check).any():
                speeds = np.abs(state["qvel"][:, cpu._finger_dofs]).max(axis=1)
                stalled = (speeds < p.stall_speed) & (steps_in * dt > 0.05)
                ended = checking & close_check & (stalled | (steps_in >= close_steps))
                if ended.any():
                    state["in_hand"] = in_hand(state["xpos"], state["xmat"], state["xipos"])
                    for w in np.flatnonzero(ended):
                        start_lift(w, state["qpos"][w], state)
                        if phase[w] == _LIFT:
                            gravity_on[w] = True
            moved = checking & motion_check
            if moved.any():  # the CPU engine's lift and shake checks, for every world at once
                now = in_hand(state["xpos"], state["xmat"], state["xipos"])
                shift = np.linalg.norm(now - reference, axis=1)
                worst[moved] = np.maximum(worst[moved], shift[moved])
                dropped = moved & (shift > p.drop_distance)
                for w in np.flatnonzero(dropped):
                    finish(w, f"dropped_{_PHASE_NAMES[int(phase[w])]}", worst[w], opening[w])
                moved &= ~dropped
                failed[moved] |= shift[moved] >= p.slip_tolerance
                # the contact window at the phase's end: the pads touching, world by world
                for w in np.flatnonzero(moved & (steps_in > length - window - CHECK_EVERY)):
                    self._load(state["qpos"][w], (mocap_pos[w], mocap_quat[w]))
                    last_touch[w][cpu._fingers_touching()] = steps_in[w] - 1
                for w in np.flatnonzero(moved & (steps_in == length)):  # the phase ends
                    name = _PHASE_NAMES[int(phase[w])]
                    touching = last_touch[w] >= length[w] - window
                    if failed[w] or not touching.all():
                        kind = "dropped" if not touching.any() else "slipped"
                        finish(w, f"{kind}_{name}", worst[w], opening[w])
                    elif phase[w] == _LIFT:
                        phase[w], steps_in[w] = _SHAKE, 0
                        last_touch[w] = -(10**9)
                        failed[w] = False
                    else:
                        finish(w, "held", worst[w], opening[w])
            if parked:
                gravity_on[parked] = False
                ctrl[parked] = 0.0
                mocap_pos[parked], mocap_quat[parked] = mocap_pos0[parked], mocap_quat0[parked]
                state["qpos"][parked] = away[parked]
                state["qvel"][parked] = 0.0
                wd.qpos.assign(state["qpos"])
                wd.qvel.assign(state["qvel"])
                wd.mocap_pos.assign(mocap_pos)
                wd.mocap_quat.assign(mocap_quat)
                parked.clear()
        return self._finished(results)

    def _state(self, wd: Any, worlds: int) -> dict[str, Any]:
        """The worlds' state as numpy: positions, velocities, frames, deepest contact, overflow."""
        state = {
            "qpos": wd.qpos.numpy().astype(np.float64),
            "qvel": wd.qvel.numpy().astype(np.float64),
            "xpos": wd.xpos.numpy().astype(np.float64),
            "xmat": wd.xmat.numpy().astype(np.float64).reshape(worlds, -1, 3, 3),
            "xipos": wd.xipos.numpy().astype(np.float64),
            "overflow": wd.overflow.numpy() != 0,
        }
        deepest = np.zeros(worlds)
        count = min(int(wd.nacon.numpy()[0]), wd.naconmax)
        if count:
            np.minimum.at(
                deepest, wd.contact.worldid.numpy()[:count], wd.contact.dist.numpy()[:count]
            )
        state["deepest"] = deepest
        return state

    def _diverged(self, state: dict[str, Any], obj_dof: int) -> NDArray[np.bool_]:
        """Per world, what :meth:`MujocoEngine._diverged` calls diverged (overflow for warnings)."""
        finite = np.isfinite(state["qpos"]).all(axis=1) & np.isfinite(state["qvel"]).all(axis=1)
        speed = np.linalg.norm(state["qvel"][:, obj_dof : obj_dof + 3], axis=1)
        with np.errstate(invalid="ignore"):
            return (
                state["overflow"]
                | ~finite
                | (state["deepest"] < -self.params.max_penetration)
                | ~(speed <= self.params.max_speed)
            )

    @staticmethod
    def _finished(results: list[TrialResult | None]) -> list[TrialResult]:
        """The results, every world ended (the loop runs until none is left)."""
        if any(r is None for r in results):  # pragma: no cover - the loop ends every world
            raise RuntimeError("a MuJoCo Warp world ended without an outcome")
        return [r for r in results if r is not None]


def build_engine(
    obj: PhysicsObject,
    gripper: PhysicsGripper,
    scene: PhysicsScene,
    hands: int,
    params: EvaluationParams,
) -> MjwarpEngine:
    """The ``mjwarp`` engine's worlds (``EngineRecord.build``)."""
    return MjwarpEngine(obj, gripper, scene, hands, params)


def describe_engine(params: EvaluationParams) -> dict[str, Any]:
    """Engine name and versions plus every parameter, for a report's ``metadata.physics``."""
    from importlib.metadata import version

    from usdgrip.grasping.physics.decompose import coacd_version

    wp, _ = _modules()
    return {
        "engine": "mjwarp",
        "engine_version": version("mujoco-warp"),
        "mujoco_version": mujoco.__version__,
        "warp_version": wp.config.version,
        "device": str(_device(wp)),
        "decomposition": "coacd",
        "decomposition_version": coacd_version(),
        "parameters": params.as_dict(),
    }
