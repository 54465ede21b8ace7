"""KitGrippers (the Kit menu's commands) on bad input, in-process with a tiny UsdContext."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest
from conftest import EXAMPLES
from pxr import Usd

from usdgrip.hosts.kit import MENU_ENTRIES, KitGrippers
from usdgrip.views import overlays


class Context:
    """The two members of omni.usd's UsdContext the commands use."""

    def __init__(self, stage: Usd.Stage | None = None, selected: tuple[str, ...] = ()) -> None:
        self.stage, self.selected = stage, list(selected)

    def get_stage(self):
        return self.stage

    def get_selection(self):
        return self

    def get_selected_prim_paths(self):
        return self.selected


def make(stage=None, selected=(), **settings):
    lines: list[str] = []
    grippers = KitGrippers(Context(stage, selected), lambda: settings, notify=lines.append)
    return grippers, lines


def copy_of(tmp_path, name):
    path = tmp_path / name
    path.write_bytes((EXAMPLES / name).read_bytes())
    return Usd.Stage.Open(str(path))


@pytest.mark.parametrize("method", [m for _, m in MENU_ENTRIES])
def test_every_entry_explains_when_no_stage_is_open(method):
    grippers, lines = make()
    assert getattr(grippers, method)() is None
    assert lines == ["usdgrip: open a stage first."]


def test_validate_without_omni_ui_logs_each_issue():
    grippers, lines = make(Usd.Stage.Open(str(EXAMPLES / "broken" / "GS.002-slot-up-range.usda")))
    report = grippers.validate_stage()
    assert [i.code for i in report.issues] == ["GS.002"]
    assert lines[0].startswith("usdgrip: 1 issue(s) (1 failure")
    assert lines[1].startswith("GS.002 failure </")


def test_fix_of_an_issue_without_fix_is_refused():
    grippers, _ = make(Usd.Stage.Open(str(EXAMPLES / "broken" / "GS.002-slot-up-range.usda")))
    grippers.validate_stage()
    with pytest.raises(ValueError, match=r"GS\.002 <.*> has no fix"):
        grippers.fix_issue(0)


def test_sample_on_a_stage_without_slots_says_so():
    grippers, lines = make(Usd.Stage.Open(str(EXAMPLES / "gripper.usda")))
    assert grippers.sample_slot_grasps() is None
    assert lines == ["usdgrip: Choose an object with grasp slots first."]


def test_plan_needs_a_selection_a_gripper_and_a_saved_stage(tmp_path):
    mug = copy_of(tmp_path, "mug.usda")
    grippers, lines = make(mug)
    assert grippers.plan_grasps() is None
    assert lines[-1].startswith("usdgrip: Choose the object to grasp first.")
    grippers, lines = make(mug, ["/Mug"])
    assert grippers.plan_grasps() is None
    assert "Choose a gripper asset with a gripper site first" in lines[-1]
    assert "/exts/usdgrip.kit/gripper = FILE:/Site" in lines[-1]
    grippers, lines = make(mug, ["/Mug"], gripper="no-separator.usda")
    assert grippers.plan_grasps() is None
    assert "expected FILE:/Site/Path" in lines[-1]
    memory = Usd.Stage.CreateInMemory()
    memory.DefinePrim("/Mug", "Xform")
    gripper = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
    grippers, lines = make(memory, ["/Mug"], gripper=gripper)
    assert grippers.plan_grasps() is None
    assert "not saved to a file" in lines[-1]


def test_a_planner_error_in_the_worker_is_a_message(tmp_path):
    mug = copy_of(tmp_path, "mug.usda")
    missing = f"{tmp_path / 'missing.usda'}:/Gripper/tcp"
    grippers, lines = make(mug, ["/Mug"], gripper=missing)

    async def run():
        return await grippers.plan_grasps()

    assert asyncio.run(run()) is None
    assert lines[-1].startswith("usdgrip: planning /Mug failed: ")
    assert "missing.usda" in lines[-1]
    assert grippers.grasps is None


def test_a_result_for_a_replaced_stage_is_dropped(tmp_path):
    tote = copy_of(tmp_path, "tote.usda")
    grippers, lines = make(tote)

    async def run():
        task = grippers.sample_slot_grasps()
        grippers.usd_context.stage = Usd.Stage.CreateInMemory()  # File > New meanwhile
        return await task

    assert asyncio.run(run()) is None
    assert "the stage changed meanwhile; result dropped" in lines[-1]
    assert overlays.list_overlays(tote, "grasps") == []


def test_export_without_a_plan_and_to_an_unwritable_folder(tmp_path):
    mug = copy_of(tmp_path, "mug.usda")
    grippers, lines = make(mug, ["/Mug"], gripper=f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp")
    assert grippers.export_grasps() is None
    assert lines[-1].startswith("usdgrip: nothing to export")

    async def run():
        return await grippers.plan_grasps()

    assert asyncio.run(run()) is not None
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(locked, os.W_OK):  # root writes anywhere: a missing folder instead
            target = tmp_path / "no" / "such" / "dir" / "g.yaml"
        else:
            target = locked / "g.yaml"
        assert grippers.export_grasps(target) is None
        assert lines[-1].startswith("usdgrip: ") and "g.yaml" in lines[-1]
    finally:
        locked.chmod(stat.S_IRWXU)
    written = grippers.export_grasps()
    assert written == tmp_path / "mug_grasps.yaml" and written.is_file()


def test_clear_forgets_the_grasps(tmp_path):
    tote = copy_of(tmp_path, "tote.usda")
    grippers, _ = make(tote)

    async def run():
        return await grippers.sample_slot_grasps()

    assert asyncio.run(run()) is not None
    assert overlays.list_overlays(tote, "grasps")
    grippers.clear_overlays()
    assert grippers.grasps is None
    assert overlays.list_overlays(tote, "grasps") == []
