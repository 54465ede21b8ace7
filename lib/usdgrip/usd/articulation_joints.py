"""Reading a gripper's joints: kind, body frames, limits, drives and mimic couplings.

The per-joint half of :func:`usdgrip.usd.articulation.read_gripper_articulation`, with the
:class:`ArticulationReader` state that call keeps (notes, units, world transforms). Values
become the SI records of :mod:`usdgrip.gripper_articulation`; what cannot be used becomes a
note naming the prim, attribute and value, never an exception. ``docs/grippers.md``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from pxr import Sdf, Usd, UsdGeom, UsdPhysics

from usdgrip.frames import Mat4, compute_pose, compute_rigid_part
from usdgrip.gripper_articulation import (
    AXES,
    ArticulationJoint,
    ArticulationLink,
    ArticulationNote,
    JointDrive,
    MimicCoupling,
)
from usdgrip.gripper_kinematics import compute_rest_position
from usdgrip.usd.stage import compute_world_transform, get_meters_per_unit, read_attribute_value

#: A revolute limit beyond this many degrees is unusable (read as not limited, with a note).
MAX_REVOLUTE_LIMIT_DEG = 360.0
_KINDS = (
    (UsdPhysics.PrismaticJoint, "prismatic"),
    (UsdPhysics.RevoluteJoint, "revolute"),
    (UsdPhysics.FixedJoint, "fixed"),
    (UsdPhysics.SphericalJoint, "spherical"),
)
_DEG = math.pi / 180.0


def rigid_pose(matrix: Mat4) -> Mat4:
    """:func:`compute_rigid_part`, without its SVD when the matrix is rigid already."""
    rotation = matrix[:3, :3]
    if np.abs(rotation.T @ rotation - np.eye(3)).max() < 1e-12 and np.linalg.det(rotation) > 0:
        return matrix.copy()
    return compute_rigid_part(matrix)


class ArticulationReader:
    """State of one :func:`read_gripper_articulation` call (notes, units, transforms)."""

    def __init__(self, stage: Usd.Stage, xform_cache: UsdGeom.XformCache | None) -> None:
        self.stage = stage
        self.mpu = get_meters_per_unit(stage)
        self.kgpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
        self.cache = xform_cache or UsdGeom.XformCache(Usd.TimeCode.Default())
        self.notes: list[ArticulationNote] = []
        self._worlds: dict[Sdf.Path, Mat4] = {}

    def note(self, code: str, subject: str, text: str) -> None:
        self.notes.append(ArticulationNote(code, subject, text))

    def world(self, prim: Usd.Prim) -> Mat4:
        """Full local-to-world (scale included), metres (read once per prim)."""
        path = prim.GetPath()
        found = self._worlds.get(path)
        if found is None:
            found = self._worlds[path] = compute_world_transform(
                prim, xform_cache=self.cache, meters_per_unit=self.mpu
            )
        return found

    def value(self, prim: Usd.Prim, name: str, fallback: Any = None) -> Any:
        attr = prim.GetAttribute(name)
        if not attr:
            return fallback
        value = attr.Get()
        return fallback if value is None else value

    def number(self, prim: Usd.Prim, name: str, fallback: float | None = None) -> float | None:
        """A finite float attribute, else ``fallback`` (a non-number or NaN gets a note).

        Read at the default time code as the physics readers read it
        (:func:`~usdgrip.usd.stage.read_attribute_value`): a value only time-sampled is
        not the schema's fallback (0 for the physics masses and densities) but unusable,
        and says so in a note.
        """
        attr = prim.GetAttribute(name)
        raw = attr.Get() if attr else None
        if attr and (raw is None or raw == 0):  # None or the physics fallback: a default?
            _, problem = read_attribute_value(attr, "number", raw, 0.0 if raw == 0 else None)
            if problem is not None and "time-sampled" in problem:
                self.note(
                    "attribute-unusable", str(prim.GetPath()), f"{problem}; read as not authored"
                )
                return fallback
        if raw is None:
            return fallback
        try:
            number = float(raw)
        except (TypeError, ValueError):
            self.note(
                "attribute-unusable",
                str(prim.GetPath()),
                f"{name} is {raw!r}; expected a number: read as not authored",
            )
            return fallback
        if math.isnan(number):
            self.note(
                "attribute-unusable",
                str(prim.GetPath()),
                f"{name} is nan; expected a number: read as not authored",
            )
            return fallback
        return number


def read_joint(
    reader: ArticulationReader,
    prim: Usd.Prim,
    ends: tuple,
    index: dict[str, int],
    links: list[ArticulationLink],
    joint_index: dict[str, int],
    actuated: dict[str, str],
) -> ArticulationJoint:
    path = str(prim.GetPath())
    api = UsdPhysics.Joint(prim)
    kind = next((name for schema, name in _KINDS if prim.IsA(schema)), "other")
    end0, end1, targets = ends
    frames = []
    body_indices = []
    for k, end in enumerate((end0, end1)):
        pos_attr = api.GetLocalPos0Attr() if k == 0 else api.GetLocalPos1Attr()
        rot_attr = api.GetLocalRot0Attr() if k == 0 else api.GetLocalRot1Attr()
        position = np.asarray(pos_attr.Get() or (0.0, 0.0, 0.0), dtype=np.float64)
        rotation = rot_attr.Get()
        quaternion = (
            np.array([rotation.GetReal(), *rotation.GetImaginary()], dtype=np.float64)
            if rotation is not None
            else np.array([1.0, 0.0, 0.0, 0.0])
        )
        norm = float(np.linalg.norm(quaternion))
        name = f"physics:localRot{k}"
        if not (math.isfinite(norm) and norm > 1e-12) or not np.all(np.isfinite(position)):
            reader.note(
                "joint-frame-unusable",
                path,
                f"physics:localPos{k} {position.tolist()} / {name} {quaternion.tolist()}; "
                "expected finite values and a non-zero quaternion: the identity frame is read",
            )
            position, quaternion, norm = np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), 1.0
        local = compute_pose(position, quaternion / norm)
        if end is None:
            # World end: the frame is in world units (stage units) at the world origin.
            local[:3, 3] *= reader.mpu
            frames.append(local)
            body_indices.append(None)
            continue
        body, body_from_target = end
        frame = rigid_pose(body_from_target @ local)
        frames.append(frame)
        body_indices.append(index.get(body))
    axis = 0
    lower = upper = None
    authored: tuple[float | None, float | None] = (None, None)
    if kind in ("prismatic", "revolute"):
        token = str(reader.value(prim, "physics:axis", "X"))
        if token not in AXES:
            reader.note(
                "joint-axis-unusable",
                path,
                f"physics:axis is {token!r}; expected X, Y or Z: read as X",
            )
            token = "X"
        axis = AXES.index(token)
        lower, upper, authored = _read_limits(reader, prim, kind)
    drive = _read_drive(reader, prim, kind, actuated.get(path))
    mimic = _read_mimic(reader, prim, kind, joint_index)
    if mimic is not None and drive is not None and (drive.stiffness or drive.damping):
        reader.note(
            "drive-and-mimic",
            path,
            f"the joint has both a drive (stiffness {drive.stiffness:g}, damping "
            f"{drive.damping:g}) and a mimic coupling; read as a mimic follower (SimReady "
            "DJ.004: a mimic joint's drive stiffness and damping must be 0)",
        )
    excluded = bool(reader.value(prim, "physics:excludeFromArticulation", False))
    enabled = bool(reader.value(prim, "physics:jointEnabled", True))
    worlds = [links[i].world_from_link if i is not None else np.eye(4) for i in body_indices]
    joint = ArticulationJoint(
        path,
        kind,
        body_indices[0],
        body_indices[1],
        frames[0],
        frames[1],
        axis,
        lower,
        upper,
        authored,
        drive,
        mimic,
        excluded,
        enabled,
        body_targets=targets,
    )
    if kind in ("prismatic", "revolute") and None not in body_indices:
        rest, residual = compute_rest_position(joint, worlds[0], worlds[1])
        if residual > 1e-4:
            reader.note(
                "joint-frame-mismatch",
                path,
                f"the authored poses of <{links[body_indices[0]].path}> and "
                f"<{links[body_indices[1]].path}> are {residual:.3g} (m + rad) from any "
                f"position of this {kind} joint; expected localPos/localRot to give the same "
                "frame in both bodies: kinematics start from the nearest position",
            )
        joint = replace(joint, rest_position=rest, rest_residual=residual)
    return joint


def _read_limits(
    reader: ArticulationReader, prim: Usd.Prim, kind: str
) -> tuple[float | None, float | None, tuple[float | None, float | None]]:
    path = str(prim.GetPath())
    values = []
    authored = []
    for name in ("physics:lowerLimit", "physics:upperLimit"):
        value = reader.number(prim, name)
        authored.append(value)
        if value is None or math.isinf(value):
            values.append(None)  # -inf / inf: not limited
            continue
        if kind == "revolute":
            if abs(value) > MAX_REVOLUTE_LIMIT_DEG:
                reader.note(
                    "joint-limit-unusable",
                    path,
                    f"{name} is {value:g} degrees; expected -{MAX_REVOLUTE_LIMIT_DEG:g} to "
                    f"{MAX_REVOLUTE_LIMIT_DEG:g} (or ±inf: not limited): read as not limited",
                )
                values.append(None)
                continue
            values.append(value * _DEG)
        else:
            values.append(value * reader.mpu)
    lower, upper = values
    if lower is not None and upper is not None and lower > upper:
        reader.note(
            "joint-limit-unusable",
            path,
            f"physics:lowerLimit {authored[0]:g} > physics:upperLimit {authored[1]:g}; "
            "expected lower <= upper: read as not limited",
        )
        lower = upper = None
    return lower, upper, (authored[0], authored[1])


def _read_drive(
    reader: ArticulationReader, prim: Usd.Prim, kind: str, actuator: str | None
) -> JointDrive | None:
    instance = {"prismatic": "linear", "revolute": "angular"}.get(kind)
    drives = [
        name.split(":", 1)[1] for name in _applied(prim) if name.startswith("PhysicsDriveAPI:")
    ]
    if instance is None or instance not in drives:
        return JointDrive(f"NewtonActuator <{actuator}>") if actuator else None
    path = str(prim.GetPath())
    prefix = f"drive:{instance}:physics:"
    angular = instance == "angular"
    # USD: linear gains mass/s² and mass/s, max force mass·DIST/s²; angular ones per degree,
    # max force mass·DIST²/s² (UsdPhysics DriveAPI docs).
    length = reader.mpu
    scales = {
        "stiffness": reader.kgpu * (length**2 / _DEG if angular else 1.0),
        "damping": reader.kgpu * (length**2 / _DEG if angular else 1.0),
        "maxForce": reader.kgpu * (length**2 if angular else length),
        "targetPosition": _DEG if angular else length,
        "targetVelocity": _DEG if angular else length,
    }
    values: dict[str, float | None] = {}
    for name, scale in scales.items():
        value = reader.number(prim, prefix + name)
        if value is not None and name in ("stiffness", "damping", "maxForce") and value < 0:
            reader.note(
                "drive-unusable",
                path,
                f"{prefix}{name} is {value:g}; expected >= 0: read as not authored",
            )
            value = None
        if value is not None and not math.isfinite(value):
            value = None  # maxForce = inf: unlimited
        values[name] = None if value is None else value * scale
    drive_type = reader.value(prim, prefix + "type")
    return JointDrive(
        f"PhysicsDriveAPI:{instance}",
        str(drive_type) if drive_type is not None else "force",
        values["stiffness"] if values["stiffness"] is not None else 0.0,
        values["damping"] if values["damping"] is not None else 0.0,
        values["maxForce"],
        values["targetPosition"] if values["targetPosition"] is not None else 0.0,
        values["targetVelocity"] if values["targetVelocity"] is not None else 0.0,
    )


def _applied(prim: Usd.Prim) -> list[str]:
    """Every applied API schema name, registered or not (PhysX, Newton, MuJoCo schemas)."""
    return [str(name) for name in prim.GetPrimTypeInfo().GetAppliedAPISchemas()]


def _read_mimic(
    reader: ArticulationReader, prim: Usd.Prim, kind: str, joint_index: dict[str, int]
) -> MimicCoupling | None:
    applied = _applied(prim)
    physx = [name.split(":", 1)[1] for name in applied if name.startswith("PhysxMimicJointAPI:")]
    newton = "NewtonMimicAPI" in applied
    mujoco = "MjcEqualityJointAPI" in applied
    if not (physx or newton or mujoco):
        return None
    path = str(prim.GetPath())
    if kind not in ("prismatic", "revolute"):
        reader.note(
            "mimic-unusable",
            path,
            f"mimic coupling on a {kind} joint; expected a prismatic or revolute follower: ignored",
        )
        return None
    offset_scale = _DEG if kind == "revolute" else reader.mpu
    couplings = []
    if newton or mujoco:
        source = "MjcEqualityJointAPI" if mujoco else "NewtonMimicAPI"
        leader = _single_target(reader, prim, "newton:mimicJoint")
        if leader is None and mujoco:
            leader = _single_target(reader, prim, "mjc:target")  # deprecated spelling
        coef0 = _authored_number(reader, prim, "newton:mimicCoef0")
        coef1 = _authored_number(reader, prim, "newton:mimicCoef1")
        if mujoco:  # deprecated mjc:coef0/1 when Newton's are not authored
            coef0 = coef0 if coef0 is not None else _authored_number(reader, prim, "mjc:coef0")
            coef1 = coef1 if coef1 is not None else _authored_number(reader, prim, "mjc:coef1")
        coef0 = 0.0 if coef0 is None else coef0
        coef1 = 1.0 if coef1 is None else coef1
        higher = tuple(
            (reader.number(prim, f"mjc:coef{k}", 0.0) if mujoco else 0.0) for k in (2, 3, 4)
        )
        enabled = bool(reader.value(prim, "newton:mimicEnabled", True))
        couplings.append(
            (source, leader, coef0 * offset_scale, coef1, higher,
             {"coef0": coef0, "coef1": coef1}, enabled)
        )  # fmt: skip
    for instance in physx:
        prefix = f"physxMimicJoint:{instance}:"
        leader = _single_target(reader, prim, prefix + "referenceJoint")
        gearing = reader.number(prim, prefix + "gearing", 1.0)
        offset = reader.number(prim, prefix + "offset", 0.0)
        # position + gearing * reference + offset = 0 (PhysX); offset in degrees for a
        # revolute joint, like Newton's coef0 (ovphysx maps offset = -coef0 unconverted).
        couplings.append(
            (f"PhysxMimicJointAPI:{instance}", leader, -offset * offset_scale, -gearing,
             (0.0, 0.0, 0.0), {"gearing": gearing, "offset": offset}, True)
        )  # fmt: skip
    if len(couplings) > 1:
        first, *rest = couplings
        differ = [c[0] for c in rest if (c[1], c[2], c[3]) != (first[1], first[2], first[3])]
        reader.note(
            "mimic-several",
            path,
            f"{len(couplings)} mimic couplings authored ({', '.join(c[0] for c in couplings)}); "
            f"{first[0]} is read"
            + (f" and {', '.join(differ)} disagree with it" if differ else " (they agree)"),
        )
    source, leader, coef0, coef1, higher, values, enabled = couplings[0]
    if leader is None:
        reader.note(
            "mimic-leader-missing",
            path,
            f"{source} names no leader joint (one target expected); the joint is read as passive",
        )
        return None
    if leader not in joint_index:
        target = reader.stage.GetPrimAtPath(leader)
        what = "not a prim on this stage" if not target else "not a joint of this gripper"
        reader.note(
            "mimic-leader-missing",
            path,
            f"the {source} leader <{leader}> is {what}; expected a joint of the gripper: the "
            "joint is read as passive",
        )
        return None
    if joint_index[leader] == joint_index[path]:
        reader.note(
            "mimic-cycle",
            path,
            f"the {source} leader is the joint itself; expected another joint: read as passive",
        )
        return None
    if not (math.isfinite(coef0) and math.isfinite(coef1)):
        reader.note(
            "mimic-unusable",
            path,
            f"{source} coefficients {values}; expected finite numbers: the joint is read as "
            "passive",
        )
        return None
    return MimicCoupling(joint_index[leader], coef0, coef1, source, higher, values, enabled)


def _authored_number(reader: ArticulationReader, prim: Usd.Prim, name: str) -> float | None:
    attr = prim.GetAttribute(name)
    if not attr or not attr.HasAuthoredValue():
        return None
    return reader.number(prim, name)


def _single_target(reader: ArticulationReader, prim: Usd.Prim, name: str) -> str | None:
    rel = prim.GetRelationship(name)
    targets = rel.GetTargets() if rel else []
    if not targets:
        return None
    if len(targets) > 1:
        reader.note(
            "mimic-leader-targets",
            str(prim.GetPath()),
            f"{name} has {len(targets)} targets; expected exactly one (SimReady DJ.007): the "
            "first is read",
        )
    return str(targets[0])
