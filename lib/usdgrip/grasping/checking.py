"""The planner's check step: grasp-pose and retreat collision checks over ranked proposals."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from usdgrip.grasping.proposals import Proposals

#: Smallest chunk of ranked proposals collision-checked at once.
CHECK_CHUNK_MIN = 32


def _describe_exclusion(exclusion, scene, model) -> str:
    subject = scene.name_of(exclusion.subject) if exclusion.subject in scene else "?"
    if exclusion.kind == "robot":
        index = int(exclusion.partner)
        name = model.names[index] if 0 <= index < model.shape_count else "?"
        partner = f"{index}:{name}"
    else:
        partner = scene.name_of(exclusion.partner) if exclusion.partner in scene else "?"
    return f"{exclusion.kind}({subject}, {partner})"


def _top_contacts(contacts, limit: int = 2) -> str:
    counts: dict[str, int] = {}
    for contact in contacts:
        if contact is not None:
            text = contact.describe()
            counts[text] = counts.get(text, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return "; ".join(f"{text} ×{n}" for text, n in ranked)


class RankedChecker:
    """Grasp-pose and retreat checks over ranked proposals, in chunks, until the budget is met.

    Keeps per-stage counts and the most frequent contacts for the warnings.
    """

    def __init__(self, scene, model, world_frame, object_id, support_id, distance, steps) -> None:
        self.scene = scene
        self.model = model
        self.world_frame = world_frame
        self.object_id = object_id
        self.support_id = support_id
        self.distance = distance
        self.steps = steps
        self.checked = 0
        self.pose_hits: list = []
        self.retreat_checked = 0
        self.retreat_hits: list = []

    def _describe(self, exclusions) -> list[str]:
        return [_describe_exclusion(e, self.scene, self.model) for e in exclusions]

    def run(
        self, proposals: Proposals, budget: int, report: Callable[[int, int], None]
    ) -> tuple[list[int], dict[int, tuple[str, ...]]]:
        """Indices (rank order) of the first ``budget`` survivors, and their exclusions."""
        kept: list[int] = []
        exclusions: dict[int, tuple[str, ...]] = {}
        total = len(proposals)
        start = 0
        poses = proposals.pose_array
        while start < total and len(kept) < budget:
            # Ask for a little more than is missing: most proposals usually survive.
            size = max(CHECK_CHUNK_MIN, math.ceil(1.25 * (budget - len(kept))))
            rows = np.arange(start, min(total, start + size))
            start = int(rows[-1]) + 1
            report(int(rows[0]), total)
            world = self.world_frame @ poses[rows]
            hit = self.scene.check_gripper(self.model, world)
            self.checked += len(rows)
            self.pose_hits.extend(
                c for c, h in zip(hit.first_contact, hit.collides, strict=True) if h
            )
            base = self._describe(hit.exclusions_used)
            rows, world = rows[~hit.collides], world[~hit.collides]
            used: list[list[str]] = [list(base) for _ in rows]
            if self.object_id is not None and len(rows):
                retreat = self.scene.check_retreat(
                    self.model,
                    world,
                    self.object_id,
                    self.distance,
                    steps=self.steps,
                    support_id=self.support_id,
                )
                self.retreat_checked += len(rows)
                self.retreat_hits.extend(
                    c for c, h in zip(retreat.first_contact, retreat.collides, strict=True) if h
                )
                for row, extra in enumerate(retreat.exclusions_used):
                    used[row].extend(self._describe(extra))
                keep = ~retreat.collides
                rows = rows[keep]
                used = [u for u, k in zip(used, keep, strict=True) if k]
            for row, names in zip(rows, used, strict=True):
                if len(kept) < budget:
                    kept.append(int(row))
                    exclusions[int(row)] = tuple(dict.fromkeys(names))
        report(start, total)
        return kept, exclusions

    def summaries(self) -> list[str]:
        """Warnings: how many checked proposals collided, and with what."""
        texts = []
        if self.pose_hits:
            texts.append(
                f"{len(self.pose_hits)} of {self.checked} checked proposals collide at the grasp "
                f"pose ({_top_contacts(self.pose_hits)})"
            )
        if self.retreat_hits:
            texts.append(
                f"{len(self.retreat_hits)} of {self.retreat_checked} checked proposals collide "
                f"while retreating {self.distance:g} m ({_top_contacts(self.retreat_hits)})"
            )
        return texts
