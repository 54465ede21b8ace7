"""Gripper defaults shared by the collision proxy, the input reader and the physics.

The planner's collision proxy (:meth:`usdgrip.grasping.collision.GripperCollisionModel.proxy`)
and the simulated hand (:class:`usdgrip.grasping.physics.PhysicsGripper`) build their fingers
from these numbers (metres), so a grasp that clears the support in planning places the
same fingers in the simulation; a site without a usable grip line or grip force gets the
same pad width and force in both. Pure: the force limit is the site limits' (GR.012's).
"""

from usdgrip import site_limits

#: Finger (pad) thickness along the closing axis X.
FINGER_THICKNESS = 0.01
#: Finger length along the approach axis Z.
FINGER_LENGTH = 0.05
#: How far the finger tips reach past the grasp centre along +Z.
TIP_OFFSET = 0.01
#: Palm depth along Z, behind the fingers.
PALM_DEPTH = 0.02
#: Pad width along Y when the site's grip line gives none usable: one default for the
#: planner, the collision proxy and the physics
#: (:func:`usdgrip.grasping.inputs.compute_pad_width`).
DEFAULT_PAD_WIDTH = 0.02
#: Grip force per finger (N) when neither the caller nor the site (``gripper:maxGripForce``)
#: gives one.
DEFAULT_GRIP_FORCE = 50.0
#: Strongest grip force per finger (N): :data:`usdgrip.site_limits.MAX_GRIP_FORCE` (GR.012's).
MAX_GRIP_FORCE = site_limits.MAX_GRIP_FORCE
