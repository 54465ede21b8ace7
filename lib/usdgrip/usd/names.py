"""The usdGrip schema's names and the legacy names discovery also accepts (no ``pxr``)."""

from __future__ import annotations

SITE_API = "GripperSiteAPI"
SLOT_API = "GripperSlotAPI"
SLOT_NAMESPACE = "gripperSlot"
SLOT_PROPERTIES = ("center", "forward", "spanAxis", "upRange", "slotInputAngle", "lr", "groupName")

SOCKET_TYPE_ATTRS = {
    "simready:attachment:socketType": "socketType",
    # Misspelling used by existing SimReady validators and assets.
    "simready:attactment:socketType": "socketType(misspelt)",
}
MAX_OPENING_ATTRS = ("gripper:maxOpening", "gripper_maxOpening", "custom:maxOpening")
MAX_PAYLOAD_ATTRS = ("gripper:maxPayload", "gripper_maxPayload")
#: No legacy name: SimReady and LambdaSim author no grip force.
MAX_GRIP_FORCE_ATTRS = ("gripper:maxGripForce",)
LEGACY_SITE_ATTRS = ("gripper_maxOpening", "custom:maxOpening", "gripper_maxPayload")
FORWARD_AXIS_NAMES = ("gripper_forward_axis", "forward_axis")
GRIP_LINE_NAMES = ("gripper_grip_line", "grip_line")
USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
#: Runtime site schemas SimReady's gripper capability checks (GR.013, GR.014): Isaac Sim's
#: robot schema and MuJoCo's mjcPhysics schema (neither registered with usd-core).
ISAAC_SITE_API = "IsaacSiteAPI"
ISAAC_DESCRIPTION_ATTR = "isaac:Description"
MJC_SITE_API = "MjcSiteAPI"
MJC_GROUP_ATTR = "mjc:group"
