"""The Grippers menu in a real usdview (``USDGRIP_USDVIEW``), driven from its menu bar.

One usdview process (``testusdview --testScript tests/usdview_real/drive_grippers.py``,
under ``xvfb-run``, ``HOME`` in a temp folder, environment from ``usdgrip env``) runs
every entry the way a user would and records what usdview shows; the tests below
assert on that record. A second, short process checks that ``eval "$(usdgrip env)"``
keeps usdview's own ``pxr`` when usdgrip sits in a site-packages beside usd-core's.
Skipped, with the reason, when ``USDGRIP_USDVIEW`` is not set (``.ci/run`` sets it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from isaac_grasp_writers import editor_grasp, write_grasp_editor_file
from real_usdview import (
    USDVIEW,
    one_usdview_at_a_time,
    requires_usdview,
    usdview_python_path,
)
from test_usdview_discovery import EXPECTED_MENU

from usdgrip.grasping.isaac_yaml import compute_candidate_poses, read_isaac_grasp

pytestmark = requires_usdview

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
DRIVER = REPO / "tests" / "usdview_real" / "drive_grippers.py"
CHECK_ENV = REPO / "tests" / "usdview_real" / "check_env.py"
#: The tote is planned on its mesh (its slots are one two-handed group): 50 asked, 10 survive.
PLAN = {"count": 50, "seed": 0, "rows": 10}
XVFB = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24"]
#: Base-link poses (the gripper's root /Gripper, 0.13 m behind its site along +Z) of three
#: grasps above the tote, looking down, as Isaac Sim's Grasp Editor would write them.
EDITOR_GRASPS = {
    name: np.array([[1.0, 0, 0, x], [0, -1.0, 0, 0], [0, 0, -1.0, 0.35], [0, 0, 0, 1.0]])
    for name, x in (("grasp_0", -0.1), ("grasp_1", 0.0), ("off", 0.1))
}


def _usdgrip_env_lines(pythonpath: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PXR_PLUGINPATH_NAME", "PYTHONPATH")}
    env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [sys.executable, "-m", "usdgrip", "env"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout


#: OpenUSD's own setup line for its build (``lib/python`` appended), then usdgrip's; and
#: the other way round: either order must give usdview its own pxr.
HOST_LINE = 'export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}"$USDVIEW_PYTHON"'


def _run_usdview(
    script: Path, env_lines: str, home: Path, extra_env: dict, usdgrip_first: bool = False
) -> subprocess.CompletedProcess:
    """testusdview in a shell that ran usdview's PYTHONPATH line and ``eval "$(usdgrip env)"``.

    By default the host's line comes first (usdview's setup, then usdgrip's);
    ``usdgrip_first`` runs usdgrip's first.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PXR_PLUGINPATH_NAME", "PYTHONPATH")}
    env.update(extra_env, HOME=str(home), USDVIEW_PYTHON=usdview_python_path())
    env.pop("QT_QPA_PLATFORM", None)  # the real X server of xvfb-run: Storm needs GL
    home.mkdir(exist_ok=True)
    command = [*XVFB, sys.executable, str(USDVIEW / "bin" / "testusdview")]
    command += ["--testScript", str(script), str(EXAMPLES / "tote.usda")]
    lines = [env_lines, HOST_LINE] if usdgrip_first else [HOST_LINE, env_lines]
    shell = "\n".join(lines) + '\nexec "$@"\n'
    return subprocess.run(
        ["bash", "-c", shell, "usdview", *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        cwd=home,
    )


@pytest.fixture(scope="session")
def run(tmp_path_factory) -> dict:
    """The record of the one usdview run (shared by every xdist worker)."""
    with one_usdview_at_a_time(tmp_path_factory) as shared:
        work = shared / "drive"
        record = work / "record.json"
        if not record.is_file():
            _drive(work, record)
        return json.loads(record.read_text())


def _drive(work: Path, record: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
    (work / "shots").mkdir(parents=True)
    author_tote = work / "author" / "tote.usda"
    author_tote.parent.mkdir()
    shutil.copyfile(EXAMPLES / "tote.usda", author_tote)
    author_prop = work / "author" / "graspable_prop.usda"
    shutil.copyfile(EXAMPLES / "graspable_prop.usda", author_prop)
    fixable = work / "GR.003-gripper-grip-line.usda"
    shutil.copyfile(EXAMPLES / "broken" / fixable.name, fixable)
    editor = write_grasp_editor_file(
        work / "editor.yaml",
        "/World/tote/Tote",
        "/World/Robot/Gripper",
        {name: editor_grasp(pose, 1.0, {"finger_joint": 0.4}, {"finger_joint": 0.0})
         for name, pose in EDITOR_GRASPS.items()},
    )  # fmt: skip
    config = {
        "editor": str(editor),
        "fixable": str(fixable),
        "author_tote": str(author_tote),
        "author_prop": str(author_prop),
        "broken": sorted(str(p) for p in (EXAMPLES / "broken").glob("*.usda")),
        "export": str(work / "exported.yaml"),
        "shots": str(work / "shots"),
        "gripper": str(EXAMPLES / "gripper.usda"),
        **PLAN,
    }
    if os.environ.get("USDGRIP_SCREENSHOTS"):
        config["screenshots"] = str(Path(os.environ["USDGRIP_SCREENSHOTS"]).resolve())
    out = work / "out.json"
    proc = _run_usdview(
        DRIVER,
        _usdgrip_env_lines(str(REPO / "lib")),
        work / "home",
        {"USDGRIP_E2E": json.dumps(config), "USDGRIP_E2E_OUT": str(out)},
    )
    assert out.is_file(), (
        f"usdview exited {proc.returncode} without a record:\n{proc.stderr[-4000:]}"
    )
    result = json.loads(out.read_text())
    result.update(returncode=proc.returncode, stderr=proc.stderr, config=config)
    record.write_text(json.dumps(result))


def test_usdview_ran_every_entry_without_a_python_exception(run):
    assert run["exceptions"] == []
    assert "Traceback" not in run["stderr"], run["stderr"][-4000:]
    assert run["returncode"] == 0, run["stderr"][-4000:]
    assert run["steps"]["menu"] == EXPECTED_MENU


def test_overlays_only_ever_in_the_session_layer_and_the_root_layer_stays_clean(run):
    def layer_states(node):
        if isinstance(node, dict):
            if "root_dirty" in node:
                yield node
            for value in node.values():
                yield from layer_states(value)

    states = list(layer_states(run["steps"]))
    assert len(states) >= 17
    assert not any(s["root"] or s["root_dirty"] for s in states)
    assert run["steps"]["show_slots"]["layers"]["session"]


def test_validate_stage_and_selection(run):
    steps = run["steps"]
    assert steps["validate_stage"]["visible"]
    assert steps["validate_stage"]["summary"] == "0 issue(s), 0 shown, 0 fixable."
    assert steps["validate_selection"]["scope"] == ["/Tote"]
    assert steps["validate_selection"]["summary"].startswith("0 issue(s) under /Tote")


def test_show_slots_draws_guides_and_turns_guide_display_on(run):
    shown = run["steps"]["show_slots"]
    assert shown["status"] == "usdgrip: 2 slot(s) shown on 1 prim(s)"
    assert shown["layers"]["slots"] == [
        "/__usdgrip_overlays/slots/Tote_left_edge",
        "/__usdgrip_overlays/slots/Tote_right_edge",
    ]
    assert shown["purpose"] == "guide"
    assert run["steps"]["start"]["display_guide"] is False and shown["display_guide"] is True


def test_show_slots_on_every_broken_example_reports_what_it_skips(run):
    broken = run["steps"]["broken"]
    assert sorted(broken) == sorted(Path(p).name for p in run["config"]["broken"])
    for name, step in broken.items():
        assert step["status"].startswith("usdgrip: "), name
        assert step["results_follow"], f"{name}: the results panel kept the old stage"
    gs001 = broken["GS.001-slot-axes.usda"]
    assert gs001["status"].startswith(
        "usdgrip: 0 slot(s) shown on 0 prim(s); 1 skipped: </Tote> slot 'left_edge': "
        "forward and spanAxis are parallel or zero"
    )
    # The reopen that loaded GS.001 rebuilt the tote's slot overlays without raising.
    assert gs001["after_reopen"] == "Stage Reopened" or "parallel" in gs001["after_reopen"]
    assert broken["GS.002-slot-up-range.usda"]["layers"]["slots"] == [
        "/__usdgrip_overlays/slots/Tote_left_edge"
    ]


def test_fixes_into_the_root_layer_are_saved_to_its_file(run):
    save = run["steps"]["save"]
    fixable = Path(run["config"]["fixable"])
    assert "GR.011 fixable" in save["issues_before"]
    assert save["offered_before_fix"] is False, "nothing to save before a fix"
    assert save["after_fix"] == {
        "status": "usdgrip: 1 fix(es) written to the root layer; Save writes it to its file",
        "dirty": True,
    }
    # The file's leading comment block is kept; USD keeps no other comment, and Save says so.
    assert save["status"] == (
        f"usdgrip: saved {fixable} (1 comment(s) after the leading comment block were not "
        "kept: USD does not store comments (the leading block is kept))"
    )
    assert save["dirty"] is False and "GR.011" not in save["issues_after"]
    assert "GripperSiteAPI" in fixable.read_text()
    assert "__usdgrip_overlays" not in fixable.read_text()
    assert sorted(p.name for p in fixable.parent.glob("GR.003*")) == [fixable.name]


def test_sample_and_plan_run_in_their_dialogs(run):
    steps = run["steps"]
    assert steps["sample"]["message"] == "16 candidate(s)."  # 8 draws x 2 slots
    assert steps["sample"]["rows"] == 16 and len(steps["sample"]["layers"]["grasps"]) == 16
    assert steps["plan_form"] == {"object": "/Tote", "site": "/Gripper/tcp"}
    assert steps["plan"]["message"] == f"{PLAN['rows']} candidate(s)."
    assert steps["plan"]["rows"] == PLAN["rows"] == len(steps["plan"]["layers"]["grasps"])
    assert steps["pick"]["highlight_color"] == [0.1, 0.9, 1.0], "row 2 highlighted"
    assert steps["pick"]["row_after_pick"] == 3, "picking g0003 selects its row"


def test_exported_grasps_match_usdgrip_plan(run, tmp_path):
    steps = run["steps"]
    exported = Path(run["config"]["export"])
    assert steps["export"]["status"] == f"usdgrip: wrote {PLAN['rows']} grasps to {exported}"
    cli = tmp_path / "cli.yaml"
    subprocess.run(
        [sys.executable, "-m", "usdgrip", "plan", str(EXAMPLES / "tote.usda"), "--object", "/Tote",
         "--gripper", f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp", "--max-candidates",
         str(PLAN["count"]), "--seed", str(PLAN["seed"]), "-o", str(cli), "-q"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    ours, theirs = read_isaac_grasp(exported), read_isaac_grasp(cli)
    assert list(ours.grasps) == list(theirs.grasps) == steps["plan"]["labels"]
    np.testing.assert_allclose(
        compute_candidate_poses(ours), compute_candidate_poses(theirs), atol=1e-6
    )
    confidences = [[g.confidence for g in r.grasps.values()] for r in (ours, theirs)]
    np.testing.assert_allclose(*confidences, atol=1e-6)


def _pixels(path: str) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"), dtype=np.int32)


def test_load_grasps_shows_a_grasp_editor_file_converted_to_the_site(run):
    load = run["steps"]["load"]
    assert load["rows"] == 3 and load["labels"] == ["grasp_0", "grasp_1", "off"]
    assert load["message"] == "3 candidate(s)."
    assert load["status"].startswith("usdgrip: 3 grasp candidates on /Tote; grasps ")
    assert (
        "the file's gripper_frame '/World/Robot/Gripper' (found by suffix at </Gripper>)"
        in (load["status"])
    )
    assert len(load["layers"]["grasps"]) == 3
    to_site = np.eye(4)
    to_site[2, 3] = 0.13  # T_F_G of examples/gripper.usda
    expected = np.array(list(EDITOR_GRASPS.values())) @ to_site
    np.testing.assert_allclose(np.array(load["poses"]), expected, atol=1e-9)


def test_storm_drew_the_overlays_where_they_are(run):
    storm, visible_off = run["steps"]["storm"], run["steps"]["visible_off"]
    assert visible_off == {"checked": False, "visibility": "invisible"}
    on, off, again = (_pixels(storm[k]) for k in ("on", "off", "on_again"))
    width, height = storm["viewport"]
    assert on.shape == (height, width, 3)
    changed = np.abs(on - off).sum(axis=2) > 30
    assert changed.sum() > 300, "the viewport did not change when the overlays were hidden"
    assert np.array_equal(on, again), "showing them again gives the same picture"
    # The changed pixels are where the overlay points project with usdview's own camera.
    points = np.asarray(storm["points"])
    lo, hi = points.min(axis=0) - 4, points.max(axis=0) + 4
    ys, xs = np.nonzero(changed)
    inside = (xs >= lo[0]) & (xs <= hi[0]) & (ys >= lo[1]) & (ys <= hi[1])
    assert inside.mean() > 0.98
    assert (hi - lo).min() > 20, "the overlays cover part of the viewport"


def test_reopened_stage_keeps_panels_and_overlays(run):
    reopen = run["steps"]["reopen"]
    assert reopen["new_stage"] and reopen["results_follow"]
    assert reopen["status"] == "Stage Reopened"
    assert len(reopen["layers"]["slots"]) == 2
    assert len(reopen["layers"]["grasps"]) == PLAN["rows"] == reopen["rows"]


def test_clear_removes_everything_and_gives_framing_back(run):
    start, clear = run["steps"]["start"], run["steps"]["clear"]
    assert clear["status"] == "usdgrip: overlays cleared"
    assert not clear["layers"]["session"] and clear["rows"] == 0
    assert clear["display_guide"] is False
    np.testing.assert_allclose(clear["bbox"], start["bbox"], atol=1e-9)


@pytest.mark.parametrize("usdgrip_first", [False, True], ids=["host first", "usdgrip first"])
def test_usdgrip_env_beside_usd_core_keeps_usdviews_pxr(tmp_path, tmp_path_factory, usdgrip_first):
    """A normal install in a site-packages that also holds usd-core's pxr (the ``usd`` extra).

    ``eval "$(usdgrip env)"`` before or after usdview's own PYTHONPATH line: usdview
    starts with its own pxr and the Grippers menu works.
    """
    import pxr

    usd_core = Path(pxr.__file__).parent
    assert not str(usd_core).startswith(usdview_python_path())
    site = tmp_path / "site-packages"
    shutil.copytree(
        REPO / "lib" / "usdgrip", site / "usdgrip", ignore=shutil.ignore_patterns("__pycache__")
    )
    share = site / "usdgrip" / "share"
    (share / "docs").mkdir(parents=True)
    for part in ("plugInfo.json", "schemas", "plugins", "docs/rules"):
        (share / part).symlink_to(REPO / part)
    (site / "pxr").symlink_to(usd_core)
    lines = _usdgrip_env_lines(str(site))
    assert str(site) + ":" not in lines and not lines.rstrip().endswith(str(site)), lines
    out = tmp_path / "out.json"
    with one_usdview_at_a_time(tmp_path_factory):
        proc = _run_usdview(
            CHECK_ENV, lines, tmp_path / "home", {"USDGRIP_E2E_OUT": str(out)}, usdgrip_first
        )
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["pxr"].startswith(usdview_python_path())
    assert Path(record["usdgrip"]).resolve().is_relative_to(site), record["usdgrip"]
    assert record["menu"] == EXPECTED_MENU
    assert record["status"] == "usdgrip: 2 slot(s) shown on 1 prim(s)"


def test_add_slot_by_picking_on_the_tote_saved_and_read_by_info(run):
    step = run["steps"]["add_slot"]
    assert step["picking_before"] and not step["picking_after"]
    assert step["center"] == pytest.approx([0.0, -0.145, 0.15], abs=0.01)
    assert step["forward"] == pytest.approx([0.0, 0.0, -1.0], abs=1e-6)
    assert step["ok"], step["verdict"]
    assert step["layers"]["preview"] == ["/__usdgrip_overlays/preview/Tote_front_rim"]
    assert step["display_guide"] is True  # the preview is a guide: drawn
    assert not step["dialog_visible"]
    assert step["authored_status"] == (
        "usdgrip: authored </Tote> slot 'front_rim' into the root layer (Save writes it)"
    )
    path = Path(run["config"]["author_tote"])
    assert step["saved_status"] == f"usdgrip: saved {path}"
    text = path.read_text()
    assert "gripperSlot:front_rim:center" in text and "__usdgrip" not in text
    info = subprocess.run(
        [sys.executable, "-m", "usdgrip", "info", str(path)], capture_output=True, text=True
    )
    assert info.returncode == 0 and "front_rim" in info.stdout, info.stderr


def test_add_grasp_line_by_picking_on_the_prop_saved_and_read_back(run):
    step = run["steps"]["add_line"]
    assert step["name"] == "grasp_identifier_03"
    for pick in ("p0_pick", "p1_pick"):
        assert step[pick]["picking_before"] and not step[pick]["picking_after"], step
    assert step["p0_pick"]["face"] == [-c for c in step["p1_pick"]["face"]]  # opposite faces
    # each point 1 cm off its face (the pick clearance), at the clicked height
    for point, face in (
        (step["p0"], step["p0_pick"]["face"]),
        (step["p1"], step["p1_pick"]["face"]),
    ):
        expected = [0.035 * c for c in face]
        assert point[:2] == pytest.approx(expected[:2], abs=0.003), step
        assert point[2] == pytest.approx(0.06, abs=0.01), step
    assert step["ok"], step["verdict"]
    assert step["preview"] == ["/__usdgrip_overlays/preview/Block_grasp_identifier_03"]
    assert not step["dialog_visible"]
    assert step["authored_status"] == (
        "usdgrip: authored </Block/grasp_identifier_03> grasp line into the root layer "
        "(Save writes it)"
    )
    path = Path(run["config"]["author_prop"])
    assert step["saved_status"] == f"usdgrip: saved {path}"
    text = path.read_text()
    assert 'def BasisCurves "grasp_identifier_03"' in text and "__usdgrip" not in text
    info = subprocess.run(
        [sys.executable, "-m", "usdgrip", "info", str(path)], capture_output=True, text=True
    )
    assert info.returncode == 0, info.stderr
    assert "grasp line </Block/grasp_identifier_03> object </Block>" in info.stdout
    report = subprocess.run(
        [sys.executable, "-m", "usdgrip", "validate", "--format", "json", str(path)],
        capture_output=True,
        text=True,
    )
    issues = json.loads(report.stdout)["files"][0]["issues"]
    assert not [i for i in issues if i["prim"].endswith("grasp_identifier_03")], issues
