"""usdgrip.extras: which ImportError is a missing extra, and the one line that names it.

The installs without extras are tested for real in test_packaging.py; here the helper's
edges, with a registered module that is not installed anywhere.
"""

from __future__ import annotations

import pickle

import pytest

from usdgrip import extras
from usdgrip.cli import main
from usdgrip.extras import Extra, MissingExtraError, describe_missing_extra, import_optional

ABSENT = "usdgrip_test_absent_module"


@pytest.fixture
def absent_extra(monkeypatch):
    """A module no environment has, brought by two extras (as trimesh is by plan and physics)."""
    monkeypatch.setitem(extras.MODULES, ABSENT, "Absent Lib")
    registry = {
        "small": Extra("small", "test", (ABSENT,), (ABSENT,)),
        "big": Extra("big", "test", (ABSENT, "numpy"), (ABSENT,)),
    }
    monkeypatch.setattr(extras, "EXTRAS", {**registry, **extras.EXTRAS})


def _missing() -> ModuleNotFoundError:
    try:
        __import__(ABSENT)
    except ModuleNotFoundError as exc:
        return exc
    raise AssertionError("the module exists")


def test_a_missing_module_names_the_first_extra_unless_the_command_prefers_another(absent_extra):
    assert describe_missing_extra(_missing()) == "needs Absent Lib: pip install 'usdgrip[small]'"
    assert describe_missing_extra(_missing(), ("big",)) == (
        "needs Absent Lib: pip install 'usdgrip[big]'"
    )
    assert describe_missing_extra(_missing(), ("render",)) == (
        "needs Absent Lib: pip install 'usdgrip[small]'"
    ), "a preferred extra that does not bring it is passed over"


def test_behind_a_value_error_it_is_still_found(absent_extra):
    try:
        try:
            __import__(ABSENT)
        except ImportError as exc:
            raise ValueError(f"job 'x:y': cannot import x: {exc}") from exc
    except ValueError as wrapped:
        assert describe_missing_extra(wrapped) == "needs Absent Lib: pip install 'usdgrip[small]'"


def test_what_is_not_a_missing_extra_stays_as_it_is():
    # pxr is installed: a missing submodule (usdview's, in a usd-core pxr) is no extra's.
    assert (
        describe_missing_extra(ModuleNotFoundError("no pxr.Usdviewq", name="pxr.Usdviewq")) is None
    )
    # An installed optional module that fails to import is a broken install, not a missing one.
    assert describe_missing_extra(ModuleNotFoundError("broken", name="numpy")) is None
    assert describe_missing_extra(ImportError("cannot import name 'X' from 'trimesh'")) is None
    assert describe_missing_extra(ValueError("plain")) is None


def test_import_optional_raises_a_picklable_missing_extra_error(absent_extra):
    with pytest.raises(MissingExtraError) as info:
        import_optional(f"{ABSENT}.sub", ("big",))
    error = info.value
    assert isinstance(error, ModuleNotFoundError) and (error.name, error.extra) == (ABSENT, "big")
    again = pickle.loads(pickle.dumps(error))  # as from a worker process
    assert (str(again), again.name, again.extra) == (str(error), ABSENT, "big")
    assert import_optional("numpy").__name__ == "numpy"


def test_a_command_whose_extra_is_missing_exits_2_before_it_starts(
    absent_extra, monkeypatch, capsys, tmp_path
):
    monkeypatch.setitem(extras.COMMAND_EXTRAS, "render", "big")
    out = tmp_path / "t.png"
    assert main(["render", "missing-input.usda", "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == "usdgrip render: needs Absent Lib: pip install 'usdgrip[big]'\n"
    assert not out.exists()


def test_an_import_error_that_is_no_extras_is_still_raised(monkeypatch):
    from usdgrip.cli import info

    def broken(args):
        raise ImportError("cannot import name 'X' from 'usdgrip.nothing'")

    monkeypatch.setattr(info, "run", broken)
    with pytest.raises(ImportError, match="cannot import name"):
        main(["info", "x.usda"])
