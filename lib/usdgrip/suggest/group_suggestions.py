"""A two-handed slot group for an object one hand cannot lift (``suggest slots --hands 2``).

:func:`suggest_group` screens the object as for one hand, but clusters the grasps that
closed on it (held, or lost only once lifted: one hand too weak for the weight), pairs
the regions on opposite sides of the centre of mass
(:func:`~usdgrip.suggest.regions.pair_regions`), and proves each pair, best first, as
``usdgrip evaluate --targets`` does: the pair is authored as a group on a private copy of
the stage, sampled jointly (:func:`~usdgrip.sampling.sample_gripper_groups`) and the two
hands close, lift and shake together
(:func:`~usdgrip.grasping.target_evaluation.evaluate_targets`). The first pair whose
samples hold at least ``min_success`` is the suggestion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from usdgrip.contracts import GripperRef
from usdgrip.suggest.regions import (
    PAIR_ROOM_OPENINGS,
    RegionPlace,
    align_partner_span,
    name_region,
    pair_regions,
    take_name,
)
from usdgrip.suggest.screening import (
    PROOF_SAMPLES,
    LeftOut,
    Progress,
    Screening,
    SuggestOptions,
    check_cancel,
)

#: Pairs proven at most (best first) before giving up.
MAX_PAIRS_PROVED = 3


def member_name(base: str, lr: str) -> str:
    """A group member's name: the side word of ``base`` replaced by ``lr``.

    ``rim_nx`` -> ``rim_left``, ``side_px`` -> ``side_right``, ``handle`` ->
    ``handle_left``, ``top`` -> ``top_left``.
    """
    for kind in ("rim", "side"):
        if base.startswith(f"{kind}_"):
            return f"{kind}_{lr}"
    return f"{base}_{lr}"


def check_group_is_new(stage: Any, prim: str, group: str) -> None:
    """Refuse a group name the object's slots already use.

    Raises:
        ValueError: naming the slots of that group.
    """
    from usdgrip.usd.slots import list_slot_instances

    target = stage.GetPrimAtPath(prim)
    if not target:
        return
    members = []
    for name in list_slot_instances(target):
        attr = target.GetAttribute(f"gripperSlot:{name}:groupName")
        if attr and attr.Get() == group:
            members.append(name)
    if members:
        raise ValueError(
            f"group {group!r}: <{prim}> already has a slot group {group!r} "
            f"({', '.join(map(repr, members))}); choose another --group name"
        )


def suggest_group(
    file: str,
    prim: str,
    gripper: GripperRef,
    options: SuggestOptions,
    screened: Screening,
    report: Progress,
    cancel: Callable[[], bool] | None,
) -> tuple[list[Any], list[LeftOut]]:
    """The two proven slots of a group (:class:`SlotSuggestion`, left first) and what was left out.

    ``screened`` is :func:`~usdgrip.suggest.screening.screen_grasps`' result with
    ``options.hands == 2``. Nothing is printed or written.
    """
    from usdgrip.grasping.backends.antipodal_approach import compute_centroid

    obj = screened.inputs.object
    max_opening = screened.inputs.find_gripper(gripper).max_opening
    regions = screened.regions
    left_out: list[LeftOut] = []
    if len(regions) < 2:
        held = "a region" if regions else "no region"
        left_out.append(
            LeftOut(
                options.group,
                f"{held} of grasps closed on the object ({screened.planned} planned of "
                f"--candidates {options.candidates}; try more): a group needs two on "
                "opposite sides of its centre of mass",
            )
        )
        return [], left_out
    com = compute_centroid(obj.vertices, obj.faces)
    pairs = pair_regions(regions, com, obj.lift_up, max_opening)
    if not pairs:
        if pair_regions(regions, com, obj.lift_up, 0.0):
            why = (
                f"the regions on opposite sides of the centre of mass are closer than "
                f"{PAIR_ROOM_OPENINGS * max_opening:.3f} m ({PAIR_ROOM_OPENINGS:g} max "
                "openings): no room for two hands"
            )
        else:
            why = (
                f"no two of the {len(regions)} regions lie on opposite sides of the centre "
                "of mass (try more --candidates)"
            )
        left_out.append(LeftOut(options.group, why))
        return [], left_out
    from usdgrip.usd.slots import list_slot_instances

    existing = set(list_slot_instances(screened.stage.GetPrimAtPath(prim)))
    bounds = (obj.vertices.min(axis=0), obj.vertices.max(axis=0))
    for number, pair in enumerate(pairs[:MAX_PAIRS_PROVED]):
        check_cancel(cancel)
        members = (regions[pair.left], regions[pair.right])
        widths = (screened.widths[pair.left], screened.widths[pair.right])
        spans = (members[0].span_axis, align_partner_span(*members))
        taken = set(existing)
        names = []
        for region, width, span, lr in zip(members, widths, spans, ("left", "right"), strict=True):
            place = RegionPlace(obj.vertices, obj.faces, span, width)
            base = name_region(region.center, bounds, obj.lift_up, set(), place)
            names.append(take_name(member_name(base, lr), taken))
            taken.add(names[-1])
        label = f"{options.group} pair {number + 1} ({names[0]}, {names[1]})"
        report(f"proving group {label}", 0.6 + 0.4 * number / min(len(pairs), MAX_PAIRS_PROVED))
        proved = _prove_pair(file, prim, gripper, options, screened, members, spans, names)
        if isinstance(proved, str):
            left_out.append(LeftOut(label, proved))
            continue
        edits, rate, samples = proved
        if rate < options.min_success:
            left_out.append(
                LeftOut(
                    label,
                    f"its {samples} two-handed samples held {rate:.0%} of their trials, under "
                    f"--min-success {options.min_success:.0%}",
                )
            )
            continue
        return _suggestions(gripper, options, members, edits, names, rate, samples), left_out
    return [], left_out


def _prove_pair(
    file: str,
    prim: str,
    gripper: GripperRef,
    options: SuggestOptions,
    screened: Screening,
    members: tuple[Any, Any],
    spans: tuple[Any, Any],
    names: list[str],
) -> tuple[list[Any], float, int] | str:
    """Author the pair on a private copy, sample it jointly, evaluate the two hands together.

    Returns the two edits, the held share of the samples' trials and the sample count, or
    why the pair could not be proven.
    """
    from usdgrip.authoring import AuthoringError, SlotEdit, author_edit
    from usdgrip.authoring.world_frame import convert_edit_from_world
    from usdgrip.contracts import GeometryRef
    from usdgrip.grasping.target_evaluation import evaluate_targets
    from usdgrip.sampling import sample_gripper_groups
    from usdgrip.suggest.slot_records import world_slot
    from usdgrip.usd.slots import read_gripper_slots
    from usdgrip.usd.stage import open_stage

    obj, mpu = screened.inputs.object, screened.meters_per_unit
    proof = open_stage(file)  # a private copy: the pair goes in its session layer
    edits = []
    for region, span, name, lr in zip(members, spans, names, ("left", "right"), strict=True):
        values = world_slot(region, obj.world_frame, mpu)
        values["span_axis"] = tuple(float(v) for v in obj.world_frame[:3, :3] @ span)
        edit = convert_edit_from_world(
            screened.stage, SlotEdit(prim, name, lr=lr, group=options.group, **values)
        )
        try:
            author_edit(proof, edit, layer=proof.GetSessionLayer())
        except AuthoringError as exc:
            reason = "; ".join(exc.verdict.describe(item) for item in exc.verdict.refused)
            return f"the rules refuse slot {name!r}: {reason}"
        edits.append(edit)
    slots = {s.name: s for s in read_gripper_slots(proof.GetPrimAtPath(prim))}
    samples = sample_gripper_groups(
        [slots[names[0]], slots[names[1]]], (0, 1), PROOF_SAMPLES, options.seed
    )
    report = evaluate_targets(
        samples.to_dict(), GeometryRef(asset_path=file, prim_path=prim), gripper,
        options=options.evaluation(), inputs=screened.inputs,
    )  # fmt: skip
    rates = [c["success_rate"] for c in report["candidates"]]
    return edits, (float(np.mean(rates)) if rates else 0.0), len(rates)


def _suggestions(
    gripper: GripperRef,
    options: SuggestOptions,
    members: tuple[Any, Any],
    edits: list[Any],
    names: list[str],
    rate: float,
    samples: int,
) -> list[Any]:
    from usdgrip.suggest.slot_records import make_slot_suggestion

    found = []
    for region, edit, name, partner in zip(members, edits, names, names[::-1], strict=True):
        facts = {"hands": 2, "group": options.group, "partner": partner,
                 "planned_grasps_closed": len(region.members)}  # fmt: skip
        found.append(
            make_slot_suggestion(
                name,
                edit,
                region,
                gripper,
                options,
                rate,
                samples,
                facts,
                lr=edit.lr,
                group=options.group,
            )
        )
    return found


__all__ = ["MAX_PAIRS_PROVED", "check_group_is_new", "member_name", "suggest_group"]
