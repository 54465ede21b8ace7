"""Ambiguous or hostile JSON/YAML text: duplicate keys, huge integers, deep nesting (issue 13).

Each case is one message naming the file, prim, record and key, exit 2 from
the readers, a GS.006 finding from validate, and a record migrate keeps.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import EXAMPLES

import usdgrip as usd_io  # the public names
from usdgrip import yamltext
from usdgrip.batch.results import read_results
from usdgrip.cli import main
from usdgrip.errors import GripperError
from usdgrip.grasping.isaac_yaml import parse_isaac_grasp, read_isaac_grasp
from usdgrip.jsontext import get_json_depth_problem, load_json
from usdgrip.lambdasim import CUSTOM_DATA_PATH, parse_lambdasim_records

RECORD = (
    '"center": [0.0625, 0, 0.05], "forward": [-1, 0, 0], "span_axis": [0, 1, 0], '
    '"up_range": 0.04, "slot_input_angle": 20, "LR": 1, "GroupName": ""'
)
DUPLICATE = "[{" + RECORD + ', "up_range": 5}]'
HUGE_INTEGER = "[{" + RECORD.replace('"LR": 1', '"LR": 1' + "0" * 5000) + "}]"
DEEP = "[" * 100_000 + "]" * 100_000

CASES = {
    "duplicate": (DUPLICATE, "gripper_slots[0].up_range: is written 2 times (0.04, 5)"),
    "huge": (HUGE_INTEGER, "(an integer of 5001 digits; Python reads at most 4300)"),
    "deep": (DEEP, "gripper_slots: nests arrays/objects more than 100 levels deep"),
}


def _mug(write_usda, records: str):
    return write_usda(
        f"""
        def Xform "Mug" (
            customData = {{
                dictionary lambdasim = {{
                    string gripper_slots = '{records}'
                }}
            }}
        )
        {{
        }}
        """
    )


def test_duplicate_keys_are_a_problem_naming_the_record_and_key():
    records, problems = parse_lambdasim_records(DUPLICATE)
    assert records == []
    assert (
        problems[0]
        .describe()
        .startswith("customData lambdasim:gripper_slots[0].up_range: is written 2 times (0.04, 5)")
    )
    # The same record without the repeat reads; a key repeated in a nested value is named too.
    assert len(parse_lambdasim_records("[{" + RECORD + "}]")[0]) == 1
    nested = parse_lambdasim_records("[{" + RECORD + ', "note": {"a": 1, "a": 2}}]')[1]
    assert "gripper_slots[0].note: has a key 'a' that is written 2 times (1, 2)" in (
        nested[0].describe()
    )
    named = parse_lambdasim_records('{"h": {' + RECORD + '}, "h": {' + RECORD + "}}")[1]
    assert "the slot name 'h' is written 2 times" in named[0].describe()


@pytest.mark.parametrize(
    ("up_range", "message"),
    [
        ("1" + "0" * 400, "holds 100000000000…0000 (an integer of 401 digits that no 64-bit"),
        (str(2**53 + 1), "holds 9007199254740993 (an integer of 16 digits that no 64-bit float"),
        ("1e400", "holds 1e400 (beyond the largest 64-bit float, it would read as inf)"),
    ],
)
def test_numbers_no_double_holds_are_refused_not_rounded(up_range, message):
    text = "[{" + RECORD.replace('"up_range": 0.04', f'"up_range": {up_range}') + "}]"
    records, problems = parse_lambdasim_records(text)
    assert records == []
    assert (
        problems[0]
        .describe()
        .startswith(f"customData lambdasim:gripper_slots[0].up_range: {message}")
    )
    assert len(parse_lambdasim_records(text.replace(up_range, str(2**60)))[0]) == 1  # exact


@pytest.mark.parametrize("case", sorted(CASES))
def test_readers_refuse_naming_the_record(write_usda, capsys, case):
    text, message = CASES[case]
    path = _mug(write_usda, text)
    stage = usd_io.open_stage(path)
    with pytest.raises(GripperError, match="</Mug>: customData lambdasim:") as raised:
        usd_io.read_gripper_slots(stage.GetPrimAtPath("/Mug"))
    assert message in str(raised.value)
    for argv in (
        ["info", str(path)],
        ["sample", str(path), "--prim", "/Mug"],
        ["render", str(path), "--slots", "-o", "x.png"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(path) in err and message in err, err
        assert "Traceback" not in err and "RecursionError" not in err


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_reports_gs006_once_and_no_rule_crashes(write_usda, capsys, case):
    text, message = CASES[case]
    path = _mug(write_usda, text)
    assert main(["validate", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    issues = [i for f in report["files"] for i in f["issues"]]
    assert [(i["code"], i["severity"]) for i in issues] == [("GS.006", "failure")]
    assert message in issues[0]["message"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_migrate_keeps_a_record_it_cannot_read(write_usda, tmp_path, capsys, case):
    text, message = CASES[case]
    path = _mug(write_usda, text)
    before = path.read_bytes()
    assert main(["migrate", str(path), "--in-place"]) == 0
    out = capsys.readouterr().out
    assert "left:    </Mug>: customData lambdasim:" in out and message in out
    assert "records left unconverted" in out
    assert path.read_bytes() == before
    stage = usd_io.open_stage(path)
    assert stage.GetPrimAtPath("/Mug").GetCustomDataByKey(CUSTOM_DATA_PATH) == text


def test_json_depth_is_measured_outside_strings():
    assert get_json_depth_problem('["' + "[" * 500 + '"]') is None
    assert get_json_depth_problem("[" * 100 + "]" * 100) is None
    assert "level 101 opens at character 100" in get_json_depth_problem("[" * 101)
    with pytest.raises(ValueError, match="more than 3 levels deep"):
        load_json('{"a": [[[1]]]}', limit=3)


def test_resume_turns_a_deeply_nested_row_into_a_warning(tmp_path):
    rows = tmp_path / "rows.jsonl"
    good = json.dumps({"path": "a.usda", "status": "ok"})
    rows.write_text(f'{{"path": "b.usda", "x": {DEEP}}}\n{good}\n', encoding="utf-8")
    problems: list[str] = []
    assert list(read_results(rows, problems)) == ["a.usda"]
    assert len(problems) == 1
    assert problems[0].startswith(f"{rows} line 1: not a result row (nests arrays/objects")
    assert problems[0].endswith("skipped: the file it described runs again")


def test_batch_resume_reruns_the_file_of_a_deep_row(tmp_path, monkeypatch, write_usda, capsys):
    monkeypatch.chdir(tmp_path)
    write_usda('def Xform "A"\n{\n}\n', "a.usda")
    assert main(["batch", "validate", ".", "-q", "--out", "rows.jsonl"]) == 0
    capsys.readouterr()
    row = json.loads((tmp_path / "rows.jsonl").read_text(encoding="utf-8"))
    assert row["path"] == "a.usda"
    deep = json.dumps(row)[:-1] + f', "x": {DEEP}}}\n'
    (tmp_path / "rows.jsonl").write_text(deep, encoding="utf-8")
    assert main(["batch", "validate", ".", "-q", "--out", "rows.jsonl", "--resume"]) == 0
    err = capsys.readouterr().err
    assert "warning: rows.jsonl line 1: not a result row (nests arrays/objects" in err, err
    assert "Traceback" not in err
    text = (tmp_path / "rows.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line)["path"] for line in text.splitlines()] == ["a.usda"]


YAML_HEAD = "format: isaac_grasp\nformat_version: 1.0\n"


DEEP_YAML = "nested more than 100 levels deep|exceeded maximum nesting depth"


@pytest.mark.parametrize("loader", ["libyaml", "python"])
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("grasps: " + "[" * 20_000 + "]" * 20_000, DEEP_YAML),
        ("grasps: {}\nmetadata: " + "{a: " * 20_000 + "1" + "}" * 20_000, DEEP_YAML),
        ("grasps: {}\nmetadata: {n: " + "7" * 5000 + "}", "value has 5000 digits"),
    ],
    ids=["deep-sequence", "deep-mapping", "huge-integer"],
)
def test_isaac_yaml_refuses_deep_nesting_and_huge_integers(
    tmp_path, capsys, monkeypatch, body, message, loader
):
    if loader == "python":  # the fallback without libyaml: its own depth limit
        monkeypatch.setattr(yamltext, "LOADER", yamltext._Loader)
    elif not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml")
    path = tmp_path / "g.yaml"
    path.write_text(YAML_HEAD + body, encoding="utf-8")
    with pytest.raises(GripperError, match=f"^{path}: ") as raised:
        read_isaac_grasp(path)
    assert re.search(message, str(raised.value)), raised.value
    with pytest.raises(GripperError):
        parse_isaac_grasp(YAML_HEAD + "grasps: " + "[" * 101 + "]" * 101)
    assert (
        main(
            [
                "render",
                str(EXAMPLES / "mug.usda"),
                "--grasps",
                str(path),
                "-o",
                str(tmp_path / "x.png"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and re.search(message, err), err
