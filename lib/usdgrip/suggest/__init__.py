"""Suggest grasp slots from physics: what held, clustered, proven, then authored.

Public API (``docs/authoring.md``, "Suggest")::

    from usdgrip.suggest import SuggestOptions, suggest_slots, author_slot_suggestions

    found = suggest_slots("pan.usda", "/Pan", GripperRef(...), SuggestOptions(trials=2))
    [(s.name, s.proven_success) for s in found.slots], found.left_out
    author_slot_suggestions(stage, found)  # each slot checked by the rules first
"""

from __future__ import annotations

from usdgrip.suggest.slot_suggestions import (
    DEFAULT_CANDIDATES,
    DEFAULT_MAX_SLOTS,
    DEFAULT_MIN_SUCCESS,
    DEFAULT_TRIALS,
    EVIDENCE_KEY,
    PROOF_SAMPLES,
    LeftOut,
    SlotSuggestion,
    SlotSuggestions,
    SuggestionCancelled,
    SuggestOptions,
    author_slot_suggestions,
    suggest_slots,
)

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_MAX_SLOTS",
    "DEFAULT_MIN_SUCCESS",
    "DEFAULT_TRIALS",
    "EVIDENCE_KEY",
    "PROOF_SAMPLES",
    "LeftOut",
    "SlotSuggestion",
    "SlotSuggestions",
    "SuggestOptions",
    "SuggestionCancelled",
    "author_slot_suggestions",
    "suggest_slots",
]
