"""``python -m usdgrip`` runs the CLI."""

import sys

from usdgrip.cli import main

sys.exit(main())
