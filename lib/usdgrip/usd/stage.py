"""Opening stages, units, transforms and attribute values: the stage access every reader shares.

Gf matrices keep the translation in the last row; :func:`gf_to_numpy`/:func:`numpy_to_gf`
are the one place that transposes. :func:`read_attribute_value` is the one function the
readers and the rules read a typed value through.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, Vt

from usdgrip.errors import GripperError, PrimNotFoundError, StageOpenError
from usdgrip.frames import MAX_WORLD_OFFSET_M, Mat4, compute_rigid_part
from usdgrip.usd.names import USD_SUFFIXES

#: Traverse everything a user authored that is composed: overs (undefined
#: prims under a missing payload) and instance proxies included, classes not.
TRAVERSAL = Usd.TraverseInstanceProxies(Usd.PrimIsActive & Usd.PrimIsLoaded & ~Usd.PrimIsAbstract)


# --- stage and prim access -------------------------------------------------


def open_stage(path: str | Path) -> Usd.Stage:
    """Open a USD file, turning every failure into one clear :class:`StageOpenError`.

    Every layer file the stage composes is checked before USD reads it
    (:func:`usdgrip.usd.dependencies.open_layer_files`): a named pipe or device
    would block USD forever, and usda text nested deeper than
    :data:`~usdgrip.usd.dependencies.MAX_LAYER_NESTING` levels would crash its parser.

    Raises:
        StageOpenError: the file is missing, unreadable (``permission denied``), a
            directory, not USD, corrupt, or starts with a UTF-8 BOM; it or a layer it
            composes is not a regular file, or nests too deep.
    """
    from usdgrip.fileio import describe_unreadable
    from usdgrip.usd.dependencies import open_layer_files

    file = Path(path)
    problem = describe_unreadable(file)  # permission denied, a UTF-8 BOM
    if problem:
        raise StageOpenError(problem)
    if not file.exists():
        raise StageOpenError(f"{file}: no such file")
    if file.is_dir():
        raise StageOpenError(
            f"{file}: is a directory; expected a USD file ({', '.join(USD_SUFFIXES)})"
        )
    if file.suffix.lower() not in USD_SUFFIXES:
        raise StageOpenError(
            f"{file}: not a USD file (suffix {file.suffix or 'none'!r}); expected one of "
            f"{', '.join(USD_SUFFIXES)}"
        )
    try:
        layers = open_layer_files(file)  # held until the stage has them: USD reads each once
        stage = Usd.Stage.Open(str(file))
        del layers
    except ValueError as exc:
        raise StageOpenError(str(exc)) from None
    except Tf.ErrorException as exc:
        # Keep USD's own messages ('...' after each "Error in <function> at line ..."), not its
        # source locations.
        reasons = re.findall(r" : '(.*?)'(?=\s*Error in|\s*$)", " ".join(str(exc).split()))
        reason = "; ".join(reasons) or " ".join(str(exc).split())
        raise StageOpenError(f"{file}: cannot be opened as USD: {reason}") from None
    if stage is None:
        raise StageOpenError(f"{file}: cannot be opened as USD")
    return stage


def get_prim(stage: Usd.Stage, path: str) -> Usd.Prim:
    """Return the prim at ``path`` or raise :class:`PrimNotFoundError` naming the file."""
    if not Sdf.Path.IsValidPathString(path) or not Sdf.Path(path).IsAbsolutePath():
        raise PrimNotFoundError(f"{get_stage_name(stage)}: {path!r} is not an absolute prim path")
    prim = stage.GetPrimAtPath(path)
    if not prim:
        roots = ", ".join(f"<{p.GetPath()}>" for p in stage.GetPseudoRoot().GetChildren()) or "none"
        name = get_stage_name(stage)
        raise PrimNotFoundError(f"{name}: no prim at <{path}> (root prims: {roots})")
    return prim


def require_prim(prim: object, argument: str = "prim") -> Usd.Prim:
    """``prim`` when it is a valid ``Usd.Prim``; otherwise an error naming ``argument``.

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim`` (``None``, a path string...).
        ValueError: ``prim`` is invalid: no prim at its path, or its stage was released.
    """
    if not isinstance(prim, Usd.Prim):
        raise TypeError(f"{argument} is {_describe_object(prim)}; expected a Usd.Prim")
    if not prim.IsValid():
        if prim.GetPath().isEmpty:
            raise ValueError(
                f"{argument} is a null Usd.Prim: stage.GetPrimAtPath found no prim at the path "
                "asked for"
            )
        raise ValueError(
            f"{argument} <{prim.GetPath()}> is no longer valid: its stage was released or the "
            "prim removed (keep the stage referenced while its prims are used)"
        )
    return prim


def require_stage(stage: object, argument: str = "stage") -> Usd.Stage:
    """``stage`` when it is a ``Usd.Stage``; otherwise a ``TypeError`` naming ``argument``."""
    if not isinstance(stage, Usd.Stage):
        raise TypeError(
            f"{argument} is {_describe_object(stage)}; expected a Usd.Stage "
            "(usdgrip.open_stage(path))"
        )
    return stage


def require_number(value: object, argument: str) -> float:
    """``value`` as a float when it is a number (not a bool); else a ``TypeError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{argument} is {value!r}; expected a number")
    return float(value)


def _describe_object(value: object) -> str:
    return "None" if value is None else f"a {type(value).__name__} ({value!r:.60})"


def get_stage_name(stage: Usd.Stage) -> str:
    return stage.GetRootLayer().identifier


def gf_to_numpy(matrix: Gf.Matrix4d) -> Mat4:
    """Gf matrix (translation in the last row) → numpy (4, 4), translation in ``[:3, 3]``."""
    return np.array(matrix, dtype=np.float64).T


def numpy_to_gf(matrix: ArrayLike) -> Gf.Matrix4d:
    """Numpy (4, 4) with translation in [:3, 3] → Gf.Matrix4d (the transpose)."""
    return Gf.Matrix4d(np.asarray(matrix, dtype=np.float64).reshape(4, 4).T.tolist())


def get_meters_per_unit(stage: Usd.Stage) -> float:
    """Stage metres per unit (USD's fallback 0.01 when not authored)."""
    return float(UsdGeom.GetStageMetersPerUnit(stage))


def get_meters_per_unit_problem(meters_per_unit: float) -> str | None:
    """Why a stage's ``metersPerUnit`` is unusable (``None`` when finite and > 0).

    Zero collapses every world length (each axis reads as zero length), a negative
    value mirrors every direction, so readers refuse both and the rules report them.
    """
    if math.isfinite(meters_per_unit) and meters_per_unit > 0:
        return None
    return (
        f"the stage's metersPerUnit is {meters_per_unit:g}; expected a finite value > 0 "
        "(metres per stage unit, e.g. 1 or 0.01): author it in the root layer's metadata"
    )


def compute_world_transform(
    prim: Usd.Prim,
    time: Usd.TimeCode | None = None,
    *,
    xform_cache: UsdGeom.XformCache | None = None,
    meters_per_unit: float | None = None,
) -> Mat4:
    """Local-to-world (4, 4) of ``prim`` with world lengths in metres.

    Works for undefined ``over`` prims too (their xformOps still compose).
    ``xform_cache`` (at ``time``; ``time`` is then ignored) lets many reads of
    one unchanged stage share their ancestors' transforms; ``meters_per_unit``
    (default: the stage's) saves asking the stage each time.
    """
    if xform_cache is None:
        xform_cache = UsdGeom.XformCache(Usd.TimeCode.Default() if time is None else time)
    world = gf_to_numpy(xform_cache.GetLocalToWorldTransform(prim))
    if meters_per_unit is None:
        meters_per_unit = get_meters_per_unit(prim.GetStage())
    if meters_per_unit != 1.0:
        world[:3] *= meters_per_unit  # diag(mpu, mpu, mpu, 1) @ world
    return world


#: An object transform whose smallest scale is below this fraction of the next one flattens
#: the object (``xformOp:scale = (1, 1, 0)``).
FLAT_SCALE_RATIO = 1e-12


def get_world_transform_problem(prim: Usd.Prim, world: Mat4) -> str | None:
    """Why a prim's world transform (metres) cannot place geometry, else ``None``.

    Unusable: a non-finite entry (the message names the prim whose own xformOps
    bring it in, this one or an ancestor), or a translation farther than
    :data:`usdgrip.frames.MAX_WORLD_OFFSET_M` (1e7 m) from the origin (what the planner
    and the physics read: object, support, obstacles, gripper shapes).
    """
    if not np.isfinite(world).all():
        culprit = prim
        while culprit.GetParent() and not culprit.GetParent().IsPseudoRoot():
            if not np.isfinite(gf_to_numpy(_local_transform(culprit))).all():
                break
            culprit = culprit.GetParent()
        return (
            f"the world transform of <{prim.GetPath()}> has NaN or infinite values (from the "
            f"xformOps of <{culprit.GetPath()}>); expected finite translate, rotate and scale "
            "values"
        )
    offset = float(np.abs(world[:3, 3]).max())
    if offset > MAX_WORLD_OFFSET_M:
        return (
            f"<{prim.GetPath()}> sits {offset:g} m from the world origin; expected within "
            f"{MAX_WORLD_OFFSET_M:g} m (float64 keeps {np.spacing(offset):.2g} m there, so its "
            "shape is lost): move it, or its scene, nearer the origin, or check the stage's "
            "metersPerUnit"
        )
    return None


def _local_transform(prim: Usd.Prim) -> Gf.Matrix4d:
    """The prim's own xformOps (identity for a prim that is not Xformable)."""
    if not prim.IsA(UsdGeom.Xformable):
        return Gf.Matrix4d(1.0)
    return UsdGeom.Xformable(prim).GetLocalTransformation()


def compute_object_frame(prim: Usd.Prim) -> Mat4:
    """Frame M of an object prim: its world transform in metres with scale removed.

    The one reader of the object frame (planning, physics, render): the rigid part of
    :func:`compute_world_transform` (:func:`usdgrip.frames.compute_rigid_part`; a mirror
    is moved onto the prim's local X axis, into the mesh), after checking the stage's
    ``metersPerUnit`` and the transform (:func:`get_world_transform_problem`).

    Raises:
        GripperError: unusable ``metersPerUnit``, a non-finite transform, a prim farther
            than :data:`~usdgrip.frames.MAX_WORLD_OFFSET_M` from the origin, or a transform
            that flattens the prim (a zero scale); the message names the file and the prim.
    """
    name = get_stage_name(prim.GetStage())
    meters_per_unit = get_meters_per_unit(prim.GetStage())
    problem = get_meters_per_unit_problem(meters_per_unit)
    if problem is None:
        world = compute_world_transform(prim, meters_per_unit=meters_per_unit)
        problem = get_world_transform_problem(prim, world)
    if problem is not None:
        raise GripperError(f"{name}: {problem}")
    scales = np.linalg.svd(world[:3, :3], compute_uv=False)  # largest first
    if not scales[2] > FLAT_SCALE_RATIO * scales[1]:  # (a scale of 1e30 on one axis is not flat)
        raise GripperError(
            f"{name}: the world transform of <{prim.GetPath()}> scales one axis to zero (its "
            f"scales are {', '.join(f'{s:g}' for s in scales)}): the object is flat; expected a "
            "scale other than 0 on every axis"
        )
    return compute_rigid_part(world)


def set_work_thread_limit(threads: int) -> None:
    """Limit the threads USD's work pool uses in this process (0: one per core).

    Batch workers run one per core and use one thread each: USD's own threads
    would only compete with the other workers.
    """
    from pxr import Work

    Work.SetConcurrencyLimit(int(threads))


# --- reading values: one function for the readers and the rules ---------------

_DEFAULT_TIME = Usd.TimeCode.Default()
_NO_DEFAULT_SOURCES = (Usd.ResolveInfoSourceNone, Usd.ResolveInfoSourceFallback)

#: Value kinds the readers accept: Python types of ``Get()``'s value, and the text naming them.
VALUE_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "number": ((float, int), "float or double"),
    "vec3": ((Gf.Vec3d, Gf.Vec3f, Gf.Vec3h), "a 3-vector (point3d, vector3d, float3...)"),
    "vec3[]": ((Vt.Vec3fArray, Vt.Vec3dArray, Vt.Vec3hArray), "point3f[]"),
    "int[]": ((Vt.IntArray,), "int[]"),
    "text": ((str,), "token or string"),
}


def get_authored_type_name(attr: Usd.Attribute) -> str:
    """Type name of the strongest authored spec (e.g. ``string``), else the attribute's."""
    stack = attr.GetPropertyStack(_DEFAULT_TIME)
    return str(stack[0].typeName if stack else attr.GetTypeName())


def read_attribute_value(
    attr: Usd.Attribute, kind: str, value: object = None, fallback: object = None
) -> tuple:
    """The value of an authored ``attr`` at the default time code, checked against ``kind``.

    usdgrip reads every value at the default time code. Readers and rules both
    call this, so what a rule reports is exactly what the readers refuse.

    Args:
        attr: an attribute with an authored opinion.
        kind: a key of :data:`VALUE_KINDS`.
        value: ``attr.Get()`` when the caller has it already (``None``: read it).
        fallback: the schema's fallback for ``attr`` (``None``: none). Only a value that
            is ``None`` or equals it can lack a default opinion, so only then is the
            resolve source asked (a time-sampled value without a default reads so).

    Returns:
        ``(value, None)``, or ``(None, problem)`` when the value is unusable: its
        type is not ``kind`` (the problem names the authored type), or it is only
        time-sampled (no default value to read).
    """
    if value is None:
        value = attribute_get(attr)
    # (`value == None` on a Vt array is a slow failed conversion: compare only to a fallback.)
    may_lack_default = value is None or (fallback is not None and value == fallback)
    if may_lack_default and attr.GetResolveInfo(_DEFAULT_TIME).GetSource() in _NO_DEFAULT_SOURCES:
        if not attr.HasAuthoredValue():
            return value, None  # a declaration without a value: as if not authored
        return None, (
            f"{attr.GetName()} is time-sampled with no default value; usdgrip reads the "
            "default time code: author a default value"
        )
    types, expected = VALUE_KINDS[kind]
    if value is None or not isinstance(value, types) or isinstance(value, bool):
        return None, f"{attr.GetName()} is {get_authored_type_name(attr)}, expected {expected}"
    return value, None


def read_first_float(
    prim: Usd.Prim, names: Sequence[str], authored: Container[str]
) -> tuple[float | None, str | None, str | None]:
    """First authored value among ``names`` (prefixed/schema names first).

    Returns:
        ``(value, attribute name, problem)``; ``value`` is ``None`` when none is
        authored, or when the first authored one is unusable (``problem`` says why).
    """
    for name in names:
        if name not in authored:  # the prim's authored property names
            continue
        attr = prim_get_attribute(prim, name)
        if not attr or not attr.HasAuthoredValue():
            continue  # no fallback: a spec without a value is not a value
        value, problem = read_attribute_value(attr, "number")
        if problem is not None:
            return None, name, problem
        if attr.GetTypeName() == _SDF_FLOAT:
            # Shortest decimal that round-trips the 32-bit value: 0.085, not 0.0850000009.
            return _float32_decimal(value), name, None
        return float(value), name, None
    return None, None, None


_SDF_FLOAT = Sdf.ValueTypeNames.Float
_FLOAT32_DECIMALS: dict[float, float] = {}


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _float32_decimal(value: float) -> float:
    """``float(str(np.float32(value)))``, remembered per value (sites share a few openings).

    A value beyond float32's range (a ``double`` authored where the schema says ``float``)
    is returned as it is, not as ``inf``.
    """
    if type(value) is float and not -_FLOAT32_MAX <= value <= _FLOAT32_MAX:
        return value  # (inf and NaN too: float32 keeps them as they are)
    if type(value) is not float or value == 0.0 or value != value:  # -0.0 == 0.0; nan != nan
        return float(str(np.float32(value)))
    found = _FLOAT32_DECIMALS.get(value)
    if found is None:
        found = float(str(np.float32(value)))
        if len(_FLOAT32_DECIMALS) < 4096:
            _FLOAT32_DECIMALS[value] = found
    return found


def find_undefined_ancestor(prim: Usd.Prim) -> Usd.Prim | None:
    """Topmost prim at or above ``prim`` whose specifier is not a definition."""
    if prim.IsDefined():  # this prim and every ancestor have a defining specifier
        return None
    found = None
    while prim and not prim.IsPseudoRoot():
        if not prim.HasDefiningSpecifier():
            found = prim
        prim = prim.GetParent()
    return found


# Unbound pxr methods, looked up once: the readers call them for every prim they visit.
prim_get_child = Usd.Prim.GetChild
prim_get_attribute = Usd.Prim.GetAttribute
prim_get_authored_names = Usd.Prim.GetAuthoredPropertyNames
prim_get_children_names = Usd.Prim.GetFilteredChildrenNames
attribute_get = Usd.Attribute.Get
prim_is_a = Usd.Prim.IsA
# The names usd/discovery.py imports until its rework (#20) imports the public ones above.
_get_authored_names = prim_get_authored_names
_get_children_names = prim_get_children_names
