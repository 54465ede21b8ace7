"""Physics-checked grasps: grasp-and-lift trials in MuJoCo, on the CPU (pure: no ``pxr``).

Build the inputs from arrays in the object frame, then evaluate::

    obj = make_physics_object(vertices, triangles, mass=0.3, friction=0.8)
    gripper = PhysicsGripper.proxy(max_opening=0.085, pad_width=0.02, grip_force=50.0)
    scene = make_physics_scene(up=(0, 0, 1), table=True)
    results = evaluate_candidates(obj, gripper, poses, scene=scene,
                                  params=EvaluationParams(trials=5), seed=0, jobs=2)

See docs/physics.md for the model, the protocol and every parameter.
"""

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
