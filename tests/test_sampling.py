"""Slot sampling maths (usdgrip.sampling): invariants, groups, flips, errors, determinism."""

from __future__ import annotations

import dataclasses
import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import usdgrip
from usdgrip.frames import compute_axis_angle_rotation, compute_rotation_from_quaternion
from usdgrip.sampling import (
    EndEffectorTarget,
    SlotSamples,
    check_slot,
    compute_units,
    sample_gripper_groups,
    sample_unit_draws,
)
from usdgrip.site_records import GripperSlot

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_slot(
    name="s",
    center=(0.0, 0.0, 0.0),
    forward=(0.0, 0.0, 1.0),
    span_axis=(1.0, 0.0, 0.0),
    up_range=0.2,
    angle=30.0,
    group="",
    world=None,
) -> GripperSlot:
    return GripperSlot(
        prim="/Obj",
        name=name,
        source="schema",
        center_local=np.asarray(center, dtype=np.float64),
        forward_local=np.asarray(forward, dtype=np.float64),
        span_axis_local=np.asarray(span_axis, dtype=np.float64),
        up_range_local=up_range,
        slot_input_angle=angle,
        lr=0,
        group=group,
        object_to_world=np.eye(4) if world is None else np.asarray(world, dtype=np.float64),
    )


# --- strategies ---------------------------------------------------------------

unit_quaternions = (
    st.tuples(*[st.floats(-1, 1) for _ in range(4)])
    .filter(lambda q: np.linalg.norm(q) > 0.2)
    .map(lambda q: np.asarray(q) / np.linalg.norm(q))
)
rotations = unit_quaternions.map(compute_rotation_from_quaternion)
coords = st.floats(-2.0, 2.0)
points = st.tuples(coords, coords, coords).map(np.asarray)


@st.composite
def rigid_transforms(draw, scale=False):
    m = np.eye(4)
    factor = draw(st.floats(0.25, 4.0)) if scale else 1.0
    m[:3, :3] = draw(rotations) * factor
    m[:3, 3] = draw(points)
    return m


@st.composite
def slot_lists(draw, world=None):
    n = draw(st.integers(1, 4))
    world = draw(rigid_transforms(scale=True)) if world is None else world
    slots = []
    for i in range(n):
        r = draw(rotations)
        slots.append(
            make_slot(
                name=f"slot_{i}",
                center=draw(points),
                forward=r[:, 2] * draw(st.floats(0.1, 10)),
                span_axis=r[:, 0] * draw(st.floats(0.1, 10)),
                up_range=draw(st.floats(1e-3, 1.0)),
                angle=draw(st.floats(0.0, 360.0)),
                group=draw(st.sampled_from(["", "", "a", "b"])),
                world=world,
            )
        )
    return slots


counts = st.integers(1, 40)
seeds = st.integers(0, 2**32 - 1)


# --- properties -----------------------------------------------------------------


@PROPERTY
@given(slots=slot_lists(), count=counts, seed=seeds)
def test_draws_lie_in_their_common_ranges_and_groups_share_them(slots, count, seed):
    samples = sample_gripper_groups(slots, ee_ids=range(len(slots)), count=count, seed=seed)
    assert samples.poses.shape == (count, len(slots), 4, 4)
    for members in compute_units(slots):
        half_up = min(slots[j].up_range for j in members) / 2
        half_angle = min(slots[j].slot_input_angle for j in members) / 2
        first = members[0]
        for j in members:
            # Grouped members: identical draws, bit for bit.
            np.testing.assert_array_equal(samples.offsets[:, j], samples.offsets[:, first])
            np.testing.assert_array_equal(samples.tilts_deg[:, j], samples.tilts_deg[:, first])
            np.testing.assert_array_equal(samples.flipped[:, j], samples.flipped[:, first])
        assert np.all(np.abs(samples.offsets[:, first]) <= half_up)
        assert np.all(np.abs(samples.tilts_deg[:, first]) <= half_angle)
        flips = int(samples.flipped[:, first].sum())
        assert flips in (count // 2, (count + 1) // 2)
        if count >= 2:
            assert 0 < flips < count  # both span orientations appear


@PROPERTY
@given(slots=slot_lists(), count=counts, seed=seeds)
def test_poses_are_proper_rigid_frames_on_the_slot(slots, count, seed):
    samples = sample_gripper_groups(slots, ee_ids=range(len(slots)), count=count, seed=seed)
    poses = samples.poses
    rot = poses[..., :3, :3]
    np.testing.assert_allclose(np.linalg.det(rot), 1.0, atol=1e-9)
    np.testing.assert_allclose(
        np.swapaxes(rot, -1, -2) @ rot, np.broadcast_to(np.eye(3), rot.shape), atol=1e-9
    )
    np.testing.assert_array_equal(
        poses[..., 3, :], np.broadcast_to([0, 0, 0, 1], rot.shape[:2] + (4,))
    )
    x, y, z = rot[..., 0], rot[..., 1], rot[..., 2]
    np.testing.assert_allclose(y, np.cross(z, x), atol=1e-9)  # right-handed: Y = Z x X
    for j, slot in enumerate(slots):
        # Up = forward x span_axis, world.
        np.testing.assert_allclose(slot.up_axis, np.cross(slot.forward, slot.span_axis), atol=1e-9)
        sigma = np.where(samples.flipped[:, j], -1.0, 1.0)[:, None]
        theta = np.deg2rad(samples.tilts_deg[:, j])
        # X = (flipped) span axis; the grasp point moves along the unflipped Up.
        np.testing.assert_allclose(x[:, j], sigma * slot.span_axis, atol=1e-9)
        np.testing.assert_allclose(
            poses[:, j, :3, 3],
            slot.center + samples.offsets[:, j, None] * slot.up_axis,
            atol=1e-9,
        )
        # Z = forward turned by the tilt about the (flipped) span axis.
        expected_z = np.einsum(
            "nij,j->ni", compute_axis_angle_rotation(sigma * slot.span_axis, theta), slot.forward
        )
        np.testing.assert_allclose(z[:, j], expected_z, atol=1e-9)


@PROPERTY
@given(
    data=st.data(),
    move=rigid_transforms(),
    count=counts,
    seed=seeds,
)
def test_moving_the_object_moves_every_sample_by_its_transform(data, move, count, seed):
    base = data.draw(rigid_transforms(scale=True))
    slots = data.draw(slot_lists(world=base))
    moved = [dataclasses.replace(s, object_to_world=move @ s.object_to_world) for s in slots]
    ee_ids = range(len(slots))
    before = sample_gripper_groups(slots, ee_ids=ee_ids, count=count, seed=seed)
    after = sample_gripper_groups(moved, ee_ids=ee_ids, count=count, seed=seed)
    # The world up_range goes through the transform: equal up to rounding.
    np.testing.assert_allclose(after.offsets, before.offsets, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(after.tilts_deg, before.tilts_deg)
    np.testing.assert_array_equal(after.flipped, before.flipped)
    np.testing.assert_allclose(after.poses, move @ before.poses, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(slots=slot_lists(), count=counts, seed=seeds)
def test_same_seed_gives_bit_identical_arrays(slots, count, seed):
    ee_ids = list(range(len(slots)))
    a = sample_gripper_groups(slots, ee_ids=ee_ids, count=count, seed=seed)
    b = sample_gripper_groups(list(slots), ee_ids=tuple(ee_ids), count=count, seed=seed)
    for name in ("poses", "offsets", "tilts_deg", "flipped"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes()


def test_different_seeds_differ_and_the_global_rng_is_untouched():
    slots = [make_slot()]
    np.random.seed(123)
    state = np.random.get_state()[1].copy()
    a = sample_gripper_groups(slots, ee_ids=[0], count=20, seed=1)
    b = sample_gripper_groups(slots, ee_ids=[0], count=20, seed=2)
    assert not np.array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


# --- groups, flips and units ---------------------------------------------------


def test_group_uses_the_smallest_range_and_angle_and_ungrouped_slots_are_independent():
    slots = [
        make_slot("wide", up_range=0.5, angle=90.0, group="g"),
        make_slot("narrow", center=(1, 0, 0), up_range=0.01, angle=4.0, group="g"),
        make_slot("free", up_range=0.5, angle=90.0),
    ]
    s = sample_gripper_groups(slots, ee_ids=(3, 1, 2), count=2000, seed=0)
    assert s.ee_ids == (3, 1, 2)
    assert s.groups == ("g", "g", "")
    assert np.abs(s.offsets[:, 0]).max() <= 0.005
    assert np.abs(s.tilts_deg[:, 0]).max() <= 2.0
    # The group's range is really used (not collapsed to a point)...
    assert np.abs(s.offsets[:, 0]).max() > 0.004
    # ...and the ungrouped slot draws from its own, wider range, independently.
    assert np.abs(s.offsets[:, 2]).max() > 0.2
    assert not np.array_equal(s.flipped[:, 2], s.flipped[:, 0])


def test_compute_units_orders_by_first_member():
    slots = [make_slot(group=""), make_slot(group="b"), make_slot(group="a"), make_slot(group="b")]
    assert compute_units(slots) == [[0], [1, 3], [2]]


@pytest.mark.parametrize("count", [1, 2, 3, 7, 50])
def test_flip_policy_balances_orientations(count):
    draws = sample_unit_draws(0.1, 10.0, count, np.random.default_rng(5))
    assert int(draws.flipped.sum()) in (count // 2, (count + 1) // 2)


def test_zero_angle_gives_no_tilt_and_flip_keeps_point_and_approach():
    slot = make_slot(forward=(0, 0, -1), span_axis=(1, 0, 0), angle=0.0)
    s = sample_gripper_groups([slot], ee_ids=[0], count=10, seed=3)
    assert np.all(s.tilts_deg == 0.0)
    np.testing.assert_allclose(s.poses[..., :3, 2], np.broadcast_to([0, 0, -1], (10, 1, 3)))
    flipped, kept = s.poses[s.flipped[:, 0], 0], s.poses[~s.flipped[:, 0], 0]
    np.testing.assert_allclose(flipped[:, :3, 0], np.broadcast_to([-1, 0, 0], (5, 3)))
    np.testing.assert_allclose(kept[:, :3, 0], np.broadcast_to([1, 0, 0], (5, 3)))
    # Up = forward x span = (0, -1, 0): the point moves along -Y by the offset, flipped or not.
    np.testing.assert_allclose(s.poses[:, 0, 1, 3], -s.offsets[:, 0], atol=1e-15)


# --- result object ----------------------------------------------------------------


def test_candidates_are_lazy_tuples_of_targets_viewing_the_arrays():
    slots = [make_slot("a", group="g"), make_slot("b", center=(1, 0, 0), group="g")]
    s = usdgrip.sample_gripper_groups(slots, ee_ids=(4, 7), count=5, seed=9)
    assert isinstance(s, usdgrip.SlotSamples) and isinstance(s, SlotSamples)
    cands = s.candidates
    assert len(cands) == 5
    first = cands[0]
    assert isinstance(first, tuple) and len(first) == 2
    t = first[1]
    assert isinstance(t, EndEffectorTarget)
    assert (t.ee_id, t.slot) == (7, "b")
    assert t.offset == s.offsets[0, 1] and t.tilt_deg == s.tilts_deg[0, 1]
    assert t.flipped is bool(s.flipped[0, 1])
    assert np.shares_memory(t.pose, s.poses)
    np.testing.assert_array_equal(t.position, s.poses[0, 1, :3, 3])
    assert cands[-1][0].offset == s.offsets[4, 0]
    assert [c[0].offset for c in cands[1:3]] == list(s.offsets[1:3, 0])
    assert len(list(cands)) == 5
    with pytest.raises(IndexError, match="out of range for 5 candidates"):
        cands[5]
    with pytest.raises(ValueError, match="read-only"):
        s.poses[0, 0, 0, 0] = 1.0


def test_to_dict_layout_and_quaternions():
    s = sample_gripper_groups([make_slot("h")], ee_ids=[2], count=3, seed=1)
    d = s.to_dict()
    assert list(d) == ["seed", "count", "ee_ids", "candidates"]
    assert (d["seed"], d["count"], d["ee_ids"]) == (1, 3, [2])
    target = d["candidates"][1]["targets"][0]
    assert list(target) == [
        "ee_id", "slot", "position", "orientation_wxyz", "matrix", "offset", "tilt_deg", "flipped"
    ]  # fmt: skip
    np.testing.assert_array_equal(target["matrix"], s.poses[1, 0])
    assert target["position"] == s.poses[1, 0, :3, 3].tolist()
    rot = compute_rotation_from_quaternion(target["orientation_wxyz"])
    np.testing.assert_allclose(rot, s.poses[1, 0, :3, :3], atol=1e-12)


def test_memory_is_proportional_to_the_output():
    slots = [make_slot("a", group="g"), make_slot("b", center=(1, 0, 0), group="g")]
    count = 50_000
    tracemalloc.start()
    s = sample_gripper_groups(slots, ee_ids=(0, 1), count=count, seed=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    output = s.poses.nbytes + s.offsets.nbytes + s.tilts_deg.nbytes + s.flipped.nbytes
    assert peak < 1.6 * output, (peak, output)


# --- errors --------------------------------------------------------------------------


BAD_SLOTS = [
    ({"forward": (0, 0, 0)}, "forward is [0.0, 0.0, 0.0] (zero); expected a non-zero vector"),
    ({"span_axis": (math.nan, 0, 0)}, "span_axis is [nan, 0.0, 0.0]; expected 3 finite numbers"),
    ({"center": (0, math.inf, 0)}, "center is [0.0, inf, 0.0]; expected 3 finite numbers"),
    ({"span_axis": (1, 0, 0.05)}, "(2.86° off perpendicular); expected perpendicular within 1°"),
    ({"up_range": 0.0}, "up_range is 0 m; expected a finite value > 0 m"),
    ({"up_range": -1.0}, "up_range is -1 m; expected a finite value > 0 m"),
    ({"up_range": math.inf}, "up_range is inf m"),
    ({"angle": 361.0}, "slot_input_angle is 361°; expected a finite value in [0, 360] degrees"),
    ({"angle": -1.0}, "slot_input_angle is -1°"),
    ({"angle": math.nan}, "slot_input_angle is nan°"),
    ({"world": np.diag([1.0, 1.0, 0.0, 1.0])}, "collapses forward to zero"),
    ({"world": np.full((4, 4), math.nan)}, "not a finite 4x4 matrix"),
]


@pytest.mark.parametrize(("change", "message"), BAD_SLOTS)
def test_bad_slot_is_a_value_error_naming_slot_and_problem(change, message):
    bad = make_slot("broken", **change)
    assert check_slot(bad)
    with pytest.raises(ValueError, match=r"slot 1 'broken' on </Obj> cannot be sampled: .*") as e:
        sample_gripper_groups([make_slot("ok"), bad], ee_ids=(0, 1))
    assert message in str(e.value)


def test_check_slot_passes_good_slots_and_names_fields():
    assert check_slot(make_slot()) == []
    # 0.57° off perpendicular: within the GS.001 default, sampled on an orthonormal frame.
    tilted = make_slot(span_axis=(1, 0, 0.01))
    assert check_slot(tilted) == []
    assert [p.field for p in check_slot(tilted, perpendicular_tolerance_deg=0.5)] == ["span_axis"]
    pose = sample_gripper_groups([tilted], ee_ids=[0], count=1).poses[0, 0]
    np.testing.assert_allclose(pose[:3, :3].T @ pose[:3, :3], np.eye(3), atol=1e-12)
    problems = check_slot(make_slot(forward=(0, 0, 0), up_range=0.0, angle=400.0))
    assert [p.field for p in problems] == ["forward", "up_range", "slot_input_angle"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slots": []}, "no slots to sample"),
        ({"ee_ids": (0,)}, r"2 slots \('a', 'b'\) but 1 ee_ids \[0\]; expected one end-effector"),
        ({"ee_ids": (0, 1, 2)}, "2 slots .* but 3 ee_ids"),
        ({"ee_ids": (1, 1)}, r"ee_ids \[1, 1\] repeat an id"),
        ({"ee_ids": (0, "1")}, "'1' is not an integer"),
        ({"ee_ids": (0, True)}, "True is not an integer"),
        ({"count": 0}, "count is 0; expected an integer >= 1"),
        ({"count": 2.5}, "count is 2.5; expected an integer >= 1"),
        ({"count": True}, "count is True"),
        ({"seed": -1}, "seed is -1; expected an integer from 0 to"),
        ({"seed": 1.5}, "seed is 1.5"),
    ],
)
def test_bad_arguments_are_value_errors(kwargs, message):
    args = {"slots": [make_slot("a"), make_slot("b")], "ee_ids": (0, 1), "count": 5, "seed": 7}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        sample_gripper_groups(**args)


def test_seed_none_uses_fresh_entropy():
    s = sample_gripper_groups([make_slot()], ee_ids=[0], count=4, seed=None)
    assert s.seed is None and s.count == 4
