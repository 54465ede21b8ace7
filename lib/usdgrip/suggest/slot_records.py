"""The records of suggested slots (:func:`~usdgrip.suggest.suggest_slots`' result)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from usdgrip.suggest.regions import SlotRegion
from usdgrip.suggest.screening import LeftOut


@dataclass(frozen=True)
class SlotSuggestion:
    """One proven slot: where it goes (object prim frame, stage units) and its evidence."""

    name: str
    center: tuple[float, float, float]
    forward: tuple[float, float, float]
    span_axis: tuple[float, float, float]
    up_range: float
    """Metres."""
    slot_input_angle: float
    """Degrees."""
    planned_success: float
    """Mean success of the held grasps the region was made of."""
    proven_success: float
    """Held share of the slot samples' trials."""
    samples: int
    evidence: dict[str, Any] = field(default_factory=dict)
    lr: str | None = None
    """``left``/``right`` for a two-handed group's members, else ``None`` (left as is)."""
    group: str = ""
    """The group name of a two-handed group's members (``""``: independent)."""


@dataclass(frozen=True)
class SlotSuggestions:
    """What :func:`suggest_slots` found."""

    object: str
    gripper: str
    slots: tuple[SlotSuggestion, ...]
    left_out: tuple[LeftOut, ...]
    planned: int
    held: int
    seconds: dict[str, float]
    """Where the time went: ``plan``, ``evaluate``, ``prove``."""
    notes: tuple[str, ...] = ()
    lifted_short: int = 0
    """Planned grasps that closed on the object but lost it once lifted."""
    advice: str | None = None
    """What to try when nothing was suggested (``--hands 2`` for an object one hand
    cannot lift)."""


def world_slot(region: SlotRegion, frame: np.ndarray, meters_per_unit: float) -> dict:
    """The region's slot in world coordinates (stage units): ``SlotEdit`` fields."""
    rotation = frame[:3, :3]
    centre = (rotation @ region.center + frame[:3, 3]) / meters_per_unit
    return {
        "center": tuple(float(v) for v in centre),
        "forward": tuple(float(v) for v in rotation @ region.forward),
        "span_axis": tuple(float(v) for v in rotation @ region.span_axis),
        "up_range": float(region.up_range),
        "slot_input_angle": float(region.input_angle_deg),
    }


def make_slot_suggestion(
    name: str,
    edit: Any,
    region: SlotRegion,
    gripper: Any,
    options: Any,
    rate: float,
    samples: int,
    facts: dict[str, Any],
    **fields: Any,
) -> SlotSuggestion:
    """A proven slot from its authored ``edit`` (a ``SlotEdit``) and its evidence record.

    ``facts``: what this kind of proof adds to the evidence (hands, group, partner, how many
    planned grasps the region was made of); ``fields``: ``lr`` and ``group``.
    """
    import usdgrip

    evidence = {
        "gripper": str(gripper),
        **facts,
        "trials": options.trials,
        "samples": samples,
        "success_rate": round(rate, 4),
        "seed": options.seed,
        "usdgrip_version": usdgrip.__version__,
    }
    if options.force is not None:
        evidence["force"] = float(options.force)
    return SlotSuggestion(
        name,
        tuple(edit.center),
        tuple(edit.forward),
        tuple(edit.span_axis),
        float(edit.up_range),
        float(edit.slot_input_angle),
        region.success,
        rate,
        samples,
        evidence,
        **fields,
    )


__all__ = ["SlotSuggestion", "SlotSuggestions", "make_slot_suggestion", "world_slot"]
