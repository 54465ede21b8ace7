"""The codeless usdGrip schema: registration, types, fallbacks, generation staleness."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from pxr import Plug, Sdf, Tf, Usd

from usdgrip._plugin import schema_dir, share_dir
from usdgrip.authoring import apply_gripper_slot
from usdgrip.schema_gen import GENERATED_FILES, GENERATOR_USD, check_generator, generate_schema
from usdgrip.usd.slots import check_slot_instance_name

REPO = Path(__file__).resolve().parent.parent


def test_every_plug_info_type_resolves():
    info = json.loads((schema_dir() / "plugInfo.json").read_text().split("\n", 3)[3])
    types = info["Plugins"][0]["Info"]["Types"]
    assert set(types) == {"UsdGripGripperSiteAPI", "UsdGripGripperSlotAPI"}
    for type_name, data in types.items():
        tf_type = Tf.Type.FindByName(type_name)
        assert not tf_type.isUnknown, type_name
        alias = data["alias"]["UsdSchemaBase"]
        assert alias != type_name  # a key equal to its alias breaks registration
        assert Usd.SchemaRegistry.GetTypeFromSchemaTypeName(alias) == tf_type


def test_schema_kinds():
    registry = Usd.SchemaRegistry()
    assert registry.FindAppliedAPIPrimDefinition("GripperSiteAPI") is not None
    assert Usd.SchemaRegistry.IsMultipleApplyAPISchema("GripperSlotAPI")
    assert not Usd.SchemaRegistry.IsMultipleApplyAPISchema("GripperSiteAPI")


def test_site_api_applies_only_to_xformable():
    stage = Usd.Stage.CreateInMemory()
    assert stage.DefinePrim("/X", "Xform").CanApplyAPI("GripperSiteAPI")
    scope = stage.DefinePrim("/S", "Scope")
    result = scope.CanApplyAPI("GripperSiteAPI")
    assert not result and "Xformable" in result.whyNot


def test_site_attributes_have_no_fallback():
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/X", "Xform")
    prim.ApplyAPI("GripperSiteAPI")
    for name in ("gripper:maxOpening", "gripper:maxPayload"):
        attr = prim.GetAttribute(name)
        assert attr and attr.Get() is None and not attr.HasAuthoredValue()
    prim.GetAttribute("gripper:maxOpening").Set(0.085)
    assert prim.GetAttribute("gripper:maxOpening").HasAuthoredValue()
    prim.RemoveAPI("GripperSiteAPI")
    assert "GripperSiteAPI" not in prim.GetAppliedSchemas()


def test_slot_fallbacks_follow_the_seed():
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/Box", "Xform")
    prim.ApplyAPI("GripperSlotAPI", "left_edge")
    get = lambda p: prim.GetAttribute(f"gripperSlot:left_edge:{p}")  # noqa: E731
    assert tuple(get("center").Get()) == (0, 0, 0)
    assert tuple(get("forward").Get()) == (0, 0, 1)
    assert tuple(get("spanAxis").Get()) == (1, 0, 0)
    assert get("upRange").Get() == 2.0
    assert get("slotInputAngle").Get() == 0.0
    assert get("lr").Get() == "left" and get("lr").GetVariability() == Sdf.VariabilityUniform
    assert get("groupName").Get() == ""
    assert not get("upRange").HasAuthoredValue()
    apply_gripper_slot(prim, "left_edge", up_range=0.3, lr=1)
    assert get("upRange").HasAuthoredValue() and get("upRange").Get() == 0.3
    assert get("lr").Get() == "right"


@pytest.mark.parametrize(
    ("name", "rule"),
    [("bad name", "identifier"), ("1st", "identifier"), ("", "empty"), ("center", "reserved")],
)
def test_bad_instance_names_are_refused(name, rule):
    with pytest.raises(ValueError, match=rule):
        check_slot_instance_name(name)
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/Box", "Xform")
    with pytest.raises(ValueError, match="slot name"):
        apply_gripper_slot(prim, name, up_range=0.1)
    assert not prim.GetAppliedSchemas()


@pytest.mark.skipif(
    Usd.GetVersion()[:3] != GENERATOR_USD,
    reason=f"the generated files are written by OpenUSD {GENERATOR_USD[1]}.{GENERATOR_USD[2]}'s "
    f"usdGenSchema (make test runs on it); this is {Usd.GetVersion()}",
)
def test_generated_files_are_not_stale(tmp_path):
    pytest.importorskip("jinja2")
    generate_schema(tmp_path)
    for name in GENERATED_FILES:
        assert (tmp_path / name).read_text() == (schema_dir() / name).read_text(), (
            f"schemas/usdGrip/{name} is stale: run `make schema`"
        )


def test_make_test_runs_on_the_generator_release():
    """``make test``'s venv (NEWEST_USD) is the generator's release, so staleness is checked."""
    makefile = (REPO / "Makefile").read_text()
    (newest,) = re.findall(r"^NEWEST_USD\s*:=\s*(\S+)$", makefile, re.M)
    assert tuple(int(p) for p in newest.split(".")) == GENERATOR_USD[1:]
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (usd,) = extra["usd"]
    assert SpecifierSet(usd.removeprefix("usd-core")).contains(f"{newest}"), usd


def test_schema_gen_refuses_another_release(monkeypatch):
    monkeypatch.setattr("usdgrip.schema_gen.GENERATOR_USD", (0, 1, 2))
    with pytest.raises(RuntimeError, match=r"written by OpenUSD 1\.2's usdGenSchema; this is"):
        check_generator()


def test_root_plug_info_includes_schemas_and_plugins():
    info = json.loads((share_dir() / "plugInfo.json").read_text())
    assert info == {"Includes": ["schemas/*/", "plugins/*/"]}
    assert Plug.Registry().GetPluginWithName("usdGrip") is not None


FRESH_CHECK = textwrap.dedent(
    """
    import sys
    {prelude}
    from pxr import Usd
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/Box", "Xform")
    assert prim.ApplyAPI("GripperSlotAPI", "left_edge")
    attr = prim.GetAttribute("gripperSlot:left_edge:upRange")
    assert attr and attr.Get() == 2.0, attr
    assert prim.GetAttribute("gripperSlot:left_edge:forward").Get() == (0, 0, 1)
    print("OK", "usdgrip" in sys.modules)
    """
)


def _run_fresh(prelude: str, env: dict) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", FRESH_CHECK.format(prelude=prelude)],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_import_registers_schema_in_fresh_process():
    env = {k: v for k, v in os.environ.items() if k != "PXR_PLUGINPATH_NAME"}
    assert _run_fresh("import usdgrip", env) == "OK True"


def test_import_twice_and_with_env_registration_is_harmless():
    env = dict(os.environ, PXR_PLUGINPATH_NAME=str(share_dir()))
    prelude = (
        "import warnings; warnings.simplefilter('error')\n"
        "import usdgrip, importlib\nimportlib.reload(usdgrip)"
    )
    assert _run_fresh(prelude, env) == "OK True"


def test_plugin_path_alone_registers_schema():
    env = dict(os.environ, PXR_PLUGINPATH_NAME=str(share_dir()))
    assert _run_fresh("", env) == "OK False"


def test_late_import_warns_about_import_order():
    code = (
        "import warnings\nfrom pxr import Usd\n"
        "Usd.SchemaRegistry().FindAppliedAPIPrimDefinition('X')\n"
        "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
        "    import usdgrip\nprint([str(x.message) for x in w])"
    )
    env = {k: v for k, v in os.environ.items() if k != "PXR_PLUGINPATH_NAME"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert "Import usdgrip before opening stages" in proc.stdout
