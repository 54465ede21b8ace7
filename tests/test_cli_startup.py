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
