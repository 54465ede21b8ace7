"""The engine's models of one evaluation, built once from the read inputs.

:func:`build_physics_world` makes the physics object (mass, friction, collision pieces)
and scene (up, support) of :class:`~usdgrip.grasping.inputs.GraspInputs`;
:func:`build_physics_hand` the physics gripper (pads, grip force, collision model or
articulation) of one :class:`~usdgrip.grasping.inputs.Gripper`. Each record carries the
notes of the defaults it took and the seconds it took to build;
:mod:`usdgrip.grasping.grasp_evaluation` runs the trials on them.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from usdgrip.errors import GripperError
from usdgrip.grasping.inputs import GraspInputs, Gripper
from usdgrip.grasping.options import EvaluationOptions
from usdgrip.grasping.provenance import Note


class PhysicsWorld(NamedTuple):
    """The engine's object and scene, built once from the inputs, and what was assumed."""

    obj: Any
    """:class:`~usdgrip.grasping.physics.PhysicsObject`."""
    scene: Any
    """:class:`~usdgrip.grasping.physics.PhysicsScene`."""
    notes: tuple[Note, ...]
    record: dict[str, Any]
    """The object, up and support parts of ``metadata.physics``."""
    seconds: float = 0.0
    """Time spent building it (reading, CoACD decomposition), counted in the runtime."""


class PhysicsHand(NamedTuple):
    """The engine's gripper for one :class:`~usdgrip.grasping.inputs.Gripper`."""

    gripper: Any
    """:class:`~usdgrip.grasping.physics.PhysicsGripper`."""
    notes: tuple[Note, ...]
    record: dict[str, Any]
    """``metadata.physics["gripper"]``."""
    seconds: float = 0.0
    """Time spent building it (finger decomposition), counted in the runtime."""


def _floats(values: Any) -> list[float]:
    return [float(v) + 0.0 for v in np.ravel(values)]


def _cache(options: EvaluationOptions) -> dict[str, Any]:
    return {"cache_dir": options.cache_dir} if options.cache_dir is not None else {}


def _choose(
    authored: float | None,
    authored_from: str | None,
    option: float | None,
    name: str,
    default: float,
    default_text: str,
    authored_verb: str,
    notes: list[Note],
    data: Any,
) -> tuple[float, str]:
    """The authored value, else the option, else the default; the note of what was taken."""
    if authored is not None:
        if option is not None:
            text = f"{name} option {option:g} ignored: {authored_from} {authored_verb}"
            notes.append(Note("option_ignored", name, text))
        return authored, authored_from or ""
    if option is not None:
        return option, f"{name} option"
    notes.append(Note(f"{name}_default", data.prim_path, default_text, (data.label,)))
    return default, f"default {name}"


def build_physics_world(inputs: GraspInputs, options: EvaluationOptions) -> PhysicsWorld:
    """The physics object (mass, friction, collision pieces) and scene (up, support).

    Raises:
        GripperError: no mesh, a bad authored mass, density or friction, a support prim
            whose geometry cannot be read.
    """
    started = time.perf_counter()
    from usdgrip.grasping.physics import (
        DEFAULT_DENSITY,
        DEFAULT_FRICTION,
        make_physics_object,
        make_physics_scene,
    )

    data = inputs.object
    geometry = data.geometry
    label = data.label
    if data.mesh_error is not None:
        raise GripperError(f"{geometry.asset_path}: {data.mesh_error}")
    if data.physical_error is not None:
        raise GripperError(data.physical_error)
    notes = [note.within(label) for note in data.notes]
    props = data.physical
    mass = props.mass
    # The authored value wins over the option, the option over the default (a note each).
    density, mass_from = _choose(
        props.density if mass is None else mass, props.mass_source, options.density, "density",
        DEFAULT_DENSITY, "no UsdPhysics.MassAPI mass or density authored and no density given; "
        f"using the default density {DEFAULT_DENSITY:g} kg/m³", "is authored", notes, data,
    )  # fmt: skip
    density = None if mass is not None else density
    friction, friction_from = _choose(
        props.friction, props.friction_source, options.friction, "friction", DEFAULT_FRICTION,
        "no UsdPhysics.MaterialAPI friction bound to its colliders and no friction given; "
        f"using the default friction {DEFAULT_FRICTION:g}", "is bound", notes, data,
    )  # fmt: skip
    cache = _cache(options)
    try:
        obj = make_physics_object(
            data.vertices,
            data.faces,
            mass=mass,
            density=density,
            friction=friction,
            mass_from=mass_from,
            label=f"object {data.prim_path}",
            **cache,
        )
    except (ValueError, ChildProcessError) as exc:  # a CoACD child that died: said, exit 2
        raise GripperError(f"{geometry}: {exc}") from None
    notes.extend(_cache_notes())
    if not data.up_authored:
        notes.append(
            Note(
                "up_fallback",
                geometry.asset_path,
                "no upAxis authored; using USD's fallback Y as up for the lift",
                (geometry.asset_path,),
            )
        )
    support = inputs.support
    meshes: tuple[tuple[Any, Any], ...] = ()
    if support.kind == "prim":
        if support.error is not None:
            raise GripperError(support.error)
        if support.vertices is None:
            raise GripperError(
                f"support {support.prim!r} is an obstacle of an in-memory scene; the physics "
                "needs it from a USD file (scene=FILE, support=PRIM)"
            )
        meshes = ((support.vertices, support.faces),)
    scene = make_physics_scene(
        data.lift_up, table=support.kind == "table", support_meshes=meshes, **cache
    )
    record = {
        "object": {
            "prim": data.prim_path,
            "mass_kg": obj.mass,
            "mass_from": mass_from,
            "volume_m3": obj.volume,
            "friction": obj.friction,
            "friction_from": friction_from,
            "collision_pieces": len(obj.pieces),
        },
        "up": _floats(scene.up),
        "support": support.label,
    }
    return PhysicsWorld(obj, scene, tuple(notes), record, time.perf_counter() - started)


def _cache_notes() -> list[Note]:
    """The CoACD cache problems met by the last decompositions, each once (never fatal)."""
    from usdgrip.grasping.physics.decompose import take_cache_warnings

    return [Note("cache_problem", "", text) for text in take_cache_warnings()]


def build_physics_hand(gripper: Gripper, options: EvaluationOptions) -> PhysicsHand:
    """The physics gripper: the pads, the grip force and the collision model's palm.

    Raises:
        GripperError: the gripper was skipped by the one rule (its reason).
    """
    from usdgrip.grasping.physics import PhysicsGripper

    if gripper.skipped is not None:
        raise GripperError(gripper.skipped.render())
    started = time.perf_counter()
    notes = [gripper.pad_note] if gripper.pad_note is not None else []
    force, force_from = options.force, "force option"
    if force is None:
        force, force_from = gripper.grip_force, gripper.grip_force_source
        if force_from != "gripper:maxGripForce":
            problem = gripper.grip_force_problem
            authored = f"gripper:maxGripForce unusable ({problem})" if problem else "none authored"
            notes.append(
                Note(
                    "force_default",
                    str(gripper.ref),
                    f"no grip force given and {authored}; using the default {force:g} N per finger",
                    (gripper.label,),
                )
            )
    model = gripper.collision_model
    articulation = gripper.articulation if options.gripper_model != "proxy" else None
    hand = PhysicsGripper.from_collision_model(
        model, gripper.max_opening, gripper.pad_width, force, **_cache(options)
    )
    source = model.source
    if articulation is not None:
        hand = PhysicsGripper(hand.max_opening, hand.pad_width, force, articulation=articulation)
        source = "articulation"
    if options.gripper_model == "auto":
        driven = len(articulation.opening.driven) if articulation is not None else 0
        why = (
            f"the gripper's own articulation ({driven} driven finger joint(s), "
            f"{len(articulation.links)} links)"
            if articulation is not None
            else f"{source} shapes with two pads ({gripper.articulation_absent or 'no joints'})"
        )
        notes.append(
            Note(
                "gripper_model_auto",
                str(gripper.ref),
                f"--gripper-model auto simulates {why}",
                (gripper.label,),
            )
        )
    notes.extend(_cache_notes())
    record = {
        "site": str(gripper.ref),
        "max_opening_m": float(gripper.max_opening),
        "pad_width_m": float(gripper.pad_width),
        "grip_force_n": float(force),
        "grip_force_from": force_from,
        "collision_model": source,
    }
    return PhysicsHand(hand, tuple(notes), record, time.perf_counter() - started)
