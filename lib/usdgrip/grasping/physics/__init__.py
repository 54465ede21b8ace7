"""Physics-checked grasps: grasp-and-lift trials in MuJoCo, on the CPU (pure: no ``pxr``).

Build the inputs from arrays in the object frame, then evaluate::

    obj = make_physics_object(vertices, triangles, mass=0.3, friction=0.8)
    gripper = PhysicsGripper.proxy(max_opening=0.085, pad_width=0.02, grip_force=50.0)
    scene = make_physics_scene(up=(0, 0, 1), table=True)
    results = evaluate_candidates(obj, gripper, poses, scene=scene,
                                  params=EvaluationParams(trials=5), seed=0, jobs=2)

See docs/physics.md for the model, the protocol and every parameter.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from usdgrip.grasping.physics.candidate_trials import (
        CandidateEvaluation,
        EvaluationCancelled,
        check_hand_poses,
        compute_trial_batch,
        engine_metadata,
        evaluate_candidates,
        summarize_evaluations,
        summarize_open_hits,
    )
    from usdgrip.grasping.physics.decompose import (
        Decomposition,
        PartReport,
        decompose_mesh,
        default_cache_dir,
    )
    from usdgrip.grasping.physics.engines import (
        ENGINES,
        EngineRecord,
        GraspEngine,
        TrialBatch,
        TrialResult,
        get_engine,
    )
    from usdgrip.grasping.physics.mujoco_engine import OUTCOMES, GraspSimulator, MujocoEngine
    from usdgrip.grasping.physics.params import (
        DEFAULT_DENSITY,
        DEFAULT_FRICTION,
        DEFAULT_GRIP_FORCE,
        DecompositionParams,
        EvaluationParams,
    )
    from usdgrip.grasping.physics.world import (
        GripperShape,
        PhysicsGripper,
        PhysicsObject,
        PhysicsScene,
        make_physics_object,
        make_physics_scene,
    )

#: Public name -> the module of this package that defines it, imported on first use, so
#: that loading one module of the package (a simulation worker's start, the CoACD child,
#: ``trial_workers``) does not load MuJoCo and every other one.
_EXPORTS = {
    "CandidateEvaluation": "candidate_trials",
    "DEFAULT_DENSITY": "params",
    "DEFAULT_FRICTION": "params",
    "DEFAULT_GRIP_FORCE": "params",
    "Decomposition": "decompose",
    "DecompositionParams": "params",
    "ENGINES": "engines",
    "EngineRecord": "engines",
    "EvaluationCancelled": "candidate_trials",
    "EvaluationParams": "params",
    "GraspEngine": "engines",
    "GraspSimulator": "mujoco_engine",
    "GripperShape": "world",
    "MujocoEngine": "mujoco_engine",
    "OUTCOMES": "mujoco_engine",
    "PartReport": "decompose",
    "PhysicsGripper": "world",
    "PhysicsObject": "world",
    "PhysicsScene": "world",
    "TrialBatch": "engines",
    "TrialResult": "engines",
    "check_hand_poses": "candidate_trials",
    "compute_trial_batch": "candidate_trials",
    "decompose_mesh": "decompose",
    "default_cache_dir": "decompose",
    "engine_metadata": "candidate_trials",
    "evaluate_candidates": "candidate_trials",
    "get_engine": "engines",
    "make_physics_object": "world",
    "make_physics_scene": "world",
    "summarize_evaluations": "candidate_trials",
    "summarize_open_hits": "candidate_trials",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "DEFAULT_DENSITY",
    "DEFAULT_FRICTION",
    "DEFAULT_GRIP_FORCE",
    "ENGINES",
    "OUTCOMES",
    "CandidateEvaluation",
    "Decomposition",
    "DecompositionParams",
    "EngineRecord",
    "EvaluationCancelled",
    "EvaluationParams",
    "GraspEngine",
    "GraspSimulator",
    "GripperShape",
    "MujocoEngine",
    "PartReport",
    "PhysicsGripper",
    "PhysicsObject",
    "PhysicsScene",
    "TrialBatch",
    "TrialResult",
    "check_hand_poses",
    "compute_trial_batch",
    "decompose_mesh",
    "default_cache_dir",
    "engine_metadata",
    "evaluate_candidates",
    "get_engine",
    "make_physics_object",
    "make_physics_scene",
    "summarize_evaluations",
    "summarize_open_hits",
]
