"""The checked authoring API: rules first, then one Sdf.ChangeBlock; the checker the CLI shares."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
from conftest import EXAMPLES
from pxr import Sdf, Tf, Usd, UsdGeom

from usdgrip.authoring import (
    AuthoringError,
    LineEdit,
    ProposalStage,
    SiteEdit,
    SlotEdit,
    apply_gripper_slot,
    author_edit,
    check_edit,
    define_grasp_line,
    define_gripper_site,
    remove_grasp_line,
    remove_gripper_slot,
    set_gripper_site,
)
from usdgrip.authoring.edit_layers import create_edits_layer
from usdgrip.authoring.world_frame import convert_edit_from_world
from usdgrip.errors import PrimNotFoundError
from usdgrip.rules import RULES, validate
from usdgrip.usd.grasp_lines import find_grasp_lines
from usdgrip.usd.slots import list_slot_instances, read_gripper_slots

SLOT = {
    "center": (0, -0.145, 0.12),
    "forward": (0, 0, -1),
    "span_axis": (0, 1, 0),
    "up_range": 0.2,
}


@pytest.fixture
def tote(tmp_path):
    shutil.copy(EXAMPLES / "tote.usda", tmp_path / "tote.usda")
    return Usd.Stage.Open(str(tmp_path / "tote.usda"))


@pytest.fixture
def prop(tmp_path):
    shutil.copy(EXAMPLES / "graspable_prop.usda", tmp_path / "prop.usda")
    return Usd.Stage.Open(str(tmp_path / "prop.usda"))


def _text(stage: Usd.Stage) -> tuple[str, str]:
    return stage.GetRootLayer().ExportToString(), stage.GetSessionLayer().ExportToString()


class _Notices:
    """Counts the stage's ObjectsChanged notices (one per change block)."""

    def __init__(self, stage: Usd.Stage):
        self.count = 0
        self._listener = Tf.Notice.Register(Usd.Notice.ObjectsChanged, self._seen, stage)

    def _seen(self, notice, sender):
        self.count += 1


def test_a_bad_lr_is_refused_before_anything_is_authored(tote):
    """The issue's case: lr="middle" used to raise after GripperSlotAPI:left and five values."""
    tote_prim = tote.GetPrimAtPath("/Tote")
    before = _text(tote)
    with pytest.raises(AuthoringError, match=r"lr: GS\.004 slot-lr \(failure\): .*'middle'") as e:
        apply_gripper_slot(tote_prim, "left", lr="middle", **SLOT)
    assert _text(tote) == before
    assert "left" not in list_slot_instances(tote_prim)
    assert not tote_prim.GetAttribute("gripperSlot:left:center").IsAuthored()
    assert [i.issue.code for i in e.value.verdict.refused] == ["GS.004"]


def test_a_slot_far_from_its_object_fails_gs009_and_is_not_authored(tote):
    prim = tote.GetPrimAtPath("/Tote")
    before = _text(tote)
    with pytest.raises(AuthoringError, match=r"GS\.009 slot-misses-object .*lies outside"):
        apply_gripper_slot(prim, "far", **{**SLOT, "center": (1.2, 0, 0.12)})
    with pytest.raises(AuthoringError, match=r"GS\.009 .*does not meet the surface"):
        apply_gripper_slot(prim, "above", **{**SLOT, "center": (0, 0, 0.3), "span_axis": (1, 0, 0)})
    assert _text(tote) == before


def test_one_change_block_and_only_the_given_fields(tote):
    prim = tote.GetPrimAtPath("/Tote")
    layer = tote.GetRootLayer()
    notices = _Notices(tote)
    verdict = apply_gripper_slot(prim, "front", **SLOT, group="carry2")
    assert notices.count == 1  # one Sdf.ChangeBlock: one notice for the API and four values
    assert [i.issue.code for i in verdict.items] == ["GS.008"]  # a group's first member warns
    assert not verdict.items[0].refuses
    specs = {p.name for p in layer.GetPrimAtPath("/Tote").properties}
    before = {n: layer.GetAttributeAtPath(f"/Tote.{n}").default for n in specs}
    apply_gripper_slot(prim, "left_edge", up_range=0.1)
    after = {p.name: p.default for p in layer.GetPrimAtPath("/Tote").properties}
    changed = {n for n in after if after[n] != before.get(n)}
    assert changed == {"gripperSlot:left_edge:upRange"} and after[next(iter(changed))] == 0.1
    assert read_gripper_slots(prim, ["front"])[0].group == "carry2"


def test_remove_takes_the_instance_and_its_properties_only(tote):
    prim = tote.GetPrimAtPath("/Tote")
    layer = tote.GetRootLayer()
    others = {p.name for p in layer.GetPrimAtPath("/Tote").properties if "right_edge" not in p.name}
    verdict = remove_gripper_slot(prim, "right_edge")
    assert list_slot_instances(prim) == ["left_edge"]
    assert {p.name for p in layer.GetPrimAtPath("/Tote").properties} == others
    assert not layer.GetPrimAtPath("/Tote").GetInfo("apiSchemas").deletedItems
    # The removal leaves left_edge alone in group carry: said, not refused.
    assert [(i.issue.code, i.refuses) for i in verdict.items] == [("GS.008", False)]
    with pytest.raises(ValueError, match="no such GripperSlotAPI instance"):
        remove_gripper_slot(prim, "right_edge")


def test_an_edits_layer_removes_with_delete_and_never_touches_the_asset(tote, tmp_path):
    asset = tote.GetRootLayer()
    text = asset.ExportToString()
    stage = Usd.Stage.Open(create_edits_layer(asset, asset.realPath))
    prim = stage.GetPrimAtPath("/Tote")
    remove_gripper_slot(prim, "right_edge")
    apply_gripper_slot(prim, "front", **SLOT)
    edits = stage.GetRootLayer().GetPrimAtPath("/Tote")
    assert edits.specifier == Sdf.SpecifierOver
    listop = edits.GetInfo("apiSchemas")
    assert list(listop.deletedItems) == ["GripperSlotAPI:right_edge"]
    assert list(listop.prependedItems) == ["GripperSlotAPI:front"]
    assert asset.ExportToString() == text
    assert list_slot_instances(prim) == ["front", "left_edge"]
    remove_gripper_slot(prim, "front")  # authored in this layer: its specs go, no delete
    assert (
        list(stage.GetRootLayer().GetPrimAtPath("/Tote").GetInfo("apiSchemas").prependedItems) == []
    )


def test_another_slots_problem_is_not_blamed_on_a_new_one(write_usda):
    path = write_usda(
        """
        def Xform "Box" (
            prepend apiSchemas = ["GripperSlotAPI:bad"]
        )
        {
            double gripperSlot:bad:upRange = -1
            def Cube "body"
            {
                double size = 0.1
            }
        }
        """
    )
    stage = Usd.Stage.Open(str(path))
    edit = SlotEdit("/Box", "good", (0, 0, 0), (0, 0, -1), (1, 0, 0), 0.05)
    verdict = check_edit(stage, edit)
    assert verdict.ok and verdict.items == ()
    assert {i.code for i in validate(stage).issues} == {"GS.002"}  # still there, not ours
    # Editing the broken slot itself: its own problem is reported, and refuses.
    verdict = check_edit(stage, SlotEdit("/Box", "bad", slot_input_angle=10))
    assert [i.issue.code for i in verdict.refused] == ["GS.002"]


def test_check_edit_writes_nothing_and_a_proposal_stage_is_reusable(tote):
    before = _text(tote)
    tote.GetSessionLayer().ImportFromString(
        '#usda 1.0\nover "Tote" (\n    prepend apiSchemas = ["GripperSlotAPI:session"]\n)\n{\n'
        "    point3d gripperSlot:session:center = (0, 0.145, 0.12)\n"
        "    vector3d gripperSlot:session:spanAxis = (0, 1, 0)\n}\n"
    )
    session = tote.GetSessionLayer().ExportToString()
    notices = _Notices(tote)
    scratch = ProposalStage(tote)
    for x in (0.0, 0.1, 1.5, 0.05):
        verdict = check_edit(
            tote,
            SlotEdit("/Tote", "front", (x, -0.145, 0.12), (0, 0, -1), (0, 1, 0), 0.2),
            scratch=scratch,
        )
        assert verdict.ok == (x != 1.5)
    # The session layer's slot is seen (unsaved work): editing it is judged with it.
    assert check_edit(tote, SlotEdit("/Tote", "session", up_range=0.1), scratch=scratch).ok
    assert notices.count == 0
    assert _text(tote) == (before[0], session)


def test_a_weaker_edit_target_hidden_by_a_stronger_opinion_is_refused(tote):
    tote.GetSessionLayer().ImportFromString(
        '#usda 1.0\nover "Tote"\n{\n    double gripperSlot:left_edge:upRange = 0.3\n}\n'
    )
    before = tote.GetRootLayer().ExportToString()
    with pytest.raises(ValueError, match=r"a stronger layer overrides .*upRange"):
        apply_gripper_slot(tote.GetPrimAtPath("/Tote"), "left_edge", up_range=0.1)
    assert tote.GetRootLayer().ExportToString() == before
    tote.SetEditTarget(tote.GetSessionLayer())
    apply_gripper_slot(tote.GetPrimAtPath("/Tote"), "left_edge", up_range=0.1)
    assert read_gripper_slots(tote.GetPrimAtPath("/Tote"), ["left_edge"])[0].up_range_local == 0.1


def test_instance_proxies_and_missing_prims_are_refused(write_usda):
    path = write_usda(
        """
        def Xform "Proto"
        {
            def Cube "body"
            {
                double size = 0.1
            }
        }
        def Xform "Inst" (
            instanceable = true
            prepend references = </Proto>
        )
        {
        }
        """
    )
    stage = Usd.Stage.Open(str(path))
    with pytest.raises(ValueError, match=r"is an instance proxy .*instanceable prim </Inst>"):
        check_edit(stage, SlotEdit("/Inst/body", "s", **SLOT))
    with pytest.raises(PrimNotFoundError, match="no object prim at </Nope>"):
        check_edit(stage, SlotEdit("/Nope", "s", **SLOT))
    with pytest.raises(ValueError, match="object path is 'Proto'; expected an absolute prim path"):
        check_edit(stage, SlotEdit("Proto", "s"))
    verdict = check_edit(stage, SlotEdit("/Proto", "1bad", **SLOT))
    assert [i.issue.code for i in verdict.refused] == ["GS.005"]


@pytest.mark.parametrize(
    ("values", "code", "field"),
    [
        ({"center": "abc"}, "GS.001", "center"),
        ({"forward": (math.nan, 0, -1)}, "GS.001", "forward"),
        ({"span_axis": (0, 0, 1)}, "GS.001", "span_axis"),  # parallel to forward
        ({"up_range": 1e300}, "GS.002", "up_range"),
        ({"up_range": "0.2"}, "GS.002", "up_range"),
        ({"slot_input_angle": -1}, "GS.003", "slot_input_angle"),
        ({"lr": 2}, "GS.004", "lr"),
        ({"group": 5}, "GS.008", "group"),
        ({"group": "g\udcff"}, "GS.008", "group"),
    ],
)
def test_each_value_is_refused_with_its_rule_and_field(tote, values, code, field):
    verdict = check_edit(tote, SlotEdit("/Tote", "front", **{**SLOT, **values}))
    assert not verdict.ok
    assert verdict.refused[0].issue.code == code and field in verdict.refused[0].fields


def test_define_grasp_line_passes_simready_and_the_gp_rules(prop):
    block = prop.GetPrimAtPath("/Block")
    line = define_grasp_line(block, "grasp_identifier_03", (-0.04, 0, 0.02), (0.04, 0, 0.02))
    curve = UsdGeom.BasisCurves(line)
    assert curve and curve.GetTypeAttr().Get() == "linear"
    assert list(curve.GetCurveVertexCountsAttr().Get()) == [2]
    assert len(curve.GetPointsAttr().Get()) == 2 and curve.GetPurposeAttr().Get() == "guide"
    assert curve.GetWidthsInterpolation() == "constant"
    # SimReady's GSP.001 reads BasisCurves named grasp_identifier* under the default prim.
    found = [
        p
        for p in Usd.PrimRange(prop.GetDefaultPrim())
        if p.IsA(UsdGeom.BasisCurves) and p.GetName().startswith("grasp_identifier")
    ]
    assert line in found
    assert "/Block/grasp_identifier_03" in {x.path for x in find_grasp_lines(prop)}
    codes = {(i.code, i.prim) for i in validate(prop).issues}
    assert not {c for c in codes if c[1] == "/Block/grasp_identifier_03"}
    define_grasp_line(block, "grasp_identifier_03", p1=(0.05, 0, 0.02))  # edit one point
    assert list(map(tuple, curve.GetPointsAttr().Get())) == [
        pytest.approx((-0.04, 0, 0.02)),
        pytest.approx((0.05, 0, 0.02)),
    ]


@pytest.mark.parametrize(
    ("name", "points", "code", "words"),
    [
        ("grasp_identifier_09", ((-0.04, 0.3, 0), (0.04, 0.3, 0)), "GP.001", "does not meet"),
        ("grasp_identifier_09", ((0, 0, 0), (0, 0, 0)), "GP.002", "coincide"),
        ("grasp_identifier_09", ((1e300, 0, 0), (0, 0, 0)), "GP.002", "point3f[] holds"),
        ("grasp_identifier_09", (("a", 0, 0), (0, 0, 0)), "GP.002", "expected 3 finite numbers"),
        ("line_09", ((-0.04, 0, 0), (0.04, 0, 0)), "GSP.001", "does not start with"),
    ],
)
def test_grasp_lines_the_rules_refuse_are_not_authored(prop, name, points, code, words):
    before = _text(prop)
    with pytest.raises(AuthoringError) as raised:
        define_grasp_line(prop.GetPrimAtPath("/Block"), name, *points)
    assert raised.value.verdict.refused[0].issue.code == code
    assert words in str(raised.value)
    assert _text(prop) == before


def test_a_line_too_wide_for_a_parallel_jaw_is_refused(write_usda):
    path = write_usda(
        """
        #usda 1.0
        (
            defaultPrim = "Box"
            metersPerUnit = 1
        )
        def Xform "Box" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI"]
        )
        {
            def Cube "body"
            {
                double size = 0.3
            }
        }
        """
    )
    stage = Usd.Stage.Open(str(path))
    verdict = check_edit(stage, LineEdit("/Box", "grasp_identifier_01", (-0.2, 0, 0), (0.2, 0, 0)))
    assert [i.issue.code for i in verdict.refused] == ["GP.003"]
    params = {"grasp_line_max_width_m": 0.4}
    assert check_edit(stage, verdict.edit, params=params).ok


def test_a_line_outside_the_default_prim_is_refused(write_usda):
    path = write_usda(
        """
        #usda 1.0
        (
            defaultPrim = "Box"
        )
        def Xform "Box"
        {
        }
        def Xform "Other"
        {
            def Cube "body"
            {
                double size = 0.04
            }
        }
        """
    )
    stage = Usd.Stage.Open(str(path))
    verdict = check_edit(
        stage, LineEdit("/Other", "grasp_identifier_01", (-0.04, 0, 0), (0.04, 0, 0))
    )
    assert "outside the default prim </Box>" in verdict.refused[0].issue.message


def test_remove_grasp_line_here_and_from_an_edits_layer(prop):
    block = prop.GetPrimAtPath("/Block")
    asset = prop.GetRootLayer()
    text = asset.ExportToString()
    edits = Usd.Stage.Open(create_edits_layer(asset, asset.realPath))
    remove_grasp_line(edits.GetPrimAtPath("/Block"), "grasp_identifier_02")
    assert not edits.GetPrimAtPath("/Block/grasp_identifier_02").IsActive()
    assert asset.ExportToString() == text
    verdict = remove_grasp_line(block, "grasp_identifier_02")
    assert not prop.GetPrimAtPath("/Block/grasp_identifier_02") and verdict.ok
    # The last line: no prim is named grasp_identifier* any more, so the stage no longer
    # declares itself a graspable prop (GSP.001's trigger, SimReady's).
    verdict = remove_grasp_line(block, "grasp_identifier_01")
    assert verdict.ok and verdict.items == () and find_grasp_lines(prop) == []


def test_define_and_set_gripper_site_are_judged_by_the_gr_rules():
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, 1)
    notices = _Notices(stage)
    prim = define_gripper_site(stage, "/G/tcp", 0.085, max_grip_force=20, translate=(0, 0, 0.1))
    assert notices.count == 1
    assert stage.GetPrimAtPath("/G").GetSpecifier() == Sdf.SpecifierDef  # as DefinePrim
    assert validate(stage, rules=[c for c in RULES if c.startswith("GR.")]).issues == []
    with pytest.raises(AuthoringError, match=r"grip_line: GR\.005 .*grip line \[0, 0, 0\] is zero"):
        set_gripper_site(prim, grip_line=(0, 0, 0))
    with pytest.raises(AuthoringError, match=r"GR\.006|GR\.004"):
        set_gripper_site(prim, max_opening=-1)
    bare = stage.DefinePrim("/Bare", "Xform")
    with pytest.raises(AuthoringError, match=r"GR\.002 .*GR\.003"):
        set_gripper_site(bare, max_opening=0.05)  # no axes yet: give them in the same call
    assert bare.GetAppliedSchemas() == []
    mesh = stage.DefinePrim("/Mesh", "Mesh")
    verdict = check_edit(
        stage,
        SiteEdit("/Mesh", define=True, max_opening=0.05, forward=(0, 0, 1), grip_line=(0, 1, 0)),
    )
    assert [i.issue.code for i in verdict.refused] == ["GR.001"]  # never retyped
    assert mesh.GetTypeName() == "Mesh"


def test_world_values_are_converted_to_the_prims_frame(write_usda):
    path = write_usda(
        """
        def Xform "Box"
        {
            double3 xformOp:translate = (1, 2, 0)
            double3 xformOp:rotateXYZ = (0, 0, 90)
            float3 xformOp:scale = (2, 2, 2)
            uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateXYZ", "xformOp:scale"]
            def Cube "body"
            {
                double size = 0.1
            }
        }
        """
    )
    stage = Usd.Stage.Open(str(path))
    # World: the box's centre (1, 2, 0); closing along world Y = the box's local X.
    edit = SlotEdit("/Box", "s", (1, 2, 0), (0, 0, -3), (0, 1, 0), 0.2)
    local = convert_edit_from_world(stage, edit)
    np.testing.assert_allclose(local.center, (0, 0, 0), atol=1e-12)
    np.testing.assert_allclose(local.span_axis, (1, 0, 0), atol=1e-12)
    np.testing.assert_allclose(local.forward, (0, 0, -1), atol=1e-12)
    assert local.up_range == pytest.approx(0.1)  # 0.2 m in the world is 0.1 under scale 2
    author_edit(stage, local)
    slot = read_gripper_slots(stage.GetPrimAtPath("/Box"))[0]
    np.testing.assert_allclose(slot.center, (1, 2, 0), atol=1e-12)
    np.testing.assert_allclose(slot.span_axis, (0, 1, 0), atol=1e-12)
    assert slot.up_range == pytest.approx(0.2)
    singular = write_usda(
        'def Xform "Flat"\n{\nfloat3 xformOp:scale = (0, 1, 1)\n'
        'uniform token[] xformOpOrder = ["xformOp:scale"]\n}\n',
        "flat.usda",
    )
    flat = Usd.Stage.Open(str(singular))
    with pytest.raises(ValueError, match=r"singular or not finite .*--frame object"):
        convert_edit_from_world(flat, SlotEdit("/Flat", "s", center=(0, 0, 0)))
