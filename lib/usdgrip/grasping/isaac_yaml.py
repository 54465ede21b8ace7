"""Read and write extended Isaac-Grasp YAML files (SPEC §5, seed 001).

The file is exactly ``GraspPlanningResult.model_dump(mode="json")``, so the
published JSON Schema describes it, with each entry's Isaac-Grasp keys first::

    format: isaac_grasp
    format_version: 1.0
    grasps:
      g_1a2b3c4d_antipodal_0007:       # candidate id: never a YAML number
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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import ValidationError

from usdgrip.contracts import GraspCandidate, GraspPlanningResult
from usdgrip.errors import GripperError
from usdgrip.fileio import read_text_input, write_text_output
from usdgrip.frames import Mat4, Poses, compute_pose
from usdgrip.yamltext import load_yaml

#: Keys of an entry that the standard loaders read, written first.
ISAAC_ENTRY_KEYS = ("confidence", "position", "orientation")
#: Provenance extension keys of an entry, written only when set (docs/planning.md).
PROVENANCE_KEYS = ("slot", "grasp_line", "group")

_HEADER = (
    "# Isaac-Grasp file (extended) written by {revision}.\n"
    "# Poses are T_M_G: grasp frame G (GraspGenX: +X closing, +Z approach) in the object\n"
    "# frame M = metadata.pose_frame, in metres. Extension keys follow the Isaac-Grasp keys.\n"
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


def compute_document(result: GraspPlanningResult) -> dict[str, Any]:
    """The YAML document of ``result``: plain Python types, Isaac-Grasp keys first per entry."""
    data = result.model_dump(mode="json")
    grasps = {}
    for key, entry in data["grasps"].items():
        ordered = {k: entry[k] for k in ISAAC_ENTRY_KEYS}
        ordered.update((k, v) for k, v in entry.items() if k not in ISAAC_ENTRY_KEYS)
        for extension in PROVENANCE_KEYS + ("physics",):
            if ordered.get(extension) is None:  # unset: the entry stays as before
                ordered.pop(extension, None)
        physics = ordered.get("physics")
        if physics is not None and not physics.get("collides_open_with"):
            physics.pop("collides_open_with", None)
        grasps[key] = ordered
    metadata = data["metadata"]
    if metadata.get("physics") is None:
        metadata.pop("physics", None)
    return {
        "format": data["format"],
        "format_version": data["format_version"],
        "grasps": grasps,
        "metadata": metadata,
    }


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
    return _HEADER.format(revision=result.metadata.upstream_revision) + body


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
    """Parse extended Isaac-Grasp YAML text into a validated result.

    A missing ``candidate_id`` in an entry is taken from its key. Plain
    Isaac-Grasp files (no ``gripper`` per entry, no ``metadata``) are not
    extended results and are rejected with a message saying so. The YAML is read by
    :func:`usdgrip.yamltext.load_yaml`: a repeated key (two entries with one candidate
    id) is refused, naming it and its lines.

    Raises:
        TooManyGraspsError: more than ``max_grasps`` ``position`` keys (before parsing).
        GripperError: invalid YAML, a repeated key, not an Isaac-Grasp mapping, or a
            contract violation; the message names ``source`` and the offending key.
    """
    count = text.count("position")  # every entry has one: a bound from above, at C speed
    if count > max_grasps:
        raise TooManyGraspsError(source, count, max_grasps)
    try:
        data = load_yaml(text)  # safe, nesting depth limited, keys unique
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
            f"{source}: 'grasps' is {type(grasps).__name__}; expected a mapping of candidate "
            "id to entry"
        )
    if "metadata" not in data:
        raise GripperError(
            f"{source}: no 'metadata': a plain Isaac-Grasp file, not an extended usdgrip result "
            "(expected metadata plus gripper per entry, as written by `usdgrip plan`)"
        )
    entries = {}
    for key, entry in grasps.items():
        if isinstance(entry, dict) and "candidate_id" not in entry:
            entry = {**entry, "candidate_id": key}
        entries[key] = entry
    try:
        return GraspPlanningResult.model_validate({**data, "grasps": entries})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise GripperError(
            f"{source}: not an extended Isaac-Grasp result: {problems}{more}"
        ) from None


def read_isaac_grasp(path: str | Path, *, max_grasps: int = MAX_GRASPS) -> GraspPlanningResult:
    """Read an extended Isaac-Grasp YAML file written by :func:`write_isaac_grasp`.

    The file is read by :func:`usdgrip.fileio.read_text_input`: at most
    :data:`MAX_GRASP_FILE_BYTES` (a larger one is refused before reading), and a named
    pipe or device waits at most 30 s for data.

    Raises:
        TooManyGraspsError: more than ``max_grasps`` grasps (before parsing).
        GripperError: the file is missing, unreadable, too large or not a valid extended
            result.
    """
    text = read_text_input(
        path,
        max_bytes=MAX_GRASP_FILE_BYTES,
        kind=f"a grasp file (at most {MAX_GRASPS:,} grasps)",
        advice="; split the file, or plan with a smaller --max-candidates",
    )
    return parse_isaac_grasp(text, source=str(Path(path)), max_grasps=max_grasps)


def compute_candidate_pose(candidate: GraspCandidate) -> Mat4:
    """``T_M_G`` of one candidate as a (4, 4) pose (translation in metres)."""
    return compute_pose(candidate.position, (candidate.orientation.w, *candidate.orientation.xyz))


def compute_candidate_poses(result: GraspPlanningResult) -> Poses:
    """``T_M_G`` of every candidate in file order, ``(N, 4, 4)`` float64."""
    poses = [compute_candidate_pose(c) for c in result.grasps.values()]
    return np.array(poses, dtype=np.float64).reshape(-1, 4, 4)
