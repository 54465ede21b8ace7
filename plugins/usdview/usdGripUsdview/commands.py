"""Callbacks of the Grippers menu: usdview's camelCase names for the library's commands.

Each takes usdview's ``usdviewApi``; the work is in :mod:`usdgrip.views.commands`,
where it is tested without usdview.
"""

from __future__ import annotations

from usdgrip.views import commands as _commands

validateStage = _commands.validate_stage
validateSelection = _commands.validate_selection
showSlots = _commands.show_slots
sampleSlotGrasps = _commands.sample_slot_grasps
planGrasps = _commands.plan_grasps
exportGrasps = _commands.export_grasps
clearOverlays = _commands.clear_overlays
toggleOverlays = _commands.toggle_overlays
