"""SIGTERM, SIGHUP and Ctrl-C end ``evaluate`` / ``plan --evaluate`` and every child, promptly.

Deterministic: each test waits for a line the command prints on stderr (``--progress
lines``) at the state it wants to interrupt, then sends the signal. Each command runs in
its own session: afterwards no process of that session may be left (the workers, a CoACD
child), and a failed run is killed, its whole session, in a ``finally``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRIPPER = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
BASE = [sys.executable, "-m", "usdgrip"]


@pytest.fixture(scope="module")
def mug_grasps(tmp_path_factory) -> Path:
    grasps = tmp_path_factory.mktemp("signals") / "mug.yaml"
    subprocess.run(
        [*BASE, "plan", str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper", GRIPPER,
         "--table", "--max-candidates", "20", "-o", str(grasps), "-q"],
        check=True, capture_output=True,
    )  # fmt: skip
    return grasps


def write_torus(path: Path, sections: int = 40) -> Path:
    """A closed torus (not convex: CoACD decomposes it for seconds), 1 metre per unit."""
    u, v = np.meshgrid(np.arange(sections), np.arange(sections // 2), indexing="ij")
    a, b = 2 * np.pi * u / sections, 2 * np.pi * v / (sections // 2)
    points = np.stack(
        [(0.05 + 0.02 * np.cos(b)) * np.cos(a), (0.05 + 0.02 * np.cos(b)) * np.sin(a),
         0.02 * np.sin(b) + 0.02], axis=-1,
    ).reshape(-1, 3)  # fmt: skip
    n, m = sections, sections // 2
    quads = [
        (i * m + j, ((i + 1) % n) * m + j, ((i + 1) % n) * m + (j + 1) % m, i * m + (j + 1) % m)
        for i in range(n)
        for j in range(m)
    ]
    path.write_text(
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n\n'
        'def Mesh "Torus"\n{\n'
        f"    int[] faceVertexCounts = [{', '.join('4' * len(quads))}]\n"
        f"    int[] faceVertexIndices = [{', '.join(str(i) for q in quads for i in q)}]\n"
        f"    point3f[] points = [{', '.join(f'({x:.6f}, {y:.6f}, {z:.6f})' for x, y, z in points)}]\n"
        "}\n"
    )
    return path


class Command:
    """A usdgrip command in its own session; its stderr read line by line as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [*BASE, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        self.err = b""

    def wait_for(self, marker: str, timeout: float = 120) -> None:
        """Read stderr until a line holds ``marker`` (fails at exit or after ``timeout``)."""
        fd = self.process.stderr.fileno()
        deadline = time.monotonic() + timeout
        while marker.encode() not in self.err:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} on stderr in {timeout} s: {self.err.decode()}"
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 65536)
                assert chunk, f"exit {self.process.wait()} before {marker!r}: {self.err.decode()}"
                self.err += chunk

    def finish(self, timeout: float) -> tuple[int, str, float]:
        """Exit code, all of stderr and the seconds it took to exit."""
        started = time.monotonic()
        rest = self.process.communicate(timeout=timeout)[1]
        return self.process.returncode, (self.err + rest).decode(), time.monotonic() - started

    def session_left(self, timeout: float = 10) -> list[str]:
        """Processes of its session still there after ``timeout`` (reaping takes a moment)."""
        deadline = time.monotonic() + timeout
        while True:
            found = subprocess.run(
                ["ps", "-o", "pid=,stat=,args=", "-s", str(self.process.pid)],
                capture_output=True,
                text=True,
            ).stdout.splitlines()
            alive = [line for line in found if line.split()[1][0] != "Z"]
            if not alive or time.monotonic() > deadline:
                return alive
            time.sleep(0.05)

    def kill(self) -> None:
        """Kill the whole session (a failed run leaves nothing for the next test)."""
        if self.process.poll() is None or self.session_left(0):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.communicate()


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_the_simulation_ends_evaluate_and_its_workers(mug_grasps, number):
    command = Command(
        ["evaluate", str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper", GRIPPER,
         "--grasps", str(mug_grasps), "--table", "--trials", "50", "--jobs", "2",
         "--progress", "lines", "-o", str(mug_grasps.with_name(f"out{number}.yaml"))],
    )  # fmt: skip
    try:
        command.wait_for("physics: ")  # the first candidate is done: the workers simulate
        assert len(command.session_left(0)) >= 2, "no simulation worker"
        command.process.send_signal(number)
        code, err, seconds = command.finish(timeout=30)
        assert code == 128 + number, err
        assert f"terminated ({signal.Signals(number).name})" in err and "Traceback" not in err
        assert command.session_left() == []
        assert seconds < 5, f"{seconds:.1f} s to stop"
        assert not mug_grasps.with_name(f"out{number}.yaml").exists()
    finally:
        command.kill()


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_coacd_run_stops_it_at_once(tmp_path, number):
    torus = write_torus(tmp_path / "torus.usda")
    command = Command(
        ["plan", str(torus), "--object", "/Torus", "--gripper", GRIPPER, "--table",
         "--max-candidates", "4", "--evaluate", "--trials", "1", "--progress", "lines",
         "-o", str(tmp_path / "out.yaml")],
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    )  # fmt: skip
    try:
        command.wait_for("cache miss, running CoACD")
        deadline = time.monotonic() + 30  # the CoACD child is started just after the line
        while len(command.session_left(0)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(command.session_left(0)) >= 2, "no CoACD child"
        command.process.send_signal(number)
        code, err, seconds = command.finish(timeout=30)
        assert code == 128 + number, err
        assert "computed in" not in err and "Traceback" not in err
        assert command.session_left() == []
        assert seconds < 2, f"{seconds:.1f} s to stop during CoACD"
    finally:
        command.kill()


def test_a_coacd_child_that_dies_is_one_line_naming_the_object(tmp_path):
    torus = write_torus(tmp_path / "torus.usda", sections=24)
    command = Command(
        ["evaluate", str(torus), "--object", "/Torus", "--gripper", GRIPPER, "--table",
         "--grasps", str(write_one_grasp(tmp_path / "g.yaml")), "--progress", "lines",
         "-o", str(tmp_path / "out.yaml")],
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    )  # fmt: skip
    try:
        command.wait_for("cache miss, running CoACD")
        deadline = time.monotonic() + 30
        child: list[str] = []
        while not child and time.monotonic() < deadline:
            child = [p for p in command.session_left(0) if int(p.split()[0]) != command.process.pid]
        assert child, "no CoACD child"
        os.kill(int(child[0].split()[0]), signal.SIGKILL)  # the out-of-memory killer, say
        code, err, _ = command.finish(timeout=30)
        lines = [line for line in err.splitlines() if not line.startswith("usdgrip: ")]
        assert code == 2 and len(lines) == 1, err
        assert "/Torus" in lines[0] and "ended without an answer (killed by SIGKILL)" in lines[0]
        assert not (tmp_path / "out.yaml").exists() and command.session_left() == []
    finally:
        command.kill()


def write_one_grasp(path: Path) -> Path:
    """An Isaac-Grasp file of one grasp (evaluate needs one to build the object)."""
    path.write_text(
        "format: isaac_grasp\nformat_version: 1.0\ngrasps:\n  g0:\n    confidence: 1.0\n"
        "    position: [0.05, 0.0, 0.02]\n    orientation: {w: 0.0, xyz: [1.0, 0.0, 0.0]}\n"
    )
    return path


def test_the_torus_needs_coacd_for_seconds(tmp_path):
    # The test above can fail: the same command runs CoACD for seconds when not interrupted.
    torus = write_torus(tmp_path / "torus.usda")
    done = subprocess.run(
        [*BASE, "plan", str(torus), "--object", "/Torus", "--gripper", GRIPPER, "--table",
         "--max-candidates", "4", "--evaluate", "--trials", "1", "--progress", "lines",
         "-o", str(tmp_path / "out.yaml")],
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "cache miss, running CoACD" in done.stderr, done.stderr
    line = next(x for x in done.stderr.splitlines() if "computed in" in x)
    assert float(line.split("computed in ")[1].split()[0]) >= 2.0, line


def test_a_child_killed_before_it_reads_its_task_is_a_child_process_error(monkeypatch):
    from usdgrip.grasping.physics import children

    real = subprocess.Popen

    class KilledAtOnce(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.kill()
            self.wait()

    before = set(children._LIVE)  # a kept trial worker of an earlier test in this process
    monkeypatch.setattr(children.subprocess, "Popen", KilledAtOnce)
    with pytest.raises(ChildProcessError, match=r"^sqrt: the child .* \(killed by SIGKILL\)$"):
        children.call("math:sqrt", 4.0, what="sqrt")
    assert before == children._LIVE  # the killed child is not kept
    monkeypatch.undo()
    assert children.call("math:sqrt", 4.0) == 2.0
