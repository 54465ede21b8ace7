"""Grasp-planning request and result contracts (seed 001), as frozen pydantic v2 models.

What usdgrip exchanges with other tools (JSON in, JSON/YAML out); the records of what
a stage authors (gripper sites, slots) are :mod:`usdgrip.site_records`.

Field names follow the seed and are the contract. Every model is immutable,
validated on construction, rejects unknown fields, and round-trips through
JSON (``model_dump_json`` / ``model_validate_json``). The published JSON
Schemas live in ``schemas/grasp_planning_request.schema.json`` and
``schemas/grasp_planning_result.schema.json``; regenerate them with
``python -m usdgrip.contracts`` after changing a model (a test checks they are
current).

Frames and units: a candidate's ``position`` and ``orientation`` form
``T_M_G``, the grasp frame G expressed in the object frame M (the object
prim's frame, scale removed), metres. G follows the GraspGenX convention:
right-handed, ``+X`` closing, ``+Z`` approach. Quaternions are ``w`` plus
``xyz``, unit length.

Pure module: no ``pxr``. Prim paths are checked by syntax only here; the
planner resolves them on the stage.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    Strict,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

# A physics trial's outcome (PHYSICS_OUTCOMES in report order) and what the open hand hit
# live in a light module the simulation workers load without pydantic.
from usdgrip.physics_outcomes import PHYSICS_OUTCOMES as PHYSICS_OUTCOMES
from usdgrip.physics_outcomes import OpenHit, PhysicsOutcome

#: ``format_version`` written and accepted (Isaac Sim's importer expects 1.0 within 1e-10).
FORMAT_VERSION = 1.0
#: Tolerance on a quaternion's norm.
UNIT_NORM_TOLERANCE = 1e-6

_PRIM_PATH = re.compile(r"^(/[A-Za-z_][A-Za-z0-9_]*)+$")

#: A finite float; ints are accepted and converted, strings and bools are not.
Finite = Annotated[float, Strict(), Field(allow_inf_nan=False), AfterValidator(float)]
NonEmptyStr = Annotated[str, Strict(), Field(min_length=1)]
Vector3 = tuple[Finite, Finite, Finite]


def _check_prim_path(value: str) -> str:
    if not _PRIM_PATH.match(value):
        raise ValueError(
            f"prim path {value!r} is not an absolute USD prim path; expected e.g. '/Mug' or "
            "'/Gripper/tcp' (segments of letters, digits and '_', not starting with a digit)"
        )
    return value


PrimPath = Annotated[
    str,
    Strict(),
    AfterValidator(_check_prim_path),
    Field(json_schema_extra={"pattern": _PRIM_PATH.pattern}),
]


class _Contract(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class AssetRef(_Contract):
    """A file, optionally with a prim inside it (a USD asset, a checkpoint)."""

    asset_path: NonEmptyStr
    """File path or URI as given by the user (kept verbatim, not resolved)."""
    prim_path: PrimPath | None = None
    """Absolute prim path inside a USD asset, or ``None`` for a whole file."""

    def __str__(self) -> str:
        return self.asset_path if self.prim_path is None else f"{self.asset_path}:{self.prim_path}"


class GeometryRef(_Contract):
    """The object geometry: a USD asset and the object prim (its meshes are below it)."""

    asset_path: NonEmptyStr
    prim_path: PrimPath

    def __str__(self) -> str:
        return f"{self.asset_path}:{self.prim_path}"


class GripperRef(_Contract):
    """One concrete gripper: a USD asset and the prim of its gripper site (the TCP)."""

    asset_path: NonEmptyStr
    prim_path: PrimPath

    def __str__(self) -> str:
        return f"{self.asset_path}:{self.prim_path}"


class GraspObject(_Contract):
    """Object for which grasp candidates are generated."""

    geometry: GeometryRef
    mass_kg: Annotated[Finite, Field(gt=0)] | None = None
    """Object mass in kilograms (> 0), or ``None`` when unknown."""


class GraspPlanningRequest(_Contract):
    """Object and grippers to consider during grasp planning."""

    object: GraspObject
    grippers: Annotated[tuple[GripperRef, ...], Field(min_length=1)]
    """Grippers in the order their candidates appear in the result; no duplicates."""
    max_candidates_per_gripper: Annotated[StrictInt, Field(ge=1, le=100_000)] = 100
    seed: Annotated[StrictInt, Field(ge=0, lt=2**63)] = 0
    """Seed of every random draw: the same request and seed give the same result."""

    @field_validator("grippers")
    @classmethod
    def _unique_grippers(cls, grippers: tuple[GripperRef, ...]) -> tuple[GripperRef, ...]:
        seen: set[GripperRef] = set()
        for gripper in grippers:
            if gripper in seen:
                raise ValueError(
                    f"gripper {gripper} is listed twice; each gripper must appear once "
                    "(candidate ids are derived from it)"
                )
            seen.add(gripper)
        return grippers


class GraspOrientation(_Contract):
    """Unit quaternion ``w`` + ``xyz``, as in Isaac-Grasp files."""

    w: Finite
    xyz: Vector3

    @model_validator(mode="after")
    def _unit(self) -> GraspOrientation:
        norm = math.hypot(self.w, *self.xyz)  # no OverflowError: w = 1e300 has norm 1e300
        if abs(norm - 1.0) > UNIT_NORM_TOLERANCE:
            raise ValueError(
                f"orientation (w={self.w}, xyz={list(self.xyz)}) has norm {norm:.9g}; expected "
                f"a unit quaternion (norm 1 ± {UNIT_NORM_TOLERANCE})"
            )
        return self


#: Longest grasp key read or written (a file's keys are whatever strings it holds).
MAX_CANDIDATE_ID_LENGTH = 1024

#: A grasp's key in the file: any non-empty string (the planner's ids look like
#: ``g_1a2b3c4d_antipodal_0007``; other tools write ``grasp_0``, ``"grasp_0"``, a joint-like
#: ``off``). The writer quotes a key that YAML would otherwise read as a number, boolean or
#: null, and the reader takes every key as the text the file holds, so any key round-trips.
CandidateId = Annotated[str, Strict(), Field(min_length=1, max_length=MAX_CANDIDATE_ID_LENGTH)]
#: A joint's DOF position: Isaac Sim's units (radians for a revolute joint, metres for a
#: prismatic one), keyed by the joint's name (Isaac Sim's DOF name, the joint prim's name).
JointPositions = dict[NonEmptyStr, Finite]


class GraspPhysics(_Contract):
    """Measured grasp-and-lift result of one candidate (``usdgrip evaluate``).

    ``success_rate`` is trials held / ``trials``; ``outcome`` is trial 0's (the
    nominal pose); ``outcomes`` counts the trials per outcome (only those that occurred).
    """

    success_rate: Annotated[Finite, Field(ge=0, le=1)]
    trials: Annotated[StrictInt, Field(ge=1)]
    outcome: PhysicsOutcome
    outcomes: dict[PhysicsOutcome, Annotated[StrictInt, Field(ge=0)]] = Field(default_factory=dict)
    collides_open_with: dict[OpenHit, Annotated[StrictInt, Field(ge=0)]] = Field(
        default_factory=dict
    )
    """The ``collides_open`` trials by what the open hand penetrated deepest (the object or
    the support it rests on); empty when no trial collided open."""

    @model_validator(mode="after")
    def _counts(self) -> GraspPhysics:
        total = sum(self.outcomes.values())
        if self.outcomes and total != self.trials:
            raise ValueError(f"outcomes count {total} trials; expected trials = {self.trials}")
        hits = sum(self.collides_open_with.values())
        if hits > self.outcomes.get("collides_open", 0 if self.outcomes else self.trials):
            raise ValueError(
                f"collides_open_with counts {hits} trials; expected at most the "
                "collides_open trials"
            )
        return self


class _FileRecord(_Contract):
    """A record of an Isaac-Grasp file: keys it does not know are kept, as plain data.

    Another tool's keys (GraspDataGen's ``bite_point``, ``created_with``...) are read into
    ``model_extra`` and written back unchanged, after the known keys.
    """

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, JsonValue]


class GraspCandidate(_FileRecord):
    """One extended Isaac-Grasp entry, for one concrete gripper when the file says which.

    ``position`` and ``orientation`` form ``T_M_G`` (metres), or, when the file names a
    ``gripper_frame`` other than the site's grasp frame (Isaac Sim's Grasp Editor, helper
    code converts them), that frame's pose in M. ``confidence`` is a backend ranking score
    (higher first) within one gripper, not a calibrated probability and not comparable
    across grippers; ``None`` when the file has none (GraspDataGen's hand-written inputs).
    ``candidate_id`` stays stable across later planning stages.
    ``generation_method`` names the backend branch that proposed it; ``slot``,
    ``grasp_line`` and ``group`` say what it was sampled on (its provenance, as data).
    ``gripper`` is ``None`` in another tool's file (it does not say); evaluate and render
    take the gripper from the caller. Keys the model does not know are kept (``model_extra``).
    """

    candidate_id: CandidateId
    gripper: GripperRef | None = None
    """The gripper site the entry is for; ``None`` when the file does not say (not usdgrip's)."""
    confidence: Finite | None = None
    generation_method: NonEmptyStr | None = None
    position: Vector3
    """Origin of G (or of the file's gripper frame) in the object frame M (metres)."""
    orientation: GraspOrientation
    """Rotation of G (or of the file's gripper frame) in the object frame M."""
    cspace_position: JointPositions | None = None
    """Joint positions of the closed grasp, by joint name (Isaac Sim's Grasp Editor and
    GraspDataGen: the active or driven DOFs; radians or metres), or ``None``."""
    pregrasp_cspace_position: JointPositions | None = None
    """Joint positions before closing (the open hand), by joint name, or ``None``."""
    width: Annotated[Finite, Field(gt=0)] | None = None
    """Jaw opening to use at this grasp (metres): the contact width for antipodal
    candidates, the site's max opening for slot candidates."""
    exclusions: tuple[NonEmptyStr, ...] = ()
    """Collision exclusions the checks of this candidate used, e.g.
    ``robot(object, 1)`` (intended contacts that were not counted)."""
    slot: NonEmptyStr | None = None
    """The GripperSlot the candidate was sampled on (``slots`` backend), else ``None``."""
    grasp_line: NonEmptyStr | None = None
    """Prim path of the SimReady grasp vector line it closes along (``lines``), else ``None``."""
    group: Annotated[StrictInt, Field(ge=0)] | None = None
    """Its diversity group within the gripper and method: candidates sharing method and
    group are approaches of one grasp (one antipodal contact pair, one grasp line);
    ``None`` when each candidate is its own (slots)."""
    physics: GraspPhysics | None = None
    """Measured grasp-and-lift result (``usdgrip evaluate``), or ``None`` when not evaluated."""


class GraspPlanningMetadata(_Contract):
    """Extension of the Isaac-Grasp file metadata: reproducibility and omissions.

    ``generation_mode`` records the candidate-generation configuration;
    ``warnings`` reports non-fatal omissions (a method skipped for one gripper,
    a gripper without usable axes, a method that produced nothing, ...).
    """

    upstream_revision: NonEmptyStr
    """Version of the software that produced the result (e.g. ``usdgrip 0.1.0``)."""
    checkpoints: tuple[AssetRef, ...] = ()
    """Learned-model files used (none for the analytic backends)."""
    seed: Annotated[StrictInt, Field(ge=0, lt=2**63)]
    runtime_seconds: Annotated[Finite, Field(ge=0)]
    pose_frame: NonEmptyStr
    """Frame M of every pose: the object prim path."""
    length_unit: Literal["metre"] = "metre"
    grasp_frame_convention: Literal["graspgenx"] = "graspgenx"
    generation_mode: NonEmptyStr | None = None
    warnings: tuple[NonEmptyStr, ...] = ()
    physics: dict[str, JsonValue] | None = None
    """How the candidates' ``physics`` were measured (``usdgrip evaluate``): engine and
    version, every parameter, what was read or assumed, summary, runtime, and
    ``ranking`` (``success_rate,confidence`` when entries are ordered by measured success)."""


def _check_format_version(value: Any) -> float | str:
    # Isaac Sim's importer warns unless the version is 1.0 within 1e-10, and casts a string
    # that reads as a number (GraspDataGen writes the string '1.0'): so do we, keeping its type.
    number = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        number, value = float(value), float(value)
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = float(value)
    if not math.isfinite(number) or abs(number - FORMAT_VERSION) > 1e-10:
        raise ValueError(f"format_version is {value!r}; expected {FORMAT_VERSION} (or '1.0')")
    return value


class GraspPlanningResult(_FileRecord):
    """Extended NVIDIA Isaac-Grasp result, or any Isaac-Grasp file read.

    ``format``, ``format_version`` and ``grasps`` stay readable by Isaac Sim's
    grasp importer and GraspGen's loader. Candidate ids are the mapping keys
    (and equal each entry's ``candidate_id``). The planner emits entries best-first for
    each gripper (by ``confidence``), grippers contiguous and in request order;
    ``usdgrip plan --evaluate`` orders them by measured ``physics.success_rate``, then
    ``confidence`` (``metadata.physics["ranking"]`` says which). A file is read in any
    order and keeps it.

    Another tool's file (Isaac Sim's Grasp Editor, GraspGen, GraspDataGen) has no
    ``metadata`` (``None``) until ``usdgrip evaluate`` adds one, may name the frames its
    poses are in (``object_frame``, ``gripper_frame``: Isaac Sim's Grasp Editor; GraspDataGen's
    ``gripper_frame_link`` is kept in ``model_extra``) and keeps every key usdgrip does
    not know (``model_extra``).
    """

    format: Literal["isaac_grasp"] = "isaac_grasp"
    format_version: Annotated[float | str, BeforeValidator(_check_format_version)] = FORMAT_VERSION
    """1.0, or a string that reads as 1.0 (kept as the file wrote it)."""
    object_frame: NonEmptyStr | None = None
    """The prim the poses are relative to, as the writer named it (Isaac Sim's Grasp Editor:
    the rigid body frame picked in its UI), or ``None``."""
    gripper_frame: NonEmptyStr | None = None
    """The gripper prim whose pose each entry is (Isaac Sim's Grasp Editor: the frame picked
    in its UI, usually the base link), or ``None``: the site's grasp frame G."""
    grasps: dict[CandidateId, GraspCandidate] = Field(default_factory=dict)
    metadata: GraspPlanningMetadata | None = None
    """usdgrip's extension (``None`` in another tool's file that usdgrip has not evaluated)."""

    @model_validator(mode="after")
    def _keys(self) -> GraspPlanningResult:
        for key, candidate in self.grasps.items():
            if key != candidate.candidate_id:
                raise ValueError(
                    f"grasps key {key!r} differs from its candidate_id "
                    f"{candidate.candidate_id!r}; the key must be the candidate id"
                )
        return self

    @property
    def grippers(self) -> tuple[GripperRef, ...]:
        """Grippers that entries name, in file order (entries naming none are not counted)."""
        return tuple(dict.fromkeys(c.gripper for c in self.grasps.values() if c.gripper))

    def get_candidates(self, gripper: GripperRef) -> list[GraspCandidate]:
        """Candidates of one gripper, best first."""
        return [c for c in self.grasps.values() if c.gripper == gripper]


#: Published schemas: file name -> model.
JSON_SCHEMAS: dict[str, type[BaseModel]] = {
    "grasp_planning_request.schema.json": GraspPlanningRequest,
    "grasp_planning_result.schema.json": GraspPlanningResult,
}


def compute_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The published JSON Schema of ``model`` (draft 2020-12, validation mode)."""
    schema = model.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"usdgrip/{model.__name__}",
        **schema,
    }


def format_json_schema(model: type[BaseModel]) -> str:
    """The schema file text: indented JSON with a trailing newline."""
    return json.dumps(compute_json_schema(model), indent=2, sort_keys=False) + "\n"


def write_json_schemas(directory: str | Path) -> list[Path]:
    """Write every published schema into ``directory``; return the paths written."""
    paths = []
    for name, model in JSON_SCHEMAS.items():
        path = Path(directory) / name
        path.write_text(format_json_schema(model))
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate the published schemas: ``python -m usdgrip.contracts [DIR]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    directory = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "schemas"
    for path in write_json_schemas(directory):
        sys.stdout.write(f"wrote {path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def parse_gripper(text: str) -> GripperRef:
    """Parse ``FILE:/Site/Path`` (the CLI's ``--gripper``) into a :class:`GripperRef`.

    The split is at the last ``:`` followed by ``/``, so Windows drive letters work.

    Raises:
        ValueError: no ``:/`` separator, an empty file, a file name that is not UTF-8
            or a bad prim path.
    """
    from usdgrip.fileio import check_utf8_name

    cut = text.rfind(":/")
    if cut <= 0:
        raise ValueError(
            f"--gripper {text!r}: expected FILE:/Site/Path, e.g. examples/gripper.usda:/Gripper/tcp"
        )
    asset, prim = text[:cut], text[cut + 1 :]
    check_utf8_name(asset)
    try:
        return GripperRef(asset_path=os.path.normpath(asset), prim_path=prim)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ").replace("Input should be", "expected", 1)
        raise ValueError(f"--gripper {text!r}: {where + ': ' if where else ''}{message}") from None
