"""A name spelled with escapes hides nothing from validation.

The layer-text hints and counts look for tokens in the usda text; the parser decodes
escapes in quoted names (``"gripper\\x5fforward_axis"`` is ``gripper_forward_axis``), so a
text with a backslash gives no hint: every prim is asked. Each case is validated spelled
plainly and spelled with escapes; the reports must be the same, and not empty.
"""

from __future__ import annotations

import pytest

from usdgrip.rules import validate
from usdgrip.usd import discovery

CASES = {
    "site API": (
        'def Xform "site" (prepend apiSchemas = ["{GripperSiteAPI}"])\n'
        "{{\n    float gripper:maxOpening = -1\n}}\n"
    ),
    "slot API": (
        'def Xform "obj" (prepend apiSchemas = ["{GripperSlotAPI}:a"])\n'
        "{{\n    double gripperSlot:a:upRange = -1\n}}\n"
    ),
    "marker child": (
        'def Xform "legacy"\n{{\n    def BasisCurves "{gripper_forward_axis}"\n    {{\n'
        "        point3f[] points = [(0, 0, 0), (0, 0, 1)]\n    }}\n}}\n"
    ),
    "grasp line": (
        'def Xform "Prop" (prepend apiSchemas = ["PhysicsRigidBodyAPI"])\n{{\n'
        '    def Cube "body"\n    {{\n        double size = 0.04\n    }}\n'
        '    def BasisCurves "{grasp_identifier}_01"\n    {{\n'
        "        point3f[] points = [(-0.5, 0, 0), (0.5, 0, 0)]\n    }}\n}}\n"
    ),
    "rigid body API beside a site": (
        'def Xform "Hand" (prepend apiSchemas = ["Physics{RigidBodyAPI}"])\n{{\n'
        '    def Xform "site" (prepend apiSchemas = ["GripperSiteAPI"])\n    {{\n'
        "        float gripper:maxOpening = 0.08\n    }}\n}}\n"
        'def Xform "Other"\n{{\n'
        '    def Xform "site2" (prepend apiSchemas = ["GripperSiteAPI"])\n    {{\n'
        "        float gripper:maxOpening = 0.08\n    }}\n}}\n"
    ),
}


def _escape(word: str) -> str:
    """``word`` with its second character as a hex escape."""
    return f"{word[0]}\\x{ord(word[1]):02x}{word[2:]}"


def _spell(template: str, escaped: bool) -> str:
    words = ("GripperSiteAPI", "GripperSlotAPI", "gripper_forward_axis", "grasp_identifier")
    words += ("RigidBodyAPI",)
    return "#usda 1.0\n" + template.format(**{w: _escape(w) if escaped else w for w in words})


def _report(stage, scan):
    return sorted((i.code, i.prim) for i in validate(stage, scan=scan).issues)


@pytest.mark.parametrize("template", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("scan", ["traverse", "collection"])
def test_an_escaped_name_is_validated_as_the_plain_one(write_usda, template, scan):
    from pxr import Usd

    plain = Usd.Stage.Open(str(write_usda(_spell(template, False), "plain.usda")))
    escaped_text = _spell(template, True)
    assert "\\x" in escaped_text
    escaped = Usd.Stage.Open(str(write_usda(escaped_text, "escaped.usda")))
    # The parser decoded the escape: the stages are the same.
    assert [str(p.GetPath()) for p in escaped.Traverse()] == [
        str(p.GetPath()) for p in plain.Traverse()
    ]
    expected = _report(plain, scan)
    assert [code for code, _ in expected if code != "GA.002"]  # the case finds something
    assert _report(escaped, scan) == expected


def test_a_text_with_a_backslash_gives_no_hint(open_usda):
    stage = open_usda('def Xform "a"\n{\n    string doc = "C:\\\\assets"\n}\n')
    assert discovery.compute_marker_hints(stage) == frozenset(discovery.MARKER_TOKENS)
    assert discovery.compute_token_hints(stage, (b"nothing_like_this",)) == (True,)
