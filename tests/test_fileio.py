"""Atomic writes: a failure leaves the old file and no temp file; modes are kept."""

from __future__ import annotations

import os

import pytest

from usdgrip.fileio import (
    check_output_path,
    replace_atomically,
    write_output,
    write_text_output,
)


def test_write_replaces_and_keeps_mode(tmp_path):
    target = tmp_path / "out.yaml"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_text_output(target, "new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


def test_failure_keeps_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")

    def broken(handle):
        handle.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_output(target, broken)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_temp_keeps_suffix_and_missing_folder_is_clear(tmp_path):
    seen = []
    replace_atomically(
        tmp_path / "layer.usda", lambda temp: (seen.append(temp.suffix), temp.write_text("x"))
    )
    assert seen == [".usda"]
    with pytest.raises(FileNotFoundError, match=r"folder .*missing does not exist"):
        write_text_output(tmp_path / "missing" / "f.txt", "x")


def test_output_over_an_input_is_refused_through_links_and_dot_dots(tmp_path):
    asset = tmp_path / "asset.usda"
    asset.write_text("#usda 1.0\n")
    link = tmp_path / "link.usda"
    link.symlink_to(asset)
    for output in (asset, link, tmp_path / "sub" / ".." / "asset.usda"):
        with pytest.raises(ValueError, match=r"is the input file .*asset\.usda; writing there"):
            check_output_path(output, [tmp_path / "other.usda", asset])
    check_output_path(tmp_path / "report.json", [asset])  # a new file: fine
    check_output_path(tmp_path / "missing.usda", [tmp_path / "also-missing.usda"])


def test_a_link_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "asset.usda"
    target.write_text("old")
    link = tmp_path / "link.usda"
    link.symlink_to(target)
    write_text_output(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"


def test_errors_name_the_output_never_the_temp_file(tmp_path):
    folder = tmp_path / "report.json"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match=r"report\.json: is a directory; expected a file"):
        write_text_output(folder, "x")

    def denied(temp):
        raise PermissionError(13, "Permission denied", str(temp))

    out = tmp_path / "out.json"
    with pytest.raises(PermissionError) as caught:
        replace_atomically(out, denied)
    assert str(caught.value) == f"{out}: cannot write: Permission denied"
    assert list(tmp_path.iterdir()) == [folder]  # no temp file left behind
