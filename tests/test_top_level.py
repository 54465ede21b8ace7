"""``import usdgrip``: the verbs and records people use; internals only through a deprecation."""

from __future__ import annotations

import importlib
import warnings

import pytest

import usdgrip

MOVED = {
    "check_manifold": "usdgrip.usd.geometry",
    "SceneShape": "usdgrip.usd.geometry",
    "TriangleMesh": "usdgrip.usd.geometry",
    "read_object_mesh": "usdgrip.usd.geometry",
    "read_collision_shapes": "usdgrip.usd.geometry",
    "AntipodalGrasps": "usdgrip.grasping.backends.antipodal",
    "sample_antipodal_grasps": "usdgrip.grasping.backends.antipodal",
}


@pytest.mark.parametrize("name", sorted(usdgrip.__all__))
def test_every_exported_name_resolves_without_a_warning(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(usdgrip, name) is not None


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("render_view", "usdgrip.render"),
        ("Issue", "usdgrip.rules"),
        ("read_gripper_articulation", "usdgrip.usd.articulation"),
        ("GripperArticulation", "usdgrip.gripper_articulation"),
        ("suggest_gripper_site", "usdgrip.gripper_opening"),
    ],
)
def test_render_view_and_issue_are_exported(name, module):
    assert name in usdgrip.__all__ and name in dir(usdgrip)
    assert getattr(usdgrip, name) is getattr(importlib.import_module(module), name)


@pytest.mark.parametrize(("name", "module"), sorted(MOVED.items()))
def test_internals_left_the_top_level_with_a_deprecation_warning(name, module):
    assert name not in usdgrip.__all__ and name not in dir(usdgrip)
    usdgrip.__dict__.pop(name, None)  # an earlier access caches it
    with pytest.warns(DeprecationWarning, match=rf"usdgrip\.{name} is deprecated.*{module}"):
        value = usdgrip.__getattr__(name)
    assert value is getattr(importlib.import_module(module), name)


def test_from_import_of_a_moved_name_warns_once():
    usdgrip.__dict__.pop("check_manifold", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from usdgrip import check_manifold  # noqa: F401
    assert [w.category for w in caught] == [DeprecationWarning]
    assert caught[0].filename == __file__  # points at the importing line


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'plan_grasp'"):
        usdgrip.plan_grasp  # noqa: B018
