"""usdgrip: gripper sites and grasp slots in USD — schema, validation, sampling, planning.

Importing usdgrip registers the codeless usdGrip schema with USD's plugin
registry (idempotent) before anything here touches the schema registry, so
import it before opening stages. It also declares usdgrip's UsdValidation
validators (``ValidationContext(keywords=["usdgrip"])``), which UsdValidation
sees when usdgrip is imported before its registry is first built.
Everything else loads lazily on first use.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import warnings
from typing import Any

from usdgrip._plugin import append_dependency_path, register_schema, register_validation_plugin

__version__ = "0.1.0"

# `usdgrip env`'s dependency folder, behind everything the host has (cli/env.py).
append_dependency_path()

# Without pxr the pure modules (frames, sampling maths, contracts) still work. A simulation
# worker (usdgrip.grasping.physics.trial_workers) never opens a stage: it skips pxr.
if os.environ.get("USDGRIP_SIMULATION_WORKER") != "1":
    with contextlib.suppress(ImportError):
        register_schema()
        register_validation_plugin()

# Public name -> module that defines it (imported on first access).
_EXPORTS = {
    "GripperError": "usdgrip.errors",
    "StageOpenError": "usdgrip.errors",
    "PrimNotFoundError": "usdgrip.errors",
    "GripperSite": "usdgrip.site_records",
    "GripperSlot": "usdgrip.site_records",
    "CurveInfo": "usdgrip.site_records",
    "open_stage": "usdgrip.usd.stage",
    "find_gripper_sites": "usdgrip.usd.sites",
    "read_gripper_site": "usdgrip.usd.sites",
    "read_gripper_slots": "usdgrip.usd.slots",
    "define_gripper_site": "usdgrip.authoring",
    "set_gripper_site": "usdgrip.authoring",
    "apply_gripper_slot": "usdgrip.authoring",
    "remove_gripper_slot": "usdgrip.authoring",
    "remove_gripper_site": "usdgrip.authoring",
    "define_grasp_line": "usdgrip.authoring",
    "remove_grasp_line": "usdgrip.authoring",
    "check_edit": "usdgrip.authoring",
    "author_edit": "usdgrip.authoring",
    "SlotEdit": "usdgrip.authoring",
    "SiteEdit": "usdgrip.authoring",
    "LineEdit": "usdgrip.authoring",
    "AuthoringVerdict": "usdgrip.authoring",
    "AuthoringError": "usdgrip.authoring",
    "write_slot_records": "usdgrip.usd.authoring",
    "compute_grasp_frame": "usdgrip.frames",
    "migrate_stage": "usdgrip.migration",
    "validate": "usdgrip.rules",
    "Report": "usdgrip.rules",
    "Issue": "usdgrip.rules",
    "sample_gripper_groups": "usdgrip.sampling",
    "SlotSamples": "usdgrip.sampling",
    "EndEffectorTarget": "usdgrip.sampling",
    "check_slot": "usdgrip.sampling",
    "plan_grasps": "usdgrip.grasping.planner",
    "evaluate_grasps": "usdgrip.grasping.grasp_evaluation",
    "evaluate_targets": "usdgrip.grasping.target_evaluation",
    "evaluate_grasp_lines": "usdgrip.grasping.line_evaluation",
    "EvaluationOptions": "usdgrip.grasping.options",
    "PlanningOptions": "usdgrip.grasping.options",
    "read_grasp_inputs": "usdgrip.grasping.inputs",
    "GraspInputs": "usdgrip.grasping.inputs",
    "ObjectInputs": "usdgrip.grasping.inputs",
    "Gripper": "usdgrip.grasping.inputs",
    "Support": "usdgrip.grasping.inputs",
    "StageSource": "usdgrip.grasping.inputs",
    "GraspPhysics": "usdgrip.contracts",
    "GraspObject": "usdgrip.contracts",
    "GraspPlanningRequest": "usdgrip.contracts",
    "GraspCandidate": "usdgrip.contracts",
    "GraspPlanningMetadata": "usdgrip.contracts",
    "GraspPlanningResult": "usdgrip.contracts",
    "GeometryRef": "usdgrip.contracts",
    "GripperRef": "usdgrip.contracts",
    "AssetRef": "usdgrip.contracts",
    "write_isaac_grasp": "usdgrip.grasping.isaac_yaml",
    "read_isaac_grasp": "usdgrip.grasping.isaac_yaml",
    "CollisionScene": "usdgrip.grasping.collision",
    "run_batch": "usdgrip.batch",
    "GripperCollisionModel": "usdgrip.grasping.collision",
    "SceneExclusions": "usdgrip.grasping.collision",
    "render_view": "usdgrip.render",
    "read_gripper_articulation": "usdgrip.usd.articulation",
    "GripperArticulation": "usdgrip.gripper_articulation",
    "suggest_gripper_site": "usdgrip.gripper_opening",
}

#: Internals that left the top level (import them from their module): still found here
#: for one release, warning with a DeprecationWarning on first access.
_MOVED = {
    "sample_antipodal_grasps": "usdgrip.grasping.backends.antipodal",
    "AntipodalGrasps": "usdgrip.grasping.backends.antipodal",
    "TriangleMesh": "usdgrip.usd.geometry",
    "SceneShape": "usdgrip.usd.geometry",
    "read_object_mesh": "usdgrip.usd.geometry",
    "read_collision_shapes": "usdgrip.usd.geometry",
    "check_manifold": "usdgrip.usd.geometry",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    module = _MOVED.get(name)
    if module is not None:
        warnings.warn(
            f"usdgrip.{name} is deprecated (it leaves the top level in the next release); "
            f"import it from {module}",
            DeprecationWarning,
            stacklevel=2,
        )
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # `from usdgrip import name` asks twice: one warning
        return value
    raise AttributeError(f"module 'usdgrip' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
