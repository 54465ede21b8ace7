"""Physical properties of an object prim: mass or density, friction, and support meshes.

What the grasp-and-lift evaluation (:mod:`usdgrip.grasping.physics`) needs from USD,
read as plain numbers in SI units (kg, kg/m³, metres). The object's meshes themselves
come from :func:`usdgrip.usd.geometry.read_object_mesh` (the planner's reader).

- **Mass**: ``UsdPhysics.MassAPI`` on the object prim: ``physics:mass`` when authored
  and > 0, else ``physics:density`` (× the mesh volume, done by the caller); else the
  first ``physics:density`` authored on a collider below it. Values are converted with
  the stage's ``kilogramsPerUnit`` and ``metersPerUnit``.
- **Friction**: the ``UsdPhysics.MaterialAPI`` material bound to the object's colliders
  (the object prim and its meshes), binding purpose ``physics`` first, then
  ``allPurpose`` (``UsdShade.MaterialBindingAPI.ComputeBoundMaterial``);
  ``physics:staticFriction`` when authored, else ``physics:dynamicFriction``. When
  colliders carry different values the smallest is used (and a note says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from pxr import Usd, UsdGeom, UsdPhysics, UsdShade

from usdgrip.errors import GripperError
from usdgrip.usd.geometry import read_object_mesh
from usdgrip.usd.stage import (
    compute_world_transform,
    get_meters_per_unit_problem,
    get_world_transform_problem,
    read_attribute_value,
)


@dataclass(frozen=True)
class PhysicsProperties:
    """Mass, density and friction authored for an object (``None``: not authored)."""

    mass: float | None
    """kg (``physics:mass``), or None."""
    density: float | None
    """kg/m³ (``physics:density``), or None."""
    friction: float | None
    """Coulomb coefficient (``physics:staticFriction``, else ``dynamicFriction``), or None."""
    mass_source: str | None = None
    """``<prim>.attribute`` the mass or density came from."""
    friction_source: str | None = None
    """``<material>.attribute`` the friction came from."""
    notes: tuple[str, ...] = ()
    """What a user should know (colliders that disagree)."""


def _positive_attribute(prim: Usd.Prim, name: str) -> float | None:
    """An authored physics value (at the default time code), else ``None``.

    Read through :func:`usdgrip.usd.stage.read_attribute_value`, the rules' reader: a
    value only authored as time samples is refused as such (the schema's fallback, 0,
    is not the value the user authored).
    """
    attr = prim.GetAttribute(name)
    if not attr or not attr.HasAuthoredValue():
        return None
    value, problem = read_attribute_value(attr, "number", fallback=0.0)  # UsdPhysics' fallback
    if problem is not None:
        raise GripperError(f"<{prim.GetPath()}>.{problem}")
    number = float(value)
    if not (math.isfinite(number) and number > 0):
        raise GripperError(f"<{prim.GetPath()}>.{name} is {number!r}; expected a finite value > 0")
    return number


def get_kilograms_per_unit_problem(kilograms_per_unit: float) -> str | None:
    """Why a stage's ``kilogramsPerUnit`` is unusable (``None`` when finite and > 0)."""
    if math.isfinite(kilograms_per_unit) and kilograms_per_unit > 0:
        return None
    return (
        f"the stage's kilogramsPerUnit is {kilograms_per_unit:g}; expected a finite value > 0 "
        "(kilograms per stage mass unit, e.g. 1 or 0.001): author it in the root layer's "
        "metadata"
    )


def _colliders(prim: Usd.Prim) -> list[Usd.Prim]:
    """The object prim and every prim below it that is a Gprim or has CollisionAPI."""
    found = [prim]
    for child in Usd.PrimRange(prim):
        if child == prim:
            continue
        if child.IsA(UsdGeom.Gprim) or child.HasAPI(UsdPhysics.CollisionAPI):
            found.append(child)
    return found


def read_physics_properties(prim: Usd.Prim) -> PhysicsProperties:
    """The mass (or density) and friction authored for the object ``prim``.

    Raises:
        GripperError: an authored mass, density or friction that is not a finite
            number > 0 (friction ≥ 0 is refused at 0 too: nothing could be held), or is
            only time-sampled, naming the prim and attribute; a mass or density on a stage
            whose ``kilogramsPerUnit`` or ``metersPerUnit`` is not a finite value > 0.
    """
    stage = prim.GetStage()
    kg_per_unit = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
    m_per_unit = float(UsdGeom.GetStageMetersPerUnit(stage))
    mass = density = None
    mass_source = None
    if (value := _positive_attribute(prim, "physics:mass")) is not None:
        mass, mass_source = value * kg_per_unit, f"<{prim.GetPath()}>.physics:mass"
    else:
        for collider in _colliders(prim):
            value = _positive_attribute(collider, "physics:density")
            if value is not None:
                density = value * kg_per_unit / m_per_unit**3
                mass_source = f"<{collider.GetPath()}>.physics:density"
                break
    if mass_source is not None:
        problem = get_kilograms_per_unit_problem(kg_per_unit) or get_meters_per_unit_problem(
            m_per_unit
        )
        if problem is not None:
            raise GripperError(f"{mass_source} is authored, but {problem}")
    frictions: dict[str, float] = {}
    for collider in _colliders(prim):
        material, _ = UsdShade.MaterialBindingAPI(collider).ComputeBoundMaterial(
            materialPurpose="physics"
        )
        if not material or not material.GetPrim().HasAPI(UsdPhysics.MaterialAPI):
            continue
        mat = material.GetPrim()
        for name in ("physics:staticFriction", "physics:dynamicFriction"):
            value = _positive_attribute(mat, name)
            if value is not None:
                frictions[f"<{mat.GetPath()}>.{name}"] = value
                break
    notes = []
    friction = friction_source = None
    if frictions:
        friction_source, friction = min(frictions.items(), key=lambda item: item[1])
        if len(set(frictions.values())) > 1:
            listed = ", ".join(f"{k} = {v:g}" for k, v in frictions.items())
            notes.append(f"colliders have different friction ({listed}); using the smallest")
    return PhysicsProperties(mass, density, friction, mass_source, friction_source, tuple(notes))


def read_support_mesh(
    stage: Usd.Stage, prim_path: str, object_frame: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The meshes and primitives at or under the support prim, in the object frame (metres).

    ``object_frame`` is the object's world frame (4, 4), scale removed; the support's
    stage shares the object stage's world (as ``usdgrip plan --scene``).

    Raises:
        GripperError: no such prim, a transform that cannot place it
            (:func:`~usdgrip.usd.stage.get_world_transform_problem`), or no mesh at or
            under it (naming the prim).
    """
    prim = stage.GetPrimAtPath(prim_path)
    if not prim or not prim.IsValid():
        raise GripperError(f"support <{prim_path}>: no such prim in the scene file")
    problem = get_world_transform_problem(prim, compute_world_transform(prim))
    if problem is not None:
        raise GripperError(f"support: {problem}")
    try:
        mesh = read_object_mesh(prim, frame="world")
    except GripperError as exc:
        raise GripperError(f"support {exc}") from None
    inverse = np.linalg.inv(np.asarray(object_frame, dtype=np.float64))
    vertices = mesh.vertices @ inverse[:3, :3].T + inverse[:3, 3]
    return vertices, np.asarray(mesh.faces, dtype=np.int64)


def read_stage_up(stage: Usd.Stage) -> tuple[NDArray[np.float64], bool]:
    """World up (3,) from the stage's ``upAxis`` and whether it was authored.

    Without an authored ``upAxis`` USD's fallback (``Y``) is returned, with ``False``.
    """
    axis = str(UsdGeom.GetStageUpAxis(stage))
    up = np.zeros(3)
    up["XYZ".index(axis)] = 1.0
    return up, stage.HasAuthoredMetadata("upAxis")
