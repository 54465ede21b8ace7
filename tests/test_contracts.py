"""Seed-001 contracts: construction checks, immutability, JSON round-trip, published schemas."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from pydantic import ValidationError

import usdgrip
from usdgrip.contracts import (
    JSON_SCHEMAS,
    AssetRef,
    GeometryRef,
    GraspCandidate,
    GraspObject,
    GraspPlanningMetadata,
    GraspPlanningRequest,
    GraspPlanningResult,
    GripperRef,
    format_json_schema,
)

REPO = Path(__file__).resolve().parent.parent
GRIPPER = GripperRef(asset_path="examples/gripper.usda", prim_path="/Gripper/tcp")
OTHER = GripperRef(asset_path="examples/gripper.usda", prim_path="/Gripper/other")
HALF = math.sqrt(0.5)


def make_candidate(cid: str, confidence: float, gripper: GripperRef = GRIPPER, **kw):
    fields = dict(
        candidate_id=cid,
        gripper=gripper,
        confidence=confidence,
        generation_method="antipodal",
        position=(0.01, -0.02, 0.03),
        orientation={"w": HALF, "xyz": (0.0, HALF, 0.0)},
        width=0.04,
        exclusions=("robot(object, 1)",),
    )
    fields.update(kw)
    return GraspCandidate(**fields)


def make_metadata(**kw):
    fields = dict(upstream_revision="usdgrip 0.1.0", seed=3, runtime_seconds=0.5, pose_frame="/Mug")
    fields.update(kw)
    return GraspPlanningMetadata(**fields)


def make_result(*candidates):
    return GraspPlanningResult(
        grasps={c.candidate_id: c for c in candidates}, metadata=make_metadata()
    )


def test_public_names_resolve_to_contracts():
    assert usdgrip.GraspPlanningResult is GraspPlanningResult
    assert usdgrip.GripperRef is GripperRef
    assert usdgrip.AssetRef is AssetRef


def test_request_defaults_and_round_trip():
    request = GraspPlanningRequest(
        object=GraspObject(geometry=GeometryRef(asset_path="mug.usda", prim_path="/Mug")),
        grippers=[GRIPPER, OTHER],
    )
    assert request.grippers == (GRIPPER, OTHER)
    assert request.max_candidates_per_gripper == 100 and request.seed == 0
    assert request.object.mass_kg is None
    text = request.model_dump_json()
    assert GraspPlanningRequest.model_validate_json(text) == request
    assert json.loads(text)["grippers"][1]["prim_path"] == "/Gripper/other"


def test_result_round_trip_keeps_types_and_order():
    result = make_result(make_candidate("g_b", 0.9), make_candidate("g_a", 0.5))
    again = GraspPlanningResult.model_validate_json(result.model_dump_json())
    assert again == result
    assert list(again.grasps) == ["g_b", "g_a"]
    assert again.grasps["g_b"].position == (0.01, -0.02, 0.03)
    assert again.metadata.length_unit == "metre"
    assert again.metadata.grasp_frame_convention == "graspgenx"
    assert again.format == "isaac_grasp" and again.format_version == 1.0


def test_models_are_frozen():
    candidate = make_candidate("g_a", 0.5)
    with pytest.raises(ValidationError, match="frozen"):
        candidate.confidence = 0.7
    assert hash(GRIPPER) == hash(GripperRef(**GRIPPER.model_dump()))


def test_numpy_floats_become_plain_floats():
    np = pytest.importorskip("numpy")
    candidate = make_candidate("g_a", np.float64(0.5), position=np.array([0.1, 0.2, 0.3]).tolist())
    assert type(candidate.confidence) is float


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: GripperRef(asset_path="g.usda", prim_path="Gripper/tcp"), "not an absolute"),
        (lambda: GripperRef(asset_path="", prim_path="/G"), "at least 1 character"),
        (lambda: GeometryRef(asset_path="m.usda", prim_path="/Mug", extra=1), "Extra inputs"),
        (
            lambda: GraspObject(
                geometry=GeometryRef(asset_path="m.usda", prim_path="/M"), mass_kg=0
            ),
            "greater than 0",
        ),
        (
            lambda: GraspPlanningRequest(
                object=GraspObject(geometry=GeometryRef(asset_path="m", prim_path="/M")),
                grippers=[GRIPPER, GRIPPER],
            ),
            "listed twice",
        ),
        (
            lambda: GraspPlanningRequest(
                object=GraspObject(geometry=GeometryRef(asset_path="m", prim_path="/M")),
                grippers=[],
            ),
            "at least 1 item",
        ),
        (
            lambda: GraspPlanningRequest(
                object=GraspObject(geometry=GeometryRef(asset_path="m", prim_path="/M")),
                grippers=[GRIPPER],
                seed="7",
            ),
            "valid integer",
        ),
        (
            lambda: GraspPlanningRequest(
                object=GraspObject(geometry=GeometryRef(asset_path="m", prim_path="/M")),
                grippers=[GRIPPER],
                max_candidates_per_gripper=0,
            ),
            "greater than or equal to 1",
        ),
        (lambda: make_candidate("", 0.5), "at least 1 character"),
        (lambda: make_candidate("g" * 1025, 0.5), "at most 1024 characters"),
        (lambda: make_candidate("g_a", 0.5, cspace_position={"": 0.1}), "at least 1 character"),
        (
            lambda: make_candidate("g_a", 0.5, cspace_position={"j": float("inf")}),
            "finite number",
        ),
        (lambda: make_candidate("g_a", 0.5, bite_point={1, 2}), "not a valid JSON value"),
        (
            lambda: GraspPlanningResult(format_version="1.1", metadata=make_metadata()),
            "expected 1.0",
        ),
        (
            lambda: GraspPlanningResult(format_version="one", metadata=make_metadata()),
            "expected 1.0",
        ),
        (lambda: make_candidate("g_a", float("nan")), "finite number"),
        (lambda: make_candidate("g_a", "0.5"), "valid number"),
        (lambda: make_candidate("g_a", 0.5, position=(0, 0)), r"position\.2\n  Field required"),
        (
            lambda: make_candidate("g_a", 0.5, orientation={"w": 1.0, "xyz": (1.0, 0.0, 0.0)}),
            "norm 1.41421356; expected a unit quaternion",
        ),
        (lambda: make_candidate("g_a", 0.5, width=-0.01), "greater than 0"),
        (lambda: make_metadata(length_unit="millimetre"), "'metre'"),
        (lambda: make_metadata(grasp_frame_convention="ros"), "'graspgenx'"),
        (lambda: make_metadata(runtime_seconds=-1.0), "greater than or equal to 0"),
        (
            lambda: GraspPlanningResult(
                grasps={"g_x": make_candidate("g_a", 0.5)}, metadata=make_metadata()
            ),
            "differs from its candidate_id",
        ),
        (
            lambda: GraspPlanningResult(format_version=2.0, metadata=make_metadata()),
            "expected 1.0",
        ),
    ],
)
def test_invalid_contracts_are_rejected_with_a_message(factory, message):
    with pytest.raises(ValidationError, match=message):
        factory()


@pytest.mark.parametrize("key", ["off", "1e5", "true", "g a", "null", "~", "grasp 0: left"])
def test_any_string_is_a_candidate_id(key):
    # A file's keys are whatever strings it holds (Isaac Sim's Grasp Editor writes joint and
    # grasp names unquoted); the writer quotes what YAML would read as another type.
    assert make_result(make_candidate(key, 0.5)).grasps[key].candidate_id == key


def test_entries_in_any_order_and_unnamed_grippers_are_a_result():
    # Files are read in any order (usdgrip plan --evaluate re-ranks by success, GraspDataGen
    # writes successes first); the planner's best-first order is its own promise.
    interleaved = make_result(
        make_candidate("g_a", 0.5),
        make_candidate("g_b", 0.9, OTHER),
        make_candidate("g_c", 0.7),
        make_candidate("g_d", None, gripper=None),
    )
    assert list(interleaved.grasps) == ["g_a", "g_b", "g_c", "g_d"]
    assert interleaved.grippers == (GRIPPER, OTHER)  # entries that name none are not counted
    plain = GraspPlanningResult(grasps={"g_d": interleaved.grasps["g_d"]})
    assert plain.metadata is None and plain.grasps["g_d"].confidence is None


def test_result_helpers_group_by_gripper():
    result = make_result(
        make_candidate("g_a", 0.9), make_candidate("g_b", 0.1), make_candidate("g_c", 0.95, OTHER)
    )
    assert result.grippers == (GRIPPER, OTHER)
    assert [c.candidate_id for c in result.get_candidates(OTHER)] == ["g_c"]


@pytest.mark.parametrize("name", sorted(JSON_SCHEMAS))
def test_published_json_schema_is_current(name):
    published = REPO / "schemas" / name
    assert published.exists(), f"{published} missing: run .venv/bin/python -m usdgrip.contracts"
    assert published.read_text() == format_json_schema(JSON_SCHEMAS[name]), (
        f"{published} is stale: run .venv/bin/python -m usdgrip.contracts"
    )


def test_published_result_schema_describes_the_contract():
    schema = json.loads((REPO / "schemas" / "grasp_planning_result.schema.json").read_text())
    assert schema["properties"]["format"]["const"] == "isaac_grasp"
    candidate = schema["$defs"]["GraspCandidate"]
    assert {"candidate_id", "gripper", "confidence", "generation_method"} <= set(
        candidate["properties"]
    )
    # Keys usdgrip does not know are kept (other tools' files), as plain JSON-like data.
    assert candidate["additionalProperties"] == {"$ref": "#/$defs/JsonValue"}
    assert {"cspace_position", "pregrasp_cspace_position"} <= set(candidate["properties"])
    assert {"object_frame", "gripper_frame"} <= set(schema["properties"])
    metadata = schema["$defs"]["GraspPlanningMetadata"]["properties"]
    assert metadata["length_unit"]["const"] == "metre"
    assert set(metadata) >= {
        "upstream_revision",
        "checkpoints",
        "seed",
        "runtime_seconds",
        "pose_frame",
        "grasp_frame_convention",
        "generation_mode",
        "warnings",
    }
