"""Reading gripper articulations (issue 24): the four example grippers, mimic conventions, hostile input."""

from __future__ import annotations

import math
import re
import time

import numpy as np
import pytest
from conftest import EXAMPLES

from usdgrip.gripper_kinematics import compute_configuration, compute_kinematic_tree
from usdgrip.gripper_opening import suggest_gripper_site
from usdgrip.usd.articulation import read_gripper_articulation
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.stage import open_stage

GRIPPERS = EXAMPLES / "grippers"
#: (file, site, open side, opening at lower, at upper, tolerance m): the real values are the
#: Franka hand's 80 mm stroke (pybullet's URDF: 0.04 m per finger), the Robotiq 2F-85's
#: 85 mm (Robotiq datasheet; Menagerie's model at driver 0), and the hand-authored ones'
#: pad gaps worked out by hand from their boxes.
REAL = [
    (
        "franka_hand/franka_hand.usda",
        "/FrankaHand/panda_hand/gripper_site",
        "upper",
        0.0,
        0.080,
        0.002,
    ),
    (
        "robotiq_2f85/robotiq_2f85.usda",
        "/Robotiq_2F85/base/gripper_site",
        "lower",
        0.085,
        None,
        0.001,
    ),
    ("prismatic_two_finger.usda", "/PrismaticGripper/palm/tcp", "lower", 0.080, 0.010, 1e-6),
    # Tips 0.06 m from the hinges 0.04 m apart, pads 0.01 m thick, the outer half measured:
    # open 30 deg: 2 (0.02 + 0.03 sin 30 - 0.005 cos 30) = 0.0584; closed -12 deg.
    ("revolute_jaw.usda", "/RevoluteJawGripper/palm/tcp", "upper", 0.0053, 0.0585, 2e-4),
]


def _read(name: str, site: str):
    stage = open_stage(GRIPPERS / name)
    return stage, read_gripper_articulation(stage.GetPrimAtPath(site))


@pytest.mark.parametrize(("name", "site", "side", "lower", "upper", "tolerance"), REAL)
def test_open_side_and_opening_at_each_limit(name, site, side, lower, upper, tolerance):
    _, articulation = _read(name, site)
    assert articulation.status == "articulated"
    report = articulation.opening
    assert report.open_side == side
    if lower is not None:
        assert report.opening_at_lower == pytest.approx(lower, abs=tolerance)
    if upper is not None:
        assert report.opening_at_upper == pytest.approx(upper, abs=tolerance)
    opened = report.opening_at_lower if side == "lower" else report.opening_at_upper
    closed = report.opening_at_upper if side == "lower" else report.opening_at_lower
    assert report.opening_open == opened and report.opening_closed == closed and opened > closed


def test_franka_hand_joints_drive_and_newton_mimic():
    _, articulation = _read(*REAL[0][:2])
    names = [j.name for j in articulation.joints]
    assert names == ["panda_finger_joint1", "panda_finger_joint2"]
    leader, follower = articulation.joints
    assert (leader.kind, leader.axis_name, follower.axis_name) == ("prismatic", "Y", "Y")
    assert (leader.lower, leader.upper) == pytest.approx((0.0, 0.04))
    assert leader.rest_position == pytest.approx(0.04)  # authored open
    assert leader.drive.stiffness == 1000 and leader.drive.max_force == 20
    assert follower.drive is None and follower.mimic.source == "NewtonMimicAPI"
    assert (follower.mimic.leader, follower.mimic.coef0, follower.mimic.coef1) == (0, 0.0, 1.0)
    # The follower's axis is turned half a turn: the same q moves the fingers apart.
    links = {link.name: link for link in articulation.links}
    assert articulation.links[0].name == "panda_hand"
    left = links["panda_leftfinger"].world_from_link[:3, 3]
    right = links["panda_rightfinger"].world_from_link[:3, 3]
    assert left[1] == pytest.approx(0.04) and right[1] == pytest.approx(-0.04)
    assert links["panda_hand"].mass == pytest.approx(0.81)
    assert all(p.approximation == "convexHull" for link in links.values() for p in link.pieces)


def test_robotiq_closed_chain_mimic_and_drive_units():
    _, articulation = _read(*REAL[1][:2])
    joints = {j.name: j for j in articulation.joints}
    driver = joints["left_driver_joint"]
    assert driver.kind == "revolute" and driver.upper == pytest.approx(0.8, abs=1e-6)
    # 1.745 N m/deg authored per degree -> 100 N m/rad (Menagerie's kp).
    assert driver.drive.stiffness == pytest.approx(100.0, rel=1e-6)
    assert driver.drive.damping == pytest.approx(10.0, rel=1e-6)
    follower = joints["right_driver_joint"]
    assert follower.mimic.source == "MjcEqualityJointAPI"
    assert articulation.joints[follower.mimic.leader].name == "left_driver_joint"
    loops = [j for j in articulation.joints if j.kind == "spherical"]
    assert len(loops) == 2 and all(j.exclude_from_articulation for j in loops)
    tree = compute_kinematic_tree(articulation)
    assert sorted(articulation.joints[i].name for i in tree.dofs) == ["left_driver_joint"]
    assert len(tree.loop_unknowns) == 6  # coupler, spring link, follower on each side
    index = articulation.find_joint(driver.path)
    at_rest = compute_configuration(articulation, {}, tree)
    closed = compute_configuration(articulation, {index: driver.upper}, tree)
    assert at_rest.loop_residual < 1e-9 and closed.loop_residual < 1e-6
    # Both sides move the same (the mimic), and each finger keeps one free DOF (underactuated).
    positions = closed.positions
    assert positions[articulation.find_joint(follower.path)] == pytest.approx(driver.upper)
    assert closed.free_dofs == 2
    assert {n.code for n in articulation.notes} == {"closed-chain"}


def test_mimic_follower_tracks_leader_in_both_hand_authored_grippers():
    for name, site, *_ in REAL[2:]:
        _, articulation = _read(name, site)
        leader = articulation.opening.driven[0]
        joint = articulation.joints[leader]
        config = compute_configuration(articulation, {leader: joint.upper})
        follower = next(i for i, j in enumerate(articulation.joints) if j.mimic is not None)
        assert config.positions[follower] == pytest.approx(joint.upper)


@pytest.mark.parametrize(("name", "site", "side", "lower", "upper", "tolerance"), REAL)
def test_derived_site_matches_the_authored_one(name, site, side, lower, upper, tolerance):
    stage, articulation = _read(name, site)
    suggestion = suggest_gripper_site(articulation)
    authored = read_gripper_site(stage.GetPrimAtPath(site))
    assert suggestion.parent_path == site.rsplit("/", 1)[0]
    assert suggestion.open_side == side
    assert suggestion.max_opening == pytest.approx(authored.max_opening, abs=2e-4)
    assert np.allclose(suggestion.grasp_frame, authored.grasp_frame, atol=2e-4)
    assert suggestion.pad_width == pytest.approx(authored.grip_line.length, abs=2e-4)


def test_gripper_without_joints_reads_none():
    stage = open_stage(EXAMPLES / "gripper.usda")
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/Gripper/tcp"))
    assert articulation.status == "none" and articulation.joints == ()
    assert not articulation.has_rigid_bodies and articulation.opening is None


# --- the three mimic schemas ----------------------------------------------------------

LEADER = "</RevoluteJawGripper/joints/jaw_right_joint>"
MIMICS = {
    "newton": (
        '"NewtonMimicAPI"',
        f"rel newton:mimicJoint = {LEADER}\nfloat newton:mimicCoef0 = 5\nfloat newton:mimicCoef1 = 0.5",
    ),
    "physx": (
        '"PhysxMimicJointAPI:rotY"',
        "float physxMimicJoint:rotY:gearing = -0.5\nfloat physxMimicJoint:rotY:offset = -5\n"
        f"rel physxMimicJoint:rotY:referenceJoint = {LEADER}",
    ),
    "mujoco": (
        '"MjcEqualityJointAPI"',
        f"rel newton:mimicJoint = {LEADER}\nfloat newton:mimicCoef0 = 5\nfloat newton:mimicCoef1 = 0.5",
    ),
    "mujoco-deprecated": (
        '"MjcEqualityJointAPI"',
        f"rel mjc:target = {LEADER}\ndouble mjc:coef0 = 5\ndouble mjc:coef1 = 0.5",
    ),
}


def _revolute_with_mimic(schema: str, body: str) -> str:
    text = (GRIPPERS / "revolute_jaw.usda").read_text()
    text = text.replace(
        'prepend apiSchemas = ["NewtonMimicAPI"]', f"prepend apiSchemas = [{schema}]"
    )
    text = re.sub(
        r"float newton:mimicCoef0 = 0\n\s*float newton:mimicCoef1 = 1\n\s*rel newton:mimicJoint = <[^>]*>",
        body.replace("\\", "\\\\"),
        text,
    )
    return text


def test_three_mimic_schemas_give_the_same_kinematics(write_usda):
    poses, followers = {}, {}
    for key, (schema, body) in MIMICS.items():
        stage = open_stage(write_usda(_revolute_with_mimic(schema, body), f"{key}.usda"))
        articulation = read_gripper_articulation(
            stage.GetPrimAtPath("/RevoluteJawGripper/palm/tcp")
        )
        follower = articulation.joints[
            articulation.find_joint("/RevoluteJawGripper/joints/jaw_left_joint")
        ]
        assert follower.mimic is not None, key
        assert follower.mimic.coef0 == pytest.approx(math.radians(5)), key  # degrees converted
        assert follower.mimic.coef1 == pytest.approx(0.5), key
        leader = articulation.find_joint("/RevoluteJawGripper/joints/jaw_right_joint")
        config = compute_configuration(articulation, {leader: 0.3})
        followers[key] = config.positions[articulation.find_joint(follower.path)]
        poses[key] = config.link_poses
    assert followers["newton"] == pytest.approx(math.radians(5) + 0.5 * 0.3)
    for key in MIMICS:
        assert followers[key] == pytest.approx(followers["newton"]), key
        assert np.allclose(poses[key], poses["newton"], atol=1e-12), key


# --- hostile input: one clear note each ------------------------------------------------


def _prismatic(replacements: dict[str, str]) -> str:
    text = (GRIPPERS / "prismatic_two_finger.usda").read_text()
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def _notes(write_usda, replacements, name="hostile.usda"):
    stage = open_stage(write_usda(_prismatic(replacements), name))
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/PrismaticGripper/palm/tcp"))
    return articulation, [n for n in articulation.notes]


def test_joint_rel_to_a_missing_prim(write_usda):
    articulation, notes = _notes(
        write_usda,
        {
            "rel physics:body1 = </PrismaticGripper/finger_right>": "rel physics:body1 = </PrismaticGripper/gone>"
        },
    )
    missing = [n for n in notes if n.code == "joint-body-missing"]
    assert len(missing) == 1
    assert "physics:body1 targets </PrismaticGripper/gone>, which is not a prim" in missing[0].text
    assert missing[0].subject == "/PrismaticGripper/joints/finger_right_joint"
    # The right finger is no longer joined: no opposed pads, said once.
    assert articulation.opening.opening_open is None
    assert [n.code for n in notes].count("no-opposed-pads") == 1


def test_joint_rel_outside_the_asset(write_usda):
    text = _prismatic(
        {
            "rel physics:body0 = </PrismaticGripper/palm>\n            rel physics:body1 = </PrismaticGripper/finger_right>": "rel physics:body0 = </Elsewhere>\n            rel physics:body1 = </PrismaticGripper/finger_right>"
        }
    )
    text += '\ndef Xform "Elsewhere" (\n    prepend apiSchemas = ["PhysicsRigidBodyAPI"]\n)\n{\n}\n'
    stage = open_stage(write_usda(text))
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/PrismaticGripper/palm/tcp"))
    # The joint no longer reaches the palm: the right finger is not a link, and no joint of
    # the gripper names </Elsewhere>.
    assert "/PrismaticGripper/finger_right" not in [link.path for link in articulation.links]


def test_nan_limits(write_usda):
    articulation, notes = _notes(
        write_usda,
        {
            "float physics:upperLimit = 0.035\n        }\n\n        def PhysicsPrismaticJoint": "float physics:upperLimit = nan\n        }\n\n        def PhysicsPrismaticJoint"
        },
    )
    texts = [n.text for n in notes if n.code == "attribute-unusable"]
    assert texts == ["physics:upperLimit is nan; expected a number: read as not authored"]
    leader = articulation.joints[0]
    assert leader.upper is None
    assert [n.code for n in notes].count("joint-limits-missing") == 1
    assert articulation.opening.opening_open is None


def test_revolute_limit_of_1e30_degrees(write_usda):
    text = (
        (GRIPPERS / "revolute_jaw.usda")
        .read_text()
        .replace(
            "float physics:upperLimit = 30\n        }\n\n        def",
            "float physics:upperLimit = 1e30\n        }\n\n        def",
            1,
        )
    )
    stage = open_stage(write_usda(text))
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/RevoluteJawGripper/palm/tcp"))
    notes = [n for n in articulation.notes if n.code == "joint-limit-unusable"]
    assert len(notes) == 1
    assert re.search(r"physics:upperLimit is 1e\+30 degrees; expected -360 to 360", notes[0].text)
    assert articulation.joints[0].upper is None


def test_mimic_cycle(write_usda):
    # The leader follows its follower: a cycle of two.
    text = _prismatic(
        {
            'prepend apiSchemas = ["PhysicsDriveAPI:linear"]': 'prepend apiSchemas = ["PhysicsDriveAPI:linear", "NewtonMimicAPI"]',
            "float drive:linear:physics:damping = 50": "rel newton:mimicJoint = </PrismaticGripper/joints/finger_right_joint>\n            float drive:linear:physics:damping = 50",
        }
    )
    stage = open_stage(write_usda(text))
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/PrismaticGripper/palm/tcp"))
    cycles = [n for n in articulation.notes if n.code == "mimic-cycle"]
    assert len(cycles) == 1
    assert (
        "finger_left_joint> -> </PrismaticGripper/joints/finger_right_joint> -> " in cycles[0].text
    )
    tree = compute_kinematic_tree(articulation)
    assert tree.mimic_order == ()


def test_ten_thousand_joints(open_usda):
    lines = [
        'def Xform "G"\n{',
        'def Xform "palm" (\nprepend apiSchemas = ["PhysicsRigidBodyAPI"]\n)\n{',
        'def Xform "tcp" (\nprepend apiSchemas = ["GripperSiteAPI"]\n)\n{\nfloat gripper:maxOpening = 0.08\n}\n}',
    ]
    for i in range(10_000):
        lines.append(f'def Xform "l{i}" (\nprepend apiSchemas = ["PhysicsRigidBodyAPI"]\n)\n{{\n}}')
        parent = "palm" if i == 0 else f"l{i - 1}"
        lines.append(
            f'def PhysicsRevoluteJoint "j{i}"\n{{\nrel physics:body0 = </G/{parent}>\n'
            f"rel physics:body1 = </G/l{i}>\n}}"
        )
    lines.append("}")
    stage = open_usda("\n".join(lines))
    start = time.perf_counter()
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/G/palm/tcp"))
    elapsed = time.perf_counter() - start
    assert [n.code for n in articulation.notes] == ["too-many-joints"]
    assert (
        "10000 joints join 10001 rigid bodies to the palm </G/palm>; usdgrip reads at most 1000"
        in articulation.notes[0].text
    )
    assert articulation.status == "none"
    assert elapsed < 30  # linear: about half a second here


def test_finger_without_colliders_and_site_without_rigid_body_ancestor(write_usda):
    articulation, notes = _notes(
        write_usda,
        {
            '        def Cube "pad" (\n            prepend apiSchemas = ["PhysicsCollisionAPI"]\n        )\n        {\n            double size = 1\n            double3 xformOp:scale = (0.01, 0.02, 0.05)\n            uniform token[] xformOpOrder = ["xformOp:scale"]\n        }\n    }\n\n    def Xform "finger_right"': '    }\n\n    def Xform "finger_right"'
        },
    )
    chains = articulation.opening.fingers
    assert [c.has_colliders for c in chains].count(False) == 1
    assert any(n.code == "no-opposed-pads" for n in notes)


# --- usdgrip info ------------------------------------------------------------------------


def test_info_lists_fingers_joints_opening_and_open_side(capsys):
    from usdgrip.cli import main

    assert main(["info", str(GRIPPERS / "robotiq_2f85" / "robotiq_2f85.usda")]) == 0
    out = capsys.readouterr().out
    assert (
        "    articulation articulated: palm </Robotiq_2F85/base>, declared by </Robotiq_2F85>"
        in out
    )
    assert (
        "    finger     right_driver, right_spring_link, right_coupler, right_follower (pad </Robotiq_2F85/right_follower>, +X)"
        in out
    )
    assert (
        "    joint      left_driver_joint revolute X, limits 0 to 45.84 deg, drive stiffness 100 N m/rad, damping 10, max force 5 N m"
        in out
    )
    assert (
        "    joint      right_driver_joint revolute X, limits 0 to 45.84 deg, mimic 1 x left_driver_joint +0 deg (MjcEqualityJointAPI)"
        in out
    )
    assert (
        "    opening    0.0854 m at the lower limit(s), -0.01026 m at the upper: open = lower"
        in out
    )
    assert "note: closed-chain:" in out


def test_info_json_articulation_in_si_units(capsys):
    import json

    from usdgrip.cli import main

    assert main(["info", "--json", str(GRIPPERS / "revolute_jaw.usda")]) == 0
    site = json.loads(capsys.readouterr().out)["sites"][0]
    articulation = site["articulation"]
    assert (
        articulation["status"] == "articulated"
        and articulation["palm"] == "/RevoluteJawGripper/palm"
    )
    joints = {j["name"]: j for j in articulation["joints"]}
    right = joints["jaw_right_joint"]
    assert right["unit"] == "rad" and right["upper"] == pytest.approx(math.radians(30))
    assert right["authored_limits"] == [-12.0, 30.0]
    assert right["drive"]["stiffness"] == pytest.approx(0.05 * 180 / math.pi, rel=1e-6)
    left = joints["jaw_left_joint"]
    assert left["mimic"]["leader"] == "/RevoluteJawGripper/joints/jaw_right_joint"
    assert left["mimic"]["source"] == "NewtonMimicAPI"
    opening = articulation["opening"]
    assert opening["open_side"] == "upper"
    assert opening["open_limits"] == {"/RevoluteJawGripper/joints/jaw_right_joint": "upper"}
    assert opening["at_upper"] == pytest.approx(0.0585, abs=2e-4)
    assert opening["open_positions"]["/RevoluteJawGripper/joints/jaw_left_joint"] == pytest.approx(
        math.radians(30)
    )


def test_info_unchanged_for_a_gripper_without_joints(capsys):
    import json

    from usdgrip.cli import main

    assert main(["info", "--json", str(EXAMPLES / "gripper.usda")]) == 0
    assert "articulation" not in json.loads(capsys.readouterr().out)["sites"][0]
    assert main(["info", str(EXAMPLES / "gripper.usda")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 7 and not any(
        line.startswith(("    articulation", "    joint")) for line in out
    )


# --- units, actuators, a gripper without a site ----------------------------------------


def _in_centimetres(text: str) -> str:
    """The prismatic example authored in centimetres (metersPerUnit 0.01), same gripper."""
    text = text.replace("metersPerUnit = 1", "metersPerUnit = 0.01")

    def scaled(match: re.Match) -> str:
        numbers = re.sub(
            r"-?\d+(\.\d+)?(e-?\d+)?", lambda m: f"{float(m.group(0)) * 100:g}", match.group(2)
        )
        return match.group(1) + numbers

    pattern = r"((?:xformOp:translate|xformOp:scale|physics:localPos\d|point3f\[\] points|physics:(?:lower|upper)Limit|drive:linear:physics:maxForce) = )([^\n]*)"
    return re.sub(pattern, scaled, text)


def test_stage_units_are_converted(write_usda):
    stage = open_stage(
        write_usda(_in_centimetres((GRIPPERS / "prismatic_two_finger.usda").read_text()))
    )
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/PrismaticGripper/palm/tcp"))
    leader = articulation.joints[0]
    assert leader.upper == pytest.approx(0.035)  # 3.5 cm
    assert leader.drive.max_force == pytest.approx(40.0)  # 4000 kg cm/s² = 40 N
    assert leader.drive.stiffness == pytest.approx(1000.0)  # mass/s²: no length in it
    assert articulation.opening.opening_at_lower == pytest.approx(0.08)
    assert articulation.opening.opening_at_upper == pytest.approx(0.01)


def test_newton_actuator_drives_a_joint(write_usda):
    text = (GRIPPERS / "prismatic_two_finger.usda").read_text()
    text = text.replace('prepend apiSchemas = ["PhysicsDriveAPI:linear"]', "")
    text = text.replace(
        '    def Scope "joints"',
        '    def NewtonActuator "finger_drive"\n    {\n'
        "        rel newton:targets = </PrismaticGripper/joints/finger_left_joint>\n    }\n\n"
        '    def Scope "joints"',
    )
    stage = open_stage(write_usda(text))
    articulation = read_gripper_articulation(stage.GetPrimAtPath("/PrismaticGripper/palm/tcp"))
    drive = articulation.joints[0].drive
    assert drive.source == "NewtonActuator </PrismaticGripper/finger_drive>"
    assert drive.stiffness is None  # the actuator's own gains are Newton's, not read
    assert articulation.opening.open_side == "lower"
    assert "no-drive" not in {n.code for n in articulation.notes}


def test_site_derived_for_a_gripper_without_one(write_usda):
    text = (GRIPPERS / "prismatic_two_finger.usda").read_text()
    start = text.index('        def Xform "tcp"')
    end = text.index('    def Xform "finger_left"')
    stage = open_stage(write_usda(text[:start] + "    }\n\n" + text[end:]))
    palm = stage.GetPrimAtPath("/PrismaticGripper/palm")
    articulation = read_gripper_articulation(palm)
    assert articulation.site_path is None and articulation.status == "articulated"
    suggestion = suggest_gripper_site(articulation)
    assert suggestion.translate == pytest.approx((0.0, 0.0, 0.0775))
    assert suggestion.forward == pytest.approx((0.0, 0.0, 1.0))
    assert suggestion.grip_line == pytest.approx((0.0, -1.0, 0.0))
    assert np.cross(suggestion.forward, suggestion.grip_line) == pytest.approx((1.0, 0.0, 0.0))
    assert (suggestion.max_opening, suggestion.pad_width) == pytest.approx((0.08, 0.02))
    assert suggestion.open_side == "lower"


def test_site_cannot_be_derived_without_fingers():
    stage = open_stage(EXAMPLES / "gripper.usda")
    with pytest.raises(ValueError, match=r"</Gripper>: no rigid body \(PhysicsRigidBodyAPI\)"):
        suggest_gripper_site(read_gripper_articulation(stage.GetPrimAtPath("/Gripper")))


@pytest.mark.parametrize(
    ("old", "new", "code", "fragment"),
    [
        (
            "float physics:lowerLimit = 0\n            float physics:upperLimit = 0.035\n        }\n\n        def",
            "float physics:lowerLimit = 0.05\n            float physics:upperLimit = 0.035\n        }\n\n        def",
            "joint-limit-unusable",
            "physics:lowerLimit 0.05 > physics:upperLimit 0.035; expected lower <= upper",
        ),
        (
            "rel physxMimicJoint:rotX:referenceJoint = </PrismaticGripper/joints/finger_left_joint>",
            "rel physxMimicJoint:rotX:referenceJoint = </PrismaticGripper/joints/nothing>",
            "mimic-leader-missing",
            "the PhysxMimicJointAPI:rotX leader </PrismaticGripper/joints/nothing> is not a prim",
        ),
        (
            "rel physxMimicJoint:rotX:referenceJoint = </PrismaticGripper/joints/finger_left_joint>",
            "rel physxMimicJoint:rotX:referenceJoint = [</PrismaticGripper/joints/finger_left_joint>, </PrismaticGripper/palm>]",
            "mimic-leader-targets",
            "physxMimicJoint:rotX:referenceJoint has 2 targets; expected exactly one",
        ),
        (
            "rel physxMimicJoint:rotX:referenceJoint = </PrismaticGripper/joints/finger_left_joint>",
            "rel physxMimicJoint:rotX:referenceJoint = </PrismaticGripper/joints/finger_right_joint>",
            "mimic-cycle",
            "leader is the joint itself",
        ),
        (
            "rel physxMimicJoint:rotX:referenceJoint = </PrismaticGripper/joints/finger_left_joint>",
            "",
            "mimic-leader-missing",
            "PhysxMimicJointAPI:rotX names no leader joint",
        ),
        (
            "point3f physics:localPos0 = (-0.045, 0, 0.065)",
            "point3f physics:localPos0 = (-0.045, inf, 0.065)",
            "joint-frame-unusable",
            "expected finite values and a non-zero quaternion",
        ),
        (
            "float drive:linear:physics:stiffness = 1000",
            "float drive:linear:physics:stiffness = -1000",
            "drive-unusable",
            "drive:linear:physics:stiffness is -1000; expected >= 0",
        ),
        (
            "float physics:upperLimit = 0.035\n        }\n\n        def",
            'string physics:upperLimit = "3.5 cm"\n        }\n\n        def',
            "attribute-unusable",
            "physics:upperLimit is '3.5 cm'; expected a number",
        ),
        (
            "rel physics:body1 = </PrismaticGripper/finger_left>",
            "rel physics:body1 = [</PrismaticGripper/finger_left>, </PrismaticGripper/finger_right>]",
            "joint-body-targets",
            "physics:body1 has 2 targets",
        ),
        (
            "point3f physics:localPos1 = (0, 0, 0)\n            float physics:lowerLimit = 0\n            float physics:upperLimit = 0.035\n        }\n\n        def",
            "point3f physics:localPos1 = (0, 0.01, 0)\n            float physics:lowerLimit = 0\n            float physics:upperLimit = 0.035\n        }\n\n        def",
            "joint-frame-mismatch",
            "from any position of this prismatic joint",
        ),
    ],
)
def test_hostile_joint_values_get_one_note_each(write_usda, old, new, code, fragment):
    _, notes = _notes(write_usda, {old: new})
    found = [n for n in notes if n.code == code]
    assert len(found) == 1, [(n.code, n.text) for n in notes]
    assert fragment in found[0].text
    assert found[0].subject.startswith("/PrismaticGripper/joints/")


def test_plan_works_with_each_gripper(tmp_path, capsys):
    """``usdgrip plan`` (today's collision model: the grippers' colliders) takes all four."""
    from usdgrip.cli import main

    grippers = [f"{GRIPPERS / name}:{site}" for name, site, *_ in REAL]
    argv = ["plan", str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--method", "slots"]
    for gripper in grippers:
        argv += ["--gripper", gripper]
    output = tmp_path / "mug.yaml"
    assert main([*argv, "--max-candidates", "2", "-o", str(output)]) == 0
    out = capsys.readouterr().out
    assert "8 candidate(s) for 4 of 4 gripper(s)" in out
    assert "gripper_models=meshes,meshes,meshes,meshes" in output.read_text()


def test_a_broken_collider_mesh_is_one_note_and_the_rest_is_read(write_usda):
    broken = (
        '        def Mesh "broken" (\n            prepend apiSchemas = ["PhysicsCollisionAPI"]\n        )\n'
        "        {\n            int[] faceVertexCounts = [3]\n            int[] faceVertexIndices = [0, 1, 7]\n"
        "            point3f[] points = [(0, 0, 0), (0.01, 0, 0), (0, 0.01, 0)]\n        }\n\n"
    )
    articulation, notes = _notes(
        write_usda,
        {
            '        def Cube "pad" (': broken + '        def Cube "pad" (',
            "float physics:mass = 0.05": "float physics:mass = -1",
        },
    )
    # (both fingers get the broken mesh and the negative mass: one note each)
    unreadable = [n for n in notes if n.code == "collider-unreadable"]
    assert [n.subject for n in unreadable] == [
        "/PrismaticGripper/finger_left/broken",
        "/PrismaticGripper/finger_right/broken",
    ]
    assert "faceVertexIndices[2] is 7; expected 0 to 2" in unreadable[0].text
    masses = [n for n in notes if n.code == "mass-unusable"]
    assert [n.subject for n in masses] == [
        "/PrismaticGripper/finger_left",
        "/PrismaticGripper/finger_right",
    ]
    assert masses[0].text == "physics:mass is -1; expected a finite value > 0: read as not authored"
    assert articulation.links[1].mass is None
    assert articulation.opening.opening_open == pytest.approx(0.08)  # the pads still read


@pytest.mark.parametrize(
    "new",
    ["float physics:mass.timeSamples = {0: 0.05, 10: 0.07}", "float physics:mass = 0.05\n"],
)
def test_a_time_sampled_mass_reads_at_the_default_time_as_physics_does(write_usda, new):
    """Only time samples: a note, as the physics reader refuses it (never the fallback 0)."""
    articulation, notes = _notes(write_usda, {"float physics:mass = 0.05": new})
    found = [n for n in notes if "physics:mass" in n.text]
    if "timeSamples" not in new:
        assert found == [] and articulation.links[1].mass == pytest.approx(0.05)
        return
    assert [n.code for n in found] == ["attribute-unusable"] * 2, found  # both fingers
    assert "physics:mass is time-sampled with no default value" in found[0].text
    assert articulation.links[1].mass is None
