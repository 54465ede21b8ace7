"""The job parameters of ``usdgrip batch plan`` and ``batch evaluate``, checked once.

Before any file is run: the ``--gripper`` sites, the support options (``--table``,
``--scene``, ``--support``), the physics options of ``--evaluate`` and ``batch evaluate``,
and the ``--out-dir`` and ``--grasps-dir`` folders; each refusal names its flag.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from usdgrip.cli.common import build_evaluation_options, refuse_physics_without_evaluate
from usdgrip.errors import GripperError

#: The physics options of ``batch plan --evaluate`` and ``batch evaluate`` (argument names;
#: ``engine`` once ``--engine`` exists): job params, so part of the job definition.
BATCH_PHYSICS_OPTIONS = ("trials", "force", "friction", "density")


def build_physics_params(args: argparse.Namespace) -> dict[str, Any] | None:
    """The physics job params of ``batch plan --evaluate`` or ``batch evaluate``, checked once.

    ``trials`` always (its value, so a changed default reruns), the other options when
    given (so a run without them keeps its job signature); None for ``batch plan`` without
    ``--evaluate``.

    Raises:
        ValueError: a physics option without ``--evaluate``, or a refused value, worded
            with its flag (:func:`~usdgrip.cli.common.build_evaluation_options`).
    """
    from usdgrip.grasping.options import DEFAULT_ENGINE, EvaluationOptions

    given = [name for name in BATCH_PHYSICS_OPTIONS if getattr(args, name) is not None]
    engine = getattr(args, "engine", None)  # once `--engine` exists (add_physics_arguments)
    if engine is not None and engine != DEFAULT_ENGINE:
        given.append("engine")
    if args.batch_action == "plan" and not args.evaluate:
        refuse_physics_without_evaluate(given)
        return None
    values = {**vars(args), "jobs": 1, "dump_scene": None, "gripper_model": "auto"}
    if values["trials"] is None:
        values["trials"] = EvaluationOptions.trials
    options = build_evaluation_options(
        argparse.Namespace(**values), **({"engine": engine} if engine is not None else {})
    )
    params: dict[str, Any] = {"trials": options.trials}
    params.update((name, getattr(options, name)) for name in given if name != "trials")
    return params


def parse_grippers(texts: list[str], max_candidates: int, seed: int) -> list[list[str]]:
    """Check the ``--gripper`` options once: ``[[absolute file, site prim path], ...]``.

    Uses ``usdgrip plan``'s parsing and request contract, then reads every site.

    Raises:
        ValueError: bad ``FILE:/Site/Path`` syntax, a missing file, a gripper listed
            twice, ``--max-candidates`` or ``--seed`` outside the request contract.
        GripperError: an unreadable gripper file, a missing prim or one that is not
            a site.
    """
    from usdgrip.cli.plan import check_request_options, parse_gripper
    from usdgrip.contracts import GripperRef
    from usdgrip.grasping.inputs import read_gripper

    refs = []
    for text in texts:
        ref = parse_gripper(text)
        if not Path(ref.asset_path).is_file():
            raise ValueError(f"--gripper {text!r}: {ref.asset_path}: no such file")
        refs.append(
            GripperRef(asset_path=str(Path(ref.asset_path).resolve()), prim_path=ref.prim_path)
        )
    check_request_options(refs, max_candidates, seed)
    for text, ref in zip(texts, refs, strict=True):
        try:
            read_gripper(ref)
        except GripperError as exc:
            raise GripperError(f"--gripper {text!r}: {exc}") from None
    return [[ref.asset_path, ref.prim_path] for ref in refs]


def compute_support_params(args: argparse.Namespace) -> dict[str, Any]:
    """The job parameters of ``--table``, ``--scene`` and ``--support``, only those given.

    Left out when not given, so a run without them keeps its job signature (and resumes).

    Raises:
        ValueError: a ``--scene`` that is not a file, a ``--support`` without ``--scene``.
    """
    params: dict[str, Any] = {}
    if args.table:
        params["table"] = True
    if args.scene is not None:
        scene = Path(args.scene)
        if not scene.is_file():
            why = "is a folder; expected a USD file" if scene.is_dir() else "no such file"
            raise ValueError(f"--scene {args.scene}: {why}")
        params["scene"] = str(scene.resolve())
    if args.support is not None:
        if args.scene is None:
            raise ValueError(f"--support {args.support}: needs --scene FILE holding that prim")
        params["support"] = args.support
    return params


def make_out_dir(out_dir: Path, text: str) -> None:
    """Create the ``--out-dir`` folder (and its parents).

    Raises:
        ValueError: it cannot be created, naming the folder and why.
    """
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parent = next((p for p in out_dir.parents if p.exists()), None)
        where = f" inside {parent}" if parent is not None and parent != out_dir.parent else ""
        raise ValueError(
            f"--out-dir {text}: cannot create the folder {out_dir}{where} "
            f"({exc.strerror or exc}); choose a folder you can write to"
        ) from None


def check_out_dir(text: str) -> Path:
    """The ``--out-dir`` folder, resolved (created once the run starts).

    Raises:
        ValueError: it is a file.
    """
    out_dir = Path(text).resolve()
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(
            f"--out-dir {text}: is a file; expected a folder (it is created if missing)"
        )
    return out_dir


def check_grasps_dir(text: str, out_dir: Path) -> Path:
    """The ``--grasps-dir`` folder of ``batch evaluate``, resolved.

    Raises:
        ValueError: missing, not a folder, or the ``--out-dir`` (evaluated files would
            replace the grasp files they were read from).
    """
    folder = Path(text)
    if not folder.exists():
        raise ValueError(
            f"--grasps-dir {text}: no such folder; expected the folder of the grasp files "
            "(usdgrip batch plan --out-dir writes one)"
        )
    if not folder.is_dir():
        raise ValueError(f"--grasps-dir {text}: is not a folder; expected the grasp files' folder")
    folder = folder.resolve()
    if folder == out_dir:
        raise ValueError(
            f"--out-dir {out_dir}: is the --grasps-dir; the evaluated files would replace the "
            "grasp files they are read from: choose another folder"
        )
    return folder
