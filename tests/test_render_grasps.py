"""``usdgrip render``: smooth meshes, sample and targets JSON, colours by success, other writers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import trimesh
from conftest import EXAMPLES
from isaac_grasp_writers import editor_grasp, write_grasp_editor_file
from pxr import Usd, UsdGeom, Vt
from test_render import png_size

from usdgrip.cli import main
from usdgrip.contracts import (
    GraspCandidate,
    GraspPhysics,
    GraspPlanningMetadata,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.grasping.isaac_yaml import compute_candidate_poses, write_isaac_grasp
from usdgrip.render.line_sets import (
    compute_feature_edges,
    compute_silhouette_edges,
    compute_view_direction,
)
from usdgrip.render.render_inputs import load_grasp_picture
from usdgrip.views.glyphs import NEUTRAL_COLOR, compute_success_colors

TOTE = str(EXAMPLES / "tote.usda")
GRIPPER = GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp")


def write_mesh(path: Path, mesh: trimesh.Trimesh, up: str = "Z") -> Path:
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, up)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    root = UsdGeom.Xform.Define(stage, "/Thing")
    stage.SetDefaultPrim(root.GetPrim())
    usd_mesh = UsdGeom.Mesh.Define(stage, "/Thing/mesh")
    usd_mesh.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(mesh.vertices.astype(np.float32)))
    usd_mesh.GetFaceVertexCountsAttr().Set([3] * len(mesh.faces))
    usd_mesh.GetFaceVertexIndicesAttr().Set(mesh.faces.ravel().tolist())
    stage.Save()
    return path


def scanned_mesh() -> trimesh.Trimesh:
    """A bumpy closed surface, as a scan is: a subdivided sphere with seeded radial noise."""
    sphere = trimesh.creation.icosphere(subdivisions=4, radius=0.05)
    noise = np.random.default_rng(7).normal(0.0, 0.0001, len(sphere.vertices))
    vertices = sphere.vertices * (1 + noise[:, None] / 0.05)
    return trimesh.Trimesh(vertices, sphere.faces, process=False)


SMOOTH = {
    "icosphere": lambda: trimesh.creation.icosphere(subdivisions=3, radius=0.05),
    "torus": lambda: trimesh.creation.torus(0.05, 0.015),
    "scan": scanned_mesh,
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_smooth_meshes_render_with_their_outline(tmp_path, capsys, name):
    # No edge of a smooth mesh is sharper than 20°: matplotlib crashed on the empty line
    # collection ("need at least one array to concatenate").
    mesh = SMOOTH[name]()
    tris = mesh.vertices[mesh.faces]
    assert len(compute_feature_edges(tris)) == 0
    out = tmp_path / f"{name}.png"
    code = main(["render", str(write_mesh(tmp_path / f"{name}.usda", mesh)), "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert f"/Thing, {len(mesh.faces)} triangles" in capsys.readouterr().out
    assert png_size(out) == (880, 660)


def test_the_silhouette_of_a_sphere_seen_from_above_is_its_equator():
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.05)
    tris = sphere.vertices[sphere.faces]
    down = compute_view_direction(90.0, -58.0, "Z")
    np.testing.assert_allclose(down, [0, 0, 1], atol=1e-12)
    edges = compute_silhouette_edges(tris, down)
    assert len(edges) >= 20
    assert np.abs(edges[..., 2]).max() < 0.2 * 0.05  # every outline edge near z = 0
    side = compute_silhouette_edges(tris, compute_view_direction(0.0, 0.0, "Z"))  # from +X
    assert np.abs(side[..., 0]).max() < 0.2 * 0.05
    # A Y-up stage is drawn turned: its eye from above is world +Y.
    np.testing.assert_allclose(compute_view_direction(90.0, 0.0, "Y"), [0, 1, 0], atol=1e-12)


def test_a_flat_open_mesh_still_has_its_boundary():
    square = np.array([[[0, 0, 0], [1, 0, 0], [1, 1, 0]], [[0, 0, 0], [1, 1, 0], [0, 1, 0]]], float)
    assert len(compute_feature_edges(square)) == 4
    assert len(compute_silhouette_edges(square, [0.0, 0.0, 1.0])) == 0


@pytest.fixture
def samples(tmp_path):
    path = tmp_path / "samples.json"
    argv = ["sample", TOTE, "--prim", "/Tote", "--count", "5", "-o", str(path)]
    assert main(argv) == 0
    return path


def test_sample_json_draws_one_colour_per_candidate_hands_joined(tmp_path, samples, capsys):
    capsys.readouterr()
    stage = Usd.Stage.Open(TOTE)
    picture, _, notes = load_grasp_picture(samples, stage, stage.GetPrimAtPath("/Tote"), True)
    data = json.loads(samples.read_text())
    assert picture.kind == "samples" and picture.color_by == "candidate" and notes == []
    assert picture.poses.shape == (5, 2, 4, 4)
    np.testing.assert_allclose(
        picture.poses[3, 1], np.array(data["candidates"][3]["targets"][1]["matrix"])
    )
    assert len({tuple(c) for c in picture.colors}) == 5
    out = tmp_path / "samples.png"
    assert main(["render", TOTE, "--grasps", str(samples), "-o", str(out)]) == 0
    assert "5 grasp(s)" in capsys.readouterr().out
    plain = tmp_path / "plain.png"
    assert main(["render", TOTE, "-o", str(plain)]) == 0
    assert out.read_bytes() != plain.read_bytes()
    from usdgrip.render.line_sets import build_line_sets
    from usdgrip.render.render_inputs import read_inputs

    inputs = read_inputs(stage, "/Tote", samples, False, False)
    joins = build_line_sets(inputs, TOTE).segments[-1]
    assert joins[0].shape == (5, 2, 3)  # one line per candidate between its two hands
    np.testing.assert_allclose(joins[0][2], picture.poses[2, :, :3, 3])
    assert all(c == tuple(picture.colors[i]) for i, c in enumerate(joins[1]))


def test_targets_json_is_coloured_by_its_measured_success(tmp_path, samples):
    data = json.loads(samples.read_text())
    rates = [1.0, 0.0, 0.5, 1.0, 0.0]
    evaluated = {
        "format": "usdgrip_targets_evaluation",
        "format_version": 1,
        "candidates": [
            {"index": i, "targets": c["targets"], "success_rate": r, "outcome": "held"}
            for i, (c, r) in enumerate(zip(data["candidates"], rates, strict=True))
        ],
    }
    path = tmp_path / "targets.json"
    path.write_text(json.dumps(evaluated))
    stage = Usd.Stage.Open(TOTE)
    picture, _, _ = load_grasp_picture(path, stage, stage.GetPrimAtPath("/Tote"), True)
    assert picture.kind == "targets" and picture.color_by == "success"
    np.testing.assert_allclose(picture.colors, compute_success_colors(rates, 5))
    assert [label for label, _ in picture.legend] == ["0% held", "50% held", "100% held"]
    with pytest.raises(ValueError, match=r"--color-by confidence: .* has no confidences"):
        load_grasp_picture(path, stage, None, True, color_by="confidence")
    evaluated["candidates"][2]["success_rate"] = "half"
    path.write_text(json.dumps(evaluated))
    with pytest.raises(Exception, match=r"candidates\[2\]\.success_rate is 'half'"):
        load_grasp_picture(path, stage, None, True)


def evaluated_tote_grasps(tmp_path) -> Path:
    candidates = {}
    for i, (x, conf, rate) in enumerate([(-0.195, 0.9, 0.0), (0.195, 0.6, 1.0), (0.0, 0.2, None)]):
        cid = f"g_{i}"
        candidates[cid] = GraspCandidate(
            candidate_id=cid,
            gripper=GRIPPER,
            confidence=conf,
            position=(x, 0.0, 0.15),
            orientation={"w": 0.0, "xyz": (0.0, 1.0, 0.0)},
            physics=None
            if rate is None
            else GraspPhysics(success_rate=rate, trials=2, outcome="held" if rate else "missed"),
        )
    metadata = GraspPlanningMetadata(
        upstream_revision="test", seed=0, runtime_seconds=0.0, pose_frame="/Tote"
    )
    result = GraspPlanningResult(grasps=candidates, metadata=metadata)
    return Path(write_isaac_grasp(result, tmp_path / "evaluated.yaml"))


def test_evaluated_grasps_are_coloured_by_success_unless_asked(tmp_path, capsys):
    grasps = evaluated_tote_grasps(tmp_path)
    stage = Usd.Stage.Open(TOTE)
    picture, _, _ = load_grasp_picture(grasps, stage, None, False)
    assert picture.color_by == "success"
    np.testing.assert_allclose(picture.colors[:2], compute_success_colors([0.0, 1.0], 2))
    np.testing.assert_allclose(picture.colors[2], NEUTRAL_COLOR)  # not evaluated: grey
    assert picture.legend[-1][0] == "not evaluated"
    by_confidence, _, _ = load_grasp_picture(grasps, stage, None, False, color_by="confidence")
    assert by_confidence.colors[0][1] > by_confidence.colors[0][0]  # highest confidence: green
    assert [label for label, _ in by_confidence.legend] == [
        "lowest confidence 0.2",
        "highest 0.9",
    ]
    outs = [tmp_path / f"{name}.png" for name in ("success", "confidence")]
    assert main(["render", TOTE, "--grasps", str(grasps), "-o", str(outs[0])]) == 0
    argv = ["render", TOTE, "--grasps", str(grasps), "--color-by", "confidence"]
    assert main([*argv, "-o", str(outs[1])]) == 0
    assert outs[0].read_bytes() != outs[1].read_bytes()


def test_color_by_success_without_physics_is_one_line_exit_2(tmp_path, samples, capsys):
    out = tmp_path / "x.png"
    assert (
        main(["render", TOTE, "--grasps", str(samples), "--color-by", "success", "-o", str(out)])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("usdgrip render: --color-by success: ") and len(err.splitlines()) == 1
    assert "has no measured success rates" in err and not out.exists()
    assert main(["render", TOTE, "--color-by", "success", "-o", str(out)]) == 2
    assert "--color-by: only with --grasps" in capsys.readouterr().err


def test_another_writers_frame_is_converted_with_the_gripper(tmp_path, capsys):
    mug = str(EXAMPLES / "mug.usda")
    g_pose = np.eye(4)
    g_pose[:3, 3] = (0.0, 0.0, 0.2)
    base = g_pose.copy()
    base[2, 3] -= 0.13  # the base link /Gripper is 0.13 m behind the site along +Z
    grasps = {"grasp_0": editor_grasp(base, 1.0, {"finger_joint": 0.4}, {"finger_joint": 0.0})}
    path = write_grasp_editor_file(tmp_path / "e.yaml", "/Mug", "/World/Gripper", grasps)
    stage = Usd.Stage.Open(mug)
    mug_prim = stage.GetPrimAtPath("/Mug")
    converted, _, notes = load_grasp_picture(path, stage, mug_prim, True, GRIPPER)
    from usdgrip.usd.stage import compute_world_transform

    world = compute_world_transform(mug_prim)
    np.testing.assert_allclose(converted.poses[0, 0], world @ g_pose, atol=1e-9)
    assert converted.open_width == pytest.approx(0.085)  # the site's max opening
    assert any("converted to the grasp frame G of </Gripper/tcp>" in n for n in notes)
    raw, _, notes = load_grasp_picture(path, stage, mug_prim, True)
    np.testing.assert_allclose(raw.poses[0, 0], world @ base, atol=1e-9)
    assert notes == [
        f"grasps {path}: poses are of the file's gripper_frame '/World/Gripper'; drawn as grasp "
        "frames, not converted: pass --gripper FILE:/SITE to convert them"
    ]
    out = tmp_path / "e.png"
    argv = ["render", mug, "--grasps", str(path), "-o", str(out)]
    assert main(argv) == 0
    assert "not converted: pass --gripper" in capsys.readouterr().err
    assert main([*argv, "--gripper", f"{GRIPPER.asset_path}:/Gripper/tcp"]) == 0
    assert "warning: grasps" in capsys.readouterr().err
    assert main([*argv, "--gripper-frame", "/Gripper"]) == 2
    assert "give --gripper FILE:/SITE too" in capsys.readouterr().err
    np.testing.assert_allclose(compute_candidate_poses_of(path), base, atol=1e-12)


def compute_candidate_poses_of(path: Path) -> np.ndarray:
    from usdgrip.grasping.isaac_yaml import read_isaac_grasp

    return compute_candidate_poses(read_isaac_grasp(path))[0]
