"""UsdValidation validators: a fresh process with only `usdgrip env` runs the usdgrip rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pxr import Usd

import usdgrip
from usdgrip.rules import RULES
from usdgrip.validators import usdvalidation as adapter

REPO = Path(__file__).resolve().parent.parent
PLUG_INFO = REPO / "plugins" / "usdValidation" / "plugInfo.json"
_TYPE = {"failure": "Error", "error": "Error", "warning": "Warn", "info": "Info"}

# The client never imports usdgrip: Plug imports the plugin module on first use.
CLIENT = textwrap.dedent(
    """
    import json, sys
    from pxr import Plug, Usd, UsdValidation

    out = {"plugin": bool(Plug.Registry().GetPluginWithName("usdGripValidation"))}
    registry = UsdValidation.ValidationRegistry()
    out["metadata"] = sorted(m.name for m in registry.GetValidatorMetadataForKeyword("usdgrip"))
    out["by_code"] = [m.name for m in registry.GetValidatorMetadataForKeyword("GR.003")]
    out["imported_before"] = "usdgrip" in sys.modules
    if len(sys.argv) > 1:
        def rows(errors):
            return sorted(
                [e.GetName(), e.GetType().displayName,
                 [str(s.GetPrim().GetPath()) for s in e.GetSites()],
                 e.GetMessage(), e.GetValidator().GetMetadata().name]
                for e in errors
            )

        stage = Usd.Stage.Open(sys.argv[1])
        one = registry.GetOrLoadValidatorByName("usdGripValidation:gripper-grip-line")
        out["imported_on_load"] = "usdgrip" in sys.modules
        # count usdgrip validations: one per stage state, shared by every validator
        import usdgrip.validators.usdvalidation as adapter
        calls = []
        validate = adapter.validate
        adapter.validate = lambda *a, **k: calls.append(1) or validate(*a, **k)
        context = UsdValidation.ValidationContext(keywords=["usdgrip"])
        out["errors"] = rows(context.Validate(stage))
        out["one"] = sorted(str(e.GetSites()[0].GetPrim().GetPath()) for e in one.Validate(stage))
        out["calls"] = len(calls)
        stage.GetPrimAtPath("/World/gripper_01").ApplyAPI("GripperSiteAPI")
        out["errors_after_edit"] = rows(context.Validate(stage))
        out["calls_after_edit"] = len(calls)
    out["imported_after"] = "usdgrip" in sys.modules
    if not out["plugin"]:
        from usdgrip.validators.usdvalidation import register_validators
        try:
            register_validators()
        except ValueError as error:
            out["register_error"] = str(error)
    print(json.dumps(out))
    """
)


def _env_lines_environment() -> dict[str, str]:
    """The environment `usdgrip env` gives a shell that had no USD variables."""
    base = {k: v for k, v in os.environ.items() if k not in ("PXR_PLUGINPATH_NAME", "PYTHONPATH")}
    lines = subprocess.run(
        [sys.executable, "-m", "usdgrip", "env"],
        capture_output=True,
        text=True,
        env=base,
        check=True,
    ).stdout
    dump = subprocess.run(
        ["bash", "-c", lines + '\nprintf "%s\\n%s" "$PXR_PLUGINPATH_NAME" "$PYTHONPATH"'],
        capture_output=True,
        text=True,
        env=base,
        check=True,
    ).stdout.split("\n")
    return {**base, "PXR_PLUGINPATH_NAME": dump[0], "PYTHONPATH": dump[1]}


def _client(env: dict[str, str], cwd: Path, *args: str) -> dict:
    script = cwd / "client.py"
    script.write_text(CLIENT)
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _expected(stage_or_path) -> list[list]:
    rows = []
    for issue in usdgrip.validate(stage_or_path).issues:
        message = issue.message
        if issue.fixes:
            message += " (usdgrip validate --fix can: "
            message += "; ".join(f.description for f in issue.fixes) + ")"
        name = f"{adapter.PLUGIN_NAME}:{RULES[issue.code].name}"
        rows.append([issue.code, _TYPE[issue.severity], [issue.prim], message, name])
    return sorted(rows)


def test_plug_info_is_generated_from_the_rules():
    assert json.loads(PLUG_INFO.read_text()) == adapter.compute_plug_info()
    validators = adapter.compute_plug_info()["Plugins"][0]["Info"]["Validators"]
    assert len(validators) == len(RULES)
    for rule in RULES.values():
        entry = validators[rule.name]
        assert entry["keywords"] == ["usdgrip", rule.code]
        assert entry["doc"].startswith(f"{rule.code} ({rule.severity}): {rule.summary}")
    root = json.loads((REPO / "plugInfo.json").read_text())
    assert "plugins/*/" in root["Includes"]


def test_fresh_process_with_usdgrip_env_runs_the_rules(tmp_path):
    # The same asset as the NVIDIA adapter tests (which skip, and this one, without NVIDIA's).
    from test_adapters_nvidia import ZOO

    zoo = tmp_path / "zoo.usda"
    zoo.write_text(ZOO)
    env = _env_lines_environment()
    assert str(REPO / "plugins" / "usdValidation") in env["PYTHONPATH"].split(os.pathsep)
    out = _client(env, tmp_path, str(zoo))
    assert out["plugin"] is True
    names = sorted(f"{adapter.PLUGIN_NAME}:{r.name}" for r in RULES.values())
    assert out["metadata"] == names
    assert out["by_code"] == [f"{adapter.PLUGIN_NAME}:gripper-grip-line"]
    # metadata comes from plugInfo.json; the module (and usdgrip) load only on first use
    assert out["imported_before"] is False
    assert out["imported_after"] is True
    assert out["imported_on_load"] is True
    expected = _expected(zoo)
    assert {row[0] for row in expected} >= {"GA.001", "GR.003", "GR.004", "GS.002", "GS.006"}
    assert any(row[2] == ["/World/base_link/gripper_02"] for row in expected)
    assert out["errors"] == expected
    assert out["one"] == sorted(row[2][0] for row in expected if row[0] == "GR.003")
    # 20 validators, one usdgrip validation; an edit makes the next run validate again
    assert out["calls"] == 1
    assert out["calls_after_edit"] == 2
    stage = Usd.Stage.Open(str(zoo))
    stage.GetPrimAtPath("/World/gripper_01").ApplyAPI("GripperSiteAPI")
    edited = _expected(stage)
    assert edited != expected
    assert ["GR.011", "Info", ["/World/gripper_01"]] not in [row[:3] for row in edited]
    assert out["errors_after_edit"] == edited


def test_without_the_env_nothing_is_declared_and_registration_says_why(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PXR_PLUGINPATH_NAME", "PYTHONPATH")}
    out = _client(env, tmp_path)
    assert out["plugin"] is False
    assert out["metadata"] == []
    message = out["register_error"]
    assert "usdGripValidation:asset-unresolved (GA.001) is not declared" in message
    assert "PXR_PLUGINPATH_NAME" in message and "usdgrip env" in message


@pytest.mark.parametrize(
    ("severity", "expected"), [("failure", "Error"), ("warning", "Warn"), ("info", "Info")]
)
def test_validation_error_translation(open_usda, severity, expected):
    from usdgrip.rules import Issue

    stage = open_usda('def Xform "Site" {}')
    error = adapter.compute_validation_error(
        stage, Issue("GR.004", "gripper-max-opening", severity, "/Site", "bad value")
    )
    assert error.GetName() == "GR.004"
    assert error.GetType().displayName == expected
    assert error.GetMessage() == "bad value"
    assert [str(s.GetPrim().GetPath()) for s in error.GetSites()] == ["/Site"]
