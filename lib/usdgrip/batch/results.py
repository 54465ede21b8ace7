"""The results file (one JSON line per file) and the run summary.

Rows are appended and flushed as each file completes, so an interrupted run
(Ctrl-C, a killed process, a lost worker) keeps every finished row. Flushed,
not fsynced: the rows survive the process, not a power cut.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from usdgrip.batch.jobs import STATUSES
from usdgrip.fileio import write_text_atomically
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
    """Append rows to a JSON-lines file, one flushed line per row.

    Args:
        path: the results file (its folder is created).
        keep: rows to start the file with (the rows ``--resume`` reuses); the
            file is rewritten with exactly these (atomically) before any
            append, so every file keeps exactly one row.
    """

    def __init__(
        self, path: str | os.PathLike[str], keep: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.path, "".join(format_row(row) for row in keep))
        self._stream: IO[str] = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row and flush it to the operating system."""
        self._stream.write(format_row(row))
        self._stream.flush()

    def close(self) -> None:
        """Close the file."""
        self._stream.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def format_row(row: Mapping[str, Any]) -> str:
    """One row as a JSON line (compact, non-ASCII kept, newline-terminated)."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


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
        ``files_per_s`` (files run now / elapsed), ``executor``, ``jobs``.
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
    }


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
    codes: dict[str, int] = {}
    for issue in row.get("issues") or ():
        if issue.get("severity") in ("failure", "error"):
            codes[str(issue.get("code"))] = codes.get(str(issue.get("code")), 0) + 1
    if codes:
        return ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(codes.items()))
    return ", ".join(f"{n} {severity}" for severity, n in (row.get("counts") or {}).items())
