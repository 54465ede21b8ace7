"""Per-file job functions and the row every batch run writes for each file.

A *job* is a plain function ``job(path: str, **params) -> dict`` that handles
one file and returns a partial row:

- ``status``: ``"ok"`` (no failure or error; warnings allowed), ``"findings"``
  or ``"error"``;
- ``counts``: number of issues per severity (``{"failure": 2, ...}``);
- ``issues`` (validation) or ``output`` (planning), JSON-serialisable;
- optionally ``error``: a one-line message when ``status == "error"``.

A job that raises becomes an ``error`` row; the batch layer adds the file
facts (``path``, ``size``, ``mtime``, ``sha256``) and ``duration_s``. Jobs run
in worker processes, so they are named by an importable *spec* rather than
passed as objects: ``"package.module:function"`` or
``"/path/to/file.py:function"`` (the file must be readable on every worker).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

# The grasping jobs live in their own module; PLAN_JOB keeps its name (and its signature).
from usdgrip.batch.grasp_jobs import (  # noqa: F401
    compute_output_path,
    evaluate_file,
    hash_input,
    plan_file,
)

#: Every status a row can carry. The first three come from jobs, the last two
#: from the executor when the worker process died or overran ``--timeout``.
STATUSES = ("ok", "findings", "error", "timeout", "crashed")
JOB_STATUSES = ("ok", "findings", "error")
VALIDATE_JOB = "usdgrip.batch.jobs:validate_file"
PLAN_JOB = "usdgrip.batch.jobs:plan_file"
GRIPPER_TEST_JOB = "usdgrip.batch.jobs:gripper_test_file"
EVALUATE_JOB = "usdgrip.batch.grasp_jobs:evaluate_file"

Job = Callable[..., Mapping[str, Any]]
#: Modules the shipped jobs import on first call; workers load them at start-up.
JOB_IMPORTS = {
    VALIDATE_JOB: ("usdgrip.rules",),
    PLAN_JOB: ("usdgrip.grasping.planner", "usdgrip.grasping.isaac_yaml", "usdgrip.contracts"),
    GRIPPER_TEST_JOB: ("usdgrip.grasping.gripper_check",),
    EVALUATE_JOB: (
        "usdgrip.grasping.grasp_evaluation",
        "usdgrip.grasping.physics",
        "usdgrip.grasping.isaac_yaml",
    ),
}
#: A job's per-file inputs besides the file itself, as the spec of a function
#: ``inputs(path, **params) -> {name: path}``: each row records their sha256 (``inputs``),
#: and ``--resume`` runs a file again when one of them changed.
JOB_INPUTS = {EVALUATE_JOB: "usdgrip.batch.grasp_jobs:evaluate_inputs"}

_JOB_CACHE: dict[str, Job] = {}


def resolve_job(spec: str) -> Job:
    """Import the job function named by ``spec`` (cached per process).

    Args:
        spec: ``"package.module:function"`` or ``"/path/to/file.py:function"``.

    Raises:
        ValueError: the spec has no ``:``, the module or file cannot be
            imported, or the attribute is missing or not callable.
    """
    cached = _JOB_CACHE.get(spec)
    if cached is not None:
        return cached
    module_name, sep, func_name = spec.rpartition(":")
    if not sep or not module_name or not func_name:
        raise ValueError(
            f"job {spec!r}: expected 'package.module:function' or '/path/file.py:function'"
        )
    try:
        if module_name.endswith(".py"):
            file = Path(module_name)
            name = f"_usdgrip_batch_job_{file.stem}"
            module_spec = importlib.util.spec_from_file_location(name, file)
            if module_spec is None or module_spec.loader is None or not file.is_file():
                raise ImportError(f"no such file {file}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"job {spec!r}: cannot import {module_name}: {exc}") from exc
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ValueError(f"job {spec!r}: {module_name} has no function {func_name!r}")
    _JOB_CACHE[spec] = func
    return func


def preload_job(spec: str) -> None:
    """Import a job and the modules it uses, ignoring failures (each file reports its own)."""
    try:
        resolve_job(spec)
        for module in JOB_IMPORTS.get(spec, ()):
            importlib.import_module(module)
    except (ImportError, ValueError):
        pass


def compute_file_facts(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Size (bytes), mtime (POSIX seconds) and sha256 (hex) of a file.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        stat = os.fstat(stream.fileno())
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return {"size": stat.st_size, "mtime": stat.st_mtime, "sha256": digest.hexdigest()}


def compute_job_signature(
    job: str, params: Mapping[str, Any], inputs: Iterable[str | os.PathLike[str]] = ()
) -> str:
    """Short hash of what a batch run computes (its job definition).

    It covers the job spec, its params, and the content of the other files the
    job reads (such as gripper assets). Every row of the run carries it as
    ``job``; ``--resume`` reuses only rows with the same signature. An input
    that cannot be read hashes as missing.
    """
    contents: dict[str, str | None] = {}
    for path in inputs:
        try:
            contents[os.path.realpath(path)] = compute_file_facts(path)["sha256"]
        except OSError:
            contents[os.path.realpath(path)] = None
    text = json.dumps(
        {"job": job, "params": params, "inputs": contents}, sort_keys=True, default=repr
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def compute_input_hashes(
    job: str, path: str | os.PathLike[str], params: Mapping[str, Any]
) -> dict[str, str | None] | None:
    """sha256 of each per-file input of ``job`` (:data:`JOB_INPUTS`); None for other jobs.

    A missing input, or one that is not a regular file, hashes as None (nothing is
    opened that could block). ``inputs`` of each row; ``--resume`` compares them.

    Raises:
        ValueError: the inputs function cannot be imported.
    """
    spec = JOB_INPUTS.get(job)
    if spec is None:
        return None
    files = resolve_job(spec)(str(path), **dict(params))
    return {name: hash_input(file) for name, file in sorted(files.items())}


def make_row(
    path: str,
    facts: Mapping[str, Any] | None,
    result: Mapping[str, Any],
    duration_s: float,
    inputs: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """Assemble one result row in the documented key order.

    Args:
        path: the file's key (relative to the batch root).
        facts: :func:`compute_file_facts` output, or None when the file was unreadable.
        result: the job's partial row (``status``, ``counts``, ``issues``/``output``, ``error``).
        duration_s: wall time spent on the file, seconds.
        inputs: :func:`compute_input_hashes` output (the row's ``inputs``), if any.
    """
    facts = facts or {}
    row: dict[str, Any] = {
        "path": path,
        "size": facts.get("size"),
        "mtime": facts.get("mtime"),
        "sha256": facts.get("sha256"),
        "status": result.get("status", "error"),
        "duration_s": round(float(duration_s), 6),
        "counts": dict(result.get("counts") or {}),
    }
    for key, value in result.items():
        if key not in row and key not in ("error", "inputs"):
            row[key] = value
    if inputs is not None:
        row["inputs"] = dict(inputs)
    row["error"] = result.get("error")
    return row


def run_job(path: str, job: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run one job on one file in this process and return its complete row.

    Never raises for a bad file or a failing job: an unreadable file, a job
    that raises, or a job that returns something malformed becomes a row with
    ``status == "error"`` and a one-line ``error``. ``path`` in the row is the
    path as given; the batch layer replaces it with the key relative to ROOT.
    """
    start = time.perf_counter()
    facts = inputs = None
    try:
        facts = compute_file_facts(path)
        # hashed before the job reads them, as the file: a change meanwhile reruns it
        inputs = compute_input_hashes(job, path, params or {})
        result = dict(resolve_job(job)(path, **dict(params or {})))
        status = result.get("status")
        if status not in JOB_STATUSES:
            result = {
                "status": "error",
                "error": f"job {job} returned status {status!r}; expected one of "
                f"{', '.join(JOB_STATUSES)}",
            }
    except Exception as exc:  # every failure of one file becomes that file's row
        result = {"status": "error", "error": _one_line(exc)}
    row = make_row(path, facts, result, time.perf_counter() - start, inputs)
    try:
        json.dumps(row)  # the results file takes JSON only
    except (TypeError, ValueError) as exc:
        result = {"status": "error", "error": f"job {job} returned a row that is not JSON: {exc}"}
        row = make_row(path, facts, result, time.perf_counter() - start, inputs)
    return row


def _text(value: Any) -> str:
    # Enum members (severity) serialise as their value, not "Severity.FAILURE".
    return str(getattr(value, "value", value))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text}"


# --- the shipped jobs --------------------------------------------------------


def compute_counts(severities: Sequence[str]) -> dict[str, int]:
    """Number of issues per severity, keys sorted."""
    counts: dict[str, int] = {}
    for severity in severities:
        counts[severity] = counts.get(severity, 0) + 1
    return dict(sorted(counts.items()))


def validate_file(
    path: str,
    rules: Sequence[str] | None = None,
    params: Mapping[str, Any] | None = None,
    locations: bool = False,
    variants: str = "all",
    max_variant_selections: int | None = None,
) -> dict[str, Any]:
    """Job: run :func:`usdgrip.validate` on one file.

    Args:
        path: USD file.
        rules: rule codes to run (None: the default rule set).
        params: rule parameters, as ``usdgrip.validate`` takes them.
        locations: add each issue's ``location`` (the layer file of the prim's spec and
            its line, :func:`usdgrip.usd.spec_lines.locate_issues`), for SARIF, JUnit and
            annotations.
        variants: ``usdgrip.validate``'s ``variants`` (``none``, ``selected``, ``all``).
        max_variant_selections: its selection limit (None: the default).

    Returns:
        ``status`` (``ok`` when no failure or error issue, else ``findings``),
        ``counts`` per severity and ``issues`` (``code``, ``rule``,
        ``severity``, ``prim``, ``message``, ``fixable`` each).

    Raises:
        GripperError: the file cannot be opened as a stage.
    """
    from usdgrip.rules import validate

    limit = (
        {} if max_variant_selections is None else {"max_variant_selections": max_variant_selections}
    )
    report = validate(
        path, rules=list(rules) if rules else None, params=params, variants=variants, **limit
    )
    issues = []
    for issue in report.issues:
        found = {
            "code": issue.code,
            "rule": issue.rule,
            "severity": _text(issue.severity),
            "prim": str(issue.prim),
            "message": issue.message,
            "fixable": issue.fixable,
        }
        if issue.variant:
            found["variant"] = issue.variant
        issues.append(found)
    if locations:
        from usdgrip.usd.spec_lines import locate_issues

        locate_issues(report.stage, issues)
    counts = compute_counts([issue["severity"] for issue in issues])
    result = {"status": "ok" if report.ok else "findings", "counts": counts, "issues": issues}
    if report.warnings:
        result["warnings"] = list(report.warnings)
    return result


def gripper_test_file(path: str, trials: int = 1, seed: int = 0) -> dict[str, Any]:
    """Job: ``usdgrip evaluate --gripper-test`` on every gripper site of one file.

    Returns:
        ``status`` ``ok`` (every site passed or was skipped; also a file with no site),
        ``findings`` (some site failed); ``counts`` (``failure``: sites that failed,
        ``warning``: sites skipped); ``output`` (``sites``: per site ``site``, ``passed``,
        ``skipped`` and each object's ``passed`` and nominal ``outcome``).

    Raises:
        GripperError: unreadable file, or a site FET028 refuses (no max opening, no
            rigid-body ancestor).
    """
    from usdgrip.contracts import GripperRef
    from usdgrip.grasping.gripper_check import check_gripper
    from usdgrip.usd.discovery import iter_site_prims
    from usdgrip.usd.stage import open_stage

    sites = [str(prim.GetPath()) for prim, _ in iter_site_prims(open_stage(path))]
    rows = []
    for site in sites:
        report = check_gripper(
            GripperRef(asset_path=str(path), prim_path=site), trials=trials, seed=seed
        )
        rows.append(
            {
                "site": site,
                "passed": report["passed"],
                "skipped": report["skipped"],
                "objects": {
                    shape: {"passed": entry["passed"], "outcome": entry["results"][0]["outcome"]}
                    for shape, entry in report["objects"].items()
                },
            }
        )
    failed = sum(1 for r in rows if not r["passed"] and not r["skipped"])
    skipped = sum(1 for r in rows if r["skipped"])
    counts = {k: v for k, v in (("failure", failed), ("warning", skipped)) if v}
    return {
        "status": "findings" if failed else "ok",
        "counts": counts,
        "output": {"sites": rows},
    }
