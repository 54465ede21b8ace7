"""SimReady grasp vector lines: segment maths, the USD reader, GSP/GP rules and `usdgrip info`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import EXAMPLES

from usdgrip.cli import main
from usdgrip.grasp_line_geometry import (
    compute_segment_hits,
    compute_surface_points,
    compute_symmetric_points,
)
from usdgrip.rules import resolve_params, validate
from usdgrip.usd.grasp_lines import find_grasp_lines, read_object_surface, scan_grasp_lines
from usdgrip.usd.stage import open_stage

# --- pure maths ------------------------------------------------------------------


def _box(lo=(-0.02, -0.02, -0.02), hi=(0.02, 0.02, 0.02)):
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    vertices = np.array(
        [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0],
         [x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]]
    )  # fmt: skip
    quads = [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]
    faces = np.array([[q[0], q[i], q[i + 1]] for q in quads for i in (1, 2)])
    return vertices, faces


def test_segment_through_a_box_hits_both_faces_in_order():
    vertices, faces = _box()
    hits = compute_segment_hits((-0.05, 0.001, 0.003), (0.05, 0.001, 0.003), vertices, faces)
    np.testing.assert_allclose(hits, [0.3, 0.7])
    surface = compute_surface_points((-0.05, 0.001, 0.003), (0.05, 0.001, 0.003), vertices, faces)
    np.testing.assert_allclose(surface.first, [-0.02, 0.001, 0.003])
    np.testing.assert_allclose(surface.second, [0.02, 0.001, 0.003])
    assert surface.width == pytest.approx(0.04)
    assert (surface.offset_first, surface.offset_second) == pytest.approx((0.03, 0.03))


def test_misses_short_segments_and_degenerate_input_hit_nothing():
    vertices, faces = _box()
    assert len(compute_segment_hits((-0.05, 0.1, 0), (0.05, 0.1, 0), vertices, faces)) == 0
    # stops before the box
    assert len(compute_segment_hits((-0.05, 0, 0), (-0.03, 0, 0), vertices, faces)) == 0
    assert len(compute_segment_hits((0, 0, 0.1), (0, 0, 0.1), vertices, faces)) == 0
    assert len(compute_segment_hits((0, 0, np.nan), (0, 0, 1), vertices, faces)) == 0
    assert len(compute_segment_hits((0, 0, 0), (1, 0, 0), np.zeros((0, 3)), [])) == 0
    assert compute_surface_points((-0.05, 0.1, 0), (0.05, 0.1, 0), vertices, faces) is None


def test_symmetrised_points_stand_off_equally_like_fet005():
    vertices, faces = _box()
    # authored off-centre: 0.01 m before one face, 0.05 m beyond the other
    q0, q1 = compute_symmetric_points((-0.03, 0, 0), (0.07, 0, 0), vertices, faces)
    np.testing.assert_allclose(q0, [-0.05, 0, 0])
    np.testing.assert_allclose(q1, [0.05, 0, 0])
    # a miss keeps the authored points
    q0, q1 = compute_symmetric_points((-0.03, 1, 0), (0.07, 1, 0), vertices, faces)
    np.testing.assert_allclose([q0, q1], [[-0.03, 1, 0], [0.07, 1, 0]])


def test_random_segments_hit_a_box_exactly_when_they_cross_it():
    rng = np.random.default_rng(3)
    vertices, faces = _box()
    checked = crossed = 0
    for _ in range(200):
        a, b = rng.uniform(-0.06, 0.06, size=(2, 3))
        hits = compute_segment_hits(a, b, vertices, faces)
        assert np.all((hits >= 0) & (hits <= 1))
        # crossing the box <=> the segment passes through its interior (slab test)
        d = b - a
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (-0.02 - a) / d, (0.02 - a) / d
        lo = np.max(np.minimum(t1, t2))
        hi = np.min(np.maximum(t1, t2))
        inside_a, inside_b = np.all(np.abs(a) < 0.02), np.all(np.abs(b) < 0.02)
        crosses = lo <= hi and hi >= 0 and lo <= 1 and not (inside_a and inside_b)
        if abs(lo - hi) > 1e-9 and min(abs(lo), abs(hi), abs(lo - 1), abs(hi - 1)) > 1e-9:
            assert (len(hits) > 0) == crosses, (a, b)
            checked += 1
            crossed += crosses
    assert checked > 190 and 20 < crossed < checked  # both outcomes exercised


def test_batch_casts_agree_with_one_segment_casts_on_both_paths(monkeypatch):
    """check_segments_hit_mesh's plain-Python path (few pairs) and numpy path give
    compute_segment_hits' answer, segment by segment (GS.009 casts through them)."""
    import usdgrip.grasp_line_geometry as geometry

    rng = np.random.default_rng(5)
    vertices, faces = _box()
    starts, ends = rng.uniform(-0.06, 0.06, size=(2, 300, 3))
    ends[:5] = starts[:5]  # zero length: meets nothing
    starts[5, 0] = np.nan
    expected = [
        len(compute_segment_hits(a, b, vertices, faces)) > 0
        for a, b in zip(starts, ends, strict=True)
    ]
    assert 50 < sum(expected) < 250
    for pairs in (0, 10**9):  # numpy for everything, then plain Python for everything
        monkeypatch.setattr(geometry, "SMALL_CAST_PAIRS", pairs)
        met = geometry.check_segments_hit_mesh(starts, ends, vertices, faces)
        assert met.tolist() == expected


# --- reading ----------------------------------------------------------------------

PROP = """
#usda 1.0
(
    defaultPrim = "Prop"
    metersPerUnit = 0.01
    upAxis = "Z"
)

def Xform "Prop"
{
    double3 xformOp:translate = (100, 0, 0)
    uniform token[] xformOpOrder = ["xformOp:translate"]

    def Xform "body" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI"]
    )
    {
        double3 xformOp:scale = (2, 2, 2)
        uniform token[] xformOpOrder = ["xformOp:scale"]
        def Cube "box"
        {
            double size = 2
        }
        def BasisCurves "grasp_identifier_01"
        {
            int[] curveVertexCounts = [2]
            point3f[] points = [(-2, 0, 0), (2, 0, 0)]
            token type = "linear"
        }
    }

    def Xform "loose"
    {
        def BasisCurves "grasp_identifier_side"
        {
            int[] curveVertexCounts = [2]
            point3f[] points = [(0, -4, 0), (0, 4, 0)]
            token type = "linear"
        }
    }

    def Xform "grasp_identifier_fet"
    {
        def BasisCurves "line"
        {
            point3f[] points = [(0, 0, -4), (0, 0, 4)]
        }
    }

    def "Proto" (
        instanceable = true
        prepend references = </Proto>
    )
    {
    }
}

over "Missing"
{
    def BasisCurves "grasp_identifier_outside"
    {
        point3f[] points = [(0, 0, 0), (1, 0, 0)]
    }
}

class Xform "Proto"
{
    def BasisCurves "grasp_identifier_inst"
    {
        point3f[] points = [(0, 0, 0), (1, 0, 0)]
    }
}
"""


def test_reader_finds_lines_objects_and_both_frames(write_usda):
    stage = open_stage(write_usda(PROP))
    scan = scan_grasp_lines(stage)
    lines = {line.name: line for line in scan.lines}
    # under the default prim only; instance proxies and the FET005 Xform layout included
    assert set(lines) == {
        "grasp_identifier_01",
        "grasp_identifier_side",
        "grasp_identifier_fet",
        "grasp_identifier_inst",
    }
    assert "/Missing/grasp_identifier_outside" in scan.identifiers
    assert scan.has_rigid_body and scan.declares_graspable and scan.default_prim == "/Prop"

    one = lines["grasp_identifier_01"]
    assert (one.object_path, one.object_source, one.layout) == ("/Prop/body", "rigid-body", "curve")
    # cm stage, body scaled x2, prop at 1 m: world metres and the body's frame in metres
    np.testing.assert_allclose(one.points_world, [[0.96, 0, 0], [1.04, 0, 0]], atol=1e-9)
    np.testing.assert_allclose(one.points_object, [[-0.02, 0, 0], [0.02, 0, 0]], atol=1e-9)
    assert one.length == pytest.approx(0.08)
    np.testing.assert_allclose(one.object_transform @ [-0.02, 0, 0, 1], [0.96, 0, 0, 1], atol=1e-9)
    assert one.curve_type == "linear" and one.is_usable

    side = lines["grasp_identifier_side"]
    assert (side.object_path, side.object_source) == ("/Prop", "default-prim")
    fet = lines["grasp_identifier_fet"]
    assert (fet.path, fet.layout, fet.curve_type) == (
        "/Prop/grasp_identifier_fet/line",
        "xform",
        None,
    )
    inst = lines["grasp_identifier_inst"]
    assert inst.path == "/Prop/Proto/grasp_identifier_inst"


def test_no_default_prim_reads_the_whole_stage_and_the_root_is_the_object(write_usda):
    stage = open_stage(
        write_usda(
            """
            def Xform "A"
            {
                def BasisCurves "grasp_identifier_01"
                {
                    point3f[] points = [(0, 0, 0), (1, 0, 0)]
                }
            }
            over "B"
            {
                def BasisCurves "grasp_identifier_02"
                {
                    point3f[] points = [(0, 0, 0), (1, 0, 0)]
                }
            }
            """
        )
    )
    lines = find_grasp_lines(stage)
    assert [(g.object_path, g.object_source, g.defined) for g in lines] == [
        ("/A", "root", True),
        ("/B", "root", False),
    ]


def test_stages_that_never_mention_grasp_identifier_are_not_walked(write_usda, monkeypatch):
    stage = open_stage(EXAMPLES / "gripper.usda")

    def no_walk(*args, **kwargs):
        raise AssertionError("traversed")

    monkeypatch.setattr(type(stage), "Traverse", no_walk)
    scan = scan_grasp_lines(stage)
    assert scan.lines == [] and not scan.declares_graspable


def test_object_surface_reads_meshes_and_primitives_and_names_an_empty_object(open_usda):
    stage = open_stage(EXAMPLES / "graspable_prop.usda")
    surface = read_object_surface(stage.GetPrimAtPath("/Block"))
    assert surface.source_paths == ("/Block/visuals/body", "/Block/colliders/body")
    assert len(surface.faces) == 24
    empty = open_usda('def Xform "Empty"\n{\n}')
    with pytest.raises(Exception, match=r"</Empty>: no Mesh, Cube"):
        read_object_surface(empty.GetPrimAtPath("/Empty"))


# --- rules ------------------------------------------------------------------------


def _prop(line: str = "", *, rigid: bool = True, default: bool = True, body: str = "") -> str:
    schemas = '(\n    prepend apiSchemas = ["PhysicsRigidBodyAPI"]\n)' if rigid else ""
    head = '    defaultPrim = "Block"\n' if default else ""
    cube = body or 'def Cube "body"\n    {\n        double size = 0.04\n    }'
    return (
        f'#usda 1.0\n(\n{head}    metersPerUnit = 1\n    upAxis = "Z"\n)\n\n'  # else GA.002
        f'def Xform "Block" {schemas}\n{{\n'
        f"    {cube}\n{line}\n}}\n"
    )


def _line(points: str, name: str = "grasp_identifier_01", extra: str = 'token type = "linear"'):
    return (
        f'    def BasisCurves "{name}"\n    {{\n        point3f[] points = {points}\n'
        f"        {extra}\n    }}"
    )


GOOD = _line("[(-0.04, 0, 0), (0.04, 0, 0)]")


def _codes(path, **kwargs) -> list[tuple[str, str]]:
    return [(i.code, i.prim) for i in validate(path, **kwargs).issues]


def test_good_prop_and_the_example_prop(write_usda):
    assert _codes(write_usda(_prop(GOOD))) == []
    report = validate(EXAMPLES / "graspable_prop.usda")
    assert [(i.code, i.prim) for i in report.issues] == [("GP.001", "/Block/grasp_identifier_02")]
    assert not report.ok


def test_gsp001_only_for_stages_that_declare_themselves_graspable_props(write_usda):
    # a robot/gripper file: no grasp identifier at all
    assert _codes(EXAMPLES / "gripper.usda", rules=["GSP.001"]) == []
    # an identifier but no rigid body: not a prop (SimReady's validator would fail it)
    xform_only = _line("[(0, 0, 0)]").replace("BasisCurves", "Xform")
    assert _codes(write_usda(_prop(xform_only, rigid=False)), rules=["GSP.001"]) == []
    # a prop whose only identifier is an Xform (FET005's layout)
    xform = '    def Xform "grasp_identifier_01"\n    {\n    }'
    report = validate(write_usda(_prop(xform), "fet.usda"))
    issue = next(i for i in report.issues if i.code == "GSP.001")
    assert issue.prim == "/Block" and issue.severity == "failure"
    assert "found only </Block/grasp_identifier_01> (Xform)" in issue.message
    # one point
    assert _codes(write_usda(_prop(_line("[(0, 0, 0)]")), "one.usda"), rules=["GSP.001"]) == [
        ("GSP.001", "/Block/grasp_identifier_01")
    ]
    # no default prim
    no_default = write_usda(_prop(GOOD, default=False), "nodefault.usda")
    assert _codes(no_default, rules=["GSP.001"]) == [("GSP.001", "/")]


def test_gsp001_names_an_identifier_outside_the_default_prim(write_usda):
    text = _prop("") + '\ndef Xform "Aside"\n{\n' + GOOD + "\n}\n"
    (issue,) = validate(write_usda(text), rules=["GSP.001"]).issues
    assert "</Aside/grasp_identifier_01> (BasisCurves, outside the default prim)" in issue.message


def test_gp001_misses_inside_and_no_geometry(write_usda):
    beside = _line("[(-0.04, 0.1, 0), (0.04, 0.1, 0)]")
    assert _codes(write_usda(_prop(beside))) == [("GP.001", "/Block/grasp_identifier_01")]
    inside = _line("[(-0.01, 0, 0), (0.01, 0, 0)]")
    assert ("GP.001", "/Block/grasp_identifier_01") in _codes(write_usda(_prop(inside)))
    no_geometry = _prop(GOOD, body='def Xform "empty"\n    {\n    }')
    (issue,) = validate(write_usda(no_geometry), rules=["GP.001"]).issues
    assert "cannot meet its object </Block>" in issue.message and issue.severity == "failure"


def test_gp001_uses_render_meshes_too_and_honours_transforms(write_usda):
    mesh = (
        'def Mesh "render"\n    {\n        double3 xformOp:translate = (0.5, 0, 0)\n'
        '        uniform token[] xformOpOrder = ["xformOp:translate"]\n'
        "        int[] faceVertexCounts = [3]\n        int[] faceVertexIndices = [0, 1, 2]\n"
        "        point3f[] points = [(0, -1, -1), (0, 1, -1), (0, 0, 1)]\n    }"
    )
    crossing = _line("[(0.4, 0, 0), (0.6, 0, 0)]")
    assert _codes(write_usda(_prop(crossing, body=mesh)), rules=["GP.001"]) == []
    before = _line("[(-0.1, 0, 0), (0.1, 0, 0)]")
    assert _codes(write_usda(_prop(before, body=mesh)), rules=["GP.001"]) == [
        ("GP.001", "/Block/grasp_identifier_01")
    ]


@pytest.mark.parametrize(
    ("points", "extra", "needle"),
    [
        ("[(-0.04, 0, 0), (0, 0, 0), (0.04, 0, 0)]", 'token type = "linear"', "has 3 points"),
        ("[(-0.04, 0, 0), (0.04, 0, 0)]", "", "fallback is cubic"),
        ("[(-0.04, 0, 0), (0.04, 0, 0)]", 'token type = "cubic"', "type is 'cubic'"),
        ("[(0, 0, 0), (0, 0, 0)]", 'token type = "linear"', "p0 and p1 coincide"),
        ("[(-0.04, 0, 0), (inf, 0, 0)]", 'token type = "linear"', "points[1] is not finite"),
        ("[(0, 0, 0)]", 'token type = "linear"', "has 1 point(s)"),
    ],
)
def test_gp002_form(write_usda, points, extra, needle):
    issues = validate(write_usda(_prop(_line(points, extra=extra))), rules=["GP.002"]).issues
    assert [i.severity for i in issues] == ["warning"]
    assert needle in issues[0].message, issues[0].message


def test_gp002_time_sampled_points_read_as_not_authored(write_usda):
    line = _line("[(-0.04, 0, 0), (0.04, 0, 0)]").replace(
        "point3f[] points = [(-0.04, 0, 0), (0.04, 0, 0)]",
        "point3f[] points.timeSamples = {0: [(-0.04, 0, 0), (0.04, 0, 0)]}",
    )
    messages = [i.message for i in validate(write_usda(_prop(line)), rules=["GP.002"]).issues]
    assert any("time-sampled" in m for m in messages) and any("0 point(s)" in m for m in messages)


def test_gp003_width_against_the_parameters(write_usda):
    wide = _prop(
        _line("[(-0.15, 0, 0), (0.15, 0, 0)]"),
        body='def Cube "body"\n    {\n        double size = 0.2\n    }',
    )
    path = write_usda(wide)
    (issue,) = validate(path, rules=["GP.003"]).issues
    assert "0.2 m apart" in issue.message and "grasp_line_max_width_m = 0.085" in issue.message
    assert validate(path, rules=["GP.003"], params={"grasp_line_max_width_m": 0.25}).issues == []
    # grazing a 1 mm plate
    plate = 'def Cube "body"\n    {\n        double3 xformOp:scale = (0.025, 1, 1)\n' \
        '        uniform token[] xformOpOrder = ["xformOp:scale"]\n        double size = 0.04\n    }'  # fmt: skip
    (issue,) = validate(write_usda(_prop(GOOD, body=plate), "plate.usda"), rules=["GP.003"]).issues
    assert "0.001 m apart" in issue.message and "grasp_line_min_width_m = 0.002" in issue.message


def test_width_parameters_are_checked():
    with pytest.raises(ValueError, match=r"grasp_line_min_width_m is 0\.1, above"):
        resolve_params({"grasp_line_min_width_m": 0.1})
    with pytest.raises(ValueError, match="grasp_line_max_width_m is 0"):
        resolve_params({"grasp_line_max_width_m": 0})


def test_robot_and_scene_examples_gain_no_grasp_findings():
    for name in ("gripper.usda", "tote.usda", "mug.usda", "simready_2f85.usda"):
        codes = {i.code for i in validate(EXAMPLES / name).issues}
        assert not codes & {"GSP.001", "GP.001", "GP.002", "GP.003"}, name


# --- usdgrip info -------------------------------------------------------------------


def test_info_lists_grasp_lines_text_and_json(capsys):
    path = str(EXAMPLES / "graspable_prop.usda")
    assert main(["info", path]) == 0
    text = capsys.readouterr().out
    assert "2 grasp line(s)" in text
    assert "grasp line </Block/grasp_identifier_01> object </Block>" in text
    assert "p0 (-0.05, 0, 0.1) p1 (0.05, 0, 0.1), length 0.1 m" in text
    assert main(["info", path, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["grasp_lines"][0]
    assert {"path", "object", "points", "length"} <= set(first)
    assert first["path"] == "/Block/grasp_identifier_01" and first["object"] == "/Block"
    assert first["points"] == [[-0.05, 0.0, 0.1], [0.05, 0.0, 0.1]]
    assert first["length"] == pytest.approx(0.1)
    # files without grasp lines keep their output
    assert main(["info", str(EXAMPLES / "gripper.usda"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["grasp_lines"] == []


def test_info_bad_meters_per_unit_is_one_line(write_usda, capsys):
    path = write_usda(
        '#usda 1.0\n(\n    defaultPrim = "Block"\n    metersPerUnit = 0\n)\n'
        'def Xform "Block"\n{\n' + GOOD + "\n}\n"
    )
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "metersPerUnit is 0" in err[0]


def test_binary_layers_are_walked_and_wrong_types_are_named(write_usda, tmp_path):
    from pxr import Sdf

    text = _prop(GOOD)
    usdc = tmp_path / "prop.usdc"
    Sdf.Layer.FindOrOpen(str(write_usda(text, "for_usdc.usda"))).Export(str(usdc))
    assert [g.path for g in find_grasp_lines(open_stage(usdc))] == ["/Block/grasp_identifier_01"]
    assert validate(usdc).issues == []
    wrong = _prop(
        GOOD.replace("point3f[] points", "double[] points").replace(
            "(-0.04, 0, 0), (0.04, 0, 0)", "1, 2"
        )
    )
    (line,) = find_grasp_lines(open_stage(write_usda(wrong, "wrong.usda")))
    assert (
        line.point_count == 0
        and "points is double[], expected point3f[]" in line.problems["points"]
    )
    messages = [
        i.message for i in validate(write_usda(wrong, "wrong2.usda"), rules=["GP.002"]).issues
    ]
    assert any("points is double[]" in m for m in messages)


def test_many_lines_on_one_object_are_read_and_checked_once_each(write_usda, monkeypatch):
    import usdgrip.rules.contexts as contexts

    calls = {"surface": 0, "casts": 0}

    def counted(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        monkeypatch.setattr(contexts, function.__name__, wrapper)

    counted("surface", contexts.read_object_surface)
    counted("casts", contexts.compute_surface_points)
    lines = "\n".join(
        _line(f"[(-0.04, 0, {z:.4f}), (0.04, 0, {z:.4f})]", name=f"grasp_identifier_{i:04d}")
        for i, z in enumerate(np.linspace(-0.03, 0.03, 150))
    )
    path = write_usda(_prop(lines))
    report = validate(path)
    # |z| > 0.02 lies above or below the 4 cm cube: those lines miss it
    missing = {i.prim for i in report.issues if i.code == "GP.001"}
    expected = {
        f"/Block/grasp_identifier_{i:04d}"
        for i, z in enumerate(np.linspace(-0.03, 0.03, 150))
        if abs(z) > 0.02 + 1e-9
    }
    assert missing == expected and len(expected) > 40
    # one surface read for the object, one pair of casts per line (GP.001 and GP.003 share them)
    assert calls == {"surface": 1, "casts": 150}
