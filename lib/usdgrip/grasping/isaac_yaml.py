"""Read and write Isaac-Grasp YAML files: usdgrip's extended ones and every other writer's.

usdgrip writes ``GraspPlanningResult.model_dump(mode="json")``, so the published JSON
Schema describes it, with each entry's Isaac-Grasp keys first::

    format: isaac_grasp
    format_version: 1.0
    grasps:
      g_1a2b3c4d_antipodal_0007:       # candidate id (quoted when YAML would read a number)
        confidence: 0.93
        position: [0.01, 0.0, 0.05]    # T_M_G translation, metres
        orientation: {w: 0.5, xyz: [0.5, -0.5, 0.5]}
        candidate_id: g_1a2b3c4d_antipodal_0007   # extension keys from here on
        gripper: {asset_path: gripper.usda, prim_path: /Gripper/tcp}
        generation_method: antipodal
        width: 0.042
        exclusions: [...]
        group: 3                       # provenance: contact pair; slot / grasp_line when set
    metadata: {...}

Isaac Sim's grasp importer reads ``format``, ``format_version`` and
``grasps`` (``position``, ``orientation {w, xyz}``); GraspGen's loader reads
``confidence``, ``position`` and ``orientation``. Both ignore the extension
keys. Only plain Python floats, ints, strings and lists are written (the
dumper is a ``yaml.SafeDumper``, which refuses anything else, e.g. numpy
scalars), and writes are atomic.

The reader takes every writer's file (docs/planning.md, "Reading other tools' files"):
Isaac Sim's Grasp Editor (``object_frame``, ``gripper_frame``, ``cspace_position``,
``pregrasp_cspace_position``; its hand-written text), GraspGen's plain files (pose and
confidence only), GraspDataGen's (``format_version: '1.0'``, ``gripper_frame_link`` and
its other keys) and usdgrip's own in any order. Every mapping key is the text the file
holds (an unquoted ``off`` or ``1`` is the string ``off`` / ``1``, not YAML 1.1's
``False`` / ``1``); a plain number as Python prints it (``1e-05``, which YAML 1.1 reads as
a string) is a number; a date stays the text written. Keys usdgrip does not know are
kept and written back (``model_extra``).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import ValidationError

from usdgrip import yamltext
from usdgrip.contracts import GraspCandidate, GraspPlanningResult
from usdgrip.errors import GripperError
from usdgrip.fileio import read_text_input, write_text_output
from usdgrip.frames import Mat4, Poses, compute_pose
from usdgrip.yamltext import load_yaml

#: Keys of an entry that the standard loaders read, written first.
ISAAC_ENTRY_KEYS = ("confidence", "position", "orientation")
#: Joint keys of an entry (Isaac Sim's Grasp Editor, GraspDataGen), written after those.
CSPACE_KEYS = ("cspace_position", "pregrasp_cspace_position")
#: Provenance extension keys of an entry, written only when set (docs/planning.md).
PROVENANCE_KEYS = ("slot", "grasp_line", "group")
#: Top-level keys naming the frames of the poses, written after ``format_version``.
FRAME_KEYS = ("object_frame", "gripper_frame")
#: GraspDataGen's name of the gripper frame: a prim *name* (its ``base_frame``).
GRIPPER_FRAME_LINK_KEY = "gripper_frame_link"

_HEADER = (
    "# Isaac-Grasp file (extended) written by {revision}.\n"
    "# Poses are T_M_G: grasp frame G (GraspGenX: +X closing, +Z approach) in the object\n"
    "# frame M = metadata.pose_frame, in metres. Extension keys follow the Isaac-Grasp keys.\n"
)
_HEADER_FRAME = (
    "# Isaac-Grasp file (extended) written by {revision}.\n"
    "# Poses are of {frame} in the object frame M = metadata.pose_frame, in metres.\n"
    "# Extension keys follow the Isaac-Grasp keys.\n"
)
_HEADER_KEPT = (
    "# Isaac-Grasp file written by {revision}, keeping every key of the file it was read from.\n"
    "# Poses are as that file wrote them: {frame} in {object}, in metres.\n"
)


class _Dumper(yaml.SafeDumper):
    """Safe dumper: number lists inline (``[x, y, z]``), lists of text one item per line."""

    def represent_list(self, data):
        flow = all(isinstance(v, int | float) and not isinstance(v, bool) for v in data)
        return self.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _Dumper.represent_list)

#: Most grasps read from one file. Reading costs about 0.5 ms and 15 kB of memory per grasp
#: (YAML, then the contract check): 50,000 take about half a minute and under 1 GB.
#: GraspGen and `usdgrip plan` files hold hundreds to a few thousand.
MAX_GRASPS = 50_000
#: Largest grasp file read (an evaluated entry takes about 700 bytes): checked before reading.
MAX_GRASP_FILE_BYTES = 64 << 20


class TooManyGraspsError(GripperError):
    """A grasp file holds more grasps than the reader accepts (refused before parsing).

    Attributes:
        source: the file. count: about how many grasps (its ``position`` keys). limit:
        the most accepted.
    """

    def __init__(self, source: str, count: int, limit: int) -> None:
        super().__init__(
            f"{source}: holds about {count:,} grasps ({count:,} `position` keys), more than "
            f"the {limit:,} read from one grasp file (each takes about 0.5 ms and 15 kB to "
            "read): split the file, or plan with a smaller --max-candidates"
        )
        self.source, self.count, self.limit = source, count, limit


_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
#: A float as Python prints it without a dot (``1e-05``, ``5e+16``): YAML 1.1 reads it as
#: a string. Isaac Sim's Grasp Editor writes its numbers with f-strings, so its files hold
#: such values (a joint position of 1e-05 rad, a position of 5e-06 m).
_PYTHON_EXPONENT = re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$")


class FileTextKeys:
    """Loader mixin: every mapping key is the text the file holds, never a YAML 1.1 value.

    Isaac Sim's Grasp Editor writes joint names unquoted, so a joint named ``off``, ``on``,
    ``yes``, ``null`` or ``1`` would load as ``False``, ``True``, ``None``, ``1`` under
    ``yaml.safe_load``; its file means the name. Each plain scalar key is constructed as a
    string from its source text (after merges, ``<<``, are flattened), so two keys that
    read the same text (``off`` and ``'off'``) are the same key.
    """

    def flatten_mapping(self, node):
        super().flatten_mapping(node)
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _STR_TAG:
                key_node.tag = _STR_TAG


@functools.cache
def make_grasp_loader(base: type) -> type:
    """``base`` (a safe loader) with :class:`FileTextKeys` and two scalar rules changed.

    Python's ``1e-05`` reads as a number and a date as the text written (a value usdgrip
    keeps, it does not read).
    """
    loader = type(f"Grasp{base.__name__}", (FileTextKeys, base), {})
    loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(_FLOAT_TAG, _PYTHON_EXPONENT, list("-+0123456789"))
    return loader


def compute_document(result: GraspPlanningResult) -> dict[str, Any]:
    """The YAML document of ``result``: plain Python types, Isaac-Grasp keys first per entry.

    Each entry writes the keys it holds (those the planner set, or those of the file it was
    read from, plus what usdgrip added: ``physics``), in this order: the Isaac-Grasp keys,
    the joint keys, usdgrip's extension keys, the keys usdgrip does not know (as read), and
    ``physics`` last. The top level writes ``format``, ``format_version``, the frame keys
    when set, the other keys as read, ``grasps`` and ``metadata`` (when there is one).
    """
    data = result.model_dump(mode="json")
    grasps = {}
    for key, entry in data["grasps"].items():
        candidate = result.grasps[key]
        held = candidate.model_fields_set
        extra = candidate.model_extra or {}
        ordered = {k: entry[k] for k in ISAAC_ENTRY_KEYS + CSPACE_KEYS if entry[k] is not None}
        ordered.update(
            (k, v)
            for k, v in entry.items()
            if k in held and k not in ordered and k not in extra and k != "physics"
        )
        for extension in PROVENANCE_KEYS + ("confidence",):
            if ordered.get(extension) is None:  # unset: the entry stays as before
                ordered.pop(extension, None)
        ordered.update((k, entry[k]) for k in extra)
        physics = entry.get("physics")
        if physics is not None:
            if not physics.get("collides_open_with"):
                physics.pop("collides_open_with", None)
            ordered["physics"] = physics
        grasps[key] = ordered
    document: dict[str, Any] = {"format": data["format"], "format_version": data["format_version"]}
    document.update((k, data[k]) for k in FRAME_KEYS if data[k] is not None)
    document.update((k, data[k]) for k in result.model_extra or {})
    document["grasps"] = grasps
    metadata = data["metadata"]
    if metadata is not None:
        if metadata.get("physics") is None:
            metadata.pop("physics", None)
        document["metadata"] = metadata
    return document


def find_gripper_frame_key(result: GraspPlanningResult) -> tuple[str, str] | None:
    """``(key, value)`` of the file's gripper frame, ``None`` when the file names none.

    ``gripper_frame`` is a prim path (Isaac Sim's Grasp Editor), ``gripper_frame_link`` a
    prim name (GraspDataGen).

    Raises:
        GripperError: ``gripper_frame_link`` is not a non-empty string.
    """
    if result.gripper_frame is not None:
        return "gripper_frame", result.gripper_frame
    link = (result.model_extra or {}).get(GRIPPER_FRAME_LINK_KEY)
    if link is None:
        return None
    if not isinstance(link, str) or not link:
        raise GripperError(
            f"{GRIPPER_FRAME_LINK_KEY} is {link!r}; expected the name of the gripper prim the "
            "poses are of (GraspDataGen's base_frame, e.g. base_link)"
        )
    return GRIPPER_FRAME_LINK_KEY, link


def describe_writer(result: GraspPlanningResult) -> str:
    """Which tool's layout the file has, for messages.

    ``usdgrip``, ``Isaac Sim Grasp Editor``, ``GraspDataGen``, or ``a plain Isaac-Grasp
    writer (GraspGen)``.
    """
    extra = result.model_extra or {}
    if "created_with" in extra or GRIPPER_FRAME_LINK_KEY in extra:
        return "GraspDataGen"
    if result.metadata is not None and all(c.gripper for c in result.grasps.values()):
        return "usdgrip"
    if result.object_frame is not None or result.gripper_frame is not None:
        return "Isaac Sim Grasp Editor"
    return "a plain Isaac-Grasp writer (GraspGen)"


def format_isaac_grasp(result: GraspPlanningResult) -> str:
    """Serialise ``result`` to extended Isaac-Grasp YAML text (a short comment header first)."""
    body = yaml.dump(
        compute_document(result),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=None,
        allow_unicode=True,
        width=100,
    )
    import usdgrip

    revision = (
        result.metadata.upstream_revision
        if result.metadata is not None
        else f"usdgrip {usdgrip.__version__}"
    )
    frame = find_gripper_frame_key(result)
    if describe_writer(result) == "usdgrip":
        if frame is None:
            return _HEADER.format(revision=revision) + body
        return _HEADER_FRAME.format(revision=revision, frame=f"{frame[0]} {frame[1]}") + body
    pose_frame = result.metadata.pose_frame if result.metadata is not None else None
    return (
        _HEADER_KEPT.format(
            revision=revision,
            frame=f"{frame[0]} {frame[1]}" if frame else "the gripper frame",
            object=result.object_frame or pose_frame or "the object frame",
        )
        + body
    )


def write_isaac_grasp(result: GraspPlanningResult, path: str | Path) -> Path:
    """Write ``result`` to ``path`` by :func:`usdgrip.fileio.write_output`.

    A regular file is replaced atomically (temporary file in the same folder, then
    rename): either the complete file appears or the previous content stays. A
    device or named pipe is written in place, streamed.

    Returns:
        The path written.

    Raises:
        TypeError: ``result`` is not a :class:`GraspPlanningResult`.
        ValueError: ``path`` is an existing folder.
        FileNotFoundError: the folder of ``path`` does not exist.
        PermissionError: ``path`` is a read-only file.
        OSError: the folder is not writable or the disk is full (one line naming ``path``).
    """
    if not isinstance(result, GraspPlanningResult):
        raise TypeError(
            f"result is {type(result).__name__}; expected a GraspPlanningResult (plan_grasps)"
        )
    if Path(path).is_dir():
        raise ValueError(f"path {str(path)!r} is a folder; expected a file path, e.g. grasps.yaml")
    return write_text_output(path, format_isaac_grasp(result))


def parse_isaac_grasp(
    text: str, source: str = "<string>", *, max_grasps: int = MAX_GRASPS
) -> GraspPlanningResult:
    """Parse Isaac-Grasp YAML text, of any writer, into a validated result.

    usdgrip's extended files give the result they were written from. Another tool's file
    (Isaac Sim's Grasp Editor, GraspGen, GraspDataGen) gives a result with ``metadata``
    ``None``, entries without ``gripper``, its frame keys in ``object_frame`` /
    ``gripper_frame`` and every other key in ``model_extra``. A missing ``candidate_id`` in
    an entry is its key (and is not written back). Entries keep the file's order. The YAML
    is read by :func:`usdgrip.yamltext.load_yaml` with the grasp loader
    (:func:`make_grasp_loader`: keys as the file's text): a repeated key (two entries with
    one candidate id, ``off`` and ``'off'``) is refused, naming it and its lines.

    Raises:
        TooManyGraspsError: more than ``max_grasps`` ``position`` keys (before parsing).
        GripperError: invalid YAML, a repeated key, not an Isaac-Grasp mapping, or a value
            that is not what the format holds; the message names ``source`` and the
            offending key.
    """
    count = text.count("position")  # every entry has one: a bound from above, at C speed
    if count > max_grasps:
        raise TooManyGraspsError(source, count, max_grasps)
    try:
        # Safe, nesting depth limited, keys unique; the base loader looked up now (tests swap it).
        data = load_yaml(text, make_grasp_loader(yamltext.LOADER))
    except ValueError as exc:
        raise GripperError(f"{source}: {exc}") from None
    if not isinstance(data, dict):
        found = "nothing (the file is empty)" if data is None else type(data).__name__
        raise GripperError(
            f"{source}: expected a YAML mapping with format: isaac_grasp, found {found}"
        )
    if data.get("format") != "isaac_grasp":
        raise GripperError(f"{source}: format is {data.get('format')!r}; expected 'isaac_grasp'")
    grasps = data.get("grasps")
    if not isinstance(grasps, dict):
        raise GripperError(
            f"{source}: 'grasps' is {type(grasps).__name__}; expected a mapping of grasp "
            "name to entry"
        )
    entries = {}
    named = set()
    for key, entry in grasps.items():
        if not isinstance(entry, dict):
            raise GripperError(
                f"{source}: grasps.{key}: is {type(entry).__name__}; expected a mapping with "
                "position and orientation"
            )
        if "candidate_id" in entry:
            named.add(key)
        else:
            entry = {**entry, "candidate_id": key}
        entries[key] = entry
    try:
        result = GraspPlanningResult.model_validate({**data, "grasps": entries})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: "
            f"{err['msg'].removeprefix('Value error, ')}"
            for err in exc.errors()[:5]
        )
        more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise GripperError(f"{source}: not a readable Isaac-Grasp file: {problems}{more}") from None
    for key, candidate in result.grasps.items():
        if key not in named:  # the key named it: written back as the file had it, a key
            candidate.model_fields_set.discard("candidate_id")
    return result


def read_isaac_grasp(path: str | Path, *, max_grasps: int = MAX_GRASPS) -> GraspPlanningResult:
    """Read an Isaac-Grasp YAML file of any writer (:func:`parse_isaac_grasp`).

    The file is read by :func:`usdgrip.fileio.read_text_input`: at most
    :data:`MAX_GRASP_FILE_BYTES` (a larger one is refused before reading), and a named
    pipe or device waits at most 30 s for data.

    Raises:
        TooManyGraspsError: more than ``max_grasps`` grasps (before parsing).
        GripperError: the file is missing, unreadable, too large or not a valid extended
            result.
    """
    return parse_isaac_grasp(read_grasp_text(path), source=str(Path(path)), max_grasps=max_grasps)


def read_grasp_text(path: str | Path) -> str:
    """The text of a grasp file, at most :data:`MAX_GRASP_FILE_BYTES` (checked before reading).

    Raises:
        GripperError: the file is missing, unreadable, too large or not UTF-8.
    """
    return read_text_input(
        path,
        max_bytes=MAX_GRASP_FILE_BYTES,
        kind=f"a grasp file (at most {MAX_GRASPS:,} grasps)",
        advice="; split the file, or plan with a smaller --max-candidates",
    )


def compute_candidate_pose(candidate: GraspCandidate) -> Mat4:
    """``T_M_G`` of one candidate as a (4, 4) pose (translation in metres)."""
    return compute_pose(candidate.position, (candidate.orientation.w, *candidate.orientation.xyz))


def compute_candidate_poses(result: GraspPlanningResult) -> Poses:
    """``T_M_G`` of every candidate in file order, ``(N, 4, 4)`` float64."""
    poses = [compute_candidate_pose(c) for c in result.grasps.values()]
    return np.array(poses, dtype=np.float64).reshape(-1, 4, 4)
