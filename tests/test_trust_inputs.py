"""Issue 21, trust round two: what the user's input files may hold.

Internal references in a stage that is written anywhere, duplicate keys in YAML and JSON
inputs, inputs that are named pipes or devices, inputs too large for memory, and
``--targets`` matrices holding booleans.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import yaml
from conftest import EXAMPLES
from test_physics_wiring import box_usda

from usdgrip.cli import main

GRIPPER_FILE = EXAMPLES / "gripper.usda"
GRIPPER = f"{GRIPPER_FILE}:/Gripper/tcp"
PROP = EXAMPLES / "graspable_prop.usda"
MUG = EXAMPLES / "mug.usda"


@pytest.fixture(autouse=True)
def _coacd_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- 3. a stage with an internal reference, written anywhere -----------------------------


def with_internal_reference(tmp_path, base, default_prim: str):
    """``base`` as a sublayer of a file whose ``</Extra>`` references ``</Proto>`` and
    ``</Loaded>`` has it as its payload (internal arcs: no asset path)."""
    path = tmp_path / f"internal-{base.stem}.usda"
    path.write_text(
        f'#usda 1.0\n(\n    defaultPrim = "{default_prim}"\n    kilogramsPerUnit = 1\n'
        f'    metersPerUnit = 1\n    subLayers = [@{base}@]\n    upAxis = "Z"\n)\n\n'
        'def Xform "Proto"\n{\n}\n\ndef Xform "Extra" (\n    references = </Proto>\n)\n{\n}\n'
        'def Xform "Loaded" (\n    payload = </Proto>\n)\n{\n}\n'
    )
    return path


INTERNAL_REFERENCE_COMMANDS = {
    "validate --output": lambda f, o: ["validate", f["gripper"], "--output", o / "r.json"],
    "migrate -o": lambda f, o: ["migrate", f["legacy"], "-o", o / "m.usda"],
    "render -o": lambda f, o: ["render", f["gripper"], "--size", "2x2", "-o", o / "v.png"],
    "plan -o": lambda f, o: [
        *("plan", f["mug"], "--object", "/Mug", "--gripper", f"{f['gripper']}:/Gripper/tcp"),
        *("-q", "--max-candidates", "2", "-o", o / "g.yaml"),
    ],
    "evaluate --lines -o": lambda f, o: [
        *("evaluate", f["prop"], "--gripper", GRIPPER, "--lines"),
        *("--candidates-per-line", "1", "-o", o / "lines.json"),
    ],
    "migrate --lines-to-slots -o": lambda f, o: [
        *("migrate", f["prop"], "--lines-to-slots", "-o", o / "slots.usda"),
    ],
}


@pytest.mark.parametrize("command", INTERNAL_REFERENCE_COMMANDS)
def test_a_stage_with_an_internal_reference_is_written_by_every_command(tmp_path, capsys, command):
    files = {
        "gripper": with_internal_reference(tmp_path, GRIPPER_FILE, "Gripper"),
        "mug": with_internal_reference(tmp_path, MUG, "Mug"),
        "prop": with_internal_reference(tmp_path, PROP, "Block"),
        "legacy": tmp_path / "legacy.usda",
    }
    files["legacy"].write_text(  # a pre-schema site (gripper_maxOpening) beside the reference
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n\ndef Xform "tcp"\n{\n'
        "    float gripper_maxOpening = 0.085\n}\n\n"
        'def Xform "Proto"\n{\n}\n\ndef Xform "Extra" (\n    references = </Proto>\n)\n{\n}\n'
    )
    code, _, err = run_cli(capsys, *INTERNAL_REFERENCE_COMMANDS[command](files, tmp_path))
    assert "Traceback" not in err and "Layer path is empty" not in err, err
    assert code in (0, 1), err  # findings or grasp lines that do not hold are fine
    written = {p.name for p in tmp_path.iterdir()} - {p.name for p in files.values()}
    assert written - {"stderr.txt"}, f"nothing written: {err}"


# --- a box, a gripper and grasp / target files --------------------------------------------


@pytest.fixture
def box_file(tmp_path):
    path = tmp_path / "box.usda"
    path.write_text(box_usda((0.04, 0.04, 0.1)))
    return path


def grasp_entry(cid: str, z: float = 0.075) -> str:
    """One extended Isaac-Grasp entry as ``usdgrip plan`` writes it (a grasp across /Box)."""
    return (
        f"  {cid}:\n    confidence: 0.5\n    position: [0.0, 0.0, {z}]\n"
        "    orientation: {w: 0.0, xyz: [1.0, 0.0, 0.0]}\n"
        f"    candidate_id: {cid}\n"
        f"    gripper: {{asset_path: {GRIPPER_FILE}, prim_path: /Gripper/tcp}}\n"
        "    generation_method: antipodal\n    width: 0.04\n"
    )


def grasp_text(entries: list[str]) -> str:
    return (
        "format: isaac_grasp\nformat_version: 1.0\ngrasps:\n" + "".join(entries) + "metadata:\n"
        "  upstream_revision: test\n  seed: 1\n  runtime_seconds: 0.1\n  pose_frame: /Box\n"
    )


def target(matrix) -> dict:
    return {"ee_id": 0, "slot": "top", "matrix": matrix}


#: One hand across the box's top, looking down (180° about X), as `usdgrip sample` writes it.
TOP = [[1.0, 0.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.075], [0.0, 0.0, 0.0, 1.0]]


def evaluate(box_file, out, *source):
    return (
        *("evaluate", box_file, "--object", "/Box", "--gripper", GRIPPER, "--table"),
        *source,
        *("-o", out),
    )


# --- 2. duplicate keys in YAML and JSON inputs --------------------------------------------


def test_a_grasp_file_with_a_repeated_candidate_id_is_exit_2_naming_the_key_file_and_lines(
    tmp_path, capsys, box_file
):
    grasps = tmp_path / "grasps.yaml"  # 4 entries, one id twice: read as 3 before
    grasps.write_text(
        grasp_text([grasp_entry("g_a"), grasp_entry("g_b"), grasp_entry("g_c"), grasp_entry("g_b")])
    )
    out = tmp_path / "out.yaml"
    code, stdout, err = run_cli(capsys, *evaluate(box_file, out, "--grasps", grasps))
    assert code == 2, err
    assert err == (
        f"usdgrip evaluate: {grasps}: line 28: duplicate key 'g_b' (first at line 12); each key "
        "may appear only once (a repeat would silently replace the first value)\n"
    )
    assert not out.exists() and stdout == ""
    png = tmp_path / "g.png"
    code, _, err = run_cli(capsys, "render", box_file, "--grasps", grasps, "-o", png)
    assert code == 2 and "line 28: duplicate key 'g_b' (first at line 12)" in err, err
    assert not png.exists()


def test_a_repeated_key_inside_an_entry_or_the_metadata_is_refused_too(tmp_path, capsys, box_file):
    entry = grasp_entry("g_a").replace("    width: 0.04\n", "    width: 0.04\n    width: 0.09\n")
    grasps = tmp_path / "grasps.yaml"
    grasps.write_text(grasp_text([entry]))
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.yaml", "--grasps", grasps))
    assert code == 2 and f"{grasps}: line 12: duplicate key 'width' (first at line 11)" in err
    grasps.write_text(grasp_text([grasp_entry("g_a")]) + "  seed: 2\n")
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.yaml", "--grasps", grasps))
    assert code == 2 and f"{grasps}: line 17: duplicate key 'seed' (first at line 14)" in err


@pytest.mark.timeout(60)  # before, the contract check walked 490 million values
def test_a_yaml_alias_bomb_is_refused_before_anything_walks_it(tmp_path, capsys, box_file):
    laughs = ["      a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"      a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)
    ]
    text = grasp_text([grasp_entry("g_a")])
    grasps = tmp_path / "grasps.yaml"
    grasps.write_text(
        text.replace("metadata:\n", "metadata:\n  physics:\n    laughs:\n", 1).replace(
            "    laughs:\n", "    laughs:\n" + "\n".join(laughs) + "\n"
        )
    )
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.yaml", "--grasps", grasps))
    assert code == 2, err
    assert err == (
        f"usdgrip evaluate: {grasps}: its aliases (*name) expand 78 values to 490,329,114, "
        "more than 1,000,000 added; expected a file without alias chains\n"
    )


def test_a_yaml_merge_may_override_the_keys_it_brings_in():
    from usdgrip.yamltext import load_yaml

    data = load_yaml("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  x: 3\nn: [*b, *b]\n")
    assert data["m"] == {"x": 3, "y": 2} and data["n"] == [{"x": 1, "y": 2}] * 2


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ('{"candidates": [],\n "candidates": [%s]}', "candidates", 1),
        ('{"candidates": [\n  {"targets": [%s],\n   "targets": []}]}', "targets", 2),
    ],
    ids=["candidates", "targets"],
)
def test_a_targets_file_with_a_repeated_key_is_exit_2_naming_it(
    tmp_path, capsys, box_file, text, key, line
):
    samples = tmp_path / "samples.json"
    samples.write_text(text % json.dumps(target(TOP)) if key == "targets" else text % "")
    if key == "candidates":
        samples.write_text(text % json.dumps({"targets": [target(TOP)]}))
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.json", "--targets", samples))
    assert code == 2, err
    assert err == (
        f"usdgrip evaluate: {samples}: line {line}: duplicate key '{key}' (in the object opening "
        "on it); each key may appear only once (a repeat would silently replace the first value)\n"
    )


# --- 14. --targets matrices hold numbers only ---------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [(True, "true (a boolean)"), (False, "false (a boolean)"), ("1.0", '"1.0" (a string)')],
)
def test_a_targets_matrix_holding_a_non_number_is_refused_naming_the_element(
    tmp_path, capsys, box_file, value, shown
):
    matrix = [row[:] for row in TOP]
    matrix[3][3] = value
    samples = tmp_path / "samples.json"
    good = {"targets": [target(TOP)]}
    samples.write_text(json.dumps({"candidates": [good, {"targets": [target(matrix)]}]}))
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.json", "--targets", samples))
    assert code == 2, err
    assert err == (
        f"usdgrip evaluate: {samples}: candidates[1].targets[0].matrix[3][3] is {shown}, not a "
        "number; expected a 4x4 matrix of finite numbers (rows, translation in the last column)\n"
    )


def test_the_targets_parser_is_vectorised_and_gives_the_same_poses():
    from usdgrip.grasping.target_evaluation import parse_target_samples

    rng = np.random.default_rng(3)
    poses = np.tile(np.eye(4), (50, 2, 1, 1))
    poses[..., :3, 3] = rng.uniform(-1, 1, (50, 2, 3))
    data = {"candidates": [{"targets": [target(p.tolist()) for p in pair]} for pair in poses]}
    np.testing.assert_array_equal(parse_target_samples(data), poses)


# --- 7. inputs that are named pipes or devices ----------------------------------------------


@pytest.fixture
def short_wait(monkeypatch):
    from usdgrip import input_reading

    monkeypatch.setattr(input_reading, "INPUT_WAIT_S", 0.3, raising=False)


@pytest.mark.timeout(60)  # before the fix, opening the pipe blocked forever
@pytest.mark.parametrize("option", ["--grasps", "--targets"])
def test_a_named_pipe_input_without_a_writer_is_one_line_not_a_hang(
    tmp_path, capsys, box_file, short_wait, option
):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    started = time.monotonic()
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.json", option, pipe))
    assert code == 2 and time.monotonic() - started < 20, err
    assert err == (
        f"usdgrip evaluate: {pipe}: gave no data for 0.3 s (a named pipe whose writer has not "
        "started, or a device with nothing to read); start its writer first\n"
    )
    assert stat.S_ISFIFO(pipe.stat().st_mode)


@pytest.mark.timeout(60)
def test_a_named_pipe_input_with_a_writer_is_read(tmp_path, capsys, box_file, short_wait):
    """``--grasps <(...)``: the grasps come through the pipe, the waiting is per piece."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    text = grasp_text([grasp_entry("g_a")]).encode()

    def write_slowly():
        with open(pipe, "wb") as stream:
            for start in range(0, len(text), 100):
                stream.write(text[start : start + 100])
                stream.flush()
                time.sleep(0.01)

    writer = threading.Thread(target=write_slowly)
    writer.start()
    out = tmp_path / "out.yaml"
    code, _, err = run_cli(capsys, *evaluate(box_file, out, "--grasps", pipe))
    writer.join()
    assert code == 0, err
    assert "physics" in yaml.safe_load(out.read_text())["grasps"]["g_a"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("option", ["--grasps", "--targets"])
def test_dev_zero_is_read_up_to_the_size_limit_not_forever(tmp_path, capsys, box_file, option):
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.json", option, "/dev/zero"))
    assert code == 2, err
    limit = "64 MiB" if option == "--grasps" else "128 MiB"
    assert err.startswith(
        f"usdgrip evaluate: /dev/zero: gives more than {limit} (a character device), over the "
        f"{limit} limit for a "
    ), err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda d: d, "is a folder; expected a file"),
        (lambda d: "/dev/null", "found nothing (the file is empty)"),
        (lambda d: make_socket(d / "sock"), "sock: is a socket; expected a file"),
    ],
    ids=["folder", "dev-null", "socket"],
)
def test_a_folder_or_an_empty_device_is_one_line(tmp_path, capsys, box_file, make, words):
    code, _, err = run_cli(
        capsys, *evaluate(box_file, tmp_path / "o.yaml", "--grasps", make(tmp_path))
    )
    assert code == 2 and words in err and len(err.splitlines()) == 1, err


def make_socket(path):
    import socket

    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return path


# --- 5. inputs too large for memory ---------------------------------------------------------

#: The address-space limit the issue measured under (``ulimit -v 3000000``, about 3 GB).
MEMORY_LIMIT = 3 << 30


def run_limited(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """``usdgrip ARGV`` in a child process with at most :data:`MEMORY_LIMIT` of address space."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "usdgrip", *map(str, argv)],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture(scope="session")
def big_inputs(tmp_path_factory):
    """The issue's files: 300,000 grasps of YAML (69 MB) and 300,000 two-hand candidates of
    JSON (276 MB, sparse: its size is refused before a byte is read)."""
    folder = tmp_path_factory.mktemp("big")
    grasps = folder / "300k.yaml"
    entry = grasp_entry("g_{i}")
    grasps.write_text(grasp_text([entry.replace("{i}", str(i)) for i in range(300_000)]))
    targets = folder / "300k.json"
    with open(targets, "wb") as stream:
        stream.write(b'{"candidates": [')
        stream.truncate(276_000_000)
    return grasps, targets


def test_a_300k_grasp_file_is_refused_before_parsing_under_3_gb(tmp_path, box_file, big_inputs):
    grasps, _ = big_inputs
    assert grasps.stat().st_size > 64 << 20
    done = run_limited(evaluate(box_file, tmp_path / "o.yaml", "--grasps", grasps), tmp_path)
    assert done.returncode == 2, done.stderr
    size = grasps.stat().st_size
    assert done.stderr == (
        f"usdgrip evaluate: {grasps}: is {size / (1 << 20):.1f} MiB ({size:,} bytes), over the "
        "64 MiB limit for a grasp file (at most 50,000 grasps); split the file, or plan with a "
        "smaller --max-candidates\n"
    )
    done = run_limited(["render", box_file, "--grasps", grasps, "-o", tmp_path / "g.png"], tmp_path)
    assert done.returncode == 2 and "over the 64 MiB limit for a grasp file" in done.stderr


def test_a_300k_candidate_targets_file_is_refused_before_reading_under_3_gb(
    tmp_path, box_file, big_inputs
):
    _, targets = big_inputs
    done = run_limited(evaluate(box_file, tmp_path / "o.json", "--targets", targets), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"usdgrip evaluate: {targets}: is 263.2 MiB (276,000,000 bytes), over the 128 MiB limit "
        "for a --targets file (at most 200,000 targets); sample fewer candidates per file "
        "(usdgrip sample --count)\n"
    )


def test_more_grasps_than_the_limit_within_the_size_are_refused_before_parsing(
    tmp_path, capsys, box_file, monkeypatch
):
    from usdgrip.grasping import isaac_yaml

    grasps = tmp_path / "many.yaml"
    grasps.write_text(grasp_text([grasp_entry(f"g_{i}") for i in range(50_001)]))  # 12 MB
    monkeypatch.setattr(isaac_yaml, "load_yaml", lambda text: pytest.fail("parsed"))
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.yaml", "--grasps", grasps))
    assert code == 2, err
    assert err == (
        f"usdgrip evaluate: {grasps}: holds about 50,001 grasps (50,001 `position` keys), more "
        "than the 50,000 read from one grasp file (each takes about 0.5 ms and 15 kB to read): "
        "split the file, or plan with a smaller --max-candidates\n"
    )


def test_more_targets_than_the_limit_are_refused_naming_the_count(tmp_path, capsys, box_file):
    samples = tmp_path / "many.json"
    candidate = json.dumps({"targets": [target(0), target(0)]})
    samples.write_text('{"candidates": [' + ", ".join([candidate] * 100_001) + "]}")
    code, _, err = run_cli(capsys, *evaluate(box_file, tmp_path / "o.json", "--targets", samples))
    assert code == 2, err
    assert err == (
        f"usdgrip evaluate: {samples}: holds 100,001 candidates x 2 targets, more than the "
        "200,000 targets evaluated from one file (what one `usdgrip sample` run writes at most); "
        "split the candidates into files\n"
    )
