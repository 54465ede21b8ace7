"""``usdgrip evaluate --gripper-test``: SimReady's FET028 preconditions, then its trials.

Reads the site and its articulation once, checks FET028's preconditions (a positive max
opening, a rigid-body ancestor above the site, driven finger joints with a pad on each
side) and runs :func:`usdgrip.grasping.physics.gripper_test.run_gripper_tests`. A gripper
without finger joints (a surface / suction gripper, or fingers modelled as meshes only)
is skipped, as SimReady skips it. ``docs/physics.md`` ("Gripper test") documents it.
"""

from __future__ import annotations

import time
from typing import Any

from usdgrip.contracts import GripperRef
from usdgrip.errors import GripperError
from usdgrip.grasping.gripper_inputs import read_gripper, read_simulated_articulation
from usdgrip.grasping.stage_source import StageSource


def check_gripper(
    ref: GripperRef, *, trials: int = 1, seed: int = 0, params: Any = None
) -> dict[str, Any]:
    """The ``--gripper-test`` report (JSON-ready): per object its trials and verdict.

    Raises:
        GripperError: unreadable file, not a site, no usable max opening, or no rigid-body
            ancestor above the site where the asset has rigid bodies (FET028's precondition).
    """
    from usdgrip.grasping.physics.gripper_test import (
        GripperTestParams,
        resolve_payload,
        run_gripper_tests,
    )

    params = params or GripperTestParams()
    started = time.perf_counter()
    stages = StageSource()
    site = read_gripper(ref, stages)
    opening = site.max_opening
    if opening is None or not opening > 0 or opening != opening:
        raise GripperError(
            f"{ref}: gripper:maxOpening is {opening!r}; expected a positive value in metres "
            "(FET028 sizes its cube and sphere from it)"
        )
    articulation, absent = read_simulated_articulation(ref, stages)
    report: dict[str, Any] = {
        "gripper": str(ref),
        "test": "FET028 gripper_close_lift_cube / gripper_close_lift_sphere (usdgrip, MuJoCo)",
        "params": params.to_dict(),
        "trials": trials,
        "seed": seed,
        "skipped": None,
        "passed": False,
        "objects": {},
    }
    if articulation is None:
        from usdgrip.usd.articulation import read_gripper_articulation
        from usdgrip.usd.stage import get_prim

        record = read_gripper_articulation(
            get_prim(stages.open(ref.asset_path), ref.prim_path), geometry=False
        )
        if record.has_rigid_bodies and record.rigid_body_ancestor is None:
            raise _no_ancestor(ref, record)
        report["skipped"] = (
            f"{absent}: a surface (suction) gripper or one without articulated fingers is "
            "not tested (SimReady skips it too)"
        )
        report["runtime_seconds"] = time.perf_counter() - started
        return report
    if articulation.rigid_body_ancestor is None:
        raise _no_ancestor(ref, articulation)
    payload, heuristic = resolve_payload(site.max_payload, opening, params)
    report["payload_kg"] = payload
    report["payload_source"] = (
        "heuristic (50 kg per m of max opening, clamped 0.1-50 kg): author gripper:maxPayload"
        if heuristic
        else site.max_payload_source
    )
    results = run_gripper_tests(articulation, opening, payload, trials, params, seed)
    for shape, trial_results in results.items():
        held = sum(r.passed for r in trial_results)
        report["objects"][shape] = {
            "passed": held == len(trial_results),
            "held": held,
            "results": [r.to_dict() for r in trial_results],
        }
    report["passed"] = all(entry["passed"] for entry in report["objects"].values())
    report["runtime_seconds"] = time.perf_counter() - started
    return report


def _no_ancestor(ref: GripperRef, record: Any) -> GripperError:
    return GripperError(
        f"{ref}: the site has no rigid-body ancestor (PhysicsRigidBodyAPI) though the asset "
        f"has {len(record.rigid_bodies)} rigid bodies; FET028 attaches its gantry to the "
        "gripper base above the site: move the site under the base link"
    )
