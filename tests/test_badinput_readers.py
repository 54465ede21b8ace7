"""Bad input to the USD readers and the validation rules: one clear message, never a crash."""

from __future__ import annotations

import json

from usdgrip.cli import main

LEGACY_SITE_SOURCE = """
#usda 1.0
(
    defaultPrim = "G"
    metersPerUnit = 1
)
def Xform "G"
{
    float gripper_maxOpening = 0.085
    def BasisCurves "gripper_forward_axis"
    {
        point3f[] points = [(0, 0, 0), (0, 0, 1)]
        int[] curveVertexCounts = [2]
    }
    def BasisCurves "gripper_grip_line"
    {
        point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
    }
}
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fix_is_not_offered_on_curves_that_are_instance_proxies(write_usda, capsys):
    write_usda(LEGACY_SITE_SOURCE, "refsrc.usda")
    path = write_usda(
        """
        def Xform "B" (
            instanceable = true
            references = @refsrc.usda@
        )
        {
        }
        """
    )
    code, out, _ = run(capsys, "validate", str(path), "--format", "json")
    assert code == 0, out
    gr007 = [i for i in _issues(json.loads(out)) if i["code"] == "GR.007"]
    # The curves under the instance are instance proxies: nothing can be authored there.
    assert len(gr007) == 3 and not any(i["fixable"] for i in gr007), gr007
    code, out, err = run(capsys, "validate", str(path), "--fix")
    assert code == 0 and "Traceback" not in err, err
    assert "apply GripperSiteAPI to </B>" in out  # the instance itself is editable
    assert "</B/gripper_" not in out


def _issues(report: dict) -> list[dict]:
    return [issue for entry in report["files"] for issue in entry["issues"]]
