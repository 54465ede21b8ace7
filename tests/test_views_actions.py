"""The Qt-free menu actions shared by usdview and Kit, on real usd-core stages."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES
from pxr import Usd

from usdgrip.errors import GripperError
from usdgrip.grasping.isaac_yaml import read_isaac_grasp
from usdgrip.views import actions, overlays


@pytest.fixture
def tote():
    return Usd.Stage.Open(str(EXAMPLES / "tote.usda"))


def test_find_slot_prims_filters_by_root(tote):
    assert actions.find_slot_prims(tote) == ["/Tote"]
    assert actions.find_slot_prims(tote, ["/Tote"]) == ["/Tote"]
    assert actions.find_slot_prims(tote, ["/Tote/body"]) == []


def test_show_slot_overlays_draws_in_the_session_layer_and_reports(tote):
    shown = actions.show_slot_overlays(tote, ["/Tote", "/Missing"])
    assert shown.slot_count == 2
    assert shown.problems == []
    assert overlays.list_overlays(tote, "slots") == [
        "/__usdgrip_overlays/slots/Tote_left_edge",
        "/__usdgrip_overlays/slots/Tote_right_edge",
    ]
    assert tote.GetRootLayer().GetPrimAtPath("/__usdgrip_overlays") is None
    assert shown.status == "usdgrip: 2 slot(s) shown on 1 prim(s)", "/Missing draws nothing"


def test_show_slot_overlays_names_a_prim_it_skips(open_usda):
    stage = open_usda(
        """
        def Xform "Box" (prepend apiSchemas = ["GripperSlotAPI:s"])
        {
            string gripperSlot:s:center = "oops"
        }
        """
    )
    shown = actions.show_slot_overlays(stage, ["/Box"])
    assert shown.slot_count == 0
    assert len(shown.problems) == 1 and "</Box>" in shown.problems[0]
    assert shown.status.startswith("usdgrip: 0 slot(s) shown on 0 prim(s); 1 skipped: ")


def test_sampling_reads_on_one_side_and_samples_without_the_stage(tote):
    sampling = actions.read_sampling_input(tote, "/Tote")
    assert [s.name for s in sampling.slots] == ["left_edge", "right_edge"]
    first = actions.sample_grasp_set(sampling, count=3, seed=7, open_width=0.05)
    again = actions.sample_grasp_set(sampling, count=3, seed=7, open_width=0.05)
    assert len(first) == 6 and first.source == "sample"
    np.testing.assert_array_equal(first.poses, again.poses)
    paths = actions.author_grasp_set_overlays(tote, first)
    assert len(paths) == 6


def test_sampling_input_errors_name_the_object(tote):
    with pytest.raises(ValueError, match="Choose an object"):
        actions.read_sampling_input(tote, "")
    with pytest.raises(ValueError, match="</Tote/body> has no grasp slots"):
        actions.read_sampling_input(tote, "/Tote/body")
    with pytest.raises(GripperError, match="no prim at </Nope>"):
        actions.read_sampling_input(tote, "/Nope")


def test_grasp_overlays_of_a_removed_object_are_not_drawn(tmp_path):
    copy = tmp_path / "tote.usda"  # removed in this copy only (layers are shared per file)
    copy.write_bytes((EXAMPLES / "tote.usda").read_bytes())
    stage = Usd.Stage.Open(str(copy))
    grasps = actions.sample_grasp_set(actions.read_sampling_input(stage, "/Tote"), 1, seed=1)
    stage.RemovePrim("/Tote")
    assert actions.author_grasp_set_overlays(stage, grasps) == []


def test_default_open_width_comes_from_a_site():
    gripper = Usd.Stage.Open(str(EXAMPLES / "gripper.usda"))
    assert actions.find_default_open_width(gripper) == pytest.approx(0.085)
    assert actions.find_default_open_width(Usd.Stage.CreateInMemory()) is None


def test_plan_request_needs_object_site_and_a_saved_stage(tote):
    with pytest.raises(ValueError, match="object to grasp"):
        actions.build_plan_request(tote, "", "", "/Gripper/tcp", 5, 0)
    with pytest.raises(ValueError, match="gripper site"):
        actions.build_plan_request(tote, "/Tote", "", "", 5, 0)
    with pytest.raises(ValueError, match="not saved to a file"):
        actions.build_plan_request(Usd.Stage.CreateInMemory(), "/X", "", "/S", 5, 0)
    request = actions.build_plan_request(tote, "/Tote", "", "/Tote", 5, 3)
    assert request.grippers[0].asset_path == tote.GetRootLayer().realPath
    assert request.seed == 3


def test_plan_then_export_round_trips(tmp_path):
    mug = Usd.Stage.Open(str(EXAMPLES / "mug.usda"))
    request = actions.build_plan_request(
        mug, "/Mug", str(EXAMPLES / "gripper.usda"), "/Gripper/tcp", 4, 0
    )
    grasps = actions.plan_grasp_set(request, methods=("slots",))
    assert 0 < len(grasps) <= 4 and grasps.source == "plan"
    written = actions.export_grasp_set(grasps, tmp_path / "g.yaml")
    assert list(read_isaac_grasp(written).grasps) == list(grasps.labels)


def test_export_refuses_nothing_and_sampled_sets(tote, tmp_path):
    with pytest.raises(ValueError, match="nothing to export"):
        actions.export_grasp_set(None, tmp_path / "x.yaml")
    sampled = actions.sample_grasp_set(actions.read_sampling_input(tote, "/Tote"), 1, 0)
    with pytest.raises(ValueError, match="nothing to export"):
        actions.export_grasp_set(sampled, tmp_path / "x.yaml")
    assert not (tmp_path / "x.yaml").exists()
