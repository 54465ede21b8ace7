"""Pure frame maths (numpy only): grasp frames, rotations and quaternions.

Conventions: a pose is a ``(4, 4) float64`` matrix acting on column vectors,
rotation in ``[:3, :3]`` and translation in ``[:3, 3]``; batches are
``(N, 4, 4)``. Quaternions are ``(w, x, y, z)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

Vec3 = NDArray[np.float64]  # (3,)
Mat4 = NDArray[np.float64]  # (4, 4)
Poses = NDArray[np.float64]  # (N, 4, 4)

#: |forward x grip_line| / (|forward| |grip_line|) below this counts as parallel.
PARALLEL_SINE_TOLERANCE = 1e-6
#: Lengths below this (in the curve's units) count as zero.
ZERO_LENGTH_TOLERANCE = 1e-12
#: Farthest an object, support, obstacle or slotted prim may sit from the world origin,
#: metres: beyond Earth's diameter; float64 keeps about 2 nm there, while at 1e30 m
#: neighbouring doubles are 1e14 m apart and a mesh (or a slot's two edges) collapses.
MAX_WORLD_OFFSET_M = 1e7


class GraspFrame(NamedTuple):
    """A GraspGenX grasp frame and what went wrong computing it."""

    matrix: Mat4
    """(4, 4) rigid transform: columns X (closing), Y, Z (approach), origin."""
    warnings: tuple[str, ...]


def compute_unit(vector: ArrayLike) -> Vec3 | None:
    """Return ``vector`` normalised, or ``None`` when it is zero-length or not finite."""
    v = np.asarray(vector, dtype=np.float64).reshape(3)
    norm = math.sqrt(float(v.dot(v)))  # np.linalg.norm of a (3,) vector, without its overhead
    if not math.isfinite(norm) or norm <= ZERO_LENGTH_TOLERANCE:
        return None
    return v / norm


def compute_fallback_perpendicular(axis: ArrayLike) -> Vec3:
    """Return a deterministic unit vector perpendicular to the unit ``axis``.

    Gram-Schmidt of the world axis least aligned with ``axis`` (first of X, Y,
    Z on ties), so the same input always gives the same output.
    """
    z = np.asarray(axis, dtype=np.float64).reshape(3)
    helper = np.zeros(3)
    helper[int(np.argmin(np.abs(z)))] = 1.0
    x = helper - np.dot(helper, z) * z
    return x / np.linalg.norm(x)


def _cross3(a: Vec3, b: Vec3) -> Vec3:
    """``np.cross`` of two (3,) vectors, bit-identical and ~30x faster for a single pair."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def compute_grasp_frame(origin: ArrayLike, forward: ArrayLike, grip_line: ArrayLike) -> GraspFrame:
    """Compute the GraspGenX grasp frame G from a site's axes.

    ``+Z = normalise(forward)`` (approach), ``+X = normalise(forward x grip_line)``
    (closing), ``+Y = Z x X``; right-handed. When the axes are near parallel
    (sine below :data:`PARALLEL_SINE_TOLERANCE`) or the grip line is unusable, X
    falls back to :func:`compute_fallback_perpendicular` and a warning says so.

    Args:
        origin: (3,) site origin.
        forward: (3,) forward axis direction (any length).
        grip_line: (3,) grip line direction (any length).

    Returns:
        The frame and its warnings; never NaN.

    Raises:
        ValueError: ``forward`` is zero-length or not finite (no approach axis).
    """
    z = compute_unit(forward)
    if z is None:
        raise ValueError(f"forward axis {np.asarray(forward).tolist()} is zero or not finite")
    warnings: list[str] = []
    g = compute_unit(grip_line)
    cross = _cross3(z, g) if g is not None else np.zeros(3)
    sine = math.sqrt(float(cross.dot(cross)))  # np.linalg.norm(cross)
    if g is None:
        warnings.append(
            "grip line is zero-length or not finite; closing axis X uses the fallback "
            "perpendicular to forward"
        )
        x = compute_fallback_perpendicular(z)
    elif sine < PARALLEL_SINE_TOLERANCE:
        warnings.append(
            "forward axis and grip line are parallel; closing axis X uses the fallback "
            "perpendicular to forward (world axis least aligned with it, Gram-Schmidt)"
        )
        x = compute_fallback_perpendicular(z)
    else:
        x = cross / sine
    y = _cross3(z, x)
    matrix = np.eye(4)
    matrix[:3, 0], matrix[:3, 1], matrix[:3, 2] = x, y, z
    matrix[:3, 3] = np.asarray(origin, dtype=np.float64).reshape(3)
    return GraspFrame(matrix, tuple(warnings))


def compute_quaternion_wxyz(rotations: ArrayLike) -> NDArray[np.float64]:
    """Convert rotation matrices ``(..., 3, 3)`` (or poses ``(..., 4, 4)``) to unit quaternions.

    Returns:
        ``(..., 4)`` quaternions ``(w, x, y, z)`` with ``w >= 0``.
    """
    m = np.asarray(rotations, dtype=np.float64)[..., :3, :3]
    # Shepperd's method: pick the largest of the four squared components for stability.
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    squares = np.stack(
        [
            1.0 + trace,
            1.0 + 2.0 * m[..., 0, 0] - trace,
            1.0 + 2.0 * m[..., 1, 1] - trace,
            1.0 + 2.0 * m[..., 2, 2] - trace,
        ],
        axis=-1,
    )
    pick = np.argmax(squares, axis=-1)
    q = np.empty(m.shape[:-2] + (4,))
    root = np.sqrt(np.maximum(np.take_along_axis(squares, pick[..., None], -1)[..., 0], 1e-300))
    s = 0.5 / root
    w = np.choose(
        pick,
        [
            0.5 * root,
            (m[..., 2, 1] - m[..., 1, 2]) * s,
            (m[..., 0, 2] - m[..., 2, 0]) * s,
            (m[..., 1, 0] - m[..., 0, 1]) * s,
        ],
    )
    x = np.choose(
        pick,
        [
            (m[..., 2, 1] - m[..., 1, 2]) * s,
            0.5 * root,
            (m[..., 0, 1] + m[..., 1, 0]) * s,
            (m[..., 0, 2] + m[..., 2, 0]) * s,
        ],
    )
    y = np.choose(
        pick,
        [
            (m[..., 0, 2] - m[..., 2, 0]) * s,
            (m[..., 0, 1] + m[..., 1, 0]) * s,
            0.5 * root,
            (m[..., 1, 2] + m[..., 2, 1]) * s,
        ],
    )
    z = np.choose(
        pick,
        [
            (m[..., 1, 0] - m[..., 0, 1]) * s,
            (m[..., 0, 2] + m[..., 2, 0]) * s,
            (m[..., 1, 2] + m[..., 2, 1]) * s,
            0.5 * root,
        ],
    )
    q[..., 0], q[..., 1], q[..., 2], q[..., 3] = w, x, y, z
    q *= np.where(q[..., :1] < 0, -1.0, 1.0)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def compute_rotation_from_quaternion(quaternions: ArrayLike) -> NDArray[np.float64]:
    """Convert ``(..., 4)`` quaternions ``(w, x, y, z)`` (any norm > 0) to ``(..., 3, 3)``."""
    q = np.asarray(quaternions, dtype=np.float64)
    # Scaled by the largest component first: the norm of (1e300, 0, 0, 0) is not inf.
    q = q / np.max(np.abs(q), axis=-1, keepdims=True)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - w * z)
    r[..., 0, 2] = 2 * (x * z + w * y)
    r[..., 1, 0] = 2 * (x * y + w * z)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - w * x)
    r[..., 2, 0] = 2 * (x * z - w * y)
    r[..., 2, 1] = 2 * (y * z + w * x)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def compute_pose(position: ArrayLike, quaternion_wxyz: ArrayLike) -> Mat4:
    """Build a (4, 4) pose from a position (3,) and a quaternion (w, x, y, z)."""
    pose = np.eye(4)
    pose[:3, :3] = compute_rotation_from_quaternion(quaternion_wxyz)
    pose[:3, 3] = np.asarray(position, dtype=np.float64).reshape(3)
    return pose


def compute_axis_angle_rotation(axes: ArrayLike, angles_rad: ArrayLike) -> NDArray[np.float64]:
    """Rodrigues rotation, broadcast: unit axes (..., 3), angles_rad (...) → (..., 3, 3)."""
    k = np.asarray(axes, dtype=np.float64)
    theta = np.asarray(angles_rad, dtype=np.float64)
    k, theta = np.broadcast_arrays(k, theta[..., None])
    theta = theta[..., 0]
    c, s = np.cos(theta), np.sin(theta)
    kx, ky, kz = k[..., 0], k[..., 1], k[..., 2]
    one_c = 1.0 - c
    r = np.empty(k.shape[:-1] + (3, 3))
    r[..., 0, 0] = c + kx * kx * one_c
    r[..., 0, 1] = kx * ky * one_c - kz * s
    r[..., 0, 2] = kx * kz * one_c + ky * s
    r[..., 1, 0] = ky * kx * one_c + kz * s
    r[..., 1, 1] = c + ky * ky * one_c
    r[..., 1, 2] = ky * kz * one_c - kx * s
    r[..., 2, 0] = kz * kx * one_c - ky * s
    r[..., 2, 1] = kz * ky * one_c + kx * s
    r[..., 2, 2] = c + kz * kz * one_c
    return r


def find_rigid_poses(
    poses: ArrayLike, tolerance: float = 1e-6
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which of ``(..., 4, 4)`` poses are finite, and which are rigid transforms.

    Rigid: finite, the rotation orthonormal within ``tolerance`` with det +1, the last
    row 0 0 0 1 (within 1e-9).

    Returns:
        ``(finite, rigid)``, boolean arrays over the leading axes.
    """
    p = np.asarray(poses, dtype=np.float64)
    finite = np.isfinite(p).all(axis=(-2, -1))
    p = np.where(finite[..., None, None], p, 0.0)
    r = p[..., :3, :3]
    orthonormal = np.abs(np.swapaxes(r, -1, -2) @ r - np.eye(3)).max(axis=(-2, -1)) <= tolerance
    last_row = np.abs(p[..., 3, :] - (0.0, 0.0, 0.0, 1.0)).max(axis=-1) <= 1e-9
    return finite, finite & orthonormal & (np.linalg.det(r) > 0) & last_row


def compute_rigid_part(matrix: ArrayLike) -> Mat4:
    """Return the closest rigid transform (rotation + translation) of a (4, 4) affine matrix.

    Scale and shear are removed with a polar decomposition (SVD). A mirroring matrix
    (determinant < 0, e.g. ``xformOp:scale = (-1, 1, 1)``) has no closest rotation that is
    unique (mirroring X or Y is the same matrix with a 180° turn about Z), so the mirror is
    put on its local X axis first: the result is the polar rotation of ``matrix`` with its
    first column negated, whose Y and Z axes are the matrix's own (normalised, when there
    is no shear); what remains, ``inv(result) @ matrix``, mirrors along the result's X.

    Raises:
        ValueError: the matrix is not finite, or not (4, 4).
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.shape != (4, 4):
        raise ValueError(f"matrix has shape {m.shape}; expected (4, 4)")
    if not np.isfinite(m).all():
        raise ValueError("matrix has NaN or infinite values; expected a finite transform")
    (a, b, c), (d, e, f), (g, h, i) = m[:3, :3].tolist()
    if b == c == d == f == g == h == 0.0 and a > 0 and e > 0 and i > 0:
        # A translation and positive scales along the axes: the SVD's answer is exactly I.
        rigid = np.eye(4)
        rigid[:3, 3] = m[:3, 3]
        return rigid
    u, _, vt = np.linalg.svd(m[:3, :3])
    rotation = u @ vt
    (a, b, c), (d, e, f), (g, h, i) = rotation.tolist()
    if a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) < 0:
        # A mirror (or a zero scale): U S (Vt F) is an SVD of matrix @ F, F = diag(-1, 1, 1),
        # so its polar rotation is U Vt F, the improper one with its first column negated.
        rotation[:, 0] *= -1
    rigid = np.eye(4)
    rigid[:3, :3] = rotation
    rigid[:3, 3] = m[:3, 3]
    return rigid
