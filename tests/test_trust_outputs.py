"""Issue 13, data safety: outputs that are not regular files, inputs changed underneath,
read-only files, ownership, comments, a full disk, batch rows under non-UTF-8 names.

Device tests use private device nodes made with ``mknod`` in ``tmp_path`` (the same
devices as ``/dev/null`` and ``/dev/full``), so a regression cannot replace the
system's own nodes; they are skipped when ``mknod`` is not allowed (not root).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

import pytest

from usdgrip.batch import LocalExecutor, run_batch
from usdgrip.batch.jobs import run_job
from usdgrip.batch.results import read_results
from usdgrip.cli import main
from usdgrip.fileio import FileChangedError, FileSnapshot, find_usda_comments, is_streamed

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
GRIPPER = str(EXAMPLES / "gripper.usda")
TOTE = str(EXAMPLES / "tote.usda")
MUG = str(EXAMPLES / "mug.usda")
USDGRIP = [sys.executable, "-m", "usdgrip"]
PLAN = [
    *("plan", MUG, "--object", "/Mug", "--gripper", f"{GRIPPER}:/Gripper/tcp"),
    *("-q", "--max-candidates", "2"),
]
BATCH = ["batch", "validate", "-j", "1", "-q"]

LEGACY = """#usda 1.0
# Copyright 2026 Example Robotics. All rights reserved.
# SPDX-License-Identifier: Apache-2.0

(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "tcp" (
    doc = "a # inside a string is not a comment"
)
{
    float gripper_maxOpening = 0.085  # measured on the real gripper
    def BasisCurves "forward_axis"
    {
        int[] curveVertexCounts = [2]
        point3f[] points = [(0,0,0),(0,0,0.05)]
        uniform token type = "linear"
    }
}
"""


def write_legacy(folder: Path, name: str = "legacy.usda") -> Path:
    path = folder / name
    path.write_text(LEGACY)
    return path


def make_device(folder: Path, name: str, minor: int) -> Path:
    """A character device node with major 1 (``/dev/null`` is minor 3, ``/dev/full`` 7)."""
    path = folder / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("mknod needs root")
    return path


def commands(folder: Path, out: str) -> dict[str, list[str]]:
    """Every command that writes a file, writing ``out``."""
    library = folder / "library"
    library.mkdir(exist_ok=True)
    shutil.copy(GRIPPER, library / "gripper.usda")
    legacy = write_legacy(folder)
    return {
        "validate": ["validate", GRIPPER, "--output", out],
        "sample": ["sample", TOTE, "--prim", "/Tote", "-o", out],
        "plan": [*PLAN, "-o", out],
        "render": ["render", GRIPPER, "--size", "2x2", "--dpi", "20", "-o", out],
        "migrate": ["migrate", str(legacy), "-o", out],
        "batch": ["batch", "validate", str(library), "-j", "1", "-q", "--out", out],
    }


COMMANDS = ["validate", "sample", "plan", "render", "migrate", "batch"]


# --- 1. outputs that are not regular files ---------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_device_output_is_written_in_place_and_stays_a_device(tmp_path, capsys, command):
    null = make_device(tmp_path, "null", 3)
    code = main(commands(tmp_path, str(null))[command])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert stat.S_ISCHR(os.stat(null).st_mode) and os.stat(null).st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_device_is_one_line_no_space_left_and_stays_a_device(tmp_path, capsys, command):
    full = make_device(tmp_path, "full", 7)
    code = main(commands(tmp_path, str(full))[command])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"usdgrip {command}: {full}: no space left")
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_the_system_dev_null_and_dev_full_stay_devices(capsys):
    for device in ("/dev/null", "/dev/full"):
        if not stat.S_ISCHR(os.stat(device).st_mode):
            pytest.skip(f"{device} is not a device here")
    assert main(["validate", GRIPPER, "--output", "/dev/null"]) == 0
    assert main(["validate", GRIPPER, "--output", "/dev/full"]) == 2
    assert "/dev/full: no space left on device" in capsys.readouterr().err
    assert all(stat.S_ISCHR(os.stat(d).st_mode) for d in ("/dev/null", "/dev/full"))


@contextlib.contextmanager
def fifo_reader(path: Path):
    """A named pipe at ``path`` and a thread reading everything written into it."""
    os.mkfifo(path)
    received: dict[str, bytes] = {}

    def read() -> None:
        with open(path, "rb") as stream:
            received["data"] = stream.read()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        with contextlib.suppress(OSError):  # a reader still waiting: let it see EOF
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_named_pipe_output_reaches_its_reader_and_stays_a_pipe(tmp_path, capsys, command):
    pipe = tmp_path / "pipe"
    argv = commands(tmp_path, str(pipe))[command]
    with fifo_reader(pipe) as received:
        code = main(argv)
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    data = received["data"]
    expected_start = {
        "validate": f"{GRIPPER}: ok".encode(),
        "sample": b'{"',
        "plan": b"# ",
        "render": b"\x89PNG",
        "migrate": b"#usda 1.0\n# Copyright 2026",
        "batch": b'{"path":"gripper.usda"',
    }[command]
    assert data.startswith(expected_start), data[:80]


@pytest.mark.parametrize("command", ["validate", "batch"])
def test_a_named_pipe_nobody_reads_is_one_line_not_a_hang(tmp_path, capsys, monkeypatch, command):
    import usdgrip.fileio

    monkeypatch.setattr(usdgrip.fileio, "PIPE_READER_WAIT_S", 0.3)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert main(commands(tmp_path, str(pipe))[command]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"usdgrip {command}: {pipe}: cannot write: a named pipe nobody reads (waited 0.3 s); "
        "start its reader first"
    )
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)


def test_a_link_to_a_device_is_written_through_and_both_stay(tmp_path, capsys):
    null = make_device(tmp_path, "null", 3)
    link = tmp_path / "report.txt"
    link.symlink_to(null)
    assert is_streamed(link)
    assert main(["validate", GRIPPER, "--output", str(link)]) == 0
    assert link.is_symlink() and stat.S_ISCHR(os.stat(link).st_mode)


def test_dash_is_standard_output_for_text_and_refused_for_binary(tmp_path, capsys):
    assert main(["validate", GRIPPER, "--output", "-"]) == 0
    assert capsys.readouterr().out.startswith(f"{GRIPPER}: ok")
    assert main(["sample", TOTE, "--prim", "/Tote", "-o", "-", "--count", "2"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["count"] == 2  # the "wrote" line went to stderr
    assert "wrote 2 candidates" in err
    legacy = write_legacy(tmp_path)
    assert main(["migrate", str(legacy), "-o", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("#usda 1.0\n# Copyright") and "gripper:maxOpening" in out
    assert "changed:" in err and "wrote -" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["legacy.usda"]
    for argv in (
        ["render", GRIPPER, "-o", "-"],
        ["sample", TOTE, "--prim", "/Tote", "--format", "npz", "-o", "-"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "-o -: standard output takes text only and this format is binary" in err


def test_dev_stdout_into_a_pipe_and_into_an_appended_file(tmp_path):
    argv = [*USDGRIP, "validate", GRIPPER, "--output", "/dev/stdout"]
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith(f"{GRIPPER}: ok") and not piped.stderr
    log = tmp_path / "log.txt"
    log.write_text("header\n")
    with open(log, "a") as stream:  # a shell's `>> log.txt`
        done = subprocess.run(argv, stdout=stream, stderr=subprocess.PIPE, timeout=120)
    assert done.returncode == 0, done.stderr
    assert log.read_text().startswith(f"header\n{GRIPPER}: ok")


def test_dash_into_a_full_standard_output_is_one_line(tmp_path):
    full = make_device(tmp_path, "full", 7)
    legacy = write_legacy(tmp_path)
    with open(full, "w") as stdout:
        done = subprocess.run(
            [*USDGRIP, "migrate", str(legacy), "-o", "-"],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "usdgrip migrate: standard output: no space left on device; nothing was written: "
        "free some space and run again"
    ]


def test_batch_out_to_standard_output_streams_rows_and_refuses_resume(tmp_path, capsys):
    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(GRIPPER, library / "gripper.usda")
    assert main(["batch", "validate", str(library), "-j", "1", "-q", "--out", "-"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["path"] == "gripper.usda" and row["status"] == "ok"
    argv = ["batch", "validate", str(library), "-q", "--out", "-", "--resume"]
    assert main(argv) == 2
    assert "--resume reads the results file back" in capsys.readouterr().err
    assert main(["batch", "validate", str(library), "--out", "-", "--format", "json"]) == 2
    assert "--out - is standard output, where --format json prints" in capsys.readouterr().err


# --- 2. an input changed while it was being rewritten ----------------------------------


APPENDED = 'def Xform "AddedMeanwhile"\n{\n}\n'


def test_fix_refuses_an_input_changed_underneath_and_keeps_the_new_content(
    tmp_path, capsys, monkeypatch
):
    from usdgrip.rules.engine import Report

    legacy = write_legacy(tmp_path)
    apply_fixes = Report.apply_fixes

    def fix_while_another_process_appends(self, *args, **kwargs):
        with open(legacy, "a") as stream:
            stream.write(APPENDED)
        return apply_fixes(self, *args, **kwargs)

    monkeypatch.setattr(Report, "apply_fixes", fix_while_another_process_appends)
    assert main(["validate", "--fix", str(legacy)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"usdgrip validate: {legacy}: changed since usdgrip read it (size, modification time, "
        "content differ); not rewritten, so the new content is kept: run the command again"
    )
    assert legacy.read_text() == LEGACY + APPENDED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["legacy.usda"]


def test_migrate_in_place_refuses_an_input_changed_underneath(tmp_path, capsys, monkeypatch):
    import usdgrip.migration

    legacy = write_legacy(tmp_path)
    migrate_stage = usdgrip.migration.migrate_stage

    def migrate_while_another_process_appends(stage):
        report = migrate_stage(stage)
        with open(legacy, "a") as stream:
            stream.write(APPENDED)
        return report

    monkeypatch.setattr(usdgrip.migration, "migrate_stage", migrate_while_another_process_appends)
    assert main(["migrate", "--in-place", str(legacy)]) == 2
    out, err = capsys.readouterr()
    assert f"{legacy}: changed since usdgrip read it" in err and len(err.splitlines()) == 1
    assert not out  # no changed: lines for a write that did not happen
    assert legacy.read_text() == LEGACY + APPENDED


def test_snapshot_sees_same_size_same_mtime_edits_and_a_replaced_file(tmp_path):
    path = tmp_path / "a.usda"
    path.write_text("#usda 1.0\n# one\n")
    snapshot = FileSnapshot.take(path)
    snapshot.check()  # unchanged: fine
    info = path.stat()
    path.write_text("#usda 1.0\n# two\n")  # same size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # same mtime
    with pytest.raises(FileChangedError, match=r"\(content differ\)"):
        snapshot.check()
    path.unlink()
    with pytest.raises(FileChangedError, match="now: No such file"):
        snapshot.check()


# --- 3. permissions and ownership ------------------------------------------------------


@pytest.mark.parametrize("argv", [["validate", "--fix"], ["migrate", "--in-place"]])
def test_a_read_only_input_is_refused_even_for_root(tmp_path, capsys, argv):
    legacy = write_legacy(tmp_path)
    legacy.chmod(0o444)
    assert main([*argv, str(legacy)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{legacy}: read-only (mode 0444" in err
    assert legacy.read_text() == LEGACY and legacy.stat().st_mode & 0o7777 == 0o444


def test_a_read_only_report_is_not_replaced(tmp_path, capsys):
    report = tmp_path / "report.txt"
    report.write_text("keep me")
    report.chmod(0o444)
    assert main(["validate", GRIPPER, "--output", str(report)]) == 2
    assert f"{report}: read-only" in capsys.readouterr().err
    assert report.read_text() == "keep me"


def test_a_rewrite_keeps_mode_bits_owner_group_and_extended_attributes(tmp_path, capsys):
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    nobody = pwd.getpwnam("nobody")
    legacy = write_legacy(tmp_path)
    os.chown(legacy, nobody.pw_uid, nobody.pw_gid)
    legacy.chmod(0o6664)  # setuid + setgid: kept, as every other mode bit
    try:
        os.setxattr(legacy, "user.origin", b"scanner-7")
    except OSError:
        pytest.skip("no user extended attributes on this file system")
    assert main(["migrate", "--in-place", str(legacy)]) == 0, capsys.readouterr().err
    info = legacy.stat()
    assert "gripper:maxOpening" in legacy.read_text()
    assert (info.st_uid, info.st_gid) == (nobody.pw_uid, nobody.pw_gid)
    assert stat.S_IMODE(info.st_mode) == 0o6664
    assert os.getxattr(legacy, "user.origin") == b"scanner-7"


def test_a_posix_acl_is_kept(tmp_path, capsys):
    if not (shutil.which("setfacl") and shutil.which("getfacl")):
        pytest.skip("setfacl/getfacl not installed")
    legacy = write_legacy(tmp_path)
    if subprocess.run(["setfacl", "-m", "u:nobody:rw", str(legacy)]).returncode:
        pytest.skip("no POSIX ACLs on this file system")
    before = subprocess.run(["getfacl", "-c", str(legacy)], capture_output=True, text=True).stdout
    assert main(["migrate", "--in-place", str(legacy)]) == 0, capsys.readouterr().err
    after = subprocess.run(["getfacl", "-c", str(legacy)], capture_output=True, text=True).stdout
    assert "user:nobody:rw-" in after and after == before


def test_hard_links_are_detached_and_keep_the_previous_content(tmp_path, capsys):
    legacy = write_legacy(tmp_path)
    other = tmp_path / "other-name.usda"
    os.link(legacy, other)
    assert main(["migrate", "--in-place", str(legacy)]) == 0, capsys.readouterr().err
    assert "gripper:maxOpening" in legacy.read_text() and other.read_text() == LEGACY
    assert legacy.stat().st_nlink == 1


def run_as_nobody(argv: list[str], folder: Path) -> tuple[int, str]:
    """Run the CLI in a forked child as user ``nobody`` (root only): ``(exit code, stderr)``.

    The child keeps this interpreter and its imported modules, so it needs no access to
    the Python install; ``argv`` was run once as root before to import what it uses.
    """
    nobody = pwd.getpwnam("nobody")
    err_file = folder / "stderr.txt"
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            fd = os.open(err_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
            os.dup2(fd, 2)
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            sys.stderr = os.fdopen(os.dup(2), "w")
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 70
            traceback.print_exc()
        except BaseException:  # the parent reads why: exit 70 alone says nothing
            traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), err_file.read_text()


@pytest.mark.parametrize("argv", [["validate", "--fix"], ["migrate", "--in-place"]])
def test_an_unprivileged_user_may_not_rewrite_a_file_they_cannot_write(shared_folder, capsys, argv):
    warm = write_legacy(shared_folder, "warm-up.usda")
    main([*argv, str(warm)])  # imports every module the child needs
    capsys.readouterr()
    legacy = write_legacy(shared_folder)  # root's, mode 644, in a folder nobody may write
    code, err = run_as_nobody([*argv, str(legacy)], shared_folder)
    assert code == 2, err
    assert f"{legacy}: read-only (mode 0644, owner uid 0)" in err and len(err.splitlines()) == 1
    assert legacy.read_text() == LEGACY and legacy.stat().st_uid == 0


def test_an_unreadable_input_says_permission_denied(shared_folder, capsys):
    warm = write_legacy(shared_folder, "warm-up.usda")
    main(["info", str(warm)])
    capsys.readouterr()
    secret = write_legacy(shared_folder, "secret.usda")
    secret.chmod(0o600)
    code, err = run_as_nobody(["info", str(secret)], shared_folder)
    assert code == 2, err
    assert err.strip() == (
        f"usdgrip info: {secret}: permission denied: cannot read the file (mode 0600, owner "
        "uid 0); ask its owner, or make it readable (chmod a+r)"
    )
    closed = shared_folder / "closed"
    closed.mkdir(mode=0o700)
    hidden = write_legacy(closed)
    code, err = run_as_nobody(["info", str(hidden)], shared_folder)
    assert code == 2, err
    assert err.strip() == (
        f"usdgrip info: {hidden}: permission denied: cannot reach the file (a folder on its "
        "path may not be searched)"
    )


def test_a_process_switched_to_nobody_keeps_its_commands_in_a_private_install(
    shared_folder, tmp_path
):
    """usdgrip in a folder only root may read (a clone under a mode-700 home), then setuid.

    The commands are found once, while the install can still be read: after the switch the
    CLI still knows `info` and says why the input cannot be read (before, argparse
    offered no command at all).
    """
    private = tmp_path / "private"  # tmp_path's parents are mode 700
    shutil.copytree(REPO / "lib", private / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("plugInfo.json", "schemas", "plugins"):
        (private / part).symlink_to(REPO / part)
    private.chmod(0o700)
    warm, secret = write_legacy(shared_folder, "warm-up.usda"), write_legacy(shared_folder)
    secret.chmod(0o600)
    code = (
        "import os, pwd, sys\n"
        f"sys.path.insert(0, {str(private / 'lib')!r})\n"
        "from usdgrip.cli import main\n"
        f"main(['info', {str(warm)!r}])\n"
        "nobody = pwd.getpwnam('nobody')\n"
        "os.setgroups([]); os.setgid(nobody.pw_gid); os.setuid(nobody.pw_uid)\n"
        f"sys.exit(main(['info', {str(secret)!r}]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=shared_folder, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"usdgrip info: {secret}: permission denied: cannot read the file (mode 0600, owner "
        "uid 0); ask its owner, or make it readable (chmod a+r)"
    )


# --- 6. comments -------------------------------------------------------------------------


def test_comment_finder_skips_strings_and_asset_paths(tmp_path):
    path = tmp_path / "c.usda"
    path.write_text(
        '#usda 1.0\n# licence\n\n# second\ndef "A" (\n    doc = """a # b\n# c"""\n)\n'
        "{\n    asset p = @./x#y.usda@  // trailing\n    /* block */\n}\n"
    )
    comments = find_usda_comments(path)
    assert comments.leading == "# licence\n\n# second\n"
    assert (comments.leading_count, comments.other_count) == (2, 2)


@pytest.mark.parametrize("argv", [["validate", "--fix"], ["migrate", "--in-place"]])
def test_a_rewrite_keeps_the_leading_comment_block_and_warns_about_the_rest(tmp_path, capsys, argv):
    legacy = write_legacy(tmp_path)
    main([*argv, str(legacy)])
    err = capsys.readouterr().err
    text = legacy.read_text()
    assert text.startswith(
        "#usda 1.0\n# Copyright 2026 Example Robotics. All rights reserved.\n"
        "# SPDX-License-Identifier: Apache-2.0\n("
    )
    assert "measured on the real gripper" not in text
    assert (
        f"warning: {legacy}: 1 comment(s) after the leading comment block were not kept: "
        "USD does not store comments (the leading block is kept)"
    ) in err
    main([*argv, str(legacy)])  # once more: the block is not doubled
    assert legacy.read_text().count("# SPDX") == 1


def test_a_usdc_output_warns_that_no_comment_is_kept(tmp_path, capsys):
    legacy = write_legacy(tmp_path)
    out = tmp_path / "out.usdc"
    assert main(["migrate", str(legacy), "-o", str(out)]) == 0
    assert "3 comment(s) were not kept: a binary (usdc) layer holds no comments" in (
        capsys.readouterr().err
    )
    assert out.read_bytes().startswith(b"PXR-USDC")


# --- 8. a full disk ----------------------------------------------------------------------


def fill(disk: Path) -> None:
    """Fill ``disk`` to the last byte."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


DISK_FULL_CASES = {
    "validate --fix": lambda d, w: ["validate", "--fix", str(w)],
    "migrate --in-place": lambda d, w: ["migrate", "--in-place", str(w)],
    "migrate -o usda": lambda d, w: ["migrate", str(w), "-o", str(d / "out.usda")],
    "migrate -o usdc": lambda d, w: ["migrate", str(w), "-o", str(d / "out.usdc")],
    "validate --output": lambda d, w: ["validate", GRIPPER, "--output", str(d / "r.json")],
    "sample -o": lambda d, w: ["sample", TOTE, "--prim", "/Tote", "-o", str(d / "s.json")],
    "render -o": lambda d, w: ["render", GRIPPER, "--size", "2x2", "-o", str(d / "v.png")],
    "plan -o": lambda d, w: [*PLAN, "-o", str(d / "g.yaml")],
    "batch --out": lambda d, w: [*BATCH, GRIPPER, "--out", str(d / "r.jsonl")],
}


@pytest.mark.parametrize("case", DISK_FULL_CASES)
def test_a_full_disk_is_one_line_naming_the_output_and_the_input_stays(small_disk, capsys, case):
    legacy = write_legacy(small_disk)
    fill(small_disk)
    before = sorted(p.name for p in small_disk.iterdir())
    argv = DISK_FULL_CASES[case](small_disk, legacy)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "no space left on device" in lines[0] and str(small_disk) in lines[0], err
    assert "Traceback" not in err and "Error in" not in err
    assert legacy.read_text() == LEGACY
    after = sorted(p.name for p in small_disk.iterdir())
    assert after == before or (case == "batch --out" and after == [*before, "r.jsonl"])


def test_a_full_temp_folder_for_usd_is_one_line_too(small_disk, tmp_path, capsys, monkeypatch):
    legacy = write_legacy(tmp_path)
    fill(small_disk)
    monkeypatch.setattr(tempfile, "tempdir", str(small_disk))  # where USD writes a usdc first
    out = tmp_path / "out.usdc"
    assert main(["migrate", str(legacy), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert f"{out}: USD could not export the layer (into its temp folder {small_disk}" in err
    assert err.strip().endswith("): no space left on device") and "Traceback" not in err
    assert not out.exists() and os.listdir(small_disk) == ["filler"]


# --- 12. batch: non-UTF-8 names, no row lost -------------------------------------------


def test_batch_gives_a_non_utf8_name_an_escaped_error_row_and_goes_on(tmp_path, capsys):
    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(GRIPPER, library / "a.usda")
    shutil.copy(GRIPPER, os.path.join(os.fsencode(library), b"b\xff.usda"))
    shutil.copy(GRIPPER, library / "c.usda")
    out = tmp_path / "results.jsonl"
    base = ["batch", "validate", str(library), "-j", "1", "-q", "--out", str(out)]
    for extra in ([], ["--resume"], ["--resume", "--retry-failed"]):
        assert main([*base, *extra]) == 1, capsys.readouterr().err
        lines = out.read_text(encoding="utf-8").splitlines()
        rows = sorted((json.loads(line) for line in lines), key=lambda row: row["path"])
        assert [row["path"] for row in rows] == ["a.usda", "b\\xff.usda", "c.usda"]
        bad = rows[1]
        assert bad["status"] == "error"
        assert "b\\xff.usda: the file name is not valid UTF-8" in bad["error"]
        assert [row["status"] for row in rows[::2]] == ["ok", "ok"]
    capsys.readouterr()


class _InterruptedExecutor(LocalExecutor):
    """Runs the first file in this process, then is interrupted (Ctrl-C)."""

    def start(self) -> None:
        pass

    def run(self, tasks):
        task = next(iter(tasks))
        yield {**run_job(task.path, task.job, task.params), "path": task.key}
        raise KeyboardInterrupt

    def close(self) -> None:
        pass


def test_an_interrupted_retry_failed_keeps_every_row(tmp_path):
    library = tmp_path / "library"
    library.mkdir()
    for name in ("a.usda", "b.usda", "c.usda"):
        (library / name).write_text("#usda 1.0\nnot usd\n")  # three error rows
    out = tmp_path / "results.jsonl"
    run_batch(library, out=out)
    first = read_results(out)
    assert [row["status"] for row in first.values()] == ["error"] * 3
    for name in ("a.usda", "b.usda", "c.usda"):
        shutil.copy(GRIPPER, library / name)  # fixed: --retry-failed runs them again
    with pytest.raises(KeyboardInterrupt):
        run_batch(library, out=out, resume=True, retry_failed=True, executor=_InterruptedExecutor())
    rows = read_results(out)
    assert sorted(rows) == ["a.usda", "b.usda", "c.usda"]  # no row lost
    assert rows["a.usda"]["status"] == "ok" and rows["b.usda"] == first["b.usda"]
    assert len(out.read_text().splitlines()) == 3  # compacted: one row per file


# --- 13. messages: BOM ------------------------------------------------------------------


def test_a_utf8_bom_is_named(tmp_path, capsys):
    path = tmp_path / "bom.usda"
    path.write_bytes(b"\xef\xbb\xbf" + LEGACY.encode())
    for command in ("info", "validate"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert err.strip() == (
            f"usdgrip {command}: {path}: starts with a UTF-8 BOM (bytes EF BB BF) before "
            "'#usda'; USD does not read a file with a BOM: save it as UTF-8 without BOM"
        )
