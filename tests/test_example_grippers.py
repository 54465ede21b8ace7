"""examples/grippers: the converter's pieces and the committed assets' provenance."""

from __future__ import annotations

import hashlib
import math
import sys
import zipfile

import numpy as np
import pytest
from conftest import EXAMPLES
from scipy.spatial import ConvexHull

GRIPPERS = EXAMPLES / "grippers"
sys.path.insert(0, str(GRIPPERS))
import convert_grippers  # noqa: E402


def test_reduced_hull_is_inside_the_hull_and_wound_outward():
    rng = np.random.default_rng(7)
    points = rng.normal(size=(2000, 3)) * (0.03, 0.02, 0.01)
    vertices, faces, error = convert_grippers.reduce_hull(points, 40)
    assert len(vertices) <= 40 and faces.shape[1] == 3
    full = ConvexHull(points)
    # Every reduced vertex is a vertex of the full hull: the reduced hull lies inside it.
    inside = vertices @ full.equations[:, :3].T + full.equations[:, 3]
    assert inside.max() <= 1e-12
    # Outward winding: the signed volume is positive and equals scipy's hull volume.
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    volume = float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
    assert volume == pytest.approx(ConvexHull(vertices).volume)
    # The reported error bounds how far dropped vertices lie outside the reduced hull.
    small = ConvexHull(vertices)
    outside = (points[full.vertices] @ small.equations[:, :3].T + small.equations[:, 3]).max()
    assert 0 < error == pytest.approx(max(0.0, outside))


def test_joint_axis_frame_maps_the_token_axis_onto_the_joint_axis():
    for axis in [(0, 1, 0), (0, -1, 0), (1, 0, 0), (0, 0, -1), (0.6, 0.8, 0)]:
        token, rotation = convert_grippers.joint_axis_frame(axis)
        unit = np.eye(3)["XYZ".index(token)]
        assert rotation @ unit == pytest.approx(
            np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        )
        assert np.linalg.det(rotation) == pytest.approx(1.0)
    assert convert_grippers.joint_axis_frame((0, -1, 0))[0] == "Y"


def test_quaternions_round_trip():
    for angle, axis in [(0.3, (1, 0, 0)), (math.pi, (0, 0, 1)), (2.0, (1, 2, 3))]:
        rotation = convert_grippers.axis_rotation(axis, angle)
        q = convert_grippers.matrix_to_quat(rotation)
        assert convert_grippers.quat_to_matrix(q) == pytest.approx(rotation)


def test_a_wheel_with_another_sha256_is_refused(tmp_path):
    wheel = tmp_path / convert_grippers.SOURCES["franka_hand"]["wheel"]
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pybullet_data/franka_panda/panda.urdf", "<robot/>")
    with pytest.raises(SystemExit, match=r"sha256 [0-9a-f]{64}; expected 5d858abf"):
        convert_grippers.convert("franka_hand", tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "licence", "digest"),
    [
        (
            "franka_hand",
            "LICENSE.txt",
            "59899c6091b540582ed617e8eeaac4919dc985ccfc35459ee9752b699be5205b",
        ),
        (
            "robotiq_2f85",
            "LICENSE",
            "3d5edd18d1e22a17666e9bb84270171ed5ac90b192d24e0177fd171708ea2316",
        ),
    ],
)
def test_converted_grippers_carry_their_licence_and_provenance(name, licence, digest):
    folder = GRIPPERS / name
    assert hashlib.sha256((folder / licence).read_bytes()).hexdigest() == digest
    text = (folder / f"{name}.usda").read_text()
    source = convert_grippers.SOURCES[name]
    assert f"from {source['wheel']}" in text and f"sha256 {source['sha256']}" in text
    assert (folder / f"{name}.usda").stat().st_size < 150_000
    readme = (GRIPPERS / "README.md").read_text()
    assert source["sha256"] in readme and digest in readme
