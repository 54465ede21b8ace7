"""A named command imports only its own module; --help and a misspelt name get every command."""

from __future__ import annotations

import subprocess
import sys

PROBE = (
    "import sys; from usdgrip.cli import main; code = main(sys.argv[1:]); "
    "print(sorted(m for m in sys.modules if m.startswith('usdgrip.cli.') and "
    "m not in ('usdgrip.cli.common',)), code)"
)


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True)


def test_a_named_command_imports_only_its_module():
    done = run("rules")
    assert "['usdgrip.cli.rules'] 0" in done.stdout, done.stdout + done.stderr


def test_a_misspelt_command_lists_every_command():
    done = run("evaluat")
    assert done.returncode == 2
    assert "invalid choice: 'evaluat'" in done.stderr and "'evaluate'" in done.stderr
    assert "'batch'" in done.stderr and "'suggest'" in done.stderr


def test_a_closed_stderr_or_stdout_is_the_null_device_not_a_silent_failure(tmp_path):
    # `usdgrip ... 2>&-`: Python's sys.stderr is None and the next file opened would take
    # fd 2; it exited 1 with nothing said before.
    from pathlib import Path

    examples = Path(__file__).resolve().parent.parent / "examples"
    out = tmp_path / "report.json"
    command = [sys.executable, "-m", "usdgrip", "validate", str(examples / "tote.usda"),
               "--format", "json", "--output", str(out)]  # fmt: skip
    closed_stderr = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", *command], stdout=subprocess.PIPE, text=True
    )
    assert closed_stderr.returncode == 0
    import json

    assert json.loads(out.read_text())  # the whole report, nothing else in the file
    closed_stdout = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *command[:5]], stderr=subprocess.PIPE, text=True
    )
    assert closed_stdout.returncode == 0, closed_stdout.stderr


def test_evaluating_an_object_of_convex_solids_loads_no_scipy(tmp_path):
    # SciPy's import (0.2-0.4 s) is most of what building the mug's model cost; its parts
    # are closed convex solids, recognised without a hull.
    from pathlib import Path

    examples = Path(__file__).resolve().parent.parent / "examples"
    grasps = tmp_path / "mug.yaml"
    gripper = f"{examples / 'gripper.usda'}:/Gripper/tcp"
    common = [str(examples / "mug.usda"), "--object", "/Mug", "--gripper", gripper, "--table"]
    planned = subprocess.run(
        [sys.executable, "-m", "usdgrip", "plan", *common, "--max-candidates", "3",
         "-o", str(grasps), "-q"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    probe = (
        "import sys; from usdgrip.cli import main; code = main(sys.argv[1:]); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'glfw'}), code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "evaluate", *common, "--grasps", str(grasps),
         "--trials", "1", "-o", str(tmp_path / "out.yaml"), "-q"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.stdout.strip() == "[] 0", done.stdout + done.stderr
