"""Every Isaac-Grasp writer's files: read, evaluated (poses converted to G), written back.

The files are written exactly as Isaac Sim's Grasp Editor, GraspGen and GraspDataGen write
them (tests/isaac_grasp_writers.py re-implements each public writer, citing its code).
The object is a box, the gripper examples/gripper.usda: its root /Gripper is the base
link (the palm at z = 0), its site /Gripper/tcp the grasp frame G, 0.13 m along +Z.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from isaac_grasp_writers import (
    editor_grasp,
    write_grasp_editor_file,
    write_graspdatagen_file,
    write_graspgen_file,
)
from test_physics_wiring import DOWN_X, box_usda, candidate, make_result, run_cli

from usdgrip.errors import GripperError
from usdgrip.frames import compute_pose
from usdgrip.grasping.isaac_yaml import (
    compute_candidate_poses,
    describe_writer,
    format_isaac_grasp,
    parse_isaac_grasp,
    read_isaac_grasp,
    write_isaac_grasp,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRIPPER = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
#: T_F_G of examples/gripper.usda: the site 0.13 m along the base's +Z.
BASE_TO_TCP = compute_pose((0.0, 0.0, 0.13), (1.0, 0.0, 0.0, 0.0))


@pytest.fixture
def box_file(tmp_path):
    path = tmp_path / "box.usda"
    path.write_text(box_usda((0.04, 0.04, 0.1)))
    return path


@pytest.fixture
def g_poses():
    """T_M_G of a grasp across the box's top (holds) and one 0.2 m beside it (missed)."""
    result = make_result(
        candidate("g_centre", (0.0, 0.0, 0.075), DOWN_X, 0.5),
        candidate("g_beside", (0.2, 0.0, 0.075), DOWN_X, 0.9),
    )
    return compute_candidate_poses(result)


def base_poses(g_poses):
    """The same grasps as poses of the base link F: T_M_F = T_M_G · inv(T_F_G)."""
    return g_poses @ np.linalg.inv(BASE_TO_TCP)


def editor_file(path, poses, object_frame="/World/box/Box", gripper_frame="/World/Gripper"):
    grasps = {
        f"grasp_{i}": editor_grasp(
            pose, 1.0, {"finger_joint": np.float32(0.43633232)}, {"finger_joint": np.float32(0)}
        )
        for i, pose in enumerate(poses)
    }
    return write_grasp_editor_file(path, object_frame, gripper_frame, grasps)


def evaluate(capsys, box_file, grasps, output, *extra):
    argv = ["evaluate", box_file, "--object", "/Box", "--gripper", GRIPPER, "--grasps", grasps]
    return run_cli(capsys, *argv, "-o", output, "--table", *extra)


def outcomes(path):
    data = yaml.safe_load(Path(path).read_text())
    return [entry["physics"]["outcome"] for entry in data["grasps"].values()]


# --- reading ------------------------------------------------------------------------------


def test_grasp_editor_file_is_read_with_its_frames_and_joints(tmp_path, g_poses):
    path = editor_file(tmp_path / "editor.yaml", base_poses(g_poses))
    assert '   "grasp_0":\n      confidence: 1.0\n' in path.read_text()  # the editor's own text
    result = read_isaac_grasp(path)
    assert describe_writer(result) == "Isaac Sim Grasp Editor"
    assert result.metadata is None and result.format_version == 1.0
    assert (result.object_frame, result.gripper_frame) == ("/World/box/Box", "/World/Gripper")
    assert list(result.grasps) == ["grasp_0", "grasp_1"]
    first = result.grasps["grasp_0"]
    assert first.gripper is None and first.confidence == 1.0
    assert first.cspace_position == {"finger_joint": pytest.approx(0.43633232)}
    assert first.pregrasp_cspace_position == {"finger_joint": 0.0}
    np.testing.assert_allclose(compute_candidate_poses(result), base_poses(g_poses), atol=1e-12)


def test_graspgen_and_graspdatagen_files_are_read(tmp_path, g_poses):
    graspgen = write_graspgen_file(
        tmp_path / "gg.yaml", g_poses.astype(np.float32), np.array([0.93, 0.2], np.float32)
    )
    result = read_isaac_grasp(graspgen)
    assert describe_writer(result) == "a plain Isaac-Grasp writer (GraspGen)"
    assert [c.confidence for c in result.grasps.values()] == pytest.approx([0.93, 0.2])
    np.testing.assert_allclose(compute_candidate_poses(result), g_poses, atol=1e-6)
    gdg = write_graspdatagen_file(
        tmp_path / "gdg.yaml",
        [("grasp_12_5", base_poses(g_poses)[0], 1.0, {"finger_joint": 0.4}, {"finger_joint": 0})],
    )
    assert "format_version: '1.0'\n" in gdg.read_text()  # a string, as GraspDataGen writes it
    result = read_isaac_grasp(gdg)
    assert describe_writer(result) == "GraspDataGen"
    assert result.format_version == "1.0"
    assert result.model_extra["gripper_frame_link"] == "base_link"
    assert result.model_extra["created_at"] == "2025-08-01T12:00:00.123456"
    entry = result.grasps["grasp_12_5"]
    assert entry.model_extra == {
        "bite_point": [0.0211, 0.0, 0.1302],
        "pregrasp_bite_point": [0.0425, 0.0, 0.1302],
    }


@pytest.mark.parametrize("joint", ["off", "on", "yes", "no", "true", "null", "1", "0.5", "~"])
def test_keys_are_the_text_the_file_holds(tmp_path, g_poses, joint):
    # The editor writes joint (and grasp) names unquoted: under yaml.safe_load `off` is False
    # and `1` is 1. The file means the name.
    grasps = {
        joint: editor_grasp(g_poses[0], 0.5, {joint: np.float32(0.25)}, {joint: np.float32(0)})
    }
    path = write_grasp_editor_file(tmp_path / "k.yaml", "/Box", "/World/Gripper", grasps)
    assert yaml.safe_load(path.read_text())["grasps"] != {joint: yaml.safe_load(path.read_text())}
    result = read_isaac_grasp(path)
    assert list(result.grasps) == [joint]
    assert result.grasps[joint].cspace_position == {joint: 0.25}
    # Written back, the key is quoted where YAML would read another type: any reader sees it.
    again = yaml.safe_load(format_isaac_grasp(result))
    assert list(again["grasps"]) == [joint]
    assert again["grasps"][joint]["cspace_position"] == {joint: 0.25}
    assert parse_isaac_grasp(format_isaac_grasp(result)) == result


def test_python_printed_numbers_are_numbers(tmp_path):
    # The editor's f-strings print 1e-05 without a dot: YAML 1.1 reads it as a string.
    text = (
        "format: isaac_grasp\nformat_version: 1.0\n\ngrasps:\n"
        '   "grasp_0":\n      confidence: 5e-01\n      position: [1e-05, -2e-06, 0.1]\n'
        "      orientation: {w: 1.0, xyz: [0.0, 0.0, 0.0]}\n"
        "      cspace_position:\n         finger_joint: 1e-05\n"
        "      pregrasp_cspace_position:\n         finger_joint: 0.0\n\n"
    )
    assert yaml.safe_load(text)["grasps"]["grasp_0"]["position"][0] == "1e-05"
    entry = parse_isaac_grasp(text).grasps["grasp_0"]
    assert entry.position == (1e-05, -2e-06, 0.1) and entry.confidence == 0.5
    assert entry.cspace_position == {"finger_joint": 1e-05}
    with pytest.raises(GripperError, match=r"position\.0: Input should be a valid number"):
        parse_isaac_grasp(text.replace("[1e-05", "['1e-05'"))  # quoted: the writer meant text


def test_two_keys_of_one_text_are_one_key_and_refused_as_a_repeat():
    # `off` and `'off'` are the same key (yaml.safe_load would make them False and 'off'),
    # so the unique-key loader (usdgrip.yamltext) refuses the repeat, naming it.
    text = (
        "format: isaac_grasp\ngrasps:\n  g:\n    position: [0, 0, 0]\n"
        "    orientation: {w: 1.0, xyz: [0, 0, 0]}\n    cspace_position: {off: 1.0, 'off': 2.0}\n"
    )
    with pytest.raises(GripperError, match=r"in\.yaml: line 6: duplicate key 'off'"):
        parse_isaac_grasp(text, source="in.yaml")
    with pytest.raises(GripperError, match="duplicate key '1'"):
        parse_isaac_grasp(text.replace("off: 1.0, 'off'", "1: 1.0, '1'"), source="in.yaml")


# --- rewriting ----------------------------------------------------------------------------


@pytest.mark.parametrize("writer", ["editor", "graspgen", "graspdatagen"])
def test_rewrite_keeps_every_key_of_the_file(tmp_path, g_poses, writer):
    path = tmp_path / f"{writer}.yaml"
    if writer == "editor":
        editor_file(path, base_poses(g_poses))
    elif writer == "graspgen":
        write_graspgen_file(path, g_poses, np.array([0.9, 0.1]))
    else:
        write_graspdatagen_file(
            path, [("g_1_0", g_poses[0], 1.0, {"finger_joint": 0.4}, {"finger_joint": 0.0})]
        )
    again = write_isaac_grasp(read_isaac_grasp(path), tmp_path / "again.yaml")
    assert yaml.safe_load(again.read_text()) == yaml.safe_load(path.read_text())
    assert "candidate_id" not in again.read_text()  # nothing usdgrip-only was added
    assert read_isaac_grasp(again) == read_isaac_grasp(path)


# --- evaluating ---------------------------------------------------------------------------


def test_evaluated_editor_file_is_the_same_file_plus_physics(tmp_path, box_file, g_poses, capsys):
    ours = tmp_path / "ours.yaml"
    write_isaac_grasp(
        make_result(
            candidate("g_centre", (0.0, 0.0, 0.075), DOWN_X, 0.5),
            candidate("g_beside", (0.2, 0.0, 0.075), DOWN_X, 0.9),
        ),
        ours,
    )
    code, _, stderr = evaluate(capsys, box_file, ours, tmp_path / "ours_ev.yaml")
    assert code == 0, stderr
    expected = outcomes(tmp_path / "ours_ev.yaml")
    assert expected == ["held", "missed"]

    editor = editor_file(tmp_path / "editor.yaml", base_poses(g_poses))
    out = tmp_path / "editor_ev.yaml"
    code, stdout, stderr = evaluate(capsys, box_file, editor, out)
    assert code == 0, stderr
    assert outcomes(out) == expected  # the base-link poses became the site's grasp frame
    assert "held: 1 of 2 candidate(s)" in stdout
    assert (
        f"warning: grasps {editor}: poses are of the file's gripper_frame '/World/Gripper' "
        "(found by suffix at </Gripper>), converted to the grasp frame G of </Gripper/tcp>"
    ) in stderr
    assert "offset [0.0000, 0.0000, 0.1300] m" in stderr
    assert "its object_frame '/World/box/Box' (the writer's stage) is read as the object" in stderr
    written = yaml.safe_load(out.read_text())
    original = yaml.safe_load(editor.read_text())
    metadata = written.pop("metadata")
    for entry in written["grasps"].values():
        assert set(entry.pop("physics")) >= {"success_rate", "trials", "outcome"}
    assert written == original  # the same file plus physics (and metadata)
    frames = metadata["physics"]["pose_frames"]
    assert frames["named_by"] == "gripper_frame" and frames["prim"] == "/Gripper"
    assert frames["frame_to_grasp"][2][3] == pytest.approx(0.13)
    assert any("converted to the grasp frame G" in w for w in metadata["warnings"])
    assert "Isaac Sim Grasp Editor" in metadata["generation_mode"]

    # Read as the grasp frame (no conversion), the same poses miss: the conversion matters.
    code, _, _ = evaluate(
        capsys, box_file, editor, tmp_path / "raw.yaml", "--gripper-frame", "/Gripper/tcp"
    )
    assert code == 1 and outcomes(tmp_path / "raw.yaml") == ["missed", "missed"]
    # And the evaluated file evaluates again (it is still the editor's, plus physics).
    code, _, stderr = evaluate(capsys, box_file, out, tmp_path / "twice.yaml")
    assert code == 0, stderr
    assert outcomes(tmp_path / "twice.yaml") == expected


def test_graspgen_file_is_read_as_g_and_says_so(tmp_path, box_file, g_poses, capsys):
    path = write_graspgen_file(tmp_path / "gg.yaml", g_poses, np.array([0.4, 0.9]))
    out = tmp_path / "gg_ev.yaml"
    code, _, stderr = evaluate(capsys, box_file, path, out)
    assert code == 0, stderr
    assert outcomes(out) == ["held", "missed"]
    assert "names no gripper frame: its poses are read as the grasp frame G of </Gripper/tcp>" in (
        stderr
    )
    assert "the file names no object frame" in stderr
    data = yaml.safe_load(out.read_text())
    assert data["metadata"]["physics"]["pose_frames"]["named_by"] == "none"
    assert set(data["grasps"]["grasp_0"]) == {"confidence", "position", "orientation", "physics"}
    # Its base-link poses need --gripper-frame: then they hold as the G poses do.
    base = write_graspgen_file(tmp_path / "base.yaml", base_poses(g_poses), np.array([0.4, 0.9]))
    code, _, stderr = evaluate(
        capsys, box_file, base, tmp_path / "b.yaml", "--gripper-frame", "/Gripper"
    )
    assert code == 0, stderr
    assert outcomes(tmp_path / "b.yaml") == ["held", "missed"]
    assert "poses are of --gripper-frame '/Gripper', converted" in stderr


def test_graspdatagen_gripper_frame_link_is_found_by_name(tmp_path, box_file, g_poses, capsys):
    path = write_graspdatagen_file(
        tmp_path / "gdg.yaml",
        [
            (f"grasp_{i}_0", pose, 1.0, {"finger_joint": 0.4}, {"finger_joint": 0.0})
            for i, pose in enumerate(base_poses(g_poses))
        ],
        gripper_frame_link="Gripper",
    )
    out = tmp_path / "gdg_ev.yaml"
    code, _, stderr = evaluate(capsys, box_file, path, out)
    assert code == 0, stderr
    assert outcomes(out) == ["held", "missed"]
    assert "the file's gripper_frame_link 'Gripper' (found by name at </Gripper>)" in stderr
    written = yaml.safe_load(out.read_text())
    assert written["format_version"] == "1.0" and written["created_with"] == "grasp_guess"
    assert written["grasps"]["grasp_0_0"]["bite_point"] == [0.0211, 0.0, 0.1302]


def test_plan_evaluate_output_evaluates_again(tmp_path, capsys):
    # plan --evaluate re-ranks by success; a second evaluate with other trials keeps that
    # order ("unchanged"): it was refused as "not best-first by confidence" (exit 2).
    planned = tmp_path / "tote.yaml"
    tote = EXAMPLES / "tote.usda"
    code, _, stderr = run_cli(
        capsys,
        "plan",
        tote,
        "--object",
        "/Tote",
        "--gripper",
        GRIPPER,
        "--max-candidates",
        12,
        "--evaluate",
        "--trials",
        3,
        "--force",
        80,
        "-o",
        planned,
    )  # fmt: skip  (80 N: some grasps fail; at 235 N every tote grasp holds)
    assert code in (0, 1), stderr
    confidences = [c.confidence for c in read_isaac_grasp(planned).grasps.values()]
    assert confidences != sorted(confidences, reverse=True)  # re-ranked by success
    again = tmp_path / "again.yaml"
    code, _, stderr = run_cli(
        capsys, "evaluate", tote, "--object", "/Tote", "--gripper", GRIPPER,
        "--grasps", planned, "-o", again,
    )  # fmt: skip
    assert code in (0, 1), stderr
    assert list(read_isaac_grasp(again).grasps) == list(read_isaac_grasp(planned).grasps)


@pytest.mark.parametrize(
    ("frame", "extra", "message"),
    [
        ("/World/Robotiq_2F_85/base_link", (), "is no prim of the gripper asset"),
        ("/World/Gripper", ("--gripper-frame", "/Nope"), "--gripper-frame '/Nope' is no prim"),
        ("/World/Gripper", ("--gripper-frame", "a b"), "is not a prim path or prim name"),
    ],
)
def test_a_gripper_frame_that_is_not_there_is_one_line_exit_2(
    tmp_path, box_file, g_poses, capsys, frame, extra, message
):
    path = editor_file(tmp_path / "e.yaml", base_poses(g_poses), gripper_frame=frame)
    code, _, stderr = evaluate(capsys, box_file, path, tmp_path / "o.yaml", *extra)
    assert code == 2 and message in stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr
    assert not (tmp_path / "o.yaml").exists()


def test_an_ambiguous_frame_name_is_refused(tmp_path, box_file, g_poses, capsys):
    gripper = tmp_path / "two.usda"
    text = (EXAMPLES / "gripper.usda").read_text()
    gripper.write_text(
        text.replace('def Xform "tcp"', 'def Xform "link"\n    {\n    }\n    def Xform "tcp"', 1)
        + '\ndef Xform "Other"\n{\n    def Xform "link"\n    {\n    }\n}\n'
    )
    path = editor_file(tmp_path / "e.yaml", base_poses(g_poses), gripper_frame="/x/link")
    argv = ["evaluate", box_file, "--object", "/Box", "--gripper", f"{gripper}:/Gripper/tcp"]
    code, _, stderr = run_cli(capsys, *argv, "--grasps", path, "-o", tmp_path / "o.yaml")
    assert code == 2
    assert "matches 2 prims (</Gripper/link>, </Other/link>); pass --gripper-frame" in stderr


def test_gripper_frame_only_with_grasps(tmp_path, box_file, capsys):
    argv = ["evaluate", box_file, "--gripper", GRIPPER, "--lines", "--gripper-frame", "/Gripper"]
    code, _, stderr = run_cli(capsys, *argv)
    assert code == 2 and "--gripper-frame /Gripper: only with --grasps" in stderr


# --- hostile files ------------------------------------------------------------------------

HEAD = "format: isaac_grasp\n"
POSE = "    position: [0, 0, 0]\n    orientation: {w: 1.0, xyz: [0, 0, 0]}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEAD + "format_version: true\ngrasps: {}\n", "format_version is True; expected 1.0"),
        (HEAD + "format_version: '2'\ngrasps: {}\n", "format_version is '2'; expected 1.0"),
        (HEAD + "gripper_frame: 5\ngrasps: {}\n", "gripper_frame: Input should be a valid string"),
        (HEAD + "object_frame: ''\ngrasps: {}\n", "object_frame: String should have at least 1"),
        (HEAD + "grasps:\n  g:\n" + POSE + "    cspace_position: [1, 2]\n", "a valid dictionary"),
        (
            HEAD + "grasps:\n  g:\n    confidence: nan\n" + POSE,
            "confidence: Input should be a valid",
        ),
        (HEAD + "grasps:\n  g:\n" + POSE + "    physics: {mass: 2}\n", r"physics\.success_rate"),
        (HEAD + "grasps: !!python/object:os.system {}\n", "could not determine a constructor"),
        (HEAD + "grasps:\n  ? {a: 1}\n  : {position: [0, 0, 0]}\n", "found unhashable key"),
        (HEAD + "grasps:\n  " + "k" * 1100 + ":\n" + POSE, "not valid YAML"),
        (
            HEAD + "grasps:\n  ? " + "k" * 1100 + "\n  : {position: [0, 0, 0], orientation: "
            "{w: 1.0, xyz: [0, 0, 0]}}\n",
            "at most 1024 characters",
        ),
    ],
)
def test_hostile_files_are_one_line_naming_the_file(text, message):
    with pytest.raises(GripperError, match=message) as raised:
        parse_isaac_grasp(text, source="in.yaml")
    assert str(raised.value).startswith("in.yaml: ") and "\n" not in str(raised.value)


def test_dates_and_binary_keys_are_kept_as_text():
    text = HEAD + "created: 2025-01-01\ngrasps:\n  !!binary aGk=:\n" + POSE
    result = parse_isaac_grasp(text)
    assert result.model_extra == {"created": "2025-01-01"} and list(result.grasps) == ["aGk="]


def test_a_gripper_frame_with_a_nan_transform_is_refused(tmp_path, box_file, g_poses, capsys):
    gripper = tmp_path / "nan.usda"
    gripper.write_text(
        (EXAMPLES / "gripper.usda")
        .read_text()
        .replace(
            'def Xform "tcp" (',
            'def Xform "base_link"\n    {\n        double3 xformOp:scale = (nan, 1, 1)\n'
            '        uniform token[] xformOpOrder = ["xformOp:scale"]\n    }\n    def Xform "tcp" (',
            1,
        )
    )
    path = editor_file(tmp_path / "e.yaml", base_poses(g_poses), gripper_frame="/x/base_link")
    argv = ["evaluate", box_file, "--object", "/Box", "--gripper", f"{gripper}:/Gripper/tcp"]
    code, _, stderr = run_cli(capsys, *argv, "--grasps", path, "-o", tmp_path / "o.yaml")
    assert code == 2 and "the world transform of </Gripper/base_link> is not finite" in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_a_gripper_frame_link_that_is_not_text_is_refused(tmp_path, box_file, g_poses, capsys):
    path = write_graspdatagen_file(
        tmp_path / "gdg.yaml",
        [("g_0", g_poses[0], 1.0, {"finger_joint": 0.4}, {"finger_joint": 0.0})],
    )
    path.write_text(
        path.read_text().replace("gripper_frame_link: base_link", "gripper_frame_link: 7")
    )
    code, _, stderr = evaluate(capsys, box_file, path, tmp_path / "o.yaml")
    assert code == 2 and "gripper_frame_link is 7; expected the name of the gripper prim" in stderr


def test_a_usdgrip_file_naming_its_gripper_frame_says_so_and_keeps_the_fields():
    # The fields a writer of joint values sets (Grasp Editor compatible files): typed,
    # written in the editor's places, read back equal.
    result = make_result(
        candidate("g_a", (0.0, 0.0, 0.1), DOWN_X, 0.5).model_copy(
            update={
                "cspace_position": {"finger_joint": 0.4},
                "pregrasp_cspace_position": {"finger_joint": 0.0},
            }
        )
    ).model_copy(update={"gripper_frame": "/Gripper/tcp", "object_frame": "/Box"})
    text = format_isaac_grasp(result)
    assert "# Poses are of gripper_frame /Gripper/tcp in the object frame M" in text
    data = yaml.safe_load(text)
    assert list(data)[:4] == ["format", "format_version", "object_frame", "gripper_frame"]
    entry = data["grasps"]["g_a"]
    assert list(entry)[:5] == [
        "confidence", "position", "orientation", "cspace_position", "pregrasp_cspace_position"
    ]  # fmt: skip
    assert parse_isaac_grasp(text) == result
