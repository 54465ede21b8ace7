"""The grasping jobs of ``usdgrip batch``: plan (``--evaluate`` too) and evaluate one object file.

Both take the object of a file (its default prim, :func:`find_object_prim`) and write one
Isaac-Grasp file to ``out_dir/<path relative to root without its suffix>.yaml``
(:func:`compute_output_path`). Planning and physics run the library's one pipeline
(``read_grasp_inputs`` → ``plan_grasps`` → ``evaluate_grasps``, as ``usdgrip plan
--evaluate`` and ``usdgrip evaluate --grasps``); a job only picks the object, reads its
grasp file and turns the result into the row's ``output`` (:func:`summarize_physics`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: The physics options a batch job takes (:class:`~usdgrip.grasping.options.EvaluationOptions`
#: fields); the batch runs files in parallel, so each file simulates in one process.
PHYSICS_FIELDS = ("trials", "force", "friction", "density", "engine")


def compute_output_path(path: str, root: str, out_dir: str) -> Path:
    """Where a job writes the grasps of ``path``: ``out_dir/<relative path>.yaml``.

    The path relative to ``root`` keeps objects with the same name in
    different folders apart; a file outside ``root`` uses its name. ``batch evaluate``
    finds an object's grasp file the same way, in ``--grasps-dir``.
    """
    file = Path(path)
    try:
        relative = file.resolve().relative_to(Path(root).resolve())
    except ValueError:
        relative = Path(file.name)
    if relative == Path():  # ROOT is the file itself
        relative = Path(file.name)
    return Path(out_dir) / relative.with_suffix(".yaml")


def find_object_prim(stage: Any, path: str) -> str:
    """The prim path of a file's object: its default prim, else its only root prim.

    Raises:
        GripperError: a ``defaultPrim`` naming no prim, or no ``defaultPrim`` and not
            exactly one root prim.
    """
    from usdgrip.errors import GripperError

    prim = stage.GetDefaultPrim()
    if not prim and stage.HasDefaultPrim():
        roots = ", ".join(f"<{p.GetPath()}>" for p in stage.GetPseudoRoot().GetChildren())
        raise GripperError(
            f"{path}: defaultPrim {stage.GetRootLayer().defaultPrim!r} names no prim "
            f"(root prims: {roots or 'none'}); fix defaultPrim in the layer metadata"
        )
    if not prim:
        roots = list(stage.GetPseudoRoot().GetChildren())
        if len(roots) != 1:
            names = ", ".join(str(p.GetPath()) for p in roots) or "none"
            raise GripperError(
                f"{path}: no defaultPrim to plan for (root prims: {names}); "
                "author defaultPrim in the layer metadata"
            )
        prim = roots[0]
    return str(prim.GetPath())


def build_job_options(
    physics: Mapping[str, Any],
    *,
    seed: int,
    table: bool,
    scene: str | None,
    support: str | None,
) -> Any:
    """The :class:`~usdgrip.grasping.options.EvaluationOptions` of a job's physics params.

    Raises:
        ValueError: a field that is not one of :data:`PHYSICS_FIELDS`, or a refused value.
    """
    from usdgrip.grasping.options import EvaluationOptions

    unknown = sorted(set(physics) - set(PHYSICS_FIELDS))
    if unknown:
        raise ValueError(f"physics {unknown}: expected only {', '.join(PHYSICS_FIELDS)}")
    return EvaluationOptions(
        **physics,
        seed=seed,
        table=table,
        scene=scene if support else None,  # the physics simulates only the support
        support=support,
        jobs=1,
    )


def summarize_physics(result: Any) -> dict[str, Any]:
    """The physics part of a row's ``output``, from an evaluated result (entries in file order).

    Returns:
        ``held`` (candidates with a success rate > 0), ``success_rate`` (held trials / all
        trials), ``first_success_rate`` (the first entry's: the best after ranking, the
        file's first without; None with no candidate), ``trials`` and ``outcomes`` (trials
        per outcome).
    """
    from usdgrip.grasping.physics import summarize_evaluations

    evaluated = [c.physics for c in result.grasps.values() if c.physics is not None]
    summary = summarize_evaluations(evaluated)
    first = next(iter(result.grasps.values()), None)
    return {
        "held": summary["held_candidates"],
        "success_rate": round(summary["success_rate"], 6),
        "first_success_rate": (
            round(first.physics.success_rate, 6)
            if first is not None and first.physics is not None
            else None
        ),
        "trials": summary["trials"],
        "outcomes": dict(summary["outcomes"]),
    }


def plan_file(
    path: str,
    grippers: Sequence[Sequence[str]],
    out_dir: str,
    root: str | None = None,
    max_candidates: int = 100,
    seed: int = 0,
    methods: str | None = None,
    table: bool = False,
    scene: str | None = None,
    support: str | None = None,
    evaluate: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Job: plan grasps for the object of one file (and simulate them) and write its grasp file.

    The object is :func:`find_object_prim`'s. The file is written atomically by
    :func:`usdgrip.grasping.isaac_yaml.write_isaac_grasp` to :func:`compute_output_path`.

    Args:
        path: USD file of the object.
        grippers: ``[gripper file, site prim path]`` pairs, in request order.
        out_dir: folder for the Isaac-Grasp files (created as needed).
        root: library root the output layout mirrors (default: the file's folder).
        max_candidates: candidates per gripper.
        seed: planning seed (and the physics seed).
        methods: backends (``"antipodal,slots"``; None: all that apply).
        table: the object rests on a plane just under its lowest point (``usdgrip plan
            --table``): grasps whose hand cuts it are dropped.
        scene: USD file of obstacles around the object (``--scene``).
        support: the scene prim the object rests on (``--support``).
        evaluate: physics options (:data:`PHYSICS_FIELDS`) to grasp-and-lift every
            candidate with, as ``usdgrip plan --evaluate``: candidates are then ranked by
            measured success rate; None: plan only.

    Returns:
        ``status`` ``ok`` (grasps written; with ``evaluate``: at least one held) or
        ``findings`` (none survived or none held; the file is still written with the
        reasons), ``counts`` (``warning``: the result's warnings) and ``output`` (``file``
        relative to ``out_dir``, ``object``, ``grasps``, ``warnings``; with ``evaluate``
        also :func:`summarize_physics`'s fields).

    Raises:
        ValueError: the output path is the object file or a gripper file; a bad physics
            option.
        GripperError: unreadable file, no default prim, a ``defaultPrim`` naming
            no prim, or what :func:`usdgrip.plan_grasps` or
            :func:`usdgrip.evaluate_grasps` raises for bad input.
    """
    from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
    from usdgrip.fileio import check_output_path
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps
    from usdgrip.grasping.inputs import read_grasp_inputs
    from usdgrip.grasping.isaac_yaml import write_isaac_grasp
    from usdgrip.grasping.options import PlanningOptions
    from usdgrip.grasping.planner import plan_grasps
    from usdgrip.usd.stage import open_stage

    target = compute_output_path(path, root or str(Path(path).parent), out_dir)
    check_output_path(target, [path, *(file for file, _ in grippers), *filter(None, [scene])])
    options = None
    if evaluate is not None:  # checked before anything is read
        options = build_job_options(evaluate, seed=seed, table=table, scene=scene, support=support)
    stage = open_stage(path)  # read once: planning and physics read this stage
    prim_path = find_object_prim(stage, path)
    request = GraspPlanningRequest(
        object=GraspObject(geometry=GeometryRef(asset_path=str(path), prim_path=prim_path)),
        grippers=tuple(GripperRef(asset_path=file, prim_path=site) for file, site in grippers),
        max_candidates_per_gripper=max_candidates,
        seed=seed,
    )
    read = read_grasp_inputs(
        request.object.geometry,
        request.grippers,
        table=table,
        scene=scene,
        support=support,
        stages={str(path): stage},
    )
    planning = PlanningOptions(methods=methods, table=table, support=support)
    result = plan_grasps(request, scene=scene, options=planning, inputs=read)
    if options is not None and result.grasps:
        result = evaluate_grasps(result, options=options, inputs=read, rank=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_isaac_grasp(result, target)
    warnings = list(result.metadata.warnings)
    output: dict[str, Any] = {
        "file": target.relative_to(out_dir).as_posix(),
        "object": prim_path,
        "grasps": len(result.grasps),
    }
    ok = bool(result.grasps)
    if options is not None:
        output.update(summarize_physics(result))
        ok = output["held"] > 0
    output["warnings"] = warnings
    return {
        "status": "ok" if ok else "findings",
        "counts": {"warning": len(warnings)} if warnings else {},
        "output": output,
    }


def find_grasp_file(path: str, root: str, grasps_dir: str) -> Path:
    """The grasp file ``batch evaluate`` reads for an object: ``grasps_dir/<relative>.yaml``."""
    return compute_output_path(path, root, grasps_dir)


def evaluate_inputs(path: str, *, root: str, grasps_dir: str, **_: Any) -> dict[str, Path]:
    """The per-file inputs of :func:`evaluate_file` besides the object: ``{"grasps": FILE}``.

    The batch layer records their sha256 in each row (``inputs``) and ``--resume`` runs a
    file again when one changed (:data:`usdgrip.batch.jobs.JOB_INPUTS`).
    """
    return {"grasps": find_grasp_file(path, root, grasps_dir)}


def hash_input(path: str | os.PathLike[str]) -> str | None:
    """sha256 (hex) of a regular file; None when missing or not a regular file (never blocks)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        digest = hashlib.sha256()
        with open(path, "rb") as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None


def read_grasps_for(grasp_file: Path, shown: str, object_file: str) -> Any:
    """The grasps of an object's grasp file; a missing, special or hostile file is one line.

    Raises:
        GripperError: no such file (naming where it was looked for), a folder, a named
            pipe, a device or socket (refused before opening: a pipe would block the
            worker), or what :func:`~usdgrip.grasping.isaac_yaml.read_isaac_grasp` refuses.
    """
    from usdgrip.errors import GripperError
    from usdgrip.fileio import describe_file_kind
    from usdgrip.grasping.isaac_yaml import read_isaac_grasp

    try:
        mode = os.stat(grasp_file).st_mode
    except FileNotFoundError:
        why = "broken symbolic link" if grasp_file.is_symlink() else "no such file"
        raise GripperError(
            f"no grasp file for {Path(object_file).name}: {shown}: {why} (batch evaluate "
            "reads --grasps-dir/<path relative to ROOT without its suffix>.yaml); plan it "
            "first (usdgrip batch plan --out-dir DIR) or narrow --glob"
        ) from None
    except OSError as exc:
        raise GripperError(f"{shown}: cannot be examined ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise GripperError(f"{shown}: is a folder, not a grasp file; remove or rename it")
    if not stat.S_ISREG(mode):
        kind = describe_file_kind(mode) or "not a regular file"
        raise GripperError(f"{shown}: is {kind}, not a regular grasp file; not read")
    return read_isaac_grasp(grasp_file)


def evaluate_file(
    path: str,
    gripper: Sequence[str],
    grasps_dir: str,
    out_dir: str,
    root: str,
    seed: int = 0,
    table: bool = False,
    scene: str | None = None,
    support: str | None = None,
    physics: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Job: grasp-and-lift the grasps of one object file (``usdgrip evaluate --grasps``).

    The object is :func:`find_object_prim`'s; its grasps are :func:`find_grasp_file`'s
    (any writer's Isaac-Grasp file); the evaluated file goes to
    ``out_dir/<relative path>.yaml`` (atomically), entries in the file's order.

    Args:
        path: USD file of the object.
        gripper: ``[gripper file, site prim path]``: the gripper simulated.
        grasps_dir: folder of the grasp files, laid out as ``batch plan --out-dir`` writes.
        out_dir: folder for the evaluated files (not ``grasps_dir``).
        root: the library root both layouts mirror.
        seed: physics seed.
        table: the object rests on a plane just under its lowest point.
        scene: USD file holding the support.
        support: the scene prim the object rests on.
        physics: physics options (:data:`PHYSICS_FIELDS`).

    Returns:
        ``status`` ``ok`` (a candidate held) or ``findings`` (none held, or the file has
        no candidate: it is written unchanged), ``counts`` (``warning``: warnings this
        evaluation added) and ``output``
        (``file`` relative to ``out_dir``, ``grasps_file`` relative to ``grasps_dir``,
        ``object``, ``grasps``, :func:`summarize_physics`'s fields, ``warnings``).

    Raises:
        GripperError: no grasp file (or a folder, a pipe, a hostile file there), an
            unreadable object or gripper, grasps for another object.
        ValueError: the output would replace an input; a bad physics option.
    """
    from usdgrip.contracts import GeometryRef, GripperRef
    from usdgrip.fileio import check_output_path, display_path
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps
    from usdgrip.grasping.isaac_yaml import write_isaac_grasp
    from usdgrip.usd.stage import open_stage

    grasp_file = find_grasp_file(path, root, grasps_dir)
    target = compute_output_path(path, root, out_dir)
    gripper_file, site = gripper
    check_output_path(target, [path, grasp_file, gripper_file, *filter(None, [scene])])
    options = build_job_options(physics or {}, seed=seed, table=table, scene=scene, support=support)
    shown = display_path(grasp_file)
    source = read_grasps_for(grasp_file, shown, path)
    stage = open_stage(path)
    prim_path = find_object_prim(stage, path)
    result = source  # a file without grasps (batch plan found none): nothing to simulate
    if source.grasps:
        result = evaluate_grasps(
            source,
            GeometryRef(asset_path=str(path), prim_path=prim_path),
            GripperRef(asset_path=gripper_file, prim_path=site),
            options=options,
            stages={str(path): stage},
            grasps_name=shown,
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    write_isaac_grasp(result, target)
    known = len(source.metadata.warnings) if source.metadata is not None else 0
    warnings = list(result.metadata.warnings[known:]) if result.metadata is not None else []
    output: dict[str, Any] = {
        "file": target.relative_to(out_dir).as_posix(),
        "grasps_file": grasp_file.relative_to(grasps_dir).as_posix(),
        "object": prim_path,
        "grasps": len(result.grasps),
        **summarize_physics(result),
        "warnings": warnings,
    }
    return {
        "status": "ok" if output["held"] > 0 else "findings",
        "counts": {"warning": len(warnings)} if warnings else {},
        "output": output,
    }
