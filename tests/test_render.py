"""``usdgrip render``: PNGs of object, sites, slots and grasps; bad input exits 2."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES

from usdgrip.cli import main
from usdgrip.contracts import (
    GraspCandidate,
    GraspOrientation,
    GraspPlanningMetadata,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.grasping.isaac_yaml import write_isaac_grasp
from usdgrip.render.drawing import _to_plot
from usdgrip.render.line_sets import compute_feature_edges

TOTE = str(EXAMPLES / "tote.usda")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def grasps_yaml(tmp_path) -> Path:
    gripper = GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp")
    candidates = {}
    for i, (x, conf) in enumerate([(-0.195, 0.9), (0.195, 0.6), (0.0, 0.2)]):
        cid = f"g_test_{i}"
        candidates[cid] = GraspCandidate(
            candidate_id=cid,
            gripper=gripper,
            confidence=conf,
            generation_method="slots",
            position=(x, 0.0, 0.15),
            orientation=GraspOrientation(w=0.0, xyz=(0.0, 1.0, 0.0)),  # approach -Z
            width=0.085,
        )
    result = GraspPlanningResult(
        grasps=candidates,
        metadata=GraspPlanningMetadata(
            upstream_revision="test", seed=0, runtime_seconds=0.0, pose_frame="/Tote"
        ),
    )
    return Path(write_isaac_grasp(result, tmp_path / "grasps.yaml"))


def test_render_object_slots_and_grasps(tmp_path, grasps_yaml, capsys):
    out = tmp_path / "tote.png"
    code = main(["render", TOTE, "--slots", "--grasps", str(grasps_yaml), "-o", str(out)])
    assert code == 0
    assert capsys.readouterr().out.strip() == (
        f"wrote {out}: /Tote, 60 triangles, 0 site(s), 2 slot(s), 3 grasp(s)"
    )
    assert png_size(out) == (880, 660)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [], "no temp left"


def test_what_is_drawn_changes_the_picture(tmp_path, grasps_yaml):
    plain, slots, both = (tmp_path / f"{n}.png" for n in ("plain", "slots", "both"))
    assert main(["render", TOTE, "-o", str(plain)]) == 0
    assert main(["render", TOTE, "--slots", "-o", str(slots)]) == 0
    assert main(["render", TOTE, "--slots", "--grasps", str(grasps_yaml), "-o", str(both)]) == 0
    images = [p.read_bytes() for p in (plain, slots, both)]
    assert len(set(images)) == 3


def test_gripper_site_axes_and_size_options(tmp_path, capsys):
    out = tmp_path / "gripper.png"
    args = ["render", str(EXAMPLES / "gripper.usda"), "-o", str(out), "--size", "4x3"]
    assert main([*args, "--dpi", "50", "--view", "10,30"]) == 0
    assert "/Gripper, 36 triangles, 1 site(s)" in capsys.readouterr().out
    assert png_size(out) == (200, 150)


def test_existing_output_is_replaced(tmp_path):
    out = tmp_path / "view.png"
    out.write_bytes(b"old")
    assert main(["render", TOTE, "-o", str(out)]) == 0
    png_size(out)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.usda", "-o", "{tmp}/x.png"], "missing.usda"),
        ([TOTE, "--prim", "/Nope", "-o", "{tmp}/x.png"], "/Nope"),
        ([TOTE, "-o", "{tmp}/x.jpg"], "must end in .png"),
        ([TOTE, "-o", "{tmp}/no/such/dir/x.png"], "does not exist"),
        ([TOTE, "--grasps", "{tmp}/none.yaml", "-o", "{tmp}/x.png"], "none.yaml: no such file"),
        ([TOTE, "--view", "high", "-o", "{tmp}/x.png"], "--view 'high': expected two numbers"),
        ([TOTE, "--size", "0x3", "-o", "{tmp}/x.png"], "--size 0x3: expected finite inches > 0"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    argv = ["render", *(a.replace("{tmp}", str(tmp_path)) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("usdgrip render: ") and message in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


def test_grasps_need_their_object(tmp_path, grasps_yaml, write_usda, capsys):
    mesh_free = write_usda('def Xform "Other" {}')  # no default prim, no /Tote
    code = main(
        ["render", str(mesh_free), "--grasps", str(grasps_yaml), "-o", str(tmp_path / "x.png")]
    )
    assert code == 2
    assert "grasps are relative to '/Tote' (metadata.pose_frame), which is not on this stage" in (
        capsys.readouterr().err
    )


def test_nothing_to_draw_is_an_error(tmp_path, write_usda, capsys):
    empty = write_usda('def Xform "Empty" {}')
    assert main(["render", str(empty), "-o", str(tmp_path / "x.png")]) == 2
    assert "nothing to draw" in capsys.readouterr().err


def test_feature_edges_drop_flat_diagonals():
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = np.array(
        [corners[[a, b, c]] for q in quads for a, b, c in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]
    )
    edges = compute_feature_edges(tris)
    assert len(edges) == 12, "a cube has 12 edges; the 6 face diagonals are flat"
    lengths = np.linalg.norm(edges[:, 1] - edges[:, 0], axis=1)
    np.testing.assert_allclose(lengths, 1.0)
    assert len(compute_feature_edges(tris[:1])) == 3, "an open triangle keeps its boundary"


def test_y_up_is_drawn_up():
    np.testing.assert_allclose(_to_plot(np.array([0.0, 1.0, 0.0]), "Y"), [0, 0, 1])
    np.testing.assert_allclose(_to_plot(np.array([0.0, 0.0, 1.0]), "Y"), [0, -1, 0])
    np.testing.assert_allclose(_to_plot(np.array([1.0, 2.0, 3.0]), "Z"), [1, 2, 3])


def test_an_object_with_slots_and_no_mesh_renders(tmp_path, write_usda, capsys):
    asset = write_usda(
        """
        def Xform "Handle" (prepend apiSchemas = ["GripperSlotAPI:grip"])
        {
            point3d gripperSlot:grip:center = (0, 0, 0.1)
            vector3d gripperSlot:grip:forward = (0, 0, -1)
            vector3d gripperSlot:grip:spanAxis = (1, 0, 0)
            double gripperSlot:grip:upRange = 0.05
            double gripperSlot:grip:slotInputAngle = 20
        }
        """
    )
    out = tmp_path / "handle.png"
    assert main(["render", str(asset), "--prim", "/Handle", "--slots", "-o", str(out)]) == 0
    assert "/Handle, 0 triangles, 0 site(s), 1 slot(s)" in capsys.readouterr().out
    png_size(out)


def test_nothing_to_draw_says_the_slots_and_the_flag_that_draws_them(tmp_path, write_usda, capsys):
    path = write_usda(
        """
        def Xform "Tote" (
            prepend apiSchemas = ["GripperSlotAPI:left", "GripperSlotAPI:right"]
        )
        {
            uniform token gripperSlot:right:lr = "right"
        }
        """
    )
    assert main(["render", str(path), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"usdgrip render: {path}: nothing to draw (no mesh, site, slot or grasp); the stage "
        "has 2 slot(s) (on </Tote>); --slots draws them\n"
    )
    assert main(["render", str(path), "--slots", "-o", str(tmp_path / "x.png")]) == 0


def _grasp_file(path, count: int) -> None:
    """An extended Isaac-Grasp file of ``count`` grasps, written as text (fast for big counts)."""
    entry = (
        "  g_{i}:\n    confidence: 0.5\n    position: [0.01, 0.0, {z}]\n"
        "    orientation: {{w: 1.0, xyz: [0.0, 0.0, 0.0]}}\n    candidate_id: g_{i}\n"
        "    gripper: {{asset_path: gripper.usda, prim_path: /Gripper/tcp}}\n"
        "    generation_method: antipodal\n    width: 0.05\n"
    )
    body = "".join(entry.format(i=i, z=0.05 + 1e-6 * i) for i in range(count))
    path.write_text(
        "format: isaac_grasp\nformat_version: 1.0\ngrasps:\n" + body + "metadata:\n"
        "  upstream_revision: test\n  seed: 1\n  runtime_seconds: 0.1\n  pose_frame: /Mug\n"
    )


def test_render_draws_thousands_of_grasps_read_by_libyaml(tmp_path, capsys):
    import yaml

    from usdgrip import yamltext

    if yaml.__with_libyaml__:  # the pure-Python parser took 190 s for 20,000 grasps
        assert issubclass(yamltext.LOADER, yaml.CSafeLoader)
    grasps = tmp_path / "g.yaml"
    _grasp_file(grasps, 3000)
    out = tmp_path / "x.png"
    assert (
        main(["render", str(EXAMPLES / "mug.usda"), "--grasps", str(grasps), "-o", str(out)]) == 0
    )
    assert "3000 grasp(s)" in capsys.readouterr().out and out.stat().st_size > 0


def test_render_refuses_a_grasp_file_over_the_limit_before_parsing(tmp_path, capsys, monkeypatch):
    from usdgrip.render import render_inputs

    monkeypatch.setattr(render_inputs, "MAX_RENDER_GRASPS", 1000)
    grasps = tmp_path / "g.yaml"
    _grasp_file(grasps, 1001)
    parsed = []
    monkeypatch.setattr("usdgrip.grasping.isaac_yaml.load_yaml", lambda text: parsed.append(text))
    argv = ["render", str(EXAMPLES / "mug.usda"), "--grasps", str(grasps), "-o", "x.png"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"usdgrip render: {grasps}: holds about 1,001 grasps (1,001 `position` keys); render "
        "draws at most 1,000 per picture (reading more takes minutes and gigabytes): plan with "
        "a smaller --max-candidates, or draw a subset of the file\n"
    )
    assert parsed == []  # refused before the YAML was read
