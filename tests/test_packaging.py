"""A plain (non-editable) wheel ships the schema and plugins and works on its own."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("hatchling")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (built,) = out.glob("usdgrip-*.whl")
    return built


def test_wheel_contains_schema_and_plugins(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "usdgrip/__init__.py",
        "usdgrip/share/plugInfo.json",
        "usdgrip/share/schemas/usdGrip/plugInfo.json",
        "usdgrip/share/schemas/usdGrip/generatedSchema.usda",
        "usdgrip/share/schemas/usdGrip/schema.usda",
    ):
        assert required in names, required
    assert any(n.startswith("usdgrip/share/plugins/usdview/") for n in names)
    for ext in (REPO / "exts").iterdir():  # the Kit extensions, file for file
        for path in ext.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert f"usdgrip/share/exts/{path.relative_to(REPO / 'exts')}" in names, path


def test_installed_wheel_registers_schema_and_prints_env(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    # Third-party packages (pxr, numpy, ...) come from this environment; usdgrip only from the wheel.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    code = (
        "import usdgrip, sys\n"
        "assert 'site-packages' in usdgrip.__file__ and '/lib/usdgrip' not in usdgrip.__file__, usdgrip.__file__\n"
        "from pxr import Usd\n"
        "stage = Usd.Stage.CreateInMemory()\n"
        "prim = stage.DefinePrim('/X', 'Xform')\n"
        "assert prim.ApplyAPI('GripperSlotAPI', 'left_edge')\n"
        "print(prim.GetAttribute('gripperSlot:left_edge:upRange').Get())\n"
    )
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2.0"
    env_out = subprocess.run(
        [str(venv / "bin" / "usdgrip"), "env"], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert (
        f"PXR_PLUGINPATH_NAME=${{PXR_PLUGINPATH_NAME:+$PXR_PLUGINPATH_NAME:}}{site}/usdgrip/share"
        in env_out
    )
    kit_out = subprocess.run(
        [str(venv / "bin" / "usdgrip"), "env", "--kit"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    assert kit_out.split() == [
        "--ext-folder",
        f"{site}/usdgrip/share/exts",
        "--enable",
        "usdgrip.kit",
    ]


def test_kit_extensions_from_a_pip_target_folder(wheel, tmp_path):
    """`pip install --target DIR` then `--ext-folder DIR/usdgrip/share/exts`: usdgrip from DIR."""
    target = tmp_path / "target"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
    }
    proc = subprocess.run(
        [sys.executable, "-S", str(REPO / "tests" / "kit_standin" / "scenario.py"), "bare",
         "--tmp", str(tmp_path), "--exts", str(target / "usdgrip" / "share" / "exts")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["enabled"], result["errors"]
    assert result["usdgrip_file"] == str(target / "usdgrip" / "__init__.py")
    assert result["tote_has_slot_api"] is True
