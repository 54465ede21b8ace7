"""Messages that name the file, the prim and the cause; no numpy warnings on stderr (item 13)."""

from __future__ import annotations

import warnings

import pytest
from conftest import EXAMPLES

from usdgrip.cli import main

GRIPPER = str(EXAMPLES / "gripper.usda") + ":/Gripper/tcp"


def _mesh(points: str, counts: str, indices: str, scale: str = "") -> str:
    return f"""
    def Xform "Obj"
    {{
        def Mesh "m"
        {{
            int[] faceVertexCounts = {counts}
            int[] faceVertexIndices = {indices}
            point3f[] points{scale} = {points}
        }}
    }}
    """


def run_quietly(capsys, argv: list[str]) -> tuple[int, str]:
    """Run the CLI; fail on any RuntimeWarning (numpy's 'invalid value encountered ...')."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(argv)
    runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert runtime == [], runtime
    return code, capsys.readouterr().err


def test_all_zero_area_triangles_name_the_file_and_mesh(write_usda, tmp_path, capsys):
    line = "[(0, 0, 0), (0.01, 0, 0), (0.02, 0, 0), (0.03, 0, 0)]"
    path = write_usda(_mesh(line, "[3, 3, 3, 3]", "[0, 1, 2, 0, 3, 1, 1, 3, 2, 2, 3, 0]"))
    out = tmp_path / "g.yaml"
    argv = ["plan", str(path), "--object", "/Obj", "--gripper", GRIPPER, "-o", str(out)]
    code, err = run_quietly(capsys, argv)
    assert code == 2
    assert err == (
        f"usdgrip plan: {path}: every triangle of the object mesh (</Obj/m>) has zero area (4 "
        "triangle(s), points on one line or coincident); expected a mesh with a surface\n"
    )


def test_a_mesh_of_1e30_metres_is_refused_without_numpy_warnings(write_usda, tmp_path, capsys):
    corners = [(x, y, z) for x in (0, 1e30) for y in (0, 1e30) for z in (0, 1e30)]
    quads = "[0, 1, 3, 2, 4, 6, 7, 5, 0, 4, 5, 1, 2, 3, 7, 6, 0, 2, 6, 4, 1, 5, 7, 3]"
    points = "[" + ", ".join(f"({x:g}, {y:g}, {z:g})" for x, y, z in corners) + "]"
    path = write_usda(_mesh(points, "[4, 4, 4, 4, 4, 4]", quads))
    out = tmp_path / "g.yaml"
    argv = ["plan", str(path), "--object", "/Obj", "--gripper", GRIPPER, "-o", str(out)]
    code, err = run_quietly(capsys, argv)
    assert code == 2
    assert f"{path}: the object mesh (</Obj/m>) spans 1e+30 m; expected an object under " in err
    assert not out.exists()


def test_max_opening_below_the_clearance_names_both(write_usda, tmp_path, capsys):
    tiny = tmp_path / "tiny.usda"
    tiny.write_text(
        (EXAMPLES / "gripper.usda")
        .read_text()
        .replace("float gripper:maxOpening = 0.085", "float gripper:maxOpening = 0.002")
    )
    argv = ["plan", str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper"]
    code, err = run_quietly(capsys, [*argv, f"{tiny}:/Gripper/tcp", "-o", str(tmp_path / "g")])
    assert code == 2
    assert (
        f"gripper {tiny}:/Gripper/tcp: max opening 0.002 m (gripper:maxOpening) is not above "
        "the antipodal clearance 0.005 m"
    ) in err


@pytest.mark.parametrize("command", ["plan", "render"])
def test_time_sampled_mesh_points_say_so(write_usda, tmp_path, capsys, command):
    points = "[(0, 0, 0), (0.05, 0, 0), (0, 0.05, 0)]"
    path = write_usda(_mesh("{0: " + points + "}", "[3]", "[0, 1, 2]", ".timeSamples"))
    if command == "plan":
        argv = ["plan", str(path), "--object", "/Obj", "--gripper", GRIPPER, "--method"]
        argv += ["antipodal", "-o", str(tmp_path / "g.yaml")]
    else:
        argv = ["render", str(path), "-o", str(tmp_path / "x.png")]
    code, err = run_quietly(capsys, argv)
    assert code == 2
    assert str(path) in err and err.count("\n") == 1
    assert (
        "</Obj/m>: points is time-sampled (1 sample(s)) with no default value; usdgrip reads "
        "the default time: author a default value (e.g. the sample at time 0)"
    ) in err


def test_infinite_curve_points_info_is_quiet_and_gr005_prints_the_authored_value(
    write_usda, capsys
):
    path = write_usda(
        """
        def Xform "G" (
            prepend apiSchemas = ["GripperSiteAPI"]
        )
        {
            float gripper:maxOpening = 0.085
            def BasisCurves "gripper_forward_axis"
            {
                point3f[] points = [(0, 0, 0), (0, 0, -inf)]
                int[] curveVertexCounts = [2]
                uniform token type = "linear"
            }
            def BasisCurves "gripper_grip_line"
            {
                point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
                int[] curveVertexCounts = [2]
                uniform token type = "linear"
            }
        }
        """
    )
    code, err = run_quietly(capsys, ["info", str(path)])
    assert code == 0 and err == ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["validate", str(path)]) == 1
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    out = capsys.readouterr().out
    assert "p1 - p0 is not finite (p0 = (0.0, 0.0, 0.0), p1 = (0.0, 0.0, -inf))" in out
