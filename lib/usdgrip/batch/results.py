"""The results file (one JSON line per file) and the run summary.

Rows are appended and flushed as each file completes, so an interrupted run
(Ctrl-C, a killed process, a lost worker) keeps every finished row, and a row is
replaced only by a newer row of the same file. Flushed, not fsynced: the rows
survive the process, not a power cut.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from usdgrip.batch.jobs import STATUSES
from usdgrip.fileio import is_streamed, name_write_error, open_streamed, write_text_output
from usdgrip.jsontext import load_json

FAILED_STATUSES = ("error", "timeout", "crashed")


def read_results(
    path: str | os.PathLike[str], problems: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Rows of a results file keyed by ``path``; the last row of a path wins.

    A line that is not a JSON object with a ``path`` is skipped: silently when
    it is the torn last line of a killed run (no newline at its end), else
    with a message in ``problems`` naming the file and line (the file that line
    described then has no row, so ``--resume`` runs it again). A missing file
    gives no rows.

    Args:
        path: the results file.
        problems: list that receives one message per skipped corrupt line.
    """
    rows: dict[str, dict[str, Any]] = {}
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return rows
    # Split at "\n" only: rows keep non-ASCII text, where splitlines() would also cut
    # at U+2028 and friends.
    lines = text.removesuffix("\n").split("\n") if text else []
    for number, line in enumerate(lines, start=1):
        try:
            row = load_json(line)  # a line nested too deep is a ValueError, not a RecursionError
            error = "" if isinstance(row, dict) else f"a JSON {type(row).__name__}, not an object"
        except ValueError as exc:
            row, error = None, str(exc)
        if not error:
            if isinstance(row.get("path"), str):
                rows[row["path"]] = row
                continue
            error = 'no "path" string'
        torn = number == len(lines) and not text.endswith("\n")
        if problems is not None and line.strip() and not torn:
            problems.append(
                f"{path} line {number}: not a result row ({error}); "
                "skipped: the file it described runs again"
            )
    return rows


def should_skip(row: Mapping[str, Any] | None, sha256: str | None, retry_failed: bool) -> bool:
    """Whether ``--resume`` may reuse ``row`` for a file whose content hashes to ``sha256``."""
    if row is None or sha256 is None or row.get("sha256") != sha256:
        return False
    if row.get("status") not in STATUSES:
        return False
    return not (retry_failed and row.get("status") in FAILED_STATUSES)


class ResultsWriter:
    """Append rows to a JSON-lines file, one flushed line per row; no row is ever lost.

    The file starts with every row of ``keep`` (atomically rewritten), including the
    rows of files this run does again: a new row is appended after the old one (the
    last row of a path wins), and :meth:`close` compacts the file to one row per path
    (atomically; if that fails, the appended file is left as it is). An interrupted
    run therefore keeps both every earlier row and every finished one.

    A results file that is not a regular file (``-`` for standard output, a named
    pipe, a device) is streamed: rows are written as they come, nothing is rewritten.

    Args:
        path: the results file (its folder is created).
        keep: rows to start the file with (every row ``--resume`` read).
    """

    def __init__(
        self, path: str | os.PathLike[str], keep: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        self.path = path
        self._rows = {row["path"]: dict(row) for row in keep}
        self._streamed = is_streamed(path)
        self._failed = False
        self._closing = contextlib.ExitStack()
        try:
            if self._streamed:
                self._stream: IO[bytes] = self._closing.enter_context(open_streamed(path))
            else:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                self._write_all()
                self._stream = self._closing.enter_context(open(path, "ab"))  # noqa: SIM115
        except OSError as exc:
            raise name_write_error(exc, path) from None
        for row in self._rows.values() if self._streamed else ():
            self._write(row)

    def _write_all(self) -> None:
        text = "".join(format_row(row) for row in self._rows.values())
        write_text_output(self.path, text)

    def _write(self, row: Mapping[str, Any]) -> None:
        try:
            self._stream.write(format_row(row).encode("utf-8"))
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            self._failed = True
            raise name_write_error(exc, self.path) from None

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row and flush it to the operating system."""
        self._write(row)
        self._rows.pop(row["path"], None)  # a row run again moves to the end
        self._rows[row["path"]] = dict(row)

    def close(self) -> None:
        """Close the file, compacted to one row per path (a regular file)."""
        try:
            self._closing.close()
        except OSError as exc:  # a row that could not be written was already reported
            if not self._failed:
                raise name_write_error(exc, self.path) from None
        if not self._streamed:
            with contextlib.suppress(OSError):  # the appended rows are all there already
                self._write_all()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def format_row(row: Mapping[str, Any]) -> str:
    r"""One row as a JSON line (compact, non-ASCII kept, newline-terminated).

    A lone surrogate (a file name byte that is not UTF-8, kept by Python as ``\udcff``)
    becomes a ``\udcff`` JSON escape, so the line is UTF-8 and reads back the same.
    """
    text = json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


# --- summary -------------------------------------------------------------------


def summarize_rows(
    rows: Iterable[Mapping[str, Any]],
    *,
    ran: int,
    elapsed_s: float,
    executor: str,
    jobs: int,
) -> dict[str, Any]:
    """Summary of a run over the rows of every matched file (reused rows included).

    Returns:
        ``files``, ``ok``, ``findings``, ``error``, ``timeout``, ``crashed``,
        ``failed`` (findings) and ``errors`` (error + timeout + crashed),
        ``ran`` and ``resumed`` (files run now vs rows reused), ``by_code``
        (issue count per code), ``by_severity``, ``elapsed_s``,
        ``files_per_s`` (files run now / elapsed), ``executor``, ``jobs``; and
        ``physics`` (:func:`summarize_physics_rows`) when a row has physics.
    """
    rows = list(rows)
    by_status = {status: 0 for status in STATUSES}
    by_code: dict[str, int] = {}
    by_severity: dict[str, int] = {}
    for row in rows:
        by_status[row.get("status", "error")] = by_status.get(row.get("status", "error"), 0) + 1
        for issue in row.get("issues") or ():
            code = str(issue.get("code"))
            by_code[code] = by_code.get(code, 0) + 1
        for severity, count in (row.get("counts") or {}).items():
            by_severity[severity] = by_severity.get(severity, 0) + int(count)
    physics = summarize_physics_rows(rows)
    return {
        "files": len(rows),
        **by_status,
        "failed": by_status["findings"],
        "errors": sum(by_status[status] for status in FAILED_STATUSES),
        "ran": ran,
        "resumed": len(rows) - ran,
        "by_code": dict(sorted(by_code.items())),
        "by_severity": dict(sorted(by_severity.items())),
        "elapsed_s": round(elapsed_s, 3),
        "files_per_s": round(ran / elapsed_s, 2) if ran and elapsed_s > 0 else None,
        "executor": executor,
        "jobs": jobs,
        **({"physics": physics} if physics is not None else {}),
    }


#: Files listed as the worst in the text summary.
WORST_FILES = 5


def summarize_physics_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Totals over the rows with physics (``output.held``: ``batch plan --evaluate``, ``evaluate``).

    Returns:
        None when no row has physics, else ``files`` (rows with physics), ``held`` (files
        where a candidate held), ``none_held``, ``candidates``, ``held_candidates``,
        ``trials``, ``success_rate`` (held trials / trials), ``first_held`` (files whose
        first candidate held), ``outcomes`` (trials per outcome) and ``worst``: the
        :data:`WORST_FILES` files of lowest success rate (then first candidate's rate,
        then path), each ``path``, ``success_rate``, ``first_success_rate``, ``held``,
        ``grasps``.
    """
    evaluated = [
        (row, row["output"])
        for row in rows
        if isinstance(row.get("output"), Mapping) and "held" in row["output"]
    ]
    if not evaluated:
        return None
    trials = sum(int(out.get("trials") or 0) for _, out in evaluated)
    outcomes: dict[str, int] = {}
    for _, out in evaluated:
        for name, count in (out.get("outcomes") or {}).items():
            outcomes[name] = outcomes.get(name, 0) + int(count)
    held_trials = outcomes.get("held", 0)

    def rank(item: tuple[Mapping[str, Any], Mapping[str, Any]]) -> tuple[float, float, str]:
        row, out = item
        return (out["success_rate"], out.get("first_success_rate") or 0.0, row["path"])

    worst = [
        {
            "path": row["path"],
            "success_rate": out["success_rate"],
            "first_success_rate": out.get("first_success_rate"),
            "held": out["held"],
            "grasps": out.get("grasps", 0),
        }
        for row, out in sorted(evaluated, key=rank)[:WORST_FILES]
    ]
    held_files = sum(1 for _, out in evaluated if out["held"] > 0)
    return {
        "files": len(evaluated),
        "held": held_files,
        "none_held": len(evaluated) - held_files,
        "candidates": sum(int(out.get("grasps") or 0) for _, out in evaluated),
        "held_candidates": sum(int(out["held"]) for _, out in evaluated),
        "trials": trials,
        "success_rate": round(held_trials / trials, 6) if trials else 0.0,
        "first_held": sum(1 for _, out in evaluated if (out.get("first_success_rate") or 0) > 0),
        "outcomes": dict(sorted(outcomes.items(), key=lambda kv: -kv[1])),
        "worst": worst,
    }


def format_physics_summary(physics: Mapping[str, Any]) -> list[str]:
    """The physics lines of the text summary: files held/none, totals, the worst files."""
    lines = [
        f"held      {physics['held']:>7}   (files where a candidate held; none held in "
        f"{physics['none_held']}; first candidate held in {physics['first_held']})",
        f"grasps    {physics['held_candidates']:>7}   held of {physics['candidates']} "
        f"candidate(s); success rate {100 * physics['success_rate']:.0f}% of "
        f"{physics['trials']} trial(s)",
    ]
    if physics["outcomes"]:
        lines.append(
            "outcomes  " + ", ".join(f"{name} {n}" for name, n in physics["outcomes"].items())
        )
    worst = physics["worst"]
    if worst:
        width = max(len(item["path"]) for item in worst)
        lines.append("worst files (success rate, first candidate, held of candidates):")
        for item in worst:
            first = item["first_success_rate"]
            lines.append(
                f"  {item['path']:<{width}}  {100 * item['success_rate']:3.0f}%  "
                f"{'   -' if first is None else f'{100 * first:3.0f}%'}  "
                f"{item['held']}/{item['grasps']}"
            )
    return lines


def format_summary(summary: Mapping[str, Any], problems: Iterable[Mapping[str, Any]] = ()) -> str:
    """The human summary table (for stderr).

    Args:
        summary: :func:`summarize_rows` output.
        problems: rows to list by name (findings, error, timeout, crashed), at most 20 shown.
    """
    lines = [
        f"files     {summary['files']:>7}   (ran {summary['ran']}, resumed {summary['resumed']})",
        f"ok        {summary['ok']:>7}",
        f"failed    {summary['failed']:>7}   (files with findings)",
        f"errors    {summary['errors']:>7}   (error {summary['error']}, "
        f"timeout {summary['timeout']}, crashed {summary['crashed']})",
    ]
    if summary.get("physics"):
        lines += format_physics_summary(summary["physics"])
    if summary["by_code"]:
        width = max(len(code) for code in summary["by_code"])
        lines.append("issues by code:")
        lines += [f"  {code:<{width}} {n:>6}" for code, n in summary["by_code"].items()]
    rate = summary["files_per_s"]
    lines.append(
        f"throughput {rate if rate is not None else '-'} files/s "
        f"({summary['ran']} files in {summary['elapsed_s']:.1f} s, "
        f"{summary['executor']} executor, {summary['jobs']} jobs)"
    )
    problems = list(problems)
    if problems:
        lines.append("problems:")
        for row in problems[:20]:
            lines.append(f"  {row['status']:<8} {row['path']}: {_describe(row)}")
        if len(problems) > 20:
            lines.append(f"  ... and {len(problems) - 20} more (see the results file)")
    return "\n".join(lines)


def _describe(row: Mapping[str, Any]) -> str:
    if row.get("error"):
        return str(row["error"])
    output = row.get("output")
    if isinstance(output, Mapping) and "held" in output:
        return f"{output['held']} of {output.get('grasps', 0)} candidate(s) held"
    codes: dict[str, int] = {}
    for issue in row.get("issues") or ():
        if issue.get("severity") in ("failure", "error"):
            codes[str(issue.get("code"))] = codes.get(str(issue.get("code")), 0) + 1
    if codes:
        return ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(codes.items()))
    return ", ".join(f"{n} {severity}" for severity, n in (row.get("counts") or {}).items())
