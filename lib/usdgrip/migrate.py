"""Convert legacy gripper authoring to the usdGrip schema (a USD-edge module).

What it converts, in the stage's root layer:

- sites found through legacy markers get ``GripperSiteAPI``;
- ``gripper_maxOpening`` / ``custom:maxOpening`` → ``gripper:maxOpening`` and
  ``gripper_maxPayload`` → ``gripper:maxPayload`` (the schema value wins when
  both are authored: then the legacy one is left in place and reported);
- unprefixed curve children ``forward_axis`` / ``grip_line`` are renamed to
  ``gripper_forward_axis`` / ``gripper_grip_line`` (left alone and reported
  when a prefixed child already exists);
- LambdaSim ``gripper_slots`` records → ``GripperSlotAPI`` instances.

Nothing the user authored is lost: a legacy value is removed only after its
value was authored through the schema, records are removed only when every
record converted without loss (unknown record keys keep the list in place),
and opinions authored in other layers (references, payloads, sublayers) are
never touched, only reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pxr import Sdf, Usd

from usdgrip import usd_io
from usdgrip.fileio import replace_atomically
from usdgrip.lambdasim import CUSTOM_DATA_KEY
from usdgrip.model import GripperSite

_VALUE_MOVES = (
    (("gripper_maxOpening", "custom:maxOpening"), "gripper:maxOpening"),
    (("gripper_maxPayload",), "gripper:maxPayload"),
)
_CURVE_RENAMES = (
    (usd_io.FORWARD_AXIS_NAMES[1], usd_io.FORWARD_AXIS_NAMES[0]),
    (usd_io.GRIP_LINE_NAMES[1], usd_io.GRIP_LINE_NAMES[0]),
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
    if usd_io.SITE_API not in prim.GetAppliedSchemas():
        if prim.CanApplyAPI(usd_io.SITE_API):
            prim.ApplyAPI(usd_io.SITE_API)
            report.changes.append(f"<{path}>: applied {usd_io.SITE_API}")
        else:
            report.left.append(
                f"<{path}>: {prim.GetTypeName() or 'typeless'} prim cannot take "
                f"{usd_io.SITE_API} (not Xformable); left as is"
            )
            return
    for legacy_names, schema_name in _VALUE_MOVES:
        schema_attr = prim.GetAttribute(schema_name)
        schema_authored = bool(schema_attr) and schema_attr.HasAuthoredValue()
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
            value = float(attr.Get())
            prim.CreateAttribute(schema_name, Sdf.ValueTypeNames.Float).Set(value)
            schema_authored = True
            if _authored_only_in(attr, layer):
                prim.RemoveProperty(legacy)
                report.changes.append(f"<{path}>: {legacy} → {schema_name} = {value:g}")
            else:
                report.changes.append(f"<{path}>: {schema_name} = {value:g} (from {legacy})")
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


def _migrate_slots(prim: Usd.Prim, layer: Sdf.Layer, report: MigrationReport) -> None:
    path = prim.GetPath()
    records, problems = usd_io.read_slot_records(prim)
    if problems:
        report.left.extend(f"<{path}>: {p.describe()}; records left unconverted" for p in problems)
        return
    existing = set(usd_io.list_slot_instances(prim))
    lossless = True
    for slot in usd_io.read_gripper_slots(prim):
        if slot.source != "lambdasim":
            continue
        if slot.name in existing:
            lossless = False
            report.left.append(
                f"<{path}>: record {slot.name!r} kept (GripperSlotAPI:{slot.name} exists)"
            )
            continue
        try:
            usd_io.check_slot_instance_name(slot.name)
        except ValueError as exc:
            lossless = False
            report.left.append(f"<{path}>: record {slot.record_index} kept: {exc}")
            continue
        if slot.extra:
            lossless = False
            report.left.append(
                f"<{path}>: record {slot.name!r} keys {sorted(slot.extra)} have no "
                "schema property; the records are kept beside the schema"
            )
        usd_io.apply_slot_from_record(prim, slot)
        version = (
            f" (version {slot.version} `up` → up_range {slot.up_range_local:g})"
            if slot.version == 1
            else ""
        )
        report.changes.append(
            f"<{path}>: record {slot.name!r} → GripperSlotAPI:{slot.name}{version}"
        )
    spec = layer.GetPrimAtPath(path)
    in_root = spec is not None and CUSTOM_DATA_KEY in spec.customData
    if lossless and records and in_root and _authored_only_in(prim, layer):
        prim.ClearCustomDataByKey(usd_io.CUSTOM_DATA_PATH)
        if not prim.GetCustomDataByKey(CUSTOM_DATA_KEY):
            prim.ClearCustomDataByKey(CUSTOM_DATA_KEY)
        report.changes.append(
            f"<{path}>: removed customData lambdasim:gripper_slots (all converted)"
        )
    elif records and lossless:
        report.left.append(f"<{path}>: lambdasim records authored in another layer; left there")


def migrate_stage(stage: Usd.Stage) -> MigrationReport:
    """Convert legacy authoring on ``stage`` in its root layer (see module doc)."""
    layer = stage.GetRootLayer()
    report = MigrationReport()
    with Usd.EditContext(stage, layer):
        for prim, markers in list(usd_io.iter_site_prims(stage)):
            _migrate_site(prim, usd_io.read_gripper_site(prim, markers), layer, report)
        for prim in list(usd_io.iter_slot_prims(stage)):
            if prim.GetCustomDataByKey(usd_io.CUSTOM_DATA_PATH) is not None:
                _migrate_slots(prim, layer, report)
    return report


def write_layer_atomically(layer: Sdf.Layer, target: str | Path) -> None:
    """Export ``layer`` to ``target`` through a temp file in the same directory + rename."""

    def export(temp: Path) -> None:
        if not layer.Export(str(temp)):
            raise OSError(f"{target}: USD could not write the layer")

    replace_atomically(target, export)
