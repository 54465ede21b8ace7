"""Issue 21 items 4, 10, 11, 12, 16-19: the physics inputs as an attacker writes them.

Each case is a real usd-core stage in tmp_path read by the real readers (and, where the
outcome is the point, real MuJoCo trials); each message must be one line naming the file,
the prim and the real cause, and no numpy or MuJoCo text may leak.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
import yaml
from conftest import EXAMPLES
from pydantic import ValidationError

from usdgrip.cli import main
from usdgrip.contracts import (
    GeometryRef,
    GraspCandidate,
    GraspOrientation,
    GraspPlanningMetadata,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.errors import GripperError
from usdgrip.frames import compute_rigid_part, compute_rotation_from_quaternion, find_rigid_poses
from usdgrip.grasping.grasp_evaluation import build_physics_world
from usdgrip.grasping.inputs import read_grasp_inputs
from usdgrip.grasping.isaac_yaml import compute_candidate_pose, write_isaac_grasp
from usdgrip.grasping.options import EvaluationOptions, OptionError

GRIPPER_FILE = str(EXAMPLES / "gripper.usda")
GRIPPER_ARG = GRIPPER_FILE + ":/Gripper/tcp"
GRIPPER = GripperRef(asset_path=GRIPPER_FILE, prim_path="/Gripper/tcp")
#: G looking down (+Z approach = -Z of M), closing along X: 180° about X.
DOWN_X = {"w": 0.0, "xyz": (1.0, 0.0, 0.0)}
_QUADS = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]


def box_usda(
    *, ops: str = "", props: str = "", header: str = "", mpu: str = "1", wrap: str = ""
) -> str:
    """A 0.04 x 0.04 x 0.1 m box mesh standing on z = 0 of prim /Block (``ops``: its xformOps).

    ``wrap`` puts /Block under a parent Xform of that name whose xformOps are ``ops``.
    """
    points = [
        (x, y, z)
        for z in (0.0, 0.1)
        for (x, y) in ((-0.02, -0.02), (0.02, -0.02), (0.02, 0.02), (-0.02, 0.02))
    ]
    pts = ", ".join(f"({x}, {y}, {z})" for x, y, z in points)
    block = f"""def Xform "Block" (prepend apiSchemas = ["PhysicsMassAPI"])
{{
    {"" if wrap else ops}
    {props}
    def Mesh "mesh"
    {{
        int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
        int[] faceVertexIndices = {_QUADS}
        point3f[] points = [{pts}]
    }}
}}"""
    if wrap:
        block = f'def Xform "{wrap}"\n{{\n    {ops}\n' + block.replace("\n", "\n    ") + "\n}"
    return f'#usda 1.0\n(\n    metersPerUnit = {mpu}\n    upAxis = "Z"\n    {header}\n)\n{block}\n'


def translate(x: str) -> str:
    return f'double3 xformOp:translate = ({x}, 0, 0)\nuniform token[] xformOpOrder = ["xformOp:translate"]'


def scale(s: str) -> str:
    return f'double3 xformOp:scale = {s}\nuniform token[] xformOpOrder = ["xformOp:scale"]'


@pytest.fixture
def write(tmp_path):
    def write_(text: str, name: str = "box.usda"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write_


def grasp_file(
    path, frame="/Block", orientation=DOWN_X, position=(0.0, 0.0, 0.075), ids=("g_top",)
):
    """An Isaac-Grasp file of one grasp across the box's top per id (it holds)."""
    grasps = {
        cid: GraspCandidate(
            candidate_id=cid,
            gripper=GRIPPER,
            confidence=0.5,
            generation_method="antipodal",
            position=position,
            orientation=orientation,
            width=0.04,
        )
        for cid in ids
    }
    metadata = GraspPlanningMetadata(
        upstream_revision="usdgrip test", seed=0, runtime_seconds=0.0, pose_frame=frame
    )
    write_isaac_grasp(GraspPlanningResult(grasps=grasps, metadata=metadata), path)
    return path


def run_cli(capsys, argv: list[str]) -> tuple[int, str]:
    """The CLI's exit code and stderr; any RuntimeWarning (numpy's) fails the test."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main([str(a) for a in argv])
    runtime = [
        f"{w.filename}: {w.message}" for w in caught if issubclass(w.category, RuntimeWarning)
    ]
    assert runtime == [], runtime
    return code, capsys.readouterr().err


def one_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"usdgrip {command}: "), err
    assert "Traceback" not in err and "Element name" not in err and "SVD" not in err
    return lines[0]


def evaluate_argv(obj, grasps, out, *extra):
    return ["evaluate", obj, "--object", "/Block", "--gripper", GRIPPER_ARG, "--grasps", grasps,
            "-o", out, "-q", *extra]  # fmt: skip


def plan_argv(obj, out, *extra):
    return ["plan", obj, "--object", "/Block", "--gripper", GRIPPER_ARG, "-o", out, "-q", *extra]


def read_inputs(path, **kwargs):
    return read_grasp_inputs(
        GeometryRef(asset_path=str(path), prim_path="/Block"), [GRIPPER], **kwargs
    )


def outcomes(path) -> dict:
    return yaml.safe_load(path.read_text())["metadata"]["physics"]["summary"]["outcomes"]


# --- item 4: a quaternion of 1e300 ------------------------------------------------------------


@pytest.mark.parametrize(
    ("w", "xyz", "norm"),
    [(1e300, (0.0, 0.0, 0.0), "1e+300"), (1e200, (1e200, 0.0, 0.0), "1.41421356e+200")],
)
def test_a_huge_quaternion_is_refused_by_the_contract_not_an_overflow(w, xyz, norm):
    with pytest.raises(ValidationError, match=rf"has norm {re.escape(norm)}; expected a unit"):
        GraspOrientation(w=w, xyz=xyz)


@pytest.mark.parametrize("command", ["evaluate", "render"])
def test_a_grasp_file_with_w_1e300_is_one_line_naming_file_and_grasp(
    command, write, tmp_path, capsys
):
    box = write(box_usda())
    grasps = grasp_file(tmp_path / "g.yaml")
    text = grasps.read_text().replace("w: 0.0", "w: 1.0e+300")
    assert "1.0e+300" in text
    grasps.write_text(text)
    argv = (
        evaluate_argv(box, grasps, tmp_path / "o.yaml")
        if command == "evaluate"
        else ["render", box, "--grasps", grasps, "-o", tmp_path / "o.png"]
    )
    code, err = run_cli(capsys, argv)
    line = one_line(err, command)
    assert code == 2
    assert f"{grasps}: " in line and "grasps.g_top.orientation" in line and "norm 1e+300" in line


def test_quaternions_within_the_tolerance_are_normalised_and_huge_ones_keep_their_rotation():
    near = GraspOrientation(w=1.0 + 5e-7, xyz=(0.0, 0.0, 0.0))  # inside 1 ± 1e-6: accepted
    candidate = GraspCandidate(
        candidate_id="g_near", gripper=GRIPPER, confidence=0.5, generation_method="antipodal",
        position=(0.0, 0.0, 0.0), orientation=near, width=0.04,
    )  # fmt: skip
    assert find_rigid_poses(compute_candidate_pose(candidate))[1]
    np.testing.assert_allclose(compute_rotation_from_quaternion([1e300, 0, 0, 0]), np.eye(3))
    quarter = compute_rotation_from_quaternion([1e300, 1e300, 0, 0])  # 90° about X, not NaN
    np.testing.assert_allclose(quarter, [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-12)


# --- item 10: the support is the object -------------------------------------------------------


@pytest.mark.parametrize("command", ["evaluate", "plan"])
def test_the_object_as_its_own_support_is_refused_naming_both(command, write, tmp_path, capsys):
    box = write(box_usda())
    grasps = grasp_file(tmp_path / "g.yaml")
    extra = ("--scene", box, "--support", "/Block")
    out = tmp_path / "o.yaml"
    argv = (
        evaluate_argv(box, grasps, out, *extra)
        if command == "evaluate"
        else plan_argv(box, out, *extra)
    )
    code, err = run_cli(capsys, argv)
    line = one_line(err, command)
    assert code == 2 and not out.exists()
    assert f"support </Block> in {box} is the object {box}:/Block itself" in line
    assert "no object named" not in line


@pytest.mark.parametrize(
    ("support", "words"),
    [("/World", "holds the object"), ("/World/Block/mesh", "is part of the object")],
)
def test_a_support_above_or_inside_the_object_is_refused(support, words, write):
    box = write(box_usda(wrap="World"))
    ref = GeometryRef(asset_path=str(box), prim_path="/World/Block")
    with pytest.raises(GripperError, match=f"support <{support}> in .*box.usda {words}"):
        read_grasp_inputs(ref, [GRIPPER], scene=str(box), support=support)


# --- item 11: an object 1e30 m away -----------------------------------------------------------


@pytest.mark.parametrize("wrap", ["", "World"])
def test_an_object_1e30_m_away_is_refused_by_the_reader(wrap, write):
    box = write(box_usda(ops=translate("1e30"), wrap=wrap))
    prim = "/World/Block" if wrap else "/Block"
    with pytest.raises(GripperError) as caught:
        read_grasp_inputs(GeometryRef(asset_path=str(box), prim_path=prim), [GRIPPER])
    message = str(caught.value)
    assert message.startswith(
        f"{box}: <{prim}> sits 1e+30 m from the world origin; expected within 1e+07 m"
    )


@pytest.mark.parametrize("command", ["plan", "evaluate", "render"])
def test_every_command_refuses_the_far_object_in_one_line(command, write, tmp_path, capsys):
    box = write(box_usda(ops=translate("1e30")))
    grasps = grasp_file(tmp_path / "g.yaml")
    out = tmp_path / "o.yaml"
    argv = {
        "plan": plan_argv(box, out),
        "evaluate": evaluate_argv(box, grasps, out),
        "render": ["render", box, "--grasps", grasps, "-o", tmp_path / "o.png"],
    }[command]
    code, err = run_cli(capsys, argv)
    assert code == 2 and "sits 1e+30 m from the world origin" in one_line(err, command)


def test_an_object_a_million_metres_away_still_holds(write, tmp_path, capsys):
    box = write(box_usda(ops=translate("1e6")))  # within the range: float64 keeps 1e-10 m
    out = tmp_path / "o.yaml"
    code, err = run_cli(capsys, evaluate_argv(box, grasp_file(tmp_path / "g.yaml"), out))
    assert code == 0, err
    assert outcomes(out) == {"held": 3}  # the default 3 trials


def test_a_far_obstacle_of_the_scene_is_refused_naming_the_scene(write, tmp_path, capsys):
    box = write(box_usda())
    scene = write(
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n'
        f'def Cube "Far"\n{{\n    {translate("-1e30")}\n}}\n',
        "scene.usda",
    )
    code, err = run_cli(capsys, plan_argv(box, tmp_path / "o.yaml", "--scene", scene))
    assert code == 2
    assert one_line(err, "plan").endswith(
        f"{scene}: </Far> sits 1e+30 m from the world origin; expected within 1e+07 m (float64 "
        "keeps 1.4e+14 m there, so its shape is lost): move it, or its scene, nearer the origin, "
        "or check the stage's metersPerUnit"
    )


# --- item 12: a mirrored object ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("signs", "rotation"),
    [
        ((-1, 1, 1), np.eye(3)),
        ((1, -1, 1), np.diag([-1.0, -1.0, 1.0])),  # local Y and Z kept, X completes
        ((1, 1, -1), np.diag([-1.0, 1.0, -1.0])),
        ((-1, -1, -1), np.diag([1.0, -1.0, -1.0])),
    ],
)
def test_a_mirror_goes_onto_local_x_and_the_frame_stays_a_rotation(signs, rotation):
    turn = compute_rotation_from_quaternion([math.cos(0.3), 0.0, 0.0, math.sin(0.3)])
    world = np.eye(4)
    world[:3, :3] = turn @ np.diag(np.multiply(signs, (2.0, 3.0, 0.5)))
    world[:3, 3] = (1.0, 2.0, 3.0)
    rigid = compute_rigid_part(world)
    np.testing.assert_allclose(rigid[:3, :3], turn @ rotation, atol=1e-12)
    assert find_rigid_poses(rigid)[1]
    local = np.linalg.inv(rigid) @ world  # what stays in the mesh: mirrors M's X only
    np.testing.assert_allclose(
        np.sign(np.diag(local[:3, :3])), (-1, 1, 1) if np.prod(signs) < 0 else (1, 1, 1)
    )


def test_grasps_planned_on_a_mirrored_box_hold_on_it_and_on_the_plain_box(write, tmp_path, capsys):
    plain = write(box_usda(), "plain.usda")
    mirrored = write(box_usda(ops=scale("(-1, 1, 1)")), "mirrored.usda")
    planned = tmp_path / "mirrored_grasps.yaml"
    code, err = run_cli(
        capsys, plan_argv(mirrored, planned, "--max-candidates", "3", "--method", "antipodal")
    )
    assert code == 0, err
    heights = [g["position"][2] for g in yaml.safe_load(planned.read_text())["grasps"].values()]
    assert len(heights) == 3 and all(0.0 < z < 0.1 for z in heights), heights  # not z < 0
    for obj in (mirrored, plain):
        out = tmp_path / f"{obj.stem}_evaluated.yaml"
        code, err = run_cli(capsys, evaluate_argv(obj, planned, out))
        assert code == 0, err
        assert outcomes(out) == {"held": 9}, obj  # 3 grasps × the default 3 trials
    # and the plain box's grasp on the mirrored box
    out = tmp_path / "plain_on_mirrored.yaml"
    code, err = run_cli(capsys, evaluate_argv(mirrored, grasp_file(tmp_path / "g.yaml"), out))
    assert code == 0, err
    assert outcomes(out) == {"held": 3}


# --- item 16: what MuJoCo would refuse, named before it is built ------------------------------


@pytest.mark.parametrize(
    ("box", "extra", "words"),
    [
        (
            {"props": "float physics:mass = 1e-30"},
            (),
            "mass 1e-30 kg (</Block>.physics:mass) gives a smallest principal moment of inertia",
        ),
        ({}, ("--density", "1e-300"), "mass 1.6e-304 kg (density option 1e-300 kg/m³ × volume"),
        ({"mpu": "0.01"}, (), "(default density 400 kg/m³ × volume 1.6e-10 m³) gives a smallest"),
    ],
)
def test_mass_and_inertia_are_checked_before_the_model_is_built(
    box, extra, words, write, tmp_path, capsys
):
    path = write(box_usda(**box))
    grasps = grasp_file(tmp_path / "g.yaml")
    code, err = run_cli(capsys, evaluate_argv(path, grasps, tmp_path / "o.yaml", *extra))
    line = one_line(err, "evaluate")
    assert code == 2
    assert line.startswith(f"usdgrip evaluate: {path}:/Block: mass ") and words in line
    assert "expected a mass of 1e-15 to 1e+10 kg and moments of at least 1e-14 kg·m²" in line
    assert "inertia must have positive eigenvalues" not in line


def test_a_mass_beyond_what_the_solver_keeps_is_refused():
    from usdgrip.grasping.physics.world import check_mass_properties

    inertia = np.eye(3)
    with pytest.raises(ValueError, match=r"mass 1e\+16 kg \(<X>.physics:mass\) gives"):
        check_mass_properties(1e16, inertia, "<X>.physics:mass", (1, 1, 1))
    with pytest.raises(ValueError, match="a moment of inertia that is not finite"):
        check_mass_properties(1.0, np.full((3, 3), np.inf), "m", (1, 1, 1))
    check_mass_properties(1.0, inertia * 1e-3, "m", (1, 1, 1))  # fine


# --- item 17: the real cause ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("box", "words"),
    [
        ({"mpu": "0"}, "the stage's metersPerUnit is 0; expected a finite value > 0"),
        (
            {"ops": scale("(1e-9, 1e-9, 1e-9)")},
            "the object mesh (</Block/mesh>) spans 1e-10 m; expected an object at least 0.0001 m wide",
        ),
        (
            {"header": "kilogramsPerUnit = 0", "props": "float physics:mass = 0.2"},
            "</Block>.physics:mass is authored, but the stage's kilogramsPerUnit is 0; expected a "
            "finite value > 0",
        ),
        (
            {"props": "float physics:mass.timeSamples = { 0: 0.2 }"},
            "</Block>.physics:mass is time-sampled with no default value",
        ),
        (
            {"ops": translate("nan")},
            "the world transform of </Block> has NaN or infinite values (from the xformOps of </Block>)",
        ),
        (
            {"ops": translate("inf"), "wrap": "World"},
            "the world transform of </World/Block> has NaN or infinite values (from the xformOps of </World>)",
        ),
        ({"ops": scale("(1, 1, 0)")}, "the world transform of </Block> scales one axis to zero"),
        ({"ops": scale("(1e30, 1, 1)")}, "spans 4e+28 m; expected an object under 1000 m"),
        (
            {
                "ops": 'float3 xformOp:rotateXYZ = (nan, 0, 0)\nuniform token[] xformOpOrder = ["xformOp:rotateXYZ"]'
            },
            "the world transform of </Block> has NaN or infinite values",
        ),
        ({"mpu": "-1"}, "the stage's metersPerUnit is -1; expected a finite value > 0"),
        (
            {"header": "kilogramsPerUnit = -1", "props": "float physics:density = 500"},
            "</Block>.physics:density is authored, but the stage's kilogramsPerUnit is -1",
        ),
        (
            {"props": "float physics:density.timeSamples = { 0: 500 }"},
            "</Block>.physics:density is time-sampled with no default value",
        ),
        (
            {"props": 'string physics:mass = "heavy"'},
            "</Block>.physics:mass is string, expected float or double",
        ),
    ],
)
def test_each_bad_object_gets_its_real_cause(box, words, write, tmp_path, capsys):
    path = write(box_usda(**box))
    grasps = grasp_file(tmp_path / "g.yaml", frame="/World/Block" if box.get("wrap") else "/Block")
    argv = evaluate_argv(path, grasps, tmp_path / "o.yaml")
    if box.get("wrap"):
        argv[argv.index("/Block")] = "/World/Block"
    code, err = run_cli(capsys, argv)
    line = one_line(err, "evaluate")
    assert code == 2
    assert line.startswith(f"usdgrip evaluate: {path}: ") and words in line
    assert "zero area" not in line and "is 0.0" not in line


def test_a_single_triangle_object_is_said_to_enclose_no_volume(write, tmp_path, capsys):
    path = write(
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\ndef Xform "Block"\n{\n'
        '    def Mesh "mesh"\n    {\n        int[] faceVertexCounts = [3]\n'
        "        int[] faceVertexIndices = [0, 1, 2]\n"
        "        point3f[] points = [(0, 0, 0), (0.05, 0, 0), (0, 0.05, 0)]\n    }\n}\n"
    )
    code, err = run_cli(
        capsys, evaluate_argv(path, grasp_file(tmp_path / "g.yaml"), tmp_path / "o")
    )
    assert code == 2
    assert one_line(err, "evaluate") == (
        f"usdgrip evaluate: {path}:/Block: object mesh: 3 point(s) enclose no volume; expected "
        "a solid (at least 4 points not in one plane, a closed mesh for the mass)"
    )


def test_a_grip_force_of_1e300_is_named_as_authored_without_a_numpy_warning(
    write, tmp_path, capsys
):
    gripper = write(
        (EXAMPLES / "gripper.usda")
        .read_text()
        .replace("float gripper:maxGripForce = 235", "double gripper:maxGripForce = 1e300"),
        "gripper.usda",
    )
    assert "1e300" in gripper.read_text()
    box = write(box_usda())
    grasps = tmp_path / "g.yaml"
    grasps.write_text(grasp_file(grasps).read_text().replace(GRIPPER_FILE, str(gripper)))
    out = tmp_path / "o.yaml"
    argv = evaluate_argv(box, grasps, out)
    argv[argv.index(GRIPPER_ARG)] = f"{gripper}:/Gripper/tcp"
    argv.remove("-q")  # the warnings are the point
    code, err = run_cli(capsys, argv)
    assert code == 0, err
    assert "RuntimeWarning" not in err and "inf N" not in err
    assert (
        f"warning: gripper {gripper}:/Gripper/tcp: no grip force given and gripper:maxGripForce "
        "unusable (gripper:maxGripForce is 1e+300 N; expected at most 100000 N, the strongest "
        "plausible grip: a unit mistake?); using the default 50 N per finger"
    ) in err
    record = yaml.safe_load(out.read_text())["metadata"]["physics"]["gripper"]
    assert record["grip_force_n"] == 50.0


def test_a_force_option_beyond_any_gripper_is_refused():
    with pytest.raises(OptionError, match=r"force is 1e\+300; expected at most 100000 N") as caught:
        EvaluationOptions(force=1e300)
    assert caught.value.cli_message().startswith("--force 1e+300: expected at most 100000 N")
    EvaluationOptions(force=1e5)  # the limit itself is accepted


# --- item 18: the file named ------------------------------------------------------------------

_RUBBER = """
def Material "Rubber" ( prepend apiSchemas = ["PhysicsMaterialAPI"] )
{
    float physics:staticFriction = -1
}
"""


@pytest.mark.parametrize(
    ("props", "words"),
    [
        ("float physics:mass = -1", "</Block>.physics:mass is -1.0; expected a finite value > 0"),
        (
            "float physics:density = 0",
            "</Block>.physics:density is 0.0; expected a finite value > 0",
        ),
        (
            'rel material:binding:physics = </Rubber>\n    prepend apiSchemas = ["MaterialBindingAPI"]',
            "</Rubber>.physics:staticFriction is -1.0; expected a finite value > 0",
        ),
    ],
)
def test_mass_density_and_friction_errors_name_the_file(props, words, write):
    text = box_usda(props=props)
    if "Rubber" in props:
        text = text.replace(
            '(prepend apiSchemas = ["PhysicsMassAPI"])',
            '(prepend apiSchemas = ["MaterialBindingAPI"])',
        )
        text = text.replace('\n    prepend apiSchemas = ["MaterialBindingAPI"]', "") + _RUBBER
    path = write(text)
    with pytest.raises(GripperError) as caught:
        build_physics_world(read_inputs(path), EvaluationOptions())
    assert str(caught.value) == f"{path}: {words}"


@pytest.mark.parametrize("command", ["evaluate", "plan"])
@pytest.mark.parametrize(
    ("support", "words"),
    [
        ("/NoMesh", "support </NoMesh>: no UsdGeom.Mesh with faces"),
        ("/Nope", "support </Nope>: no such prim"),
    ],
)
def test_a_support_without_geometry_names_the_scene_file(
    command, support, words, write, tmp_path, capsys
):
    box = write(box_usda())
    scene = write(
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\ndef Xform "NoMesh"\n{\n}\n'
        'def Cube "Table"\n{\n}\n',
        "scene.usda",
    )
    extra = ("--scene", scene, "--support", support)
    out = tmp_path / "o.yaml"
    argv = (
        evaluate_argv(box, grasp_file(tmp_path / "g.yaml"), out, *extra)
        if command == "evaluate"
        else plan_argv(box, out, *extra)
    )
    code, err = run_cli(capsys, argv)
    assert code == 2
    assert one_line(err, command).startswith(f"usdgrip {command}: {scene}: {words}")


# --- item 19: physics options without --evaluate ----------------------------------------------


@pytest.mark.parametrize(
    ("options", "flags"),
    [
        (("--trials", "3"), "--trials"),
        (("--trials", "1"), "--trials"),  # the default's value, given: still refused
        (("--force", "30", "--jobs", "2"), "--force, --jobs"),
        (("--friction", "0.5"), "--friction"),
        (("--density", "500"), "--density"),
        (("--dump-scene", "scenes"), "--dump-scene"),  # the flag, not the argument's name
    ],
)
def test_plan_refuses_physics_options_without_evaluate(options, flags, write, tmp_path, capsys):
    out = tmp_path / "o.yaml"
    code, err = run_cli(capsys, plan_argv(write(box_usda()), out, *options))
    assert code == 2 and not out.exists()
    assert one_line(err, "plan") == (
        f"usdgrip plan: {flags} given without --evaluate: the physics options apply only to the "
        "simulation; add --evaluate, or leave them out"
    )


def test_plan_evaluate_takes_the_given_physics_options_and_defaults_the_rest(
    write, tmp_path, capsys
):
    out = tmp_path / "o.yaml"
    argv = plan_argv(write(box_usda()), out, "--evaluate", "--max-candidates", "1", "--trials", "2")
    code, err = run_cli(capsys, argv)
    assert code == 0, err
    physics = yaml.safe_load(out.read_text())["metadata"]["physics"]
    assert physics["summary"]["trials"] == 2 and physics["jobs"] == 1
    assert physics["gripper"]["grip_force_from"] == "gripper:maxGripForce"


def test_sample_refuses_slots_of_an_object_1e30_m_away(tmp_path, capsys):
    text = (EXAMPLES / "tote.usda").read_text()
    assert text.count("double3 xformOp:translate = (0.6, 0, 0)") == 1
    tote = tmp_path / "tote.usda"
    tote.write_text(
        text.replace("xformOp:translate = (0.6, 0, 0)", "xformOp:translate = (1e30, 0, 0)")
    )
    code, err = run_cli(
        capsys, ["sample", tote, "--prim", "/Tote", "--count", "2", "--format", "text"]
    )
    assert code == 2
    assert one_line(err, "sample").endswith(
        "object world transform places it 1e+30 m from the origin; expected within 1e+07 m "
        "(float64 keeps 1.4e+14 m there): move it nearer the origin, or check the stage's "
        "metersPerUnit"
    )
