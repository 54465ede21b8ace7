"""The grasping wing's records: inputs read once, one gripper rule, one support, provenance.

Real usd-core stages in tmp_path, the real planner, python-fcl and MuJoCo.
"""

from __future__ import annotations

import json

import pytest
import trimesh
from conftest import EXAMPLES

import usdgrip
from usdgrip.cli import main
from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.grasping.inputs import StageSource, read_grasp_inputs
from usdgrip.grasping.isaac_yaml import read_isaac_grasp, write_isaac_grasp

pytest.importorskip("mujoco")

GRIPPER_FILE = EXAMPLES / "gripper.usda"
GRIPPER = GripperRef(asset_path=str(GRIPPER_FILE), prim_path="/Gripper/tcp")
GRIPPER_ARG = f"{GRIPPER_FILE}:/Gripper/tcp"


@pytest.fixture(autouse=True)
def _coacd_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def request_for(path, prim, count=10, grippers=(GRIPPER,)):
    return GraspPlanningRequest(
        object=GraspObject(geometry=GeometryRef(asset_path=str(path), prim_path=prim)),
        grippers=tuple(grippers),
        max_candidates_per_gripper=count,
    )


# --- read once ---------------------------------------------------------------------------------


def test_evaluate_lines_reads_each_input_once(monkeypatch, capsys, tmp_path):
    # Before the rebuild: find_grasp_lines ran 4 times, the mesh, its manifold check, the site
    # and the slots twice each (plan and evaluate each read them again).
    from usdgrip.usd import geometry, grasp_lines, sites, slots

    calls: dict[str, int] = {}
    for module, name in (
        (grasp_lines, "find_grasp_lines"),
        (geometry, "read_object_mesh"),
        (geometry, "check_manifold"),
        (sites, "read_gripper_site"),
        (slots, "read_gripper_slots"),
    ):
        real = getattr(module, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls[_name] = calls.get(_name, 0) + 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    out = tmp_path / "lines.json"
    code, _, err = run_cli(
        capsys, "evaluate", EXAMPLES / "graspable_prop.usda", "--gripper", GRIPPER_ARG,
        "--lines", "--candidates-per-line", "1", "-o", out,
    )  # fmt: skip
    assert code == 1, err  # one line misses the block
    assert json.loads(out.read_text())["summary"]["held"] == 1
    assert calls == {
        "find_grasp_lines": 1,
        "read_object_mesh": 1,
        "check_manifold": 1,
        "read_gripper_site": 1,
        "read_gripper_slots": 1,
    }


def test_plan_then_evaluate_on_one_inputs_record_reads_nothing_again(monkeypatch):
    from usdgrip.usd import geometry

    request = request_for(EXAMPLES / "mug.usda", "/Mug", count=5)
    inputs = read_grasp_inputs(request.object.geometry, request.grippers, table=True)
    monkeypatch.setattr(geometry, "read_object_mesh", lambda *a, **k: pytest.fail("read again"))
    planned = usdgrip.plan_grasps(request, table=True, inputs=inputs)
    options = usdgrip.EvaluationOptions(table=True)
    evaluated = usdgrip.evaluate_grasps(planned, options=options, inputs=inputs)
    assert evaluated.metadata.physics["support"] == "table"
    assert all(c.physics is not None for c in evaluated.grasps.values())
    with pytest.raises(ValueError, match="inputs were read with support table"):
        usdgrip.evaluate_grasps(planned, options=usdgrip.EvaluationOptions(), inputs=inputs)


def test_stage_source_finds_lines_once_and_shares_its_cache():
    source = StageSource()
    first = source.grasp_lines(EXAMPLES / "graspable_prop.usda")
    assert source.grasp_lines(str(EXAMPLES / "graspable_prop.usda")) is first
    assert StageSource(source).grasp_lines(EXAMPLES / "graspable_prop.usda") is first


# --- one support for planning and physics ----------------------------------------------------


def ring_usda(r_min=0.05, r_max=0.065, height=0.03) -> str:
    """A flat ring (annulus) lying on z = 0 at (0.2, 0.1, 0.5), metres, Z up."""
    ring = trimesh.creation.annulus(r_min=r_min, r_max=r_max, height=height, sections=16)
    ring.apply_translation((0, 0, height / 2))
    points = ", ".join(f"({x:.9g}, {y:.9g}, {z:.9g})" for x, y, z in ring.vertices)
    indices = ", ".join(str(int(i)) for i in ring.faces.ravel())
    counts = ", ".join("3" for _ in ring.faces)
    return f"""#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "Ring"
{{
    double3 xformOp:translate = (0.2, 0.1, 0.5)
    uniform token[] xformOpOrder = ["xformOp:translate"]
    def Mesh "shape"
    {{
        int[] faceVertexCounts = [{counts}]
        int[] faceVertexIndices = [{indices}]
        point3f[] points = [{points}]
    }}
}}
"""


def test_plan_table_drops_grasps_that_cut_it_and_the_rest_hold(tmp_path, capsys):
    ring = tmp_path / "ring.usda"
    ring.write_text(ring_usda())
    args = (ring, "--object", "/Ring", "--gripper", GRIPPER_ARG, "--max-candidates", "10")
    # Planned without the table, most grasps come from the side or below: on the table
    # the open hand cuts it (the physics says so: collides_open, hit the support).
    free = tmp_path / "free.yaml"
    assert run_cli(capsys, "plan", *args, "-o", free)[0] == 0
    on_table = tmp_path / "free_on_table.yaml"
    code, out, _ = run_cli(
        capsys, "evaluate", ring, "--object", "/Ring", "--gripper", GRIPPER_ARG,
        "--grasps", free, "--table", "-o", on_table,
    )  # fmt: skip
    cut = [c for c in read_isaac_grasp(on_table).grasps.values() if c.physics.outcome != "held"]
    assert cut and all(set(c.physics.collides_open_with) == {"support"} for c in cut)
    assert "collides_open hit: support" in out
    # plan --table: the planner drops them; plan --evaluate --table: the rest hold on it.
    planned = tmp_path / "table.yaml"
    code, _, err = run_cli(capsys, "plan", *args, "--table", "-o", planned)
    assert code == 0
    result = read_isaac_grasp(planned)
    assert "support=table" in result.metadata.generation_mode
    assert "vs obstacle #2 'table'" in err  # the dropped ones hit the table
    evaluated = tmp_path / "table_evaluated.yaml"
    code, _, err = run_cli(capsys, "plan", *args, "--table", "--evaluate", "-o", evaluated)
    assert code == 0, err
    outcomes = [c.physics.outcome for c in read_isaac_grasp(evaluated).grasps.values()]
    assert outcomes and "collides_open" not in outcomes and outcomes.count("held") >= 1
    assert read_isaac_grasp(evaluated).metadata.physics["support"] == "table"


CUBE_OBJECT = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def Xform "Block"
    {
        double3 xformOp:translate = (0, 0, 0.03)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        def Cube "body"
        {
            double size = 0.06
        }
    }
    def Cube "Table"
    {
        double size = 1
        double3 xformOp:translate = (0, 0, -0.5)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
}
"""


def test_an_object_and_a_table_of_cube_prims_plan_and_evaluate(tmp_path, capsys):
    # Before: "has no mesh" from the planner, "no UsdGeom.Mesh" from physics.
    path = tmp_path / "cubes.usda"
    path.write_text(CUBE_OBJECT)
    common = ("--object", "/World/Block", "--gripper", GRIPPER_ARG, "--scene", path)
    planned = tmp_path / "cubes.yaml"
    code, _, err = run_cli(
        capsys, "plan", path, *common, "--support", "/World/Table", "--max-candidates", "6",
        "-o", planned,
    )  # fmt: skip
    assert code == 0, err
    assert "1 shape(s) at or under the object </World/Block> left out" in err
    evaluated = tmp_path / "cubes_evaluated.yaml"
    code, _, err = run_cli(
        capsys, "evaluate", path, *common, "--support", "/World/Table", "--grasps", planned,
        "-o", evaluated,
    )  # fmt: skip
    assert code == 0, err
    result = read_isaac_grasp(evaluated)
    assert result.metadata.physics["support"] == f"{path}:/World/Table"
    assert any(c.physics.outcome == "held" for c in result.grasps.values())


def test_table_and_support_mean_the_same_in_plan_and_batch_plan(tmp_path, capsys):
    ring = tmp_path / "objects" / "ring.usda"
    ring.parent.mkdir()
    ring.write_text(
        ring_usda().replace(
            "(\n    metersPerUnit", '(\n    defaultPrim = "Ring"\n    metersPerUnit', 1
        )
    )
    single = tmp_path / "single.yaml"
    assert run_cli(
        capsys, "plan", ring, "--object", "/Ring", "--gripper", GRIPPER_ARG, "--table",
        "--max-candidates", "10", "-o", single,
    )[0] == 0  # fmt: skip
    out_dir = tmp_path / "batch"
    code, _, err = run_cli(
        capsys, "batch", "plan", ring.parent, "--gripper", GRIPPER_ARG, "--table",
        "--max-candidates", "10", "--out-dir", out_dir, "--jobs", "1",
    )  # fmt: skip
    assert code == 0, err
    batch = read_isaac_grasp(out_dir / "ring.yaml")
    alone = read_isaac_grasp(single)
    assert list(batch.grasps) == list(alone.grasps)
    assert "support=table" in batch.metadata.generation_mode
    code, _, err = run_cli(
        capsys, "batch", "plan", ring.parent, "--gripper", GRIPPER_ARG, "--table",
        "--support", "/Floor", "--out-dir", out_dir,
    )  # fmt: skip
    assert code == 2 and "choose one" in err


# --- one rule for a bad gripper ----------------------------------------------------------------

NO_AXIS = """#usda 1.0
def Xform "G"
{
    def Xform "tcp" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {
        float gripper:maxOpening = 0.08
    }
}
"""


def test_planner_and_evaluator_skip_the_same_bad_gripper_with_one_message(tmp_path, capsys):
    bad_file = tmp_path / "bad.usda"
    bad_file.write_text(NO_AXIS)
    bad = GripperRef(asset_path=str(bad_file), prim_path="/G/tcp")
    message = f"gripper {bad}: skipped: the site has no usable forward axis"
    request = request_for(EXAMPLES / "mug.usda", "/Mug", count=4, grippers=(GRIPPER, bad))
    planned = usdgrip.plan_grasps(request)
    assert message in planned.metadata.warnings and planned.grippers == (GRIPPER,)
    # The evaluator reads both grippers of a result naming them: the same skip, same words.
    with_bad = planned.model_copy(
        update={
            "grasps": {
                **planned.grasps,
                "g_bad": next(iter(planned.grasps.values())).model_copy(
                    update={"candidate_id": "g_bad", "gripper": bad}
                ),
            }
        }
    )
    evaluated = usdgrip.evaluate_grasps(with_bad, request.object.geometry, table=True)
    assert message in evaluated.metadata.warnings[len(planned.metadata.warnings) :]
    assert evaluated.grasps["g_bad"].physics is None
    # Alone, it leaves no gripper: exit 2 in both commands, one line naming it.
    out = tmp_path / "o.yaml"
    mug = ("--object", "/Mug", "--gripper", f"{bad_file}:/G/tcp")
    code, _, err = run_cli(capsys, "plan", EXAMPLES / "mug.usda", *mug, "-o", out)
    expected = f"{bad_file}: </G/tcp>: the site has no usable forward axis; no usable gripper"
    assert code == 2 and expected in err and not out.exists()
    write_isaac_grasp(with_bad, tmp_path / "g.yaml")
    code, _, err = run_cli(
        capsys, "evaluate", EXAMPLES / "mug.usda", *mug, "--grasps", tmp_path / "g.yaml",
        "-o", out,
    )  # fmt: skip
    assert code == 2 and expected in err


def test_one_pad_width_rule_for_proxy_and_physics(tmp_path):
    from usdgrip.grasping.grasp_evaluation import build_physics_hand
    from usdgrip.grasping.gripper_defaults import DEFAULT_PAD_WIDTH
    from usdgrip.grasping.physics import PhysicsGripper

    # The SimReady 2F-85 authors its grip line as the jaw span (= max opening): no pad width.
    site = GripperRef(
        asset_path=str(EXAMPLES / "simready_2f85.usda"),
        prim_path="/Robotiq_2F_85/base_link/gripper_01",
    )
    inputs = read_grasp_inputs(
        GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug"),
        [site],
        gripper_model="proxy",
    )
    gripper = inputs.grippers[0]
    assert gripper.pad_width == DEFAULT_PAD_WIDTH and gripper.pad_width_defaulted
    proxy_pad = gripper.collision_model.shapes[1].shape.half_extents[1] * 2
    hand = build_physics_hand(gripper, usdgrip.EvaluationOptions())
    assert (
        proxy_pad == pytest.approx(DEFAULT_PAD_WIDTH)
        and hand.gripper.pad_width == DEFAULT_PAD_WIDTH
    )
    assert isinstance(hand.gripper, PhysicsGripper)
    assert hand.notes[0].render().endswith(f"unusable; using {DEFAULT_PAD_WIDTH:g} m")


# --- provenance as data ---------------------------------------------------------------------------


def test_provenance_travels_into_the_file_and_back(tmp_path):
    request = request_for(EXAMPLES / "mug.usda", "/Mug", count=40)
    result = usdgrip.plan_grasps(request)
    by_method: dict[str, list] = {}
    for c in result.grasps.values():
        by_method.setdefault(c.generation_method, []).append(c)
    assert {c.slot for c in by_method["slots"]} == {"handle"}
    assert all(c.group is None and c.grasp_line is None for c in by_method["slots"])
    assert all(c.slot is None and c.group is not None for c in by_method["antipodal"])
    path = write_isaac_grasp(result, tmp_path / "mug.yaml")
    assert read_isaac_grasp(path) == result
    text = path.read_text()
    assert "slot: handle" in text and "grasp_line:" not in text  # unset keys are not written
    # What a standard loader reads is unchanged: the Isaac-Grasp keys come first.
    import yaml

    entry = next(iter(yaml.safe_load(text)["grasps"].values()))
    assert list(entry)[:3] == ["confidence", "position", "orientation"]


def test_notes_render_to_the_warning_words_and_match_by_code():
    from usdgrip.grasping.provenance import Note, find_note, render_notes

    note = Note("line_misses_object", "/Block/l", "it does not meet the object (GP.001)",
                ("grasp line 'l' skipped",)).within("gripper g.usda:/G", "lines")  # fmt: skip
    assert render_notes([note]) == (
        "gripper g.usda:/G: lines: grasp line 'l' skipped: it does not meet the object (GP.001)",
    )
    assert find_note([note], ["line_misses_object"], "/Block/l") is note
    assert find_note([note], ["line_zero_width"], "/Block/l") is None
