"""A plain (non-editable) wheel: what it ships, and what each install gives.

The wheel is installed into clean venvs the way a user does it, ``pip install usdgrip``
and ``pip install 'usdgrip[usd]'``, offline: ``--no-index --find-links`` a folder holding
the wheel and its dependencies packed back from this environment (``wheelhouse.py``), so
pip resolves the requirements and the extras for real without the network or a cache.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from session_folder import shared_session_folder
from wheelhouse import build_wheelhouse, dependency_closure

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _build_wheel(out: Path) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (built,) = out.glob("usdgrip-*.whl")
    return built


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("hatchling")
    with shared_session_folder(tmp_path_factory, "usdgrip_wheel") as out:
        found = list(out.glob("usdgrip-*.whl"))
        return found[0] if found else _build_wheel(out)


@pytest.fixture(scope="session")
def venvs(tmp_path_factory, wheel) -> dict[str, Path]:
    """Clean venvs of ``pip install usdgrip`` and of ``usdgrip[usd]``, once per session.

    Their dependencies come from a wheelhouse packed from this environment, deleted once
    both are installed (usd-core's wheel alone is 200 MB).
    """
    with shared_session_folder(tmp_path_factory, "installed_wheel") as root:
        venvs = {"bare": root / "bare", "usd": root / "usd"}
        if not (root / "done").is_file():
            house = root / "wheelhouse"
            usd = PYPROJECT["project"]["optional-dependencies"]["usd"]
            build_wheelhouse([*PYPROJECT["project"]["dependencies"], *usd], house)
            links = ["--no-index", "--find-links", str(wheel.parent), "--find-links", str(house)]
            for venv, requirement in ((venvs["bare"], "usdgrip"), (venvs["usd"], "usdgrip[usd]")):
                shutil.rmtree(venv, ignore_errors=True)
                _install(links, venv, requirement)
            shutil.rmtree(house)
            (root / "done").touch()
    return venvs


def _install(find_links: list[str], venv: Path, requirement: str) -> Path:
    """A clean venv (no pip, nothing from this one) holding ``pip install REQUIREMENT``."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
         *find_links, requirement],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv


def _site_packages(venv: Path) -> Path:
    return Path(
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )


@pytest.fixture
def bare(venvs) -> Path:
    """``pip install usdgrip``: numpy, pydantic, PyYAML and nothing else."""
    return venvs["bare"]


@pytest.fixture
def with_usd(venvs) -> Path:
    """``pip install 'usdgrip[usd]'``."""
    return venvs["usd"]


def _usdgrip(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(
        [str(venv / "bin" / "usdgrip"), *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
    )  # fmt: skip


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


def test_plain_install_holds_only_the_base_dependencies(bare):
    site = _site_packages(bare)
    dists = sorted(p.name.split("-")[0].lower() for p in site.glob("*.dist-info"))
    assert dists == [
        "annotated_types", "numpy", "pydantic", "pydantic_core", "pyyaml", "typing_extensions",
        "typing_inspection", "usdgrip",
    ]  # fmt: skip
    assert (site / "usdgrip" / "py.typed").is_file()


PXR = (
    "needs OpenUSD (pxr): pip install 'usdgrip[usd]', or run usdgrip with the python of a USD "
    "build (Kit, Isaac Sim, Houdini, usdview)"
)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["info", "tote.usda"], f"usdgrip info: {PXR}"),
        (["rules"], f"usdgrip rules: {PXR}"),
        (["validate", "tote.usda"], f"usdgrip validate: {PXR}"),
        (["batch", "validate", "."], f"usdgrip batch: {PXR}"),
        (
            ["plan", "tote.usda", "--object", "/Tote", "--gripper", "gripper.usda:/Gripper/tcp", "-o", "g.yaml"],
            "usdgrip plan: needs SciPy and OpenUSD (pxr): pip install 'usdgrip[usd,plan]', or run "
            "usdgrip with the python of a USD build (Kit, Isaac Sim, Houdini, usdview)",
        ),
    ],
)  # fmt: skip
def test_plain_install_names_the_missing_extra_in_one_line(bare, tmp_path, command, message):
    for name in ("tote.usda", "gripper.usda"):
        shutil.copyfile(EXAMPLES / name, tmp_path / name)
    proc = _usdgrip(bare, *command, cwd=tmp_path)
    assert (proc.returncode, proc.stderr, proc.stdout) == (2, message + "\n", "")


def test_plain_install_runs_what_needs_no_usd(bare, tmp_path):
    assert _usdgrip(bare, "--version", cwd=tmp_path).stdout == "usdgrip 0.1.0\n"
    proc = _usdgrip(bare, "env", cwd=tmp_path)
    assert proc.returncode == 0 and "PXR_PLUGINPATH_NAME" in proc.stdout, proc.stderr


def test_qt_panels_without_pyside_name_the_qt_extra(with_usd, tmp_path):
    code = (
        "from usdgrip.extras import MissingExtraError\n"
        "try:\n"
        "    import usdgrip.views.qt\n"
        "except MissingExtraError as exc:\n"
        "    print(exc.extra, exc.name, isinstance(exc, ModuleNotFoundError), exc)\n"
    )
    proc = subprocess.run(
        [str(with_usd / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert (
        proc.stdout == "qt PySide6 True needs Qt for Python (PySide6): pip install 'usdgrip[qt]'\n"
    ), proc.stderr


def test_usd_extra_gives_info_and_names_each_other_extra(with_usd, tmp_path):
    for name in ("tote.usda", "gripper.usda"):
        shutil.copyfile(EXAMPLES / name, tmp_path / name)
    info = _usdgrip(with_usd, "info", "tote.usda", cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    assert info.stdout.startswith("tote.usda: 0 gripper site(s), 2 grasp slot(s)\n")
    gripper = ["--gripper", "gripper.usda:/Gripper/tcp"]
    for command, message in [
        (["plan", "tote.usda", "--object", "/Tote", *gripper, "-o", "g.yaml"],
         "usdgrip plan: needs SciPy: pip install 'usdgrip[plan]'"),
        (["evaluate", "tote.usda", "--object", "/Tote", *gripper, "--targets", "t.json", "-o", "e.json"],
         "usdgrip evaluate: needs MuJoCo: pip install 'usdgrip[physics]'"),
        (["render", "tote.usda", "-o", "t.png"], "usdgrip render: needs matplotlib: pip install 'usdgrip[render]'"),
        (["batch", "plan", ".", *gripper, "--out-dir", "grasps"], "usdgrip batch: needs SciPy: pip install 'usdgrip[plan]'"),
        (["batch", "validate", ".", "--executor", "dask"], "usdgrip batch: needs Dask: pip install 'usdgrip[dask]'"),
    ]:  # fmt: skip
        proc = _usdgrip(with_usd, *command, cwd=tmp_path)
        assert (proc.returncode, proc.stderr, proc.stdout) == (2, message + "\n", ""), command
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gripper.usda",
        "home",
        "tote.usda",
    ] or sorted(p.name for p in tmp_path.iterdir()) == ["gripper.usda", "tote.usda"], (
        "nothing was written"
    )


def test_installed_wheel_registers_schema_and_prints_env(with_usd, tmp_path):
    site = _site_packages(with_usd)
    code = (
        "import usdgrip, sys\n"
        "assert 'site-packages' in usdgrip.__file__ and '/lib/usdgrip' not in usdgrip.__file__, usdgrip.__file__\n"
        "from pxr import Usd\n"
        "stage = Usd.Stage.CreateInMemory()\n"
        "prim = stage.DefinePrim('/X', 'Xform')\n"
        "assert prim.ApplyAPI('GripperSlotAPI', 'left_edge')\n"
        "print(prim.GetAttribute('gripperSlot:left_edge:upRange').Get())\n"
    )
    env = {"PATH": f"{with_usd / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [str(with_usd / "bin" / "python"), "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2.0"
    env_out = _usdgrip(with_usd, "env", cwd=tmp_path)
    assert env_out.returncode == 0, env_out.stderr
    assert (
        f"PXR_PLUGINPATH_NAME=${{PXR_PLUGINPATH_NAME:+$PXR_PLUGINPATH_NAME:}}{site}/usdgrip/share"
        in env_out.stdout
    )
    kit_out = _usdgrip(with_usd, "env", "--kit", cwd=tmp_path)
    assert kit_out.stdout.split() == [
        "--ext-folder",
        f"{site}/usdgrip/share/exts",
        "--enable",
        "usdgrip.kit",
    ]


ENV_ORDERS = {
    # OpenUSD's own setup line for a build at $USD, then usdgrip's; and the other way round.
    "host first": 'export PYTHONPATH=$PYTHONPATH:"$USD/lib/python"\neval "$(usdgrip env)"',
    "usdgrip first": 'eval "$(usdgrip env)"\nexport PYTHONPATH=$PYTHONPATH:"$USD/lib/python"',
}
HOST_CHECK = """
import json, sys
import pxr, usdgrip, numpy, yaml
from pxr import Usd
print(json.dumps({
    "pxr": pxr.__file__, "usdgrip": usdgrip.__file__, "numpy": numpy.__file__,
    "yaml": getattr(yaml, "HOST", False),
    "slot_api": Usd.SchemaRegistry.IsMultipleApplyAPISchema("GripperSlotAPI"),
}))
"""


@pytest.mark.parametrize("order", ENV_ORDERS)
def test_env_from_a_site_packages_with_pxr_never_shadows_the_hosts(with_usd, tmp_path, order):
    """usdgrip installed beside usd-core; a host python with its own USD build and PyYAML.

    Either order of the two setup lines gives the host's pxr, usdgrip from the env
    folder, numpy (which the host lacks) from usdgrip's dependency folder, and the host's
    own PyYAML before usdgrip's.
    """
    import pxr

    site = _site_packages(with_usd)
    usd = tmp_path / "usd"  # a USD build's layout: lib/python/pxr (usd-core's, linked)
    (usd / "lib" / "python").mkdir(parents=True)
    real_pxr = Path(pxr.__file__).parent
    for name in ("pxr", "usd_core.libs"):
        (usd / "lib" / "python" / name).symlink_to(real_pxr.parent / name)
    host = tmp_path / "host"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(host)], check=True)
    (_site_packages(host) / "yaml.py").write_text("HOST = True\n")
    env = {"PATH": f"{with_usd / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "USD": str(usd)}
    script = f'{ENV_ORDERS[order]}\nexec "{host / "bin" / "python"}" -c "$1"'
    proc = subprocess.run(
        ["bash", "-c", script, "host", HOST_CHECK], capture_output=True, text=True, env=env, cwd=tmp_path
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout)
    assert found["pxr"] == str(usd / "lib" / "python" / "pxr" / "__init__.py"), found
    assert not found["usdgrip"].startswith(str(site)), found
    assert Path(found["usdgrip"]).resolve() == site / "usdgrip" / "__init__.py"
    cache = tmp_path / ".cache" / "usdgrip" / "env"
    assert found["numpy"].startswith(str(cache)) and "/deps/numpy/" in found["numpy"], found
    assert found["yaml"] is True, "usdgrip's PyYAML came before the host's"
    assert found["slot_api"] is True
    (folder,) = cache.iterdir()
    assert not (folder / "deps" / "pxr").exists() and not (folder / "python" / "pxr").exists()
    assert sorted(p.name for p in (folder / "python").iterdir()) == ["usdgrip"]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _extra_distributions(extra: str) -> set[str]:
    """The distributions ``usdgrip[extra]`` installs here (``usdgrip[...]`` expanded, transitively)."""
    found = set()
    for text in PYPROJECT["project"]["optional-dependencies"][extra]:
        req = Requirement(text)
        if req.name == "usdgrip":
            for inner in req.extras:
                found |= _extra_distributions(inner)
        elif req.marker is None or req.marker.evaluate():
            found |= {_normalize(d.metadata["Name"]) for d in dependency_closure([text])}
    return found


def test_the_extras_registry_follows_pyproject():
    from importlib.metadata import packages_distributions

    from usdgrip.extras import EXTRAS, MODULES

    declared = PYPROJECT["project"]["optional-dependencies"]
    owners = packages_distributions()
    for extra in EXTRAS.values():
        assert extra.name in declared, extra.name
        assert set(extra.needs) <= set(extra.modules), extra.name
        for module in extra.modules:
            assert module in MODULES, module
            brought = {_normalize(d) for d in owners.get(module, [])}
            assert brought & _extra_distributions(extra.name), (
                f"{module} ({brought}) is not brought by usdgrip[{extra.name}]"
            )
    assert set(declared) - set(EXTRAS) == {"test", "all", "dev"}


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
