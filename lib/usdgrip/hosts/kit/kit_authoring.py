"""Authoring in Kit: Kit commands with undo, and simple ``omni.ui`` forms (no Qt).

The Grippers menu's **Add Slot…**, **Edit Slot…**, **Add Gripper Site…**, **Add Grasp
Line…** and **Remove…** open a :class:`KitEditForm` whose OK runs one of
:data:`COMMANDS` through ``omni.kit.commands.execute`` (so Kit's Edit > Undo takes it
back); without ``omni.kit.commands`` the form runs the same command object itself.
Each command authors with :func:`usdgrip.authoring.author_edit` (the rules judge the
edit first, as in usdview and ``usdgrip author``); undo restores the target layer's
spec of the edited root prim as it was. The forms judge every change with
:func:`usdgrip.authoring.check_edit` and draw the preview with
:func:`usdgrip.views.edit_previews.preview_edit`: the same code as usdview's dialogs.

From a script (Kit's Script Editor)::

    import omni.kit.commands
    from usdgrip.authoring import SlotEdit
    omni.kit.commands.execute(
        "UsdgripAddSlot", edit=SlotEdit("/Tote", "handle", center=(0, 0.145, 0.12),
        forward=(0, 0, -1), span_axis=(1, 0, 0), up_range=0.05), layer="root")
    omni.kit.undo.undo()
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from pxr import Sdf, Usd

from usdgrip.authoring import (
    AuthoringError,
    AuthoringVerdict,
    LineEdit,
    ProposalStage,
    SiteEdit,
    SlotEdit,
    author_edit,
    check_edit,
)
from usdgrip.authoring.edit_records import FORWARD_LENGTH_M
from usdgrip.errors import GripperError
from usdgrip.usd.slots import list_slot_names
from usdgrip.usd.stage import get_meters_per_unit
from usdgrip.views import overlays
from usdgrip.views.actions import list_removables
from usdgrip.views.edit_previews import check_new_line_name, preview_edit
from usdgrip.views.saving import EditLayerFiles

#: The ``layer`` of a command or form: these words, or the path of an edits layer file.
LAYER_WORDS = ("edit target", "session", "root")


def resolve_layer(stage: Usd.Stage, layer: str, files: EditLayerFiles) -> Sdf.Layer:
    """The layer ``layer`` names on ``stage`` (:data:`LAYER_WORDS`, else an edits file).

    Raises:
        ValueError, OSError: an edits layer file that is refused (``--layer``'s rules).
    """
    word = (layer or LAYER_WORDS[0]).strip()
    if word == "edit target":
        return stage.GetEditTarget().GetLayer()
    if word == "session":
        return stage.GetSessionLayer()
    if word == "root":
        return stage.GetRootLayer()
    return files.attach(stage, word).layer


class AuthorEdit:
    """What every usdgrip Kit command does: author one edit (``do``), take it back (``undo``).

    Args:
        edit: a :class:`~usdgrip.authoring.SlotEdit`, ``SiteEdit`` or ``LineEdit``.
        layer: :data:`LAYER_WORDS` or an edits layer file path (default: the edit target).
        usd_context: Kit's ``UsdContext`` (default ``omni.usd.get_context()``), or
        stage: the stage itself.
        edit_layers: the attached edits layer files (shared with the menu).
    """

    #: The edits the command takes, and whether the slot must be new (True) or exist.
    kinds: tuple[type, ...] = (SlotEdit, SiteEdit, LineEdit)
    adds: bool | None = None
    removes: bool = False

    def __init__(
        self,
        edit: Any,
        layer: str = LAYER_WORDS[0],
        usd_context: Any = None,
        stage: Usd.Stage | None = None,
        edit_layers: EditLayerFiles | None = None,
    ) -> None:
        self.edit = edit
        self.layer = layer
        self.usd_context = usd_context
        self.stage = stage
        self.edit_layers = edit_layers if edit_layers is not None else EditLayerFiles()
        self.verdict: AuthoringVerdict | None = None
        self._undo: tuple[Sdf.Layer, Sdf.Path, Sdf.Layer | None] | None = None

    def _stage(self) -> Usd.Stage:
        if self.stage is not None:
            return self.stage
        context = self.usd_context
        if context is None:
            import omni.usd

            context = omni.usd.get_context()
        stage = context.get_stage()
        if stage is None:
            raise ValueError("usdgrip: open a stage first")
        return stage

    def check(self, stage: Usd.Stage) -> None:
        """Refuse an edit this command does not take (kind, removal, a slot new or not).

        Raises:
            TypeError, ValueError: naming the command and the edit.
        """
        edit = self.edit
        name = type(self).__name__
        if not isinstance(edit, self.kinds):
            kinds = " or ".join(k.__name__ for k in self.kinds)
            raise TypeError(f"{name}: edit is {type(edit).__name__}; expected a {kinds}")
        if bool(getattr(edit, "remove", False)) != self.removes:
            raise ValueError(
                f"{name}: {edit.label}: "
                + ("removes only (remove=True)" if self.removes else "use UsdgripRemove to remove")
            )
        if self.adds is not None and isinstance(edit, SlotEdit):
            prim = stage.GetPrimAtPath(edit.prim) if Sdf.Path.IsValidPathString(edit.prim) else None
            exists = bool(prim) and edit.name in list_slot_names(prim)
            if exists == self.adds:
                other = "UsdgripEditSlot" if exists else "UsdgripAddSlot"
                state = "exists already" if exists else "does not exist"
                raise ValueError(f"{name}: {edit.label} {state}; use {other}")

    def do(self) -> AuthoringVerdict:
        """Author the edit (the rules first: ``AuthoringError`` and nothing authored)."""
        stage = self._stage()
        self.check(stage)
        layer = resolve_layer(stage, self.layer, self.edit_layers)
        root = Sdf.Path(self.edit.prim).GetPrefixes()[0]
        backup = None
        if layer.GetPrimAtPath(root) is not None:
            backup = Sdf.Layer.CreateAnonymous("usdgrip-undo.usda")
            Sdf.CopySpec(layer, root, backup, root)
        self.verdict = author_edit(stage, self.edit, layer=layer)
        self._undo = (layer, root, backup)
        return self.verdict

    def undo(self) -> None:
        """Put the layer's spec of the edited root prim back as it was before :meth:`do`."""
        if self._undo is None:
            return
        layer, root, backup = self._undo
        with Sdf.ChangeBlock():
            if layer.GetPrimAtPath(root) is not None:
                del layer.rootPrims[root.name]
            if backup is not None:
                Sdf.CopySpec(backup, root, layer, root)
        self._undo = None


class CommandSpec(NamedTuple):
    """One Kit command: its name (``omni.kit.commands.execute(name, ...)``) and its rule."""

    name: str
    kinds: tuple[type, ...]
    adds: bool | None
    removes: bool
    doc: str


#: The Kit commands (registered when the extension starts, with omni.kit.commands).
COMMANDS = (
    CommandSpec("UsdgripAddSlot", (SlotEdit,), True, False, "Add a GripperSlotAPI instance."),
    CommandSpec("UsdgripEditSlot", (SlotEdit,), False, False, "Change a slot's given fields."),
    CommandSpec("UsdgripAddGripperSite", (SiteEdit,), None, False, "Author a gripper site."),
    CommandSpec("UsdgripAddGraspLine", (LineEdit,), None, False, "Author a grasp vector line."),
    CommandSpec(
        "UsdgripRemove", (SlotEdit, SiteEdit, LineEdit), None, True, "Remove a slot, site, line."
    ),
)


def make_command_class(spec: CommandSpec, base: type = object) -> type:
    """The command class of ``spec`` (``base``: Kit's ``omni.kit.commands.Command``)."""
    attrs = {"kinds": spec.kinds, "adds": spec.adds, "removes": spec.removes, "__doc__": spec.doc}
    return type(f"{spec.name}Command", (AuthorEdit, base), attrs)


def register_commands(kit_commands: Any) -> list[type]:
    """Register :data:`COMMANDS` with ``omni.kit.commands``; the classes registered."""
    classes = [make_command_class(spec, kit_commands.Command) for spec in COMMANDS]
    for cls in classes:
        kit_commands.register(cls)
    return classes


def unregister_commands(kit_commands: Any, classes: list[type]) -> None:
    """Take the classes :func:`register_commands` registered back out."""
    for cls in classes:
        kit_commands.unregister(cls)


# --- forms ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FormField:
    """One text field of a form: ``key`` of the values, the label, the unit shown."""

    key: str
    label: str
    unit: str = ""
    kind: str = "text"
    """``text``, ``number`` (one float), ``vector`` (``x, y, z``) or ``optional`` (a
    number, empty: not authored)."""


LAYER_FIELD = FormField("layer", "Author into", "edit target | session | root | EDITS.usda")
#: The fields of each form, as ``usdgrip author slot|site|line`` names them.
FORM_FIELDS: dict[str, tuple[FormField, ...]] = {
    "slot": (
        FormField("name", "Slot name"),
        FormField("center", "Centre", "stage units", "vector"),
        FormField("forward", "Forward", "direction", "vector"),
        FormField("span_axis", "Span axis", "direction", "vector"),
        FormField("up_range", "Up range", "m", "number"),
        FormField("slot_input_angle", "Input angle", "°", "number"),
        FormField("lr", "LR", "left | right | empty"),
        FormField("group", "Group"),
        LAYER_FIELD,
    ),
    "site": (
        FormField("prim", "Site prim"),
        FormField("define", "Define as Xform", "yes | no"),
        FormField("max_opening", "Max opening", "m", "number"),
        FormField("forward", "Forward", "direction", "vector"),
        FormField("grip_line", "Grip line", "direction", "vector"),
        FormField("pad_width", "Pad width", "m", "number"),
        FormField("max_payload", "Max payload", "kg, empty: not authored", "optional"),
        FormField("max_grip_force", "Max grip force", "N, empty: not authored", "optional"),
        LAYER_FIELD,
    ),
    "line": (
        FormField("name", "Line name"),
        FormField("p0", "p0 (first pad)", "stage units", "vector"),
        FormField("p1", "p1 (second pad)", "stage units", "vector"),
        LAYER_FIELD,
    ),
    "remove": (FormField("item", "Remove"), LAYER_FIELD),
}


def _parse(field: FormField, text: str) -> Any:
    text = text.strip()
    if field.kind == "text":
        return text
    if field.kind == "optional" and not text:
        return None
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    want = 3 if field.kind == "vector" else 1
    if len(values) != want:
        shape = "x, y, z (three numbers)" if want == 3 else "a number"
        raise ValueError(f"{field.label}: {text!r} is not {shape}")
    return tuple(values) if want == 3 else values[0]


def _format(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, tuple | list):
        return ", ".join(f"{float(v):g}" for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class KitEditForm:
    """A small ``omni.ui`` window: the fields, the rules' verdict, Check, OK, Cancel.

    Every change of a field judges the edit again and redraws the preview; OK is
    enabled only while nothing refuses it and runs the command (:data:`COMMANDS`).

    Args:
        ui: ``omni.ui``.
        kind: ``slot``, ``site``, ``line`` or ``remove`` (:data:`FORM_FIELDS`).
        stage: the stage; prim_path: the selected prim.
        values: the fields' first values (by key).
        run: ``(command name, edit, layer) -> verdict``: executes the command.
        notify: the status line.
        command: the command's name (for ``slot``: add or edit).
    """

    def __init__(
        self,
        ui: Any,
        kind: str,
        stage: Usd.Stage,
        prim_path: str,
        values: dict[str, Any],
        run: Callable[[str, Any, str], Any],
        notify: Callable[[str], None],
        command: str,
    ) -> None:
        self.ui, self.kind, self.stage, self.prim_path = ui, kind, stage, prim_path
        self.run, self.notify, self.command = run, notify, command
        self.fields = FORM_FIELDS[kind]
        self.models = {f.key: ui.SimpleStringModel(_format(values.get(f.key))) for f in self.fields}
        self.removables = list_removables(stage, prim_path) if kind == "remove" else []
        self.scratch = ProposalStage(stage)
        self.verdict: AuthoringVerdict | None = None
        self.message = ""
        self.window = ui.Window(f"Grippers: {command} on {prim_path}", width=520, height=360)
        self._build()
        for model in self.models.values():
            model.add_value_changed_fn(lambda _model: self.refresh())
        self.refresh()
        self.window.visible = True

    def _build(self) -> None:
        ui = self.ui
        with self.window.frame, ui.VStack(height=0, spacing=4):
            ui.Label(f"Prim: {self.prim_path}")
            if self.kind == "remove":
                found = ", ".join(label for label, _ in self.removables) or "nothing to remove"
                ui.Label(f"Items: {found}", word_wrap=True)
            for field in self.fields:
                with ui.HStack(height=0, spacing=6):
                    unit = f" ({field.unit})" if field.unit else ""
                    ui.Label(f"{field.label}{unit}", width=200)
                    ui.StringField(model=self.models[field.key])
            self.verdictLabel = ui.Label("", word_wrap=True)
            with ui.HStack(height=0, spacing=6):
                ui.Button("Check", clicked_fn=self.refresh)
                self.okButton = ui.Button("OK", clicked_fn=self.ok)
                ui.Button("Cancel", clicked_fn=self.cancel)

    def value(self, key: str) -> str:
        """The text of field ``key``."""
        return self.models[key].get_value_as_string()

    def set_value(self, key: str, text: str) -> None:
        """Type ``text`` into field ``key`` (the form judges it again)."""
        self.models[key].set_value(text)

    def edit(self) -> Any:
        """The edit the fields describe.

        Raises:
            ValueError: a field's text that is not what it takes (naming the field).
        """
        values = {f.key: _parse(f, self.value(f.key)) for f in self.fields}
        if self.kind == "remove":
            labels = [label for label, _ in self.removables]
            if values["item"] not in labels:
                raise ValueError(f"Remove: {values['item']!r} is not one of {labels or 'none'}")
            return self.removables[labels.index(values["item"])][1]
        if self.kind == "slot":
            lr = values["lr"] or None
            return SlotEdit(
                self.prim_path,
                values["name"],
                center=values["center"],
                forward=values["forward"],
                span_axis=values["span_axis"],
                up_range=values["up_range"],
                slot_input_angle=values["slot_input_angle"],
                lr=lr,
                group=values["group"],
            )
        if self.kind == "line":
            edit = LineEdit(self.prim_path, values["name"], p0=values["p0"], p1=values["p1"])
            check_new_line_name(self.stage, edit)
            return edit
        mpu = get_meters_per_unit(self.stage)
        define = values["define"].lower()
        if define not in ("yes", "no"):
            raise ValueError(f"Define as Xform: {values['define']!r} is not yes or no")
        pad = values["pad_width"]
        return SiteEdit(
            values["prim"],
            define=define == "yes",
            max_opening=values["max_opening"],
            max_payload=values["max_payload"],
            max_grip_force=values["max_grip_force"],
            forward=values["forward"],
            grip_line=values["grip_line"],
            forward_length=FORWARD_LENGTH_M / mpu,
            pad_width=pad / mpu if math.isfinite(pad) else pad,
        )

    def ok_enabled(self) -> bool:
        """Whether OK authors (nothing refuses the edit)."""
        return bool(self.okButton.enabled)

    def refresh(self) -> AuthoringVerdict | None:
        """Judge the edit, show the verdict, redraw the preview, enable OK only if accepted."""
        try:
            edit = self.edit()
            self.verdict = check_edit(self.stage, edit, scratch=self.scratch)
        except (ValueError, TypeError, GripperError) as exc:
            self.verdict, edit = None, None
            self.message = f"Not authorable: {exc}"
        else:
            lines = [self.verdict.describe(item) for item in self.verdict.items]
            head = "OK: the rules accept it." if self.verdict.ok else "Refused by the rules:"
            self.message = "\n".join([head, *lines])
        self.verdictLabel.text = self.message
        self.okButton.enabled = self.verdict is not None and self.verdict.ok
        preview_edit(self.stage, edit, self.scratch)
        return self.verdict

    def ok(self) -> Any:
        """Run the command (OK); the verdict, or ``None`` with the reason shown."""
        if not self.ok_enabled():
            return None
        try:
            verdict = self.run(self.command, self.edit(), self.value("layer"))
        except (AuthoringError, ValueError, TypeError, GripperError, OSError) as exc:
            self.message = f"Not authored: {exc}"
            self.verdictLabel.text = self.message
            return None
        self.close()
        return verdict

    def cancel(self) -> None:
        """Close the form; nothing is authored."""
        self.close()

    def close(self) -> None:
        """Clear the preview and hide the window."""
        overlays.clear_overlays(self.stage, overlays.PREVIEW_SCOPE.name)
        self.window.visible = False
