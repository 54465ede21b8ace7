"""``python -m usdgrip`` runs the CLI."""

from usdgrip.cli import run_and_exit

run_and_exit()
