"""Collision pieces for the physics model: exact convex parts, CoACD pieces and their disk cache."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from usdgrip.grasping.physics import DecompositionParams, decompose_mesh, make_physics_object
from usdgrip.grasping.physics import decompose as decompose_module
from usdgrip.grasping.physics import mesh as meshes

#: Coarse CoACD settings: a few seconds at most for the small test meshes.
FAST = DecompositionParams(
    threshold=0.1, resolution=500, preprocess_resolution=30, mcts_iterations=40, mcts_nodes=10
)


@pytest.fixture
def coacd_calls(monkeypatch):
    """Count real CoACD runs."""
    calls = []
    real = decompose_module._run_coacd

    def counting(vertices, triangles, params):
        calls.append(len(triangles))
        return real(vertices, triangles, params)

    monkeypatch.setattr(decompose_module, "_run_coacd", counting)
    return calls


def torus():
    return trimesh.creation.torus(0.04, 0.012, major_sections=24, minor_sections=10)


def test_convex_box_is_one_exact_piece_without_coacd(coacd_calls, tmp_path):
    box = trimesh.creation.box((0.05, 0.06, 0.1))
    result = decompose_mesh(box.vertices, box.faces, FAST, cache_dir=tmp_path)
    assert coacd_calls == []
    assert [p.method for p in result.parts] == ["convex"]
    assert result.closed
    (piece,) = result.pieces
    np.testing.assert_allclose(np.sort(piece, axis=0), np.sort(np.asarray(box.vertices), axis=0))
    assert list(tmp_path.iterdir()) == []  # nothing cached for exact parts


def test_split_vertices_are_welded_and_disjoint_convex_parts_kept_apart(coacd_calls, tmp_path):
    # A UV-seamed sphere (split vertices) plus a separate box: two convex parts.
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.03)
    faces = np.asarray(sphere.faces)
    split_vertices = np.asarray(sphere.vertices)[faces.ravel()]  # every triangle its own vertices
    split_faces = np.arange(len(split_vertices)).reshape(-1, 3)
    box = trimesh.creation.box((0.02, 0.02, 0.02))
    vertices = np.concatenate([split_vertices, np.asarray(box.vertices) + (0.1, 0, 0)])
    triangles = np.concatenate([split_faces, np.asarray(box.faces) + len(split_vertices)])
    result = decompose_mesh(vertices, triangles, FAST, cache_dir=tmp_path)
    assert coacd_calls == []
    assert [p.method for p in result.parts] == ["convex", "convex"]
    assert result.closed


def test_flat_part_becomes_a_thin_slab():
    quad = np.array([[0, 0, 0], [0.1, 0, 0], [0.1, 0.1, 0], [0, 0.1, 0]], dtype=float)
    result = decompose_mesh(quad, [[0, 1, 2], [0, 2, 3]], use_cache=False)
    assert [p.method for p in result.parts] == ["flat"]
    (piece,) = result.pieces
    assert np.ptp(piece[:, 2]) == pytest.approx(DecompositionParams().flat_thickness)
    assert not result.closed


def test_non_convex_mesh_is_decomposed_once_then_read_from_the_cache(coacd_calls, tmp_path):
    mesh = torus()
    first = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path)
    assert coacd_calls == [len(mesh.faces)]
    assert [p.method for p in first.parts] == ["coacd"]
    assert len(first.pieces) > 1  # a torus is not one convex piece
    assert len(list(tmp_path.glob("*.npz"))) == 1
    second = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path)
    assert coacd_calls == [len(mesh.faces)]  # no second CoACD run
    assert [p.method for p in second.parts] == ["cached"]
    assert second.coacd_calls == 0
    assert len(second.pieces) == len(first.pieces)
    for a, b in zip(first.pieces, second.pieces, strict=True):
        np.testing.assert_array_equal(a, b)
    # Other parameters are another key: decomposed again.
    other = DecompositionParams(**{**FAST.as_dict(), "threshold": 0.2})
    decompose_mesh(mesh.vertices, mesh.faces, other, cache_dir=tmp_path)
    assert len(coacd_calls) == 2
    assert len(list(tmp_path.glob("*.npz"))) == 2


def _inconsistent_npz(path):
    np.savez(path, points=np.zeros((5, 3)), counts=np.array([4]))  # counts do not add up


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda path: path.write_bytes(b"not a zip file"),
        lambda path: path.write_bytes(path.read_bytes()[:100]),  # truncated
        _inconsistent_npz,
    ],
    ids=["garbage", "truncated", "inconsistent"],
)
def test_corrupt_cache_entry_is_recomputed_and_rewritten(coacd_calls, tmp_path, corrupt):
    mesh = torus()
    decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.npz")
    corrupt(entry)
    again = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path)
    assert len(coacd_calls) == 2
    assert again.parts[0].method == "coacd"
    assert ": unusable (" in again.parts[0].cache_error
    third = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path)
    assert third.parts[0].method == "cached" and third.parts[0].cache_error is None
    assert len(coacd_calls) == 2
    assert [p.name for p in tmp_path.iterdir()] == [entry.name]  # no temp file left behind


def test_fifo_squatting_on_a_cache_entry_is_replaced_not_read(coacd_calls, tmp_path):
    import os

    mesh = torus()
    decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.npz")
    entry.unlink()
    os.mkfifo(entry)  # reading it would block forever, writing into it too
    again = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path)
    assert again.parts[0].method == "coacd"
    assert "not a regular file" in again.parts[0].cache_error
    assert entry.is_file()
    assert (
        decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=tmp_path).parts[0].method
        == "cached"
    )


def test_unwritable_cache_folder_still_decomposes(coacd_calls, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    mesh = torus()
    result = decompose_mesh(mesh.vertices, mesh.faces, FAST, cache_dir=blocker / "coacd")
    assert result.parts[0].method == "coacd"
    assert "cannot be used (a file is in the way)" in result.parts[0].cache_error
    assert len(result.pieces) > 1


def test_default_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert decompose_module.default_cache_dir() == tmp_path / "usdgrip" / "coacd"


def test_mass_properties_match_trimesh():
    cylinder = trimesh.creation.cylinder(0.04, 0.1, sections=24)
    cylinder.apply_translation((0.01, -0.02, 0.03))
    props = meshes.compute_mass_properties(
        np.asarray(cylinder.vertices), np.asarray(cylinder.faces)
    )
    assert props.volume == pytest.approx(cylinder.volume)
    np.testing.assert_allclose(props.center, cylinder.center_mass, atol=1e-12)
    np.testing.assert_allclose(props.inertia, cylinder.moment_inertia, rtol=1e-9, atol=1e-15)


def test_object_mass_from_mass_or_density_and_inside_out_meshes():
    box = trimesh.creation.box((0.1, 0.1, 0.2))
    by_density = make_physics_object(box.vertices, box.faces, density=500.0, use_cache=False)
    assert by_density.mass == pytest.approx(500.0 * 0.002)
    assert by_density.defaults_used == ("friction",)
    flipped = make_physics_object(
        box.vertices, np.asarray(box.faces)[:, ::-1], mass=2.0, friction=0.5, use_cache=False
    )
    assert flipped.mass == 2.0 and flipped.defaults_used == ()
    np.testing.assert_allclose(np.diag(flipped.inertia), 2.0 / 12 * np.array([0.05, 0.05, 0.02]))
    defaults = make_physics_object(box.vertices, box.faces, use_cache=False)
    assert defaults.defaults_used == ("density", "friction")


@pytest.mark.parametrize(
    ("vertices", "triangles", "error", "words"),
    [
        ([[0, 0, 0]] * 3, [[0, 1, 2]], ValueError, "3 point(s) enclose no volume"),
        ([[0, 0]] * 4, [[0, 1, 2]], ValueError, "vertices have shape"),
        ([[0, 0, np.nan], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 1, 2]], ValueError, "NaN"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 1, 7]], ValueError, "indices span"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0.5, 1, 2]], TypeError, "integer indices"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.zeros((0, 3), int), ValueError, "(F, 3)"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 0, 1]], ValueError, "degenerate"),
    ],
)
def test_bad_meshes_are_named(vertices, triangles, error, words):
    with pytest.raises(error, match="object mesh") as info:
        make_physics_object(vertices, triangles, use_cache=False)
    assert words in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"mass": -1.0}, ValueError, "mass is -1.0"),
        ({"density": float("nan")}, ValueError, "density is nan"),
        ({"friction": "high"}, TypeError, "friction is 'high'"),
    ],
)
def test_bad_object_values_are_named(kwargs, error, words):
    box = trimesh.creation.box((0.1, 0.1, 0.1))
    with pytest.raises(error, match=words):
        make_physics_object(box.vertices, box.faces, use_cache=False, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"threshold": 0.0}, ValueError, "threshold"),
        ({"max_convex_hull": 0}, ValueError, "max_convex_hull"),
        ({"resolution": 2.5}, TypeError, "resolution"),
        ({"preprocess_mode": "maybe"}, ValueError, "preprocess_mode"),
    ],
)
def test_bad_decomposition_params_are_named(kwargs, error, words):
    with pytest.raises(error, match=f"DecompositionParams.{words}"):
        DecompositionParams(**kwargs)


def test_convexity_test_on_large_closed_open_and_dented_meshes(monkeypatch):
    calls = []
    monkeypatch.setattr(
        decompose_module, "_run_coacd", lambda v, f, p: calls.append(len(f)) or [np.asarray(v)]
    )
    sphere = trimesh.creation.icosphere(subdivisions=5, radius=0.05)  # 20,480 triangles
    assert [
        p.method for p in decompose_mesh(sphere.vertices, sphere.faces, use_cache=False).parts
    ] == ["convex"]
    box = trimesh.creation.box((0.1, 0.1, 0.1))
    open_box = decompose_mesh(box.vertices, np.asarray(box.faces)[2:], use_cache=False)
    assert [p.method for p in open_box.parts] == ["convex"] and not open_box.closed
    assert calls == []
    dented = trimesh.creation.box((0.1, 0.1, 0.1)).subdivide().subdivide()
    vertices = np.asarray(dented.vertices).copy()
    top_centre = np.argmin(np.linalg.norm(vertices - (0, 0, 0.05), axis=1))
    vertices[top_centre, 2] -= 0.01  # a 1 cm dent in the top face
    result = decompose_mesh(vertices, dented.faces, use_cache=False)
    assert calls == [len(dented.faces)] and result.parts[0].method == "coacd"


def _scipy_parts(vertices, triangles):
    """The parts as scipy's connected components label them (the former implementation)."""
    sparse = pytest.importorskip("scipy.sparse")
    from scipy.sparse.csgraph import connected_components

    n = len(vertices)
    rows = np.concatenate([triangles[:, 0], triangles[:, 1]])
    cols = np.concatenate([triangles[:, 1], triangles[:, 2]])
    graph = sparse.coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    count, labels = connected_components(graph, directed=False)
    parts = []
    for label in range(count):
        faces = triangles[labels[triangles[:, 0]] == label]
        if len(faces):
            used, local = np.unique(faces, return_inverse=True)
            parts.append((vertices[used], local.reshape(-1, 3).astype(np.int64)))
    parts.sort(key=lambda p: -len(p[1]))
    return parts


def test_parts_are_scipys_connected_components_in_the_same_order():
    rng = np.random.default_rng(7)
    for case in range(200):
        n = int(rng.integers(3, 300))
        triangles = rng.integers(0, n, size=(int(rng.integers(1, 200)), 3))
        if case % 2:  # many small parts, some of the same size, vertices shuffled
            blobs = int(rng.integers(2, 30))
            base = rng.integers(0, blobs, size=len(triangles)) * (n // blobs)
            triangles = (base[:, None] + rng.integers(0, max(1, n // blobs), (len(base), 3))) % n
            triangles = rng.permutation(n)[triangles]
        vertices = rng.normal(size=(n, 3))
        expected = _scipy_parts(vertices, triangles)
        found = meshes.split_parts(vertices, triangles)
        assert len(found) == len(expected), case
        for (v1, f1), (v2, f2) in zip(found, expected, strict=True):
            np.testing.assert_array_equal(v1, v2)
            np.testing.assert_array_equal(f1, f2)


def _convex_by_hull(monkeypatch, vertices, triangles, tolerance):
    with monkeypatch.context() as m:
        m.setattr(meshes, "_PLANE_TEST_PAIRS", 0)  # always the hull
        return meshes.is_convex(vertices, triangles, tolerance)


def test_a_closed_convex_part_is_recognised_without_a_hull(monkeypatch):
    rng = np.random.default_rng(3)
    hull_mesh = trimesh.convex.convex_hull(rng.normal(size=(60, 3)) * 0.05)
    shapes = [
        trimesh.creation.box((0.05, 0.06, 0.1)),
        trimesh.creation.icosphere(subdivisions=2, radius=0.03),
        trimesh.creation.cylinder(0.04, 0.1, sections=32),
        hull_mesh,
    ]
    for shape in shapes:
        v, f = np.asarray(shape.vertices), np.asarray(shape.faces)
        assert _convex_by_hull(monkeypatch, v, f, 1e-7)
        with monkeypatch.context() as m:
            m.setattr(meshes, "convex_hull", lambda *a: pytest.fail("the hull was computed"))
            assert meshes.is_convex(v, f, 1e-7)
    # The mug example's two solids (body and handle) need no hull either: no SciPy.
    with monkeypatch.context() as m:
        m.setattr(meshes, "convex_hull", lambda *a: pytest.fail("the hull was computed"))
        box = trimesh.creation.box((0.02, 0.02, 0.02))
        cylinder = trimesh.creation.cylinder(0.04, 0.1, sections=32)
        vertices = np.concatenate([cylinder.vertices, np.asarray(box.vertices) + (0.05, 0, 0)])
        faces = np.concatenate([cylinder.faces, np.asarray(box.faces) + len(cylinder.vertices)])
        result = decompose_mesh(vertices, faces, use_cache=False)
        assert [p.method for p in result.parts] == ["convex", "convex"]


@pytest.mark.parametrize("dent", [1e-9, 1e-6, 1e-3, 1e-2])
def test_without_a_hull_a_dented_part_gets_the_hulls_answer(monkeypatch, dent):
    # A dent far below the tolerance is convex; between the test's slack and the
    # tolerance the hull decides (convex); above the tolerance it is not convex.
    box = trimesh.creation.box((0.1, 0.1, 0.1)).subdivide().subdivide()
    vertices = np.asarray(box.vertices).copy()
    top_centre = np.argmin(np.linalg.norm(vertices - (0, 0, 0.05), axis=1))
    vertices[top_centre, 2] -= dent
    faces = np.asarray(box.faces)
    tolerance = 1e-5 * float(np.linalg.norm(np.ptp(vertices, axis=0)))
    expected = _convex_by_hull(monkeypatch, vertices, faces, tolerance)
    assert meshes.is_convex(vertices, faces, tolerance) == expected
    assert expected == (dent < 1e-3)
    inside_out = faces[:, [0, 2, 1]]  # facing inward: undecided without the hull, the hull says
    assert meshes.is_convex(vertices, inside_out, tolerance) == expected
