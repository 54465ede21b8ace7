"""`usdgrip migrate` and unusable outputs: one message, exit 2, nothing written or printed as done."""

from __future__ import annotations

import os

import pytest
from pxr import Sdf, UsdUtils

from usdgrip.cli import main
from usdgrip.usd.stage import open_stage

LEGACY_SITE = """
def Xform "site"
{
    custom float gripper_maxOpening = 0.085
    custom token simready:attachment:socketType = "Gripper"
}
"""


@pytest.fixture
def package(write_usda, tmp_path, monkeypatch):
    """A real .usdz package holding the legacy site (cwd = tmp_path)."""
    write_usda(LEGACY_SITE, "layer.usda")
    monkeypatch.chdir(tmp_path)
    assert UsdUtils.CreateNewUsdzPackage(Sdf.AssetPath("layer.usda"), "m.usdz")
    return tmp_path / "m.usdz"


@pytest.mark.parametrize(
    ("args", "named"),
    [([], "m.migrated.usdz"), (["--in-place"], "m.usdz"), (["-o", "x.usdz"], "x.usdz")],
)
def test_usdz_target_is_refused_up_front(package, capsys, args, named):
    before = package.read_bytes()
    assert main(["migrate", str(package), *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"{named}: usdz packages cannot be written" in captured.err
    assert "-o m.migrated.usda" in captured.err and "Traceback" not in captured.err
    assert package.read_bytes() == before
    assert sorted(p.name for p in package.parent.iterdir()) == ["layer.usda", "m.usdz"]


def test_usdz_package_migrates_to_a_usda_output(package, capsys):
    assert main(["migrate", str(package), "-o", "out.usda"]) == 0
    stage = open_stage(package.with_name("out.usda"))
    assert stage.GetPrimAtPath("/site").GetAttribute("gripper:maxOpening").Get() == pytest.approx(
        0.085
    )


def test_output_that_is_the_input_is_refused(write_usda, tmp_path, capsys):
    source = write_usda(LEGACY_SITE)
    before = source.read_text()
    os.symlink(source, tmp_path / "alias.usda")
    for output in (source, tmp_path / "alias.usda"):
        assert main(["migrate", str(source), "-o", str(output)]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and f"is the input file {source}" in captured.err
        assert "--in-place rewrites FILE itself" in captured.err
    assert source.read_text() == before


def test_failed_write_prints_no_changes(write_usda, tmp_path, capsys, monkeypatch):
    source = write_usda(LEGACY_SITE)

    def denied(*args, **kwargs):  # a read-only folder (root may write anywhere, so simulated)
        raise PermissionError(13, "Permission denied", str(tmp_path / ".asset.migrated.x.usda"))

    monkeypatch.setattr("tempfile.mkstemp", denied)
    assert main(["migrate", str(source)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "asset.migrated.usda: cannot write" in captured.err
    assert ".x.usda" not in captured.err  # the output is named, not the temp file


def test_write_into_a_missing_folder_prints_no_changes(write_usda, tmp_path, capsys):
    source = write_usda(LEGACY_SITE)
    assert main(["migrate", str(source), "-o", str(tmp_path / "no" / "out.usda")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "folder" in captured.err and "does not exist" in captured.err


def test_in_place_through_a_symlink_keeps_the_link_and_migrates_the_target(
    write_usda, tmp_path, capsys
):
    target = write_usda(LEGACY_SITE, "target.usda")
    link = tmp_path / "link.usda"
    link.symlink_to(target.name)
    assert main(["migrate", str(link), "--in-place"]) == 0
    assert link.is_symlink() and os.readlink(link) == "target.usda"
    stage = open_stage(target)
    site = stage.GetPrimAtPath("/site")
    assert site.GetAttribute("gripper:maxOpening").Get() == pytest.approx(0.085)
    assert not site.GetAttribute("gripper_maxOpening")
    assert f"wrote {link}" in capsys.readouterr().out
