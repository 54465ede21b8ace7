"""Convert legacy gripper authoring to the usdGrip schema (a USD-edge module).

What it converts, in the stage's root layer:

- sites found through legacy markers get ``GripperSiteAPI``;
- ``gripper_maxOpening`` / ``custom:maxOpening`` → ``gripper:maxOpening`` and
  ``gripper_maxPayload`` → ``gripper:maxPayload`` (the schema value wins when
  both are authored: then the legacy one is left in place and reported);
- unprefixed curve children ``forward_axis`` / ``grip_line`` are renamed to
  ``gripper_forward_axis`` / ``gripper_grip_line`` (left alone and reported
  when a prefixed child already exists);
- LambdaSim ``gripper_slots`` records → ``GripperSlotAPI`` instances. A
  record whose name a schema slot already uses is merged into it: only the
  properties the slot does not author are authored. Records that disagree
  with what the slot authors, or with another record of the same name, are
  not converted (none of that name are) and are reported as left.

With ``lines_to_slots`` (``usdgrip migrate --lines-to-slots``, opt-in and additive),
every SimReady grasp vector line (``grasp_identifier*``) also becomes a
``GripperSlotAPI`` instance named like the line on its object (the nearest rigid-body
ancestor, else the default prim): ``center`` = the midpoint of the two surfaces the
line lands on (FET005's symmetrised pad midpoint), ``span_axis`` = the line p0 → p1,
``forward`` = straight down (minus the stage's up axis; USD's fallback Y when none is
authored) made perpendicular to the line, or a fixed perpendicular when the line is
vertical; ``up_range`` = :data:`LINE_SLOT_UP_RANGE` (1 cm across the line) and
``slot_input_angle`` = :data:`LINE_SLOT_INPUT_ANGLE` (±45° of approach around the
line), ``LR`` left, no group. Lines that cannot give a slot (not two distinct points, a
miss, an instance of that name already there) are reported as left.

Nothing the user authored is lost: a legacy value is removed only after its
value was authored through the schema, the records are removed only when
every value of every record lives in the schema (an unknown key, an ``LR``
other than 0/1 or a conflict keeps the whole list in place), and opinions
authored in other layers (references, payloads, sublayers) are never
touched, only reported.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pxr import Gf, Sdf, Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.frames import compute_fallback_perpendicular
from usdgrip.grasp_line_geometry import compute_surface_points
from usdgrip.lambdasim import CUSTOM_DATA_KEY, CUSTOM_DATA_PATH, RECORDS_KEY, SlotRecord
from usdgrip.site_records import LR_TOKENS, GripperSite
from usdgrip.slot_checks import get_up_range_problem
from usdgrip.usd.authoring import SLOT_TYPE_NAMES, add_api_schemas, set_attribute_default
from usdgrip.usd.discovery import iter_site_prims
from usdgrip.usd.grasp_lines import find_grasp_lines, read_object_surface
from usdgrip.usd.names import (
    FORWARD_AXIS_NAMES,
    GRIP_LINE_NAMES,
    SITE_API,
    SLOT_API,
    SLOT_PROPERTIES,
)
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.slots import (
    check_slot_instance_name,
    get_instance_name_problem,
    get_slot_attribute_name,
    iter_slot_prims,
    list_slot_instances,
    read_slot_records,
)
from usdgrip.usd.stage import compute_world_transform, require_stage

_VALUE_MOVES = (
    (("gripper_maxOpening", "custom:maxOpening"), "gripper:maxOpening"),
    (("gripper_maxPayload",), "gripper:maxPayload"),
)
_CURVE_RENAMES = (
    (FORWARD_AXIS_NAMES[1], FORWARD_AXIS_NAMES[0]),
    (GRIP_LINE_NAMES[1], GRIP_LINE_NAMES[0]),
)


@dataclass
class MigrationReport:
    """What a migration changed and what it left, one line each."""

    changes: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """True when anything was converted."""
        return bool(self.changes)


def _authored_only_in(attr_or_prim, layer: Sdf.Layer) -> bool:
    stack = (
        attr_or_prim.GetPropertyStack()
        if isinstance(attr_or_prim, Usd.Property)
        else (attr_or_prim.GetPrimStack())
    )
    return all(spec.layer == layer for spec in stack)


def _migrate_site(
    prim: Usd.Prim, site: GripperSite, layer: Sdf.Layer, report: MigrationReport
) -> None:
    path = site.path
    if SITE_API not in prim.GetAppliedSchemas():
        if prim.CanApplyAPI(SITE_API):
            prim.ApplyAPI(SITE_API)
            report.changes.append(f"<{path}>: applied {SITE_API}")
        else:
            report.left.append(
                f"<{path}>: {prim.GetTypeName() or 'typeless'} prim cannot take "
                f"{SITE_API} (not Xformable); left as is"
            )
            return
    for legacy_names, schema_name in _VALUE_MOVES:
        schema_attr = prim.GetAttribute(schema_name)
        schema_authored = bool(schema_attr) and schema_attr.HasAuthoredValue()
        kept: str | None = None  # a legacy name the readers read first, left as authored
        for legacy in legacy_names:
            attr = prim.GetAttribute(legacy)
            if not attr or not attr.HasAuthoredValue():
                continue
            if schema_authored:
                report.left.append(
                    f"<{path}>: {legacy} = {attr.Get()} kept ({schema_name} "
                    f"already authored = {prim.GetAttribute(schema_name).Get()})"
                )
                continue
            if kept is not None:  # converting it would change what the site reads
                report.left.append(
                    f"<{path}>: {legacy} = {_format_authored(attr)} kept: {kept}, which the "
                    "readers use first, stays legacy"
                )
                continue
            authored = attr.Get()
            narrowed, problem = compute_schema_float(authored)
            if narrowed is None:
                report.left.append(f"<{path}>: {legacy} = {_format_authored(attr)} kept: {problem}")
                kept = legacy
                continue
            prim.CreateAttribute(schema_name, Sdf.ValueTypeNames.Float).Set(float(narrowed))
            schema_authored = True
            if _authored_only_in(attr, layer):
                prim.RemoveProperty(legacy)
                report.changes.append(
                    f"<{path}>: {legacy} → {schema_name} = {format_float32(narrowed)}"
                )
            else:
                report.changes.append(
                    f"<{path}>: {schema_name} = {format_float32(narrowed)} (from {legacy})"
                )
                report.left.append(
                    f"<{path}>: {legacy} is also authored in another layer; left there"
                )
    for old, new in _CURVE_RENAMES:
        old_child, new_child = prim.GetChild(old), prim.GetChild(new)
        if not old_child:
            continue
        if new_child:
            report.left.append(
                f"<{path}/{old}>: kept beside <{path}/{new}> (the prefixed child wins)"
            )
        elif layer.GetPrimAtPath(old_child.GetPath()) and _authored_only_in(old_child, layer):
            edit = Sdf.BatchNamespaceEdit()
            edit.Add(Sdf.NamespaceEdit.Rename(old_child.GetPath(), new))
            if layer.Apply(edit):
                report.changes.append(f"<{path}/{old}>: renamed to {new}")
            else:
                report.left.append(f"<{path}/{old}>: rename to {new} refused by USD; left as is")
        else:
            report.left.append(f"<{path}/{old}>: authored in another layer; not renamed")


def _format_authored(attr: Usd.Attribute) -> str:
    """An attribute's default value as its layer's text shows it (``float`` values shortest)."""
    value = attr.Get()
    if isinstance(value, float) and attr.GetTypeName() == Sdf.ValueTypeNames.Float:
        return format_float32(np.float32(value))
    return repr(value)


def format_float32(value: np.float32) -> str:
    """The shortest text that reads back as ``value``, as USD writes a float in usda.

    Positional for exponents in [-6, 21) (``0.085``, ``16777216``), else ``1e30``.
    """
    text = str(value)  # numpy: the shortest float32 repr, "1.6777216e+07" or "1e+30"
    if "e" not in text:
        return text.removesuffix(".0")
    mantissa, exponent = text.split("e")
    if -7 < int(exponent) < 21:
        return np.format_float_positional(value, unique=True, trim="-")
    return f"{mantissa.removesuffix('.0')}e{int(exponent)}"


def compute_schema_float(value: object) -> tuple[np.float32 | None, str | None]:
    """``value`` as the schema's ``float`` when that loses nothing: ``(float32, None)``.

    The float keeps the value when it reads back as the same number, either
    exactly (a legacy ``float``) or as the same shortest decimal (a legacy
    ``double 0.085`` becomes ``float 0.085``, the number the author typed).
    Otherwise ``(None, why)``: a value the float would change
    (``0.0851234567891234``, ``int 16777217``), turn infinite (``1e300``) or
    flush to zero, or a value that is not one number (its type, or time
    samples only).
    """
    if value is None:
        return None, "no default value (time samples only?); the schema attribute needs one value"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, f"is a {type(value).__name__}; expected a number"
    try:
        wide = float(value)
    except OverflowError:
        return None, "is an integer beyond any float; the schema's float cannot hold it"
    with np.errstate(over="ignore", under="ignore"):
        narrowed = np.float32(wide)
    exact_int = not isinstance(value, int) or wide == value  # 2**53 + 1 is no double either
    same = float(narrowed) == wide or float(str(narrowed)) == wide or math.isnan(wide)
    if same and exact_int:
        return narrowed, None
    if math.isinf(narrowed) and math.isfinite(wide):
        return None, f"{wide!r} is beyond the schema's float (it would become inf)"
    return None, (
        f"the schema's float would hold {format_float32(narrowed)}, not the authored value (a "
        "float keeps about 7 significant digits); author the schema attribute yourself if that "
        "is enough"
    )


def _record_values(record: SlotRecord) -> dict[str, object]:
    """The ``GripperSlotAPI`` property values a record carries (``lr`` as its token).

    Raises:
        ValueError: the record holds a value no schema property can hold.
    """
    if record.lr not in (0, 1):
        raise ValueError(f"LR is {record.lr}; the schema's lr holds only 0 (left) or 1 (right)")
    return {
        "center": record.center,
        "forward": record.forward,
        "spanAxis": record.span_axis,
        "upRange": record.up_range,
        "slotInputAngle": record.slot_input_angle,
        "lr": LR_TOKENS[record.lr],
        "groupName": record.group,
    }


def _authored_slot_values(prim: Usd.Prim, name: str) -> dict[str, object]:
    """The properties ``GripperSlotAPI:<name>`` authors on ``prim`` (vectors as float tuples)."""
    values: dict[str, object] = {}
    for prop in SLOT_PROPERTIES:
        attr = prim.GetAttribute(get_slot_attribute_name(name, prop))
        if attr and attr.HasAuthoredValue():
            value = attr.Get()
            is_vector = hasattr(value, "__len__") and not isinstance(value, str)
            values[prop] = tuple(map(float, value)) if is_vector else value
    return values


def _same_value(a: object, b: object) -> bool:
    # Relative tolerance 1e-6: a value authored as float32 (point3f, float) equals its record value.
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(map(_same_value, a, b))
    if isinstance(a, int | float) and isinstance(b, int | float):
        both_nan = math.isnan(a) and math.isnan(b)
        return both_nan or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def _format_value(value: object) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(f"{c:g}" for c in value) + ")"
    return f"{value:g}" if isinstance(value, float) else repr(value)


def _differences(ours: dict[str, object], theirs: dict[str, object]) -> list[str]:
    """``"<prop> <theirs> ≠ <ours>"`` for each property both hold with different values."""
    return [
        f"{prop} {_format_value(theirs[prop])} ≠ {_format_value(value)}"
        for prop, value in ours.items()
        if prop in theirs and not _same_value(value, theirs[prop])
    ]


@dataclass
class _SlotEdits:
    """Slot authoring planned while the stage is read, applied in one ``Sdf.ChangeBlock``.

    Authoring each slot through the Usd API recomposes the prim after every
    ``ApplyAPI`` and attribute, so a prim with N records cost O(N^2) or worse;
    the specs are written directly in the root layer instead, once.
    """

    values: dict[Sdf.Path, dict[str, dict[str, object]]] = field(default_factory=dict)
    """prim path -> slot name -> schema property -> value (the properties to author)."""
    cleared: list[Sdf.Path] = field(default_factory=list)
    """Prims whose ``lambdasim:gripper_slots`` customData is removed."""

    def apply(self, layer: Sdf.Layer) -> None:
        """Author the planned specs in ``layer``: API schemas, defaults, cleared records."""
        with Sdf.ChangeBlock():
            for path, slots in self.values.items():
                spec = layer.GetPrimAtPath(path) or Sdf.CreatePrimInLayer(layer, path)
                add_api_schemas(spec, [f"{SLOT_API}:{name}" for name in slots])
                for name, values in slots.items():
                    for prop, value in values.items():
                        set_attribute_default(
                            spec,
                            get_slot_attribute_name(name, prop),
                            SLOT_TYPE_NAMES[prop],
                            Gf.Vec3d(*value) if isinstance(value, tuple) else value,
                            Sdf.VariabilityUniform if prop == "lr" else Sdf.VariabilityVarying,
                        )
            for path in self.cleared:
                spec = layer.GetPrimAtPath(path)
                custom = dict(spec.customData)
                records = dict(custom.pop(CUSTOM_DATA_KEY))
                records.pop(RECORDS_KEY, None)
                if records:
                    custom[CUSTOM_DATA_KEY] = records
                spec.ClearInfo("customData")
                for key, value in custom.items():
                    spec.SetInfoDictionaryValue("customData", key, value)


def _convert_records(
    prim: Usd.Prim,
    name: str,
    records: list[SlotRecord],
    report: MigrationReport,
    edits: _SlotEdits,
) -> bool:
    """Author the records named ``name`` through ``GripperSlotAPI:<name>``, losing nothing.

    The records must agree with each other and with every property the schema
    slot already authors; then the properties it does not author yet are
    authored from them. Otherwise nothing is authored and each record is
    reported as left.

    Returns:
        True when every value of every record now lives in the schema slot.
    """
    path = prim.GetPath()

    def leave(record: SlotRecord, why: str) -> None:
        report.left.append(f"<{path}>: record [{record.index}] {name!r} left: {why}")

    try:
        check_slot_instance_name(name)
        values = [_record_values(record) for record in records]
    except ValueError as exc:
        for record in records:
            leave(record, str(exc))
        return False
    if any(_differences(values[0], other) for other in values[1:]):
        for record, ours in zip(records, values, strict=True):
            other, theirs = next(
                (r, v) for r, v in zip(records, values, strict=True) if _differences(ours, v)
            )
            leave(
                record,
                f"same name as record [{other.index}], which has "
                + "; ".join(_differences(ours, theirs)),
            )
        return False
    authored = _authored_slot_values(prim, name)
    conflicts = _differences(values[0], authored)
    if conflicts:
        for record in records:
            leave(record, f"GripperSlotAPI:{name} already authors {'; '.join(conflicts)}")
        return False
    missing = {prop: value for prop, value in values[0].items() if prop not in authored}
    if missing:  # values as authored, also ones the GS rules fail: nothing is lost
        edits.values.setdefault(path, {})[name] = missing
        label = "record" if len(records) == 1 else "records"
        indices = ", ".join(f"[{r.index}]" for r in records)
        if authored:
            done = f"merged into GripperSlotAPI:{name} (authored {', '.join(missing)})"
        else:
            done = f"→ GripperSlotAPI:{name}"
        version = (
            f" (version 1 `up` → up_range {records[0].up_range:g})"
            if any(r.version == 1 for r in records)
            else ""
        )
        report.changes.append(f"<{path}>: {label} {indices} {name!r} {done}{version}")
    lossless = True
    for record in records:
        if record.extra:
            lossless = False
            leave(
                record,
                f"keys {sorted(record.extra)} have no schema property; the records are kept "
                "beside the schema",
            )
    return lossless


def _migrate_slots(
    prim: Usd.Prim, layer: Sdf.Layer, report: MigrationReport, edits: _SlotEdits
) -> None:
    path = prim.GetPath()
    records, problems = read_slot_records(prim)
    if problems:
        report.left.extend(f"<{path}>: {p.describe()}; records left unconverted" for p in problems)
        return
    by_name: dict[str, list[SlotRecord]] = {}
    for record in records:
        by_name.setdefault(record.name, []).append(record)
    converted = [
        _convert_records(prim, name, named, report, edits) for name, named in by_name.items()
    ]
    lossless = all(converted)
    spec = layer.GetPrimAtPath(path)
    in_root = spec is not None and CUSTOM_DATA_KEY in spec.customData
    if lossless and records and in_root and _authored_only_in(prim, layer):
        edits.cleared.append(path)
        report.changes.append(
            f"<{path}>: removed customData lambdasim:gripper_slots (all converted)"
        )
    elif records and lossless:
        report.left.append(f"<{path}>: lambdasim records authored in another layer; left there")
    elif records:
        report.left.append(
            f"<{path}>: customData lambdasim:gripper_slots kept in place (not every record "
            "is in the schema; see above)"
        )


#: Slots authored from grasp lines: total length across the line (world metres) ...
LINE_SLOT_UP_RANGE = 0.01
#: ... and total approach tilt around the line (degrees): ±45° about straight down.
LINE_SLOT_INPUT_ANGLE = 90.0


def _vec(values: np.ndarray) -> str:
    return "(" + ", ".join(f"{v + 0.0:.4g}" for v in values) + ")"


def _slots_from_lines(stage: Usd.Stage, report: MigrationReport, edits: _SlotEdits) -> None:
    """Plan one GripperSlotAPI instance per usable grasp vector line (see module doc)."""
    try:
        lines = find_grasp_lines(stage)
    except GripperError as exc:
        report.left.append(f"grasp lines not converted: {exc}")
        return
    axis = UsdGeom.GetStageUpAxis(stage)
    down = -np.eye(3)["XYZ".index(str(axis))]
    surfaces: dict[str, object] = {}
    for line in lines:
        obj = stage.GetPrimAtPath(line.object_path)
        where = f"<{line.path}>"
        if not line.is_usable:
            report.left.append(f"{where}: grasp line without two distinct finite points; no slot")
            continue
        planned = edits.values.get(obj.GetPath(), {})
        if line.name in planned or line.name in list_slot_instances(obj):
            report.left.append(
                f"{where}: <{line.object_path}> already has slot {line.name!r}; left as it is"
            )
            continue
        if line.object_path not in surfaces:
            try:
                surfaces[line.object_path] = read_object_surface(obj)
            except GripperError as exc:
                surfaces[line.object_path] = exc
        surface = surfaces[line.object_path]
        if isinstance(surface, GripperError):
            report.left.append(f"{where}: no slot: {surface}")
            continue
        p0, p1 = line.segment
        hits = compute_surface_points(p0, p1, surface.vertices, surface.faces)
        if hits is None:
            report.left.append(f"{where}: grasp line misses its object (GP.001); no slot")
            continue
        span = (p1 - p0) / line.length
        forward = down - (down @ span) * span
        norm = float(np.linalg.norm(forward))
        forward = forward / norm if norm > 1e-6 else compute_fallback_perpendicular(span)
        world = compute_world_transform(obj)  # local units -> world metres
        inverse = np.linalg.inv(world)
        centre = inverse[:3, :3] @ (0.5 * (hits.first + hits.second)) + inverse[:3, 3]
        centre = np.round(centre, 9) + 0.0  # no 1e-18 round-off in the authored value
        span_local = inverse[:3, :3] @ span
        span_local /= np.linalg.norm(span_local)
        forward_local = inverse[:3, :3] @ forward
        forward_local -= (forward_local @ span_local) * span_local  # exact in the local frame
        forward_local /= np.linalg.norm(forward_local)
        # up_range is metres times the object's scale along Up (GripperSlot.up_range).
        up_local = np.cross(forward_local, span_local)
        mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
        scale = float(np.linalg.norm(world[:3, :3] @ up_local)) / mpu
        up_range = LINE_SLOT_UP_RANGE / scale
        problem = get_instance_name_problem(line.name) or get_up_range_problem(up_range)
        if problem:
            report.left.append(f"{where}: no slot: {problem}")
            continue
        edits.values.setdefault(obj.GetPath(), {})[line.name] = {
            "center": tuple(map(float, centre)),
            "forward": tuple(map(float, forward_local)),
            "spanAxis": tuple(map(float, span_local)),
            "upRange": up_range,
            "slotInputAngle": LINE_SLOT_INPUT_ANGLE,
            "lr": LR_TOKENS[0],
            "groupName": "",
        }
        report.changes.append(
            f"<{line.object_path}>: GripperSlotAPI:{line.name} from grasp line {where} "
            f"(center {_vec(centre)}, span_axis {_vec(span_local)}, forward "
            f"{_vec(forward_local)}, local frame)"
        )


def migrate_stage(stage: Usd.Stage, *, lines_to_slots: bool = False) -> MigrationReport:
    """Convert legacy authoring on ``stage`` in its root layer (see module doc).

    ``lines_to_slots``: also author a GripperSlotAPI instance per grasp vector line.

    Raises:
        TypeError: ``stage`` is not a ``Usd.Stage``.
    """
    require_stage(stage)
    layer = stage.GetRootLayer()
    report = MigrationReport()
    with Usd.EditContext(stage, layer):
        for prim, markers in list(iter_site_prims(stage)):
            _migrate_site(prim, read_gripper_site(prim, markers), layer, report)
        edits = _SlotEdits()
        for prim in list(iter_slot_prims(stage)):
            if prim.GetCustomDataByKey(CUSTOM_DATA_PATH) is not None:
                _migrate_slots(prim, layer, report, edits)
        edits.apply(layer)  # before the lines: they look for slots of their names
        if lines_to_slots:
            edits = _SlotEdits()
            _slots_from_lines(stage, report, edits)
            edits.apply(layer)
    return report


def compute_layer_for(layer: Sdf.Layer, target: str | Path) -> tuple[Sdf.Layer, list[str]]:
    """The layer to export as ``target``: ``layer``, or a copy re-anchored to its folder.

    Relative paths (``./x``, ``../x``, and a bare ``x`` that exists beside the layer)
    in sublayers, references, payloads and asset values are anchored to the layer's
    own folder, so a copy written into another folder gets them rewritten (``layer``
    and its stage are left as they are). Absolute paths, URIs and search paths that
    name no file beside the layer are kept.

    Returns:
        ``(layer to export, one "@old@ -> @new@" line per rewritten path)``.
    """
    from pxr import UsdUtils

    source_dir = os.path.dirname(layer.realPath)
    target_dir = os.path.dirname(os.path.abspath(target))
    if os.path.realpath(source_dir) == os.path.realpath(target_dir):
        return layer, []
    changes: list[str] = []

    def reanchor(asset: str) -> str:
        outer, sep, inner = asset.partition("[")  # a file inside a package: re-anchor the package
        if not outer or os.path.isabs(outer) or re.match(r"^[A-Za-z][\w+.-]*:", outer):
            return asset
        anchored = os.path.normpath(os.path.join(source_dir, outer))
        if not outer.startswith(("./", "../")) and not os.path.exists(anchored):
            return asset  # a search path, resolved the same from anywhere
        new = Path(os.path.relpath(anchored, target_dir)).as_posix()
        new = (new if new.startswith("../") else f"./{new}") + sep + inner
        if new != asset:
            changes.append(f"@{asset}@ -> @{new}@")
        return new

    copy = Sdf.Layer.CreateAnonymous(Path(layer.realPath).stem)
    copy.TransferContent(layer)
    UsdUtils.ModifyAssetPaths(copy, reanchor)
    return copy, list(dict.fromkeys(changes))
