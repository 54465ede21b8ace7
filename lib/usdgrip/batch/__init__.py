"""Batch runs over asset libraries: resumable, one sandboxed worker process per file at a time.

:func:`run_batch` finds the files under a root, skips those a previous run
already handled (``resume``), runs a per-file *job* (see
:mod:`usdgrip.batch.jobs`) through an executor (:mod:`usdgrip.batch.executors`:
a local process pool or a Dask cluster), appends one JSON row per file to the
results file as each completes (:mod:`usdgrip.batch.results`), and returns
the rows with a summary. ``usdgrip batch validate|plan|evaluate|gripper-test`` is its CLI.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from usdgrip.batch.executors import DaskExecutor, LocalExecutor, Task, make_executor
from usdgrip.batch.jobs import (
    EVALUATE_JOB,
    PLAN_JOB,
    STATUSES,
    VALIDATE_JOB,
    compute_file_facts,
    compute_input_hashes,
    compute_job_signature,
    make_row,
    resolve_job,
    run_job,
)
from usdgrip.batch.results import ResultsWriter, read_results, should_skip, summarize_rows
from usdgrip.fileio import (
    check_output_path,
    check_utf8_name,
    describe_file_kind,
    display_path,
    is_streamed,
)
from usdgrip.usd.names import USD_SUFFIXES

DEFAULT_GLOB = "**/*.usd*"

__all__ = [
    "DEFAULT_GLOB",
    "EVALUATE_JOB",
    "PLAN_JOB",
    "STATUSES",
    "VALIDATE_JOB",
    "BatchResult",
    "DaskExecutor",
    "LocalExecutor",
    "Task",
    "check_batch_outputs",
    "describe_unusable_file",
    "find_batch_files",
    "make_executor",
    "resolve_job",
    "run_batch",
    "run_job",
]


@dataclass(frozen=True)
class BatchResult:
    """What a batch run produced.

    Attributes:
        rows: one row per matched file: reused rows first, then the rows of
            this run in completion order.
        summary: :func:`usdgrip.batch.results.summarize_rows` output.
        warnings: what the run skipped or re-ran and why (corrupt lines of the results
            file, rows of another job definition, outputs that are gone).
    """

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    warnings: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 when every file is ``ok``, else 1 (findings, errors, timeouts, crashes)."""
        return 0 if self.summary["ok"] == self.summary["files"] else 1


def find_batch_files(
    root: str | Path, pattern: str = DEFAULT_GLOB, exclude: Iterable[str | Path] = ()
) -> list[tuple[str, Path]]:
    r"""Files under ``root`` matching ``pattern``, sorted, as ``(key, absolute path)``.

    ``key`` is the path relative to ``root`` with ``/`` separators (the
    ``path`` of each result row), so results files move with the library; a
    name byte that is not UTF-8 is shown as a ``\xff`` escape in it.
    A ``root`` that is a file is its own single match. Files in ``exclude``
    (such as the gripper assets of a planning run) are left out, and so are
    matching folders. A match that is not a readable file (a broken symbolic
    link, a symbolic link loop, a named pipe) is kept, under its own path:
    :func:`describe_unusable_file` says why, and :func:`run_batch` gives it an
    ``error`` row.

    Raises:
        ValueError: ``root`` does not exist, the pattern is invalid or leaves
            ``root`` (a ``..`` part), or nothing matches.
    """
    root = Path(root)
    if not root.exists():
        raise ValueError(f"{root}: no such file or directory")
    if not root.is_dir():
        return [(root.name, _absolute(root))]
    if not pattern or Path(pattern).is_absolute():
        raise ValueError(
            f"--glob {pattern!r}: expected a pattern relative to ROOT, e.g. '**/*.usd*'"
        )
    if ".." in Path(pattern).parts:
        raise ValueError(
            f"--glob {pattern!r}: leaves ROOT through '..'; expected a pattern inside ROOT "
            "(give the outer folder as ROOT instead)"
        )
    skip = {os.path.realpath(path) for path in exclude}
    try:
        matches = sorted(
            path
            for path in root.glob(pattern)
            if not path.is_dir() and os.path.realpath(path) not in skip
        )
    except (ValueError, NotImplementedError) as exc:
        raise ValueError(f"--glob {pattern!r}: {exc}") from exc
    if not matches:
        raise ValueError(f"{root}: no file matches --glob {pattern!r}")
    return [(display_path(path.relative_to(root).as_posix()), _absolute(path)) for path in matches]


def _absolute(path: Path) -> Path:
    """The resolved path of a file; a link that leads to no file keeps its own path."""
    return Path(os.path.realpath(path)) if path.is_file() else path.absolute()


def describe_unusable_file(path: str | Path) -> str | None:
    r"""Why a matched ``path`` cannot be run (None for a file or a link to one).

    A name that is not UTF-8 (USD opens only UTF-8 paths), a broken symbolic
    link, a symbolic link loop, a path that cannot be examined, or something
    other than a regular file (a named pipe, which would block the worker that
    opens it; a socket; a device). Names are shown with ``\xff`` escapes.
    """
    path = Path(path)
    try:
        check_utf8_name(path)
    except ValueError as exc:
        return str(exc)
    shown = display_path(path)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return (
                f"{shown}: symbolic link loop (it points to {_link(path)!r}, and following "
                "the links never reaches a file); fix or remove the link"
            )
        if path.is_symlink() and exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return (
                f"{shown}: broken symbolic link (it points to {_link(path)!r}, which does "
                "not exist); fix or remove the link"
            )
        return f"{shown}: cannot be examined ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    kind = describe_file_kind(mode) or "not a file"
    return f"{shown}: is {kind}, not a regular file; narrow --glob or remove it"


def _link(path: Path) -> str:
    return display_path(os.readlink(path))


def check_batch_outputs(
    inputs: Iterable[str | Path],
    out: str | Path | None = None,
    outputs: Iterable[str | Path] = (),
) -> None:
    """Refuse a run whose results file or per-file outputs would replace a file it reads.

    Args:
        inputs: every file the run reads (the matched files, gripper assets, ...).
        out: the results file.
        outputs: the file the job writes for each of the first inputs, in order
            (such as ``batch plan``'s Isaac-Grasp files).

    Raises:
        ValueError: an output is one of ``inputs`` (or ``out`` is also a job
            output), naming both; two inputs would write the same output.
    """
    inputs = [Path(path) for path in inputs]
    by_real = {os.path.realpath(path): path for path in inputs}
    if out is not None:
        check_output_path(out, inputs)
        if Path(out).suffix.lower() in USD_SUFFIXES:  # e.g. an asset the matched files reference
            raise ValueError(
                f"{out}: the results file is JSON lines, and this name is a USD file's; "
                "choose a .jsonl path"
            )
    written: dict[str, Path] = {}
    for source, output in zip(inputs, outputs, strict=False):
        real = os.path.realpath(output)
        if real in by_real:
            check_output_path(output, [by_real[real]])  # raises, naming both
        if real in written:
            raise ValueError(
                f"{output}: both {written[real]} and {source} would be written there; "
                "narrow --glob so that one of them is left out"
            )
        written[real] = source
        if out is not None:
            check_output_path(out, [output])


def run_batch(
    root: str | Path,
    job: str = VALIDATE_JOB,
    *,
    params: Mapping[str, Any] | None = None,
    glob: str = DEFAULT_GLOB,
    executor: str | LocalExecutor | DaskExecutor = "local",
    jobs: int = 1,
    timeout: float | None = None,
    scheduler: str | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    exclude: Iterable[str | Path] = (),
    output_of: Callable[[Path], Path] | None = None,
) -> BatchResult:
    """Run ``job`` on every file under ``root`` and collect one row per file.

    Args:
        root: folder of the library (or one file).
        job: job spec, ``"module:function"`` or ``"/path/file.py:function"``
            (default: validation); see :mod:`usdgrip.batch.jobs`.
        params: keyword arguments for the job (JSON-serialisable).
        glob: pattern relative to ``root``.
        executor: ``"local"``, ``"dask"``, or an executor object (kept open
            afterwards, so one cluster can serve several runs).
        jobs: worker processes (local pool, or the Dask LocalCluster).
        timeout: seconds per file; a worker past it is killed (``timeout`` row).
        scheduler: Dask scheduler address (with ``executor="dask"``).
        out: results file (JSON lines); rows are appended as files complete.
        resume: reuse the rows already in ``out`` whose ``sha256`` matches the
            file and whose ``job`` signature matches this run (error, timeout and
            crashed rows too, unless ``retry_failed``); a row whose output file
            (``output_of``) is gone, or whose per-file inputs (``inputs``,
            :data:`usdgrip.batch.jobs.JOB_INPUTS`) hash differently now, runs again.
        retry_failed: with ``resume``, run failed files again.
        on_start: called with the number of files to run, once the executor
            is ready and before the first file.
        on_row: called with each new row as it completes.
        exclude: the other files the job reads, left out of the matches
            (such as gripper assets): neither ``out`` nor a job output may
            replace them, and their content is part of the ``job`` signature.
        output_of: the file the job writes for a matched file, if any, so that
            no output replaces an input (see :func:`check_batch_outputs`).

    Returns:
        The rows, summary and warnings; interrupted runs keep their finished rows
        in ``out``. Every row this run writes carries ``job``
        (:func:`usdgrip.batch.jobs.compute_job_signature`); a matched path that is
        not a readable file gets an ``error`` row (:func:`describe_unusable_file`).

    Raises:
        ValueError: bad root, pattern, executor options, ``resume`` without
            ``out``, an output that would replace an input, or an unreachable
            scheduler.
    """
    if (resume or retry_failed) and out is None:
        raise ValueError("--resume and --retry-failed need --out FILE (the results to resume)")
    if retry_failed and not resume:
        raise ValueError("--retry-failed only makes sense with --resume")
    if resume and is_streamed(out):
        raise ValueError(
            f"--out {display_path(out)}: --resume reads the results file back, and this is "
            "a stream (standard output, a pipe or a device); give a regular file"
        )
    exclude = list(exclude)
    files = find_batch_files(root, glob, exclude)
    unusable = {key: problem for key, path in files if (problem := describe_unusable_file(path))}
    files = [(key, path) for key, path in files if key not in unusable]
    check_batch_outputs(
        [*(path for _, path in files), *exclude],
        out,
        [output_of(path) for _, path in files] if output_of is not None else (),
    )
    owned = isinstance(executor, str)
    runner = make_executor(executor, jobs, timeout, scheduler) if owned else executor
    signature = compute_job_signature(job, params or {}, exclude)
    warnings: list[str] = []
    previous = read_results(out, warnings) if resume and out is not None else {}
    reused: list[dict[str, Any]] = []
    tasks: list[Task] = []
    other_job = output_gone = inputs_changed = 0
    for key, path in files:
        row = previous.get(key)
        if row is not None and row.get("job") != signature:
            other_job += 1
            row = None
        sha256 = None
        if row is not None:
            try:
                sha256 = compute_file_facts(path)["sha256"]
            except OSError:
                sha256 = None
        if not should_skip(row, sha256, retry_failed):
            tasks.append(Task(key, str(path), job, dict(params or {})))
        elif _output_is_gone(row, path, output_of):
            output_gone += 1
            tasks.append(Task(key, str(path), job, dict(params or {})))
        elif _inputs_changed(row, job, path, params or {}):
            inputs_changed += 1
            tasks.append(Task(key, str(path), job, dict(params or {})))
        else:
            reused.append(row)
    if other_job:
        warnings.append(
            f"{out}: {other_job} row(s) from a different job definition re-run (another action, "
            "--rule, gripper, gripper file content, option or --out-dir, or written by a "
            "usdgrip that did not record it)"
        )
    if output_gone:
        warnings.append(f"{out}: {output_gone} row(s) whose output file is gone re-run")
    if inputs_changed:
        warnings.append(
            f"{out}: {inputs_changed} row(s) whose per-file input changed re-run (a grasp "
            "file of --grasps-dir changed, appeared or went)"
        )
    if owned:  # no more workers than files
        runner.jobs = min(runner.jobs, max(1, len(tasks)))
    rows: list[dict[str, Any]] = []
    writer = None
    try:
        if tasks:
            runner.start()  # cluster start-up is not part of the throughput
        if on_start is not None:
            on_start(len(tasks) + len(unusable))
        start = time.perf_counter()
        if out is not None:  # every row read stays until a new row of its file replaces it
            writer = ResultsWriter(out, keep=previous.values())
        unusable_rows = (
            make_row(key, None, {"status": "error", "error": problem}, 0.0)
            for key, problem in unusable.items()
        )
        for row in itertools.chain(unusable_rows, runner.run(tasks) if tasks else ()):
            row["job"] = signature
            if writer is not None:
                writer.append(row)
            rows.append(row)
            if on_row is not None:
                on_row(row)
    finally:
        if writer is not None:
            writer.close()
        if owned:
            runner.close()
    elapsed = time.perf_counter() - start
    summary = summarize_rows(
        [*reused, *rows],
        ran=len(rows),
        elapsed_s=elapsed,
        executor=runner.name,
        jobs=runner.jobs,
    )
    return BatchResult([*reused, *rows], summary, tuple(warnings))


def _output_is_gone(
    row: Mapping[str, Any], path: Path, output_of: Callable[[Path], Path] | None
) -> bool:
    """Whether a reusable ``ok`` or ``findings`` row lost the output file its job wrote."""
    if output_of is None or row.get("status") not in ("ok", "findings"):
        return False
    return not output_of(path).is_file()


def _inputs_changed(
    row: Mapping[str, Any], job: str, path: Path, params: Mapping[str, Any]
) -> bool:
    """Whether a per-file input of the job (``JOB_INPUTS``) hashes differently from the row's."""
    try:
        current = compute_input_hashes(job, path, params)
    except ValueError:
        return False
    return current is not None and row.get("inputs") != current
