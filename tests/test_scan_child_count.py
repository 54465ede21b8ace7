"""The Python walk proves marker children by counting their names in the layer texts.

Issue 20: with no arc that can move a spec, the walk asks no prim its name; the marker
children of the sites it finds by their API are counted against the occurrences of the
children's names in the texts, and a name left unaccounted for (a legacy site marked
only by a child) takes a walk for the names. Every case is checked against the walk that
asks every prim every question (the definition).
"""

from __future__ import annotations

import pytest
from pxr import Sdf, Usd

from usdgrip.rules import validate
from usdgrip.usd import discovery

SITE = """
    def Xform "site_{i}" (prepend apiSchemas = ["GripperSiteAPI"])
    {{
        float gripper:maxOpening = 0.085
        def BasisCurves "gripper_forward_axis"
        {{
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        }}
        def BasisCurves "gripper_grip_line"
        {{
            point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
        }}
    }}
"""
SLOTTED = """
    def Xform "object_{i}" (prepend apiSchemas = ["GripperSlotAPI:a"])
    {{
        double gripperSlot:a:upRange = 0.1
        {child}
    }}
"""

#: An API site without marker children: with one, a slotted object's child name is not more
#: frequent than the API, so the count (not the names walk) decides.
BARE = 'def Xform "bare" (prepend apiSchemas = ["GripperSiteAPI"])\n    {\n    }\n'


def _body(*extra: str, sites: int = 3) -> str:
    parts = [SITE.format(i=i) for i in range(sites)]
    return 'def Xform "W"\n{\n' + "".join(parts) + "".join(extra) + "}\n"


def _definition(stage: Usd.Stage) -> list[tuple[str, bool, bool]]:
    """Every kind asked of every prim: no count, no expression."""
    marked = discovery._walk(stage, discovery.MARKER_TOKENS).marked
    return sorted((str(p.GetPath()), site, slot) for p, site, slot in marked)


def _scanned(stage: Usd.Stage, scan: str = "traverse") -> list[tuple[str, bool, bool]]:
    return sorted(
        (str(p.GetPath()), s, m) for p, s, m in discovery.find_marked_prims(stage, scan=scan)
    )


@pytest.fixture
def walks(monkeypatch) -> list[frozenset[str]]:
    """The kinds of each Python walk made."""
    made: list[frozenset[str]] = []
    walk = discovery._walk

    def spy(stage, kinds, **kwargs):
        made.append(frozenset(kinds))
        return walk(stage, kinds, **kwargs)

    monkeypatch.setattr(discovery, "_walk", spy)
    return made


CASES = {
    "api sites only": _body(),
    "slotted with an active child": _body(
        BARE, SLOTTED.format(i=0, child='def Scope "gripper_grip_line"\n        {\n        }')
    ),
    "slotted with an inactive child": _body(
        BARE,
        SLOTTED.format(
            i=0, child='def Scope "gripper_grip_line" (active = false)\n        {\n        }'
        ),
    ),
    "slotted with a class child": _body(
        BARE, SLOTTED.format(i=0, child='class Scope "gripper_forward_axis"\n        {\n        }')
    ),
    "slotted with an over child": _body(
        BARE, SLOTTED.format(i=0, child='over "gripper_forward_axis"\n        {\n        }')
    ),
    "legacy site marked by a child": _body(
        'def Xform "legacy"\n    {\n        def BasisCurves "gripper_forward_axis"\n'
        "        {\n        }\n    }\n",
        sites=5,
    ),
    "legacy site beside a site without children": _body(
        'def Xform "bare" (prepend apiSchemas = ["GripperSiteAPI"])\n    {\n    }\n'
        'def Xform "legacy"\n    {\n        def BasisCurves "gripper_forward_axis"\n'
        "        {\n        }\n    }\n",
    ),
    "a root prim named like a child": _body(sites=4) + 'def Xform "gripper_forward_axis"\n{\n}\n',
    "the name in a string value": _body(
        'def Xform "note"\n    {\n        string doc = "see gripper_grip_line"\n    }\n', sites=4
    ),
    "the name inside a longer name": _body(
        'def Xform "plain"\n    {\n        def Scope "gripper_grip_line_old"\n        {\n'
        "        }\n    }\n",
        sites=4,
    ),
    "a site without its children": _body(
        'def Xform "bare" (prepend apiSchemas = ["GripperSiteAPI"])\n    {\n    }\n'
    ),
    "a child deep below a plain prim": _body(
        'def Xform "a"\n    {\n        def Xform "b"\n        {\n            def Xform "c"\n'
        '            {\n                def Scope "gripper_grip_line"\n                {\n'
        "                }\n            }\n        }\n    }\n",
        sites=6,
    ),
}


@pytest.mark.parametrize("body", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("scan", ["traverse", "collection"])
def test_the_scan_finds_what_the_definition_finds(open_usda, body, scan):
    stage = open_usda(body)
    assert _scanned(stage, scan) == _definition(stage)


def test_api_sites_cost_no_name_query(open_usda, walks):
    stage = open_usda(_body())
    found = _scanned(stage)
    assert walks == [frozenset({"api"})]  # one walk, neither names nor property names
    assert found == [(f"/W/site_{i}", True, False) for i in range(3)]


def test_a_child_no_site_accounts_for_takes_a_walk_for_the_names(open_usda, walks):
    """As many child names as API sites, but one API site has none: the count fails."""
    stage = open_usda(CASES["legacy site beside a site without children"])
    found = dict((p, s) for p, s, _ in _scanned(stage))
    assert found["/W/legacy"] is True
    assert walks == [frozenset({"api"}), frozenset({"children"})]


def test_more_names_than_sites_asks_the_names_in_the_one_walk(open_usda, walks):
    body = _body(
        'def Xform "legacy"\n    {\n        def BasisCurves "gripper_forward_axis"\n'
        "        {\n        }\n    }\n",
        sites=0,
    )
    stage = open_usda(body)
    found = _scanned(stage)
    assert len(walks) == 1 and "children" in walks[0]
    assert found == _definition(stage)


def test_arcs_or_variants_ask_the_names_in_the_walk(open_usda, walks):
    referenced = _body('def Xform "copy" (prepend references = </W/site_0>)\n    {\n    }\n')
    stage = open_usda(referenced)
    found = _scanned(stage)
    assert len(walks) == 1 and "children" in walks[0]
    assert found == _definition(stage)


def test_specs_in_two_layers_are_counted_through_the_prim_stack(tmp_path, walks):
    """A child defined in a sublayer and overridden in the root layer: two specs, one prim.

    The root layer's over repeats the API (as a stronger opinion may), so the name is not
    more frequent than the API and the count is tried."""
    (tmp_path / "sub.usda").write_text("#usda 1.0\n" + _body())
    (tmp_path / "root.usda").write_text(
        '#usda 1.0\n(\n    subLayers = [@./sub.usda@]\n)\nover "W"\n{\n'
        '    over "site_0" (prepend apiSchemas = ["GripperSiteAPI"])\n    {\n        over "gripper_grip_line"\n        {\n        }\n    }\n}\n'
    )
    stage = Usd.Stage.Open(str(tmp_path / "root.usda"))
    found = _scanned(stage)
    assert walks == [frozenset({"api"})]
    assert found == _definition(stage)


def test_an_unsaved_edit_is_counted_and_a_new_legacy_site_found(open_usda, walks):
    stage = open_usda(_body())
    legacy = stage.DefinePrim("/W/legacy", "Xform")
    stage.DefinePrim(legacy.GetPath().AppendChild("gripper_grip_line"), "BasisCurves")
    found = dict((p, s) for p, s, _ in _scanned(stage))
    assert found["/W/legacy"] is True
    assert _scanned(stage) == _definition(stage)
    # In the session layer too.
    with Usd.EditContext(stage, stage.GetSessionLayer()):
        stage.DefinePrim("/W/other/gripper_forward_axis")
    assert dict((p, s) for p, s, _ in _scanned(stage))["/W/other"] is True


def test_a_binary_layer_asks_every_prim(tmp_path, walks):
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.ImportFromString("#usda 1.0\n" + CASES["legacy site marked by a child"])
    layer.Export(str(tmp_path / "asset.usdc"))
    stage = Usd.Stage.Open(str(tmp_path / "asset.usdc"))
    found = _scanned(stage)
    assert len(walks) == 1 and "children" in walks[0]
    assert found == _definition(stage)


@pytest.mark.parametrize("body", CASES.values(), ids=CASES.keys())
def test_validate_reports_the_same_with_either_scan(open_usda, body):
    stage = open_usda(body)
    fast = [i.to_dict() for i in validate(stage).issues]
    assert fast == [i.to_dict() for i in validate(stage, scan="traverse").issues]


@pytest.mark.parametrize(
    ("case", "marked"),
    [
        ("slotted with an active child", (True, True)),
        ("slotted with an inactive child", (False, True)),
        ("slotted with a class child", (False, True)),
        ("slotted with an over child", (True, True)),
    ],
)
def test_the_count_marks_a_slotted_object_only_by_a_traversed_child(open_usda, walks, case, marked):
    stage = open_usda(CASES[case])
    found = {p: (s, m) for p, s, m in _scanned(stage)}
    assert walks == [frozenset({"api"})]  # the count decided, not a names walk
    assert found["/W/object_0"] == marked
