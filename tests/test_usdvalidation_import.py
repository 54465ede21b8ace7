"""``import usdgrip`` declares the UsdValidation validators without PXR_PLUGINPATH_NAME (issue 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BROKEN_SITE = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "G"
{
    custom float gripper_maxOpening = 0.085
}
"""

CLIENT = textwrap.dedent(
    """
    import json, sys
    from pxr import Usd, UsdValidation
    if sys.argv[2] == "registry-first":
        UsdValidation.ValidationRegistry()
    import usdgrip
    from usdgrip._plugin import get_validation_plugin_problem
    from usdgrip.cli import main
    context = UsdValidation.ValidationContext(keywords=["usdgrip"])
    errors = context.Validate(Usd.Stage.Open(sys.argv[1]))
    print(json.dumps({
        "names": sorted(e.GetName() for e in errors),
        "problem": get_validation_plugin_problem(),
    }))
    main(["rules"])
    """
)


def _run(tmp_path: Path, order: str) -> tuple[dict, str]:
    stage = tmp_path / "site.usda"
    stage.write_text(BROKEN_SITE)
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    env = {k: v for k, v in os.environ.items() if k not in ("PXR_PLUGINPATH_NAME", "PYTHONPATH")}
    env["PYTHONPATH"] = str(REPO / "lib")  # the library under test, not its plugin folders
    proc = subprocess.run(
        [sys.executable, str(script), str(stage), order],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    first, _, rules = proc.stdout.partition("\n")
    return json.loads(first), rules


def test_importing_usdgrip_declares_the_validators(tmp_path):
    out, rules = _run(tmp_path, "usdgrip-first")
    assert out["names"] == ["GR.002", "GR.003", "GR.011"]
    assert out["problem"] is None
    last = rules.strip().splitlines()[-1]
    assert last.startswith('UsdValidation: ValidationContext(keywords=["usdgrip"]) runs these')


def test_a_registry_built_before_the_import_is_explained(tmp_path):
    out, rules = _run(tmp_path, "registry-first")
    assert out["names"] == []  # UsdValidation reads declarations once: nothing to validate with
    assert "registry in this process was built before usdgrip registered" in out["problem"]
    assert "usdgrip env" in out["problem"]
    assert rules.strip().splitlines()[-1] == f"UsdValidation: {out['problem']}."
