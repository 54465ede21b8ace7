"""Isaac-Grasp files written exactly as other tools' public writers write them (for the tests).

Each function re-implements one public writer from its code, so the tests read the bytes
those tools produce (not usdgrip's idea of them):

- :func:`write_grasp_editor_file`: Isaac Sim's Grasp Editor, ``DataWriter`` in
  isaac-sim/IsaacSim ``source/extensions/isaacsim.robot_setup.grasp_editor/isaacsim/
  robot_setup/grasp_editor/data_writer.py`` (``_write_first_grasp_to_file`` + ``_write_grasp``,
  Isaac Sim 6.0.1): no yaml.dump; the header and every grasp written by hand with
  f-strings, 3-space indents, the grasp name in double quotes, ``position``/``orientation``
  in flow style, joint names unquoted, a blank line after each grasp; ``format_version``
  the float 1.0; ``orientation`` ``{w: q[0], xyz: q[1:]}`` of ``articulation_rel_quat``.
- :func:`write_graspgen_file`: GraspGen's ``save_to_isaac_grasp_format`` (NVlabs/GraspGen
  ``grasp_gen/dataset/eval_utils.py``): ``yaml.dump(data, default_flow_style=False,
  sort_keys=False)`` of ``format``, ``format_version`` 1.0 and ``grasps`` ``grasp_{i}`` with
  ``confidence``, ``position`` (``g[:3, 3].tolist()``) and ``orientation`` (``w``,
  ``xyz`` of ``trimesh.transformations.quaternion_from_matrix``); no file for 0 grasps.
- :func:`write_graspdatagen_file`: GraspDataGen's ``grasp_guess.create_isaac_grasp_data`` +
  ``graspgen_utils.save_yaml`` (NVlabs/GraspDataGen ``scripts/graspgen/grasp_guess.py``,
  ``graspgen_utils.py``): ``yaml.dump(..., default_flow_style=False, sort_keys=False)`` with
  ``format_version`` the *string* ``"1.0"``, ``created_with``, ``created_at``, ``object_file``,
  ``object_scale``, ``gripper_file``, ``gripper_frame_link``, ``open_limit``,
  ``finger_colliders``, ``base_length``, ``approach_axis``, ``bite_point``,
  ``bite_body_idx``, then per grasp ``confidence``, ``position``, ``orientation``,
  ``cspace_position``, ``bite_point``, ``pregrasp_cspace_position``, ``pregrasp_bite_point``.

The layouts are also described in /work/notes/isaac-grasp-files.md (research notes).
"""

from __future__ import annotations

import datetime
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import trimesh.transformations as tra
import yaml


def write_grasp_editor_file(
    path: Path,
    object_frame: str,
    gripper_frame: str,
    grasps: Mapping[str, Mapping],
) -> Path:
    """Isaac Sim Grasp Editor's ``DataWriter``: first grasp with the header, the rest appended.

    ``grasps``: name -> ``{"confidence", "position" (3,), "orientation": {"w", "xyz"},
    "cspace_position": {joint: value}, "pregrasp_cspace_position": {joint: value}}``.
    """

    def write_array(f, pre_string, array, end_string):
        f.write(f"{pre_string}[")
        for v in array[:-1]:
            f.write(f"{v}, ")
        f.write(f"{array[-1]}]{end_string}")

    def s(num_spaces):
        return "   " * num_spaces

    def write_grasp(k, v, f):
        f.write(f'{s(1)}"{k}":\n')
        f.write(f"{s(2)}confidence: {v['confidence']}\n")
        write_array(f, f"{s(2)}position: ", v["position"], "\n")
        write_array(
            f,
            f"{s(2)}orientation: {{w: {v['orientation']['w']}, xyz: ",
            v["orientation"]["xyz"],
            "}\n",
        )
        f.write(f"{s(2)}cspace_position:\n")
        for key, val in v["cspace_position"].items():
            f.write(f"{s(3)}{key}: {val}\n")
        f.write(f"{s(2)}pregrasp_cspace_position:\n")
        for key, val in v["pregrasp_cspace_position"].items():
            f.write(f"{s(3)}{key}: {val}\n")
        f.write("\n")

    data = OrderedDict(
        format="isaac_grasp",
        format_version=1.0,
        object_frame=object_frame,
        gripper_frame=gripper_frame,
    )
    items = list(grasps.items())
    with open(path, "w") as f:  # _write_first_grasp_to_file
        f.write(f"format: {data['format']}\n")
        f.write(f"format_version: {data['format_version']}\n\n")
        f.write(f"object_frame: {data['object_frame']}\n")
        f.write(f"gripper_frame: {data['gripper_frame']}\n\n")
        f.write("grasps:\n")
        write_grasp(*items[0], f)
    for name, grasp in items[1:]:  # every later grasp: open(file_path, "a") + _write_grasp
        with open(path, "a") as f:
            write_grasp(name, grasp, f)
    return path


def editor_grasp(pose: np.ndarray, confidence: float, closed: Mapping, opened: Mapping) -> dict:
    """One grasp as the editor holds it: numpy position and w-first quaternion of ``pose``."""
    q = tra.quaternion_from_matrix(pose)
    return {
        "confidence": confidence,
        "position": np.asarray(pose[:3, 3], dtype=np.float64),
        "orientation": {"w": q[0], "xyz": list(q[1:])},
        "cspace_position": OrderedDict(closed),
        "pregrasp_cspace_position": OrderedDict(opened),
    }


def write_graspgen_file(path: Path, grasps: np.ndarray, confidences: np.ndarray) -> Path | None:
    """GraspGen's ``save_to_isaac_grasp_format(grasps, confidences, output_path)``."""
    data = {"format": "isaac_grasp", "format_version": 1.0, "grasps": {}}
    confidences = confidences.tolist()
    assert len(grasps) == len(confidences)
    for i, (g, c) in enumerate(zip(grasps, confidences, strict=True)):
        xyz = g[:3, 3].tolist()
        q = tra.quaternion_from_matrix(g[:3, :3])
        qw = float(q[0])
        qxyz = q[1:].tolist()
        data["grasps"][f"grasp_{i}"] = {
            "confidence": c,
            "position": xyz,
            "orientation": {"w": qw, "xyz": qxyz},
        }
    if len(grasps) > 0 and path is not None:
        with open(path, "w") as f:
            yaml.dump(data, f, default_flow_style=False, sort_keys=False)
        return path
    return None


def write_graspdatagen_file(
    path: Path,
    grasps: Sequence[tuple[str, np.ndarray, float, Mapping, Mapping]],
    gripper_frame_link: str = "base_link",
) -> Path:
    """GraspDataGen's ``grasp_guess`` output: ``(name, pose, confidence, closed, open)`` each.

    The values are plain types first (its ``.tolist()`` / ``float()`` calls); the pose is
    stored as ``[px, py, pz, qx, qy, qz, qw]`` (warp) and written ``w`` + ``xyz``.
    """
    data = {
        "format": "isaac_grasp",
        "format_version": "1.0",
        "created_with": "grasp_guess",
        "created_at": datetime.datetime(2025, 8, 1, 12, 0, 0, 123456).isoformat(),
        "object_file": "objects/mug.obj",
        "object_scale": 1.0,
        "gripper_file": "bots/robotiq_2f_85.usd",
        "gripper_frame_link": gripper_frame_link,
        "open_limit": "lower",
        "finger_colliders": ["right_inner_finger", "left_inner_finger"],
        "base_length": 0.1667,
        "approach_axis": 2,
        "bite_point": [0.0246, -2.2e-05, 0.0564],
        "bite_body_idx": 3,
        "grasps": {},
    }
    for name, pose, confidence, closed, opened in grasps:
        q = tra.quaternion_from_matrix(pose)
        warp = [*pose[:3, 3].tolist(), *q[1:].tolist(), float(q[0])]
        data["grasps"][name] = {
            "confidence": float(confidence),
            "position": warp[:3],
            "orientation": {"w": warp[6], "xyz": warp[3:6]},
            "cspace_position": {k: float(v) for k, v in closed.items()},
            "bite_point": [0.0211, 0.0, 0.1302],
            "pregrasp_cspace_position": {k: float(v) for k, v in opened.items()},
            "pregrasp_bite_point": [0.0425, 0.0, 0.1302],
        }
    with open(path, "w") as f:
        yaml.dump(data, f, default_flow_style=False, sort_keys=False)
    return path


def write_example_files(folder: Path) -> list[Path]:
    """examples/grasps/: the mug's grasps as the Grasp Editor and GraspGen would write them.

    The grasps are ``usdgrip plan``'s for examples/mug.usda (seed 0, 6 candidates) with
    examples/gripper.usda, given as poses of the gripper's base link ``/Gripper`` (0.13 m
    behind its site along +Z): the frame the Grasp Editor is usually given and GraspGen's
    convention. Run ``python tests/isaac_grasp_writers.py examples/grasps`` to rewrite them.
    """
    import usdgrip
    from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
    from usdgrip.grasping.isaac_yaml import compute_candidate_poses

    examples = Path(__file__).resolve().parents[1] / "examples"
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(asset_path=str(examples / "mug.usda"), prim_path="/Mug")
        ),
        grippers=(GripperRef(asset_path=str(examples / "gripper.usda"), prim_path="/Gripper/tcp"),),
        max_candidates_per_gripper=6,
        seed=0,
    )
    result = usdgrip.plan_grasps(request, methods=["antipodal"])
    to_site = np.eye(4)
    to_site[2, 3] = 0.13
    base = compute_candidate_poses(result) @ np.linalg.inv(to_site)
    confidences = np.array([c.confidence for c in result.grasps.values()], dtype=np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    editor = write_grasp_editor_file(
        folder / "mug_grasp_editor.yaml",
        "/World/mug/Mug",
        "/World/gripper/Gripper",
        {
            f"grasp_{i}": editor_grasp(
                pose, 1.0, {"finger_joint": np.float32(0.4363323)}, {"finger_joint": np.float32(0)}
            )
            for i, pose in enumerate(base)
        },
    )
    graspgen = write_graspgen_file(
        folder / "mug_graspgen.yaml", base.astype(np.float32), confidences
    )
    return [editor, graspgen]


if __name__ == "__main__":
    import sys

    for written in write_example_files(Path(sys.argv[1])):
        print(f"wrote {written}")
