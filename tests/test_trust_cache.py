"""Issue 21, item 1: the CoACD decomposition cache as an attacker sees it.

The cache writes only inside its own folder and never through a link; every entry is
untrusted input (a link, FIFO, device, folder, huge file or another part's pieces is
discarded with a warning and recomputed); problems are reported once and never stop the
evaluation; two processes may fill one cache at once. Real CoACD runs on small meshes
with coarse settings; the children that run as ``nobody`` use pieces computed here
(CoACD's threads do not survive a fork).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
import trimesh
from test_physics_decompose import FAST, torus

from usdgrip.cli import main
from usdgrip.grasping.physics import decompose as decompose_module
from usdgrip.grasping.physics import decompose_mesh

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(autouse=True)
def _no_pending_warnings():
    decompose_module.take_cache_warnings()  # what earlier tests left behind
    yield
    decompose_module.take_cache_warnings()


_REAL_COACD = decompose_module._run_coacd
_PIECES: dict[bytes, list] = {}


@pytest.fixture(autouse=True)
def _coacd_once(monkeypatch):
    """Real CoACD, run once per mesh in this process: later calls replay its pieces.

    These tests are about the cache, so a part decomposed again needs CoACD's pieces, not
    another CoACD run (which is tested where the pieces come from: test_physics_decompose).
    """

    def replay(vertices, triangles, params):
        key = np.ascontiguousarray(vertices).tobytes() + np.ascontiguousarray(triangles).tobytes()
        if key not in _PIECES:
            _PIECES[key] = _REAL_COACD(vertices, triangles, params)
        return [piece.copy() for piece in _PIECES[key]]

    monkeypatch.setattr(decompose_module, "_run_coacd", replay)


def annulus():
    return trimesh.creation.annulus(0.02, 0.05, 0.03)


def fill_cache(folder: Path, mesh=None) -> Path:
    """Decompose ``mesh`` (a torus) into ``folder``; the entry's path."""
    mesh = torus() if mesh is None else mesh
    before = set(folder.glob("*.npz")) if folder.is_dir() else set()
    result = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=folder)
    assert [p.method for p in result.parts] == ["coacd"]
    (entry,) = set(folder.glob("*.npz")) - before
    return entry


def decompose_again(folder: Path, mesh=None):
    mesh = torus() if mesh is None else mesh
    return decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=folder)


# --- links: never written through ---------------------------------------------------------


PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/:/usr/sbin/nologin\n"


@pytest.mark.parametrize("link", ["to-a-file", "to-a-fifo", "dangling", "loop", "hard"])
def test_a_link_in_the_cache_is_replaced_never_its_target_written(tmp_path, link):
    cache = tmp_path / "cache"
    entry = fill_cache(cache)
    good = entry.read_bytes()
    entry.unlink()
    decoy = tmp_path / "passwd"  # a copy of /etc/passwd: as root the real one would go
    decoy.write_text(PASSWD)
    decoy.chmod(0o644)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    if link == "to-a-file":
        entry.symlink_to(decoy)
    elif link == "to-a-fifo":
        entry.symlink_to(pipe)
    elif link == "dangling":
        entry.symlink_to(tmp_path / "missing")
    elif link == "loop":
        entry.symlink_to(entry)
    else:  # a hard link: the same inode as the decoy; the decoy must keep its content
        decoy.write_bytes(b"PK\x03\x04 not an npz")
        os.link(decoy, entry)
    before = decoy.read_bytes()
    again = decompose_again(cache)
    assert again.parts[0].method == "coacd"
    assert decoy.read_bytes() == before and stat.S_IMODE(decoy.stat().st_mode) == 0o644
    assert stat.S_ISFIFO(pipe.lstat().st_mode)
    assert not (tmp_path / "missing").exists()
    assert not entry.is_symlink() and entry.is_file() and entry.read_bytes() == good
    warnings = decompose_module.take_cache_warnings()
    expected = "is a symbolic link; not followed" if link != "hard" else "unusable (not an npz"
    assert len(warnings) == 1 and f"CoACD cache {entry}: " in warnings[0], warnings
    assert expected in warnings[0], warnings
    assert decompose_again(cache).parts[0].method == "cached"
    assert sorted(p.name for p in cache.iterdir()) == [entry.name]  # no temp file left


# --- entries that are not files, too big, or made for another part ------------------------


def make_squatter(entry: Path, kind: str) -> None:
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "device":
        try:
            os.mknod(entry, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero's numbers
        except PermissionError:
            pytest.skip("mknod needs root")
    elif kind == "huge":  # 64 GiB, sparse: read whole, it raised MemoryError
        with open(entry, "wb") as stream:
            stream.truncate(64 << 30)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("fifo", "is a named pipe (FIFO), not a regular file; not read"),
        ("device", "is a character device, not a regular file; not read"),
        ("huge", "is 64 GiB, over the 64 MiB limit for an entry; not read"),
    ],
)
def test_an_entry_that_is_no_plain_file_or_too_big_is_discarded_and_replaced(tmp_path, kind, words):
    cache = tmp_path / "cache"
    entry = fill_cache(cache)
    make_squatter(entry, kind)
    again = decompose_again(cache)
    assert again.parts[0].method == "coacd" and words in again.parts[0].cache_error
    assert decompose_module.take_cache_warnings() == [again.parts[0].cache_error]
    assert entry.is_file() and entry.stat().st_size < 1 << 20
    assert decompose_again(cache).parts[0].method == "cached"


def test_a_folder_in_the_way_is_left_alone_and_said_once(tmp_path):
    cache = tmp_path / "cache"
    entry = fill_cache(cache)
    entry.unlink()
    entry.mkdir()
    (entry / "keep.txt").write_text("someone's file")
    for _ in range(2):
        again = decompose_again(cache)
        assert again.parts[0].method == "coacd" and len(again.pieces) > 1
    assert (entry / "keep.txt").read_text() == "someone's file"
    (warning,) = decompose_module.take_cache_warnings()
    assert warning == (
        f"CoACD cache {entry}: a folder is in the way of the entry; left alone: decomposed "
        "again, not cached"
    )
    assert [p.name for p in cache.iterdir()] == [entry.name]


def test_an_entry_made_for_another_part_is_not_used(tmp_path):
    """Another mesh's entry renamed to this key, or a 4-point sliver under it, is recomputed."""
    cache = tmp_path / "cache"
    ring = fill_cache(cache, annulus())
    entry = fill_cache(cache)
    good = decompose_again(cache).pieces
    shutil.copy(ring, entry)
    again = decompose_again(cache)
    assert again.parts[0].method == "coacd"
    assert "made for another part: its key differs from its name" in again.parts[0].cache_error
    assert len(again.pieces) == len(good)
    with np.load(entry) as data:  # now a sliver under the right key and bounds
        arrays = dict(data)
    arrays["points"] = np.array([[0, 0, 0], [1e-3, 0, 0], [0, 1e-3, 0], [0, 0, 1e-3]], float)
    arrays["counts"] = np.array([4])
    np.savez(entry, **arrays)
    again = decompose_again(cache)
    assert again.parts[0].method == "coacd"
    assert "its pieces do not span the part's bounds" in again.parts[0].cache_error
    assert decompose_again(cache).parts[0].method == "cached"


@pytest.mark.parametrize(
    "forge",
    [
        lambda a: {**a, "points": np.zeros((10**6, 3))[:0].reshape(0, 3)},  # no points
        lambda a: {**a, "counts": np.array([2, 2])},  # pieces of 2 points
        lambda a: {**a, "points": a["points"].astype(np.float32)},  # another dtype
        lambda a: {**a, "extra": np.zeros(3)},  # an unexpected member
        lambda a: {k: v for k, v in a.items() if k != "key"},  # no key: the old layout
    ],
    ids=["empty", "tiny-pieces", "dtype", "extra", "no-key"],
)
def test_forged_entries_are_recomputed(tmp_path, forge):
    cache = tmp_path / "cache"
    entry = fill_cache(cache)
    with np.load(entry) as data:
        arrays = forge(dict(data))
    with open(entry, "wb") as stream:
        np.savez(stream, **arrays)
    again = decompose_again(cache)
    assert again.parts[0].method == "coacd" and ": unusable (" in again.parts[0].cache_error


def test_an_npy_header_claiming_a_huge_array_is_refused_without_allocating(tmp_path):
    cache = tmp_path / "cache"
    entry = fill_cache(cache)
    with np.load(entry) as data:
        arrays = dict(data)
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f8", "fortran_order": False, "shape": (10**11, 3)}
    )
    with zipfile.ZipFile(entry, "w") as archive:
        for name, array in arrays.items():
            if name == "points":
                archive.writestr("points.npy", buffer.getvalue() + b"\0" * 48)
            else:
                member = io.BytesIO()
                np.save(member, array)
                archive.writestr(f"{name}.npy", member.getvalue())
    again = decompose_again(cache)
    assert "points is truncated or padded" in again.parts[0].cache_error


# --- the folder: whose it is, read-only, full -----------------------------------------------


def test_a_file_in_the_way_of_the_folder_is_said_once_and_decomposing_goes_on(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for mesh in (torus(), annulus(), torus()):
        result = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=blocker / "coacd")
        assert result.parts[0].method == "coacd"
    assert decompose_module.take_cache_warnings() == [
        f"CoACD cache {blocker / 'coacd'}: cannot be used (a file is in the way); decomposing "
        "without the cache"
    ]


def test_the_folder_is_made_private_and_another_users_folder_is_not_used(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    cache = tmp_path / "new" / "coacd"
    fill_cache(cache)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    nobody = pwd.getpwnam("nobody")
    os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
    result = decompose_again(theirs)
    assert result.parts[0].method == "coacd" and list(theirs.iterdir()) == []
    everyone = tmp_path / "everyone"
    everyone.mkdir()
    everyone.chmod(0o777)
    decompose_again(everyone)
    assert list(everyone.iterdir()) == []
    assert decompose_module.take_cache_warnings() == [
        f"CoACD cache {theirs}: not used: owned by uid {nobody.pw_uid}, not by you (uid 0), so "
        "others could plant entries; decomposing without the cache (use a folder of your own: "
        "XDG_CACHE_HOME)",
        f"CoACD cache {everyone}: not used: writable by every user (mode 0777), so others could "
        "plant entries; decomposing without the cache (use a folder of your own: XDG_CACHE_HOME)",
    ]


def test_a_full_disk_is_said_once_and_leaves_no_temp_file(small_disk):
    fd = os.open(small_disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    with contextlib.suppress(OSError):
        while True:
            os.write(fd, b"\0" * 4096)
    with contextlib.suppress(OSError):
        while True:
            os.write(fd, b"\0")
    os.close(fd)
    for mesh in (torus(), annulus()):
        result = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=small_disk)
        assert result.parts[0].method == "coacd" and len(result.pieces) > 1
    assert decompose_module.take_cache_warnings() == [
        f"CoACD cache {small_disk}: cannot write entries (no space left on device); the "
        "results are correct but not cached"
    ]
    assert os.listdir(small_disk) == ["filler"]


def test_a_read_only_file_system_is_said_once_and_its_entries_still_read(small_disk):
    fill_cache(small_disk)
    remount = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True)
    if remount.returncode:
        pytest.skip(f"cannot remount read-only: {remount.stderr.decode().strip()}")
    assert decompose_again(small_disk).parts[0].method == "cached"
    assert decompose_mesh(annulus().vertices, annulus().faces, FAST, cache_dir=small_disk)
    assert decompose_mesh(annulus().vertices, annulus().faces, FAST, cache_dir=small_disk)
    (warning,) = decompose_module.take_cache_warnings()
    assert warning == (
        f"CoACD cache {small_disk}: cannot write entries (Read-only file system); the results "
        "are correct but not cached"
    )


# --- as the unprivileged user nobody ----------------------------------------------------------


def decompose_as_nobody(folder: Path, cache: Path, pieces) -> dict:
    """Decompose the torus in a forked child running as ``nobody``; what it saw.

    The child gets CoACD's pieces from this process (``pieces``): CoACD's threads do not
    survive a fork. It needs no file outside ``folder`` (everything is imported).
    """
    nobody = pwd.getpwnam("nobody")
    report = folder / "report.json"
    mesh = torus()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            decompose_module._run_coacd = lambda v, f, p: [np.array(x) for x in pieces]
            result = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=cache)
            seen = {
                "methods": [p.method for p in result.parts],
                "warnings": decompose_module.take_cache_warnings(),
            }
            fd = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, json.dumps(seen).encode())
            os.close(fd)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child as nobody failed"
    return json.loads(report.read_text())


def test_as_nobody_the_cache_works_refuses_roots_folder_and_survives_read_only(shared_folder):
    nobody = pwd.getpwnam("nobody")
    mesh = torus()
    pieces = [
        p.tolist() for p in decompose_mesh(mesh.vertices, mesh.faces, FAST, use_cache=False).pieces
    ]
    shared_folder.chmod(0o777)
    report_folder = shared_folder
    own = shared_folder / "nobody-cache"  # made by nobody: theirs, mode 0700
    seen = decompose_as_nobody(report_folder, own, pieces)
    assert seen == {"methods": ["coacd"], "warnings": []}
    assert own.stat().st_uid == nobody.pw_uid and stat.S_IMODE(own.stat().st_mode) == 0o700
    assert decompose_as_nobody(report_folder, own, pieces)["methods"] == ["cached"]
    os.chmod(own, 0o500)  # nobody's own folder, read-only: entries read, none written
    (entry,) = own.glob("*.npz")
    entry.unlink()
    seen = decompose_as_nobody(report_folder, own, pieces)
    assert seen["methods"] == ["coacd"]
    assert seen["warnings"] == [
        f"CoACD cache {own}: cannot write entries (Permission denied); the results are "
        "correct but not cached"
    ]
    roots = shared_folder / "root-cache"
    fill_cache(roots)
    roots.chmod(0o755)
    before = sorted(p.name for p in roots.iterdir())
    seen = decompose_as_nobody(report_folder, roots, pieces)
    assert seen["methods"] == ["coacd"]
    assert seen["warnings"] == [
        f"CoACD cache {roots}: not used: owned by uid 0, not by you (uid {nobody.pw_uid}), so "
        "others could plant entries; decomposing without the cache (use a folder of your own: "
        "XDG_CACHE_HOME)"
    ]
    assert sorted(p.name for p in roots.iterdir()) == before


def test_as_nobody_a_link_to_roots_file_is_replaced_not_followed(shared_folder):
    mesh = torus()
    pieces = [
        p.tolist() for p in decompose_mesh(mesh.vertices, mesh.faces, FAST, use_cache=False).pieces
    ]
    shared_folder.chmod(0o777)
    own = shared_folder / "nobody-cache"
    decompose_as_nobody(shared_folder, own, pieces)
    (entry,) = own.glob("*.npz")
    secret = shared_folder / "roots.txt"
    secret.write_text("root's")
    secret.chmod(0o644)
    entry.unlink()
    entry.symlink_to(secret)
    seen = decompose_as_nobody(shared_folder, own, pieces)
    assert seen["methods"] == ["coacd"] and "is a symbolic link" in seen["warnings"][0]
    assert secret.read_text() == "root's" and not entry.is_symlink()


# --- two processes fill one cache at once -------------------------------------------------------

FILL = """
import os, sys, time
import trimesh
sys.path.insert(0, {tests!r})
from test_physics_decompose import FAST
from usdgrip.grasping.physics import decompose_mesh
from usdgrip.grasping.physics.decompose import take_cache_warnings
meshes = [trimesh.creation.torus(0.03, 0.01, major_sections=12, minor_sections=6),
          trimesh.creation.annulus(0.02, 0.05, 0.03, sections=12)]
open({ready!r} + str({step}), "w").close()  # imported: ready; start when both are
while not all(os.path.exists({ready!r} + str(s)) for s in (1, -1)):
    time.sleep(0.005)
methods = []
for mesh in meshes[::{step}]:
    result = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir={cache!r})
    methods += [p.method for p in result.parts]
print(methods, take_cache_warnings())
"""


def test_two_processes_fill_one_cache_at_once(tmp_path):
    cache = tmp_path / "cache"
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(
                    FILL.format(
                        tests=str(Path(__file__).parent),
                        ready=str(tmp_path / "ready"),
                        step=step,
                        cache=str(cache),
                    )
                ),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for step in (1, -1)  # one in order, one backwards: both write both entries
    ]
    outputs = [child.communicate(timeout=300) for child in children]
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
        assert out.strip().endswith("[]"), out  # no cache problem in either
    entries = sorted(cache.iterdir())
    assert [p.suffix for p in entries] == [".npz"] * 2  # two entries, no temp file
    small_torus = trimesh.creation.torus(0.03, 0.01, major_sections=12, minor_sections=6)
    for mesh in (small_torus, trimesh.creation.annulus(0.02, 0.05, 0.03, sections=12)):
        assert decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=cache).parts[0].method == (
            "cached"
        )
    assert decompose_module.take_cache_warnings() == []


# --- the CLI says it once on stderr ------------------------------------------------------------


def two_rings_usda() -> str:
    """Two separate tori (each non-convex: CoACD runs twice) as one mesh /Rings, metres, Z up."""
    first = torus()
    second = torus().apply_translation((0.2, 0.0, 0.0))
    mesh = trimesh.util.concatenate([first, second])
    points = ", ".join(f"({x:.6f}, {y:.6f}, {z:.6f})" for x, y, z in mesh.vertices)
    counts = ", ".join("3" for _ in mesh.faces)
    indices = ", ".join(str(i) for i in mesh.faces.ravel())
    return (
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n'
        'def Xform "Rings"\n{\n    def Mesh "mesh"\n    {\n'
        f"        int[] faceVertexCounts = [{counts}]\n"
        f"        int[] faceVertexIndices = [{indices}]\n"
        f"        point3f[] points = [{points}]\n    }}\n}}\n"
    )


def test_the_cli_says_a_cache_problem_once_and_evaluates(tmp_path, capsys, monkeypatch):
    from test_trust_inputs import grasp_entry, grasp_text

    rings = tmp_path / "rings.usda"
    rings.write_text(two_rings_usda())
    grasps = tmp_path / "grasps.yaml"
    grasps.write_text(grasp_text([grasp_entry("g_a", 0.3)]).replace("/Box", "/Rings"))
    (tmp_path / "xdg").mkdir()
    (tmp_path / "xdg" / "usdgrip").write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(decompose_module, "_run_coacd", counting_fast_coacd(calls := []))
    out = tmp_path / "out.yaml"
    argv = [
        "evaluate",
        rings,
        "--object",
        "/Rings",
        "--gripper",
        f"{EXAMPLES}/gripper.usda:/Gripper/tcp",
    ]
    code = main([*map(str, argv), "--grasps", str(grasps), "--table", "-o", str(out)])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert len(calls) == 2 and out.is_file()
    cache_lines = [line for line in err.splitlines() if "CoACD cache" in line]
    assert cache_lines == [
        f"warning: CoACD cache {tmp_path}/xdg/usdgrip/coacd: cannot be used (a file is in the "
        "way); decomposing without the cache"
    ], err


def counting_fast_coacd(calls: list):
    real = decompose_module._run_coacd

    def run(vertices, triangles, params):
        calls.append(len(triangles))
        return real(vertices, triangles, FAST)

    return run
