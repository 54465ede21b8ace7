"""Gripper-site markers (SPEC §2): what makes a prim a site, and the tokens that spell them.

:func:`compute_site_markers` names the exact markers of one prim from its
:func:`read_prim_facts`; :data:`MARKER_TOKENS` are the layer-text tokens without which a
kind of marker cannot occur (:mod:`usdgrip.usd.text_proofs`, :mod:`usdgrip.usd.discovery`).
"""

from __future__ import annotations

from typing import NamedTuple

from pxr import Usd

from usdgrip.lambdasim import CUSTOM_DATA_PATH
from usdgrip.usd.names import (
    FORWARD_AXIS_NAMES,
    GRIP_LINE_NAMES,
    MAX_OPENING_ATTRS,
    SITE_API,
    SLOT_API,
    SOCKET_TYPE_ATTRS,
)
from usdgrip.usd.stage import prim_get_authored_names, prim_get_children_names

#: Marker kind -> tokens that must occur in some used layer for the kind to mark a prim.
MARKER_TOKENS: dict[str, tuple[bytes, ...]] = {
    "api": (SITE_API.encode(), SLOT_API.encode()),
    "props": (b"maxOpening", b"socketType"),  # the usual one first: hints stop at a hit
    "children": (FORWARD_AXIS_NAMES[0].encode(), GRIP_LINE_NAMES[0].encode()),
    "custom": (CUSTOM_DATA_PATH.split(":")[0].encode(),),
}
#: The marker properties (socketType, maxOpening under each of their names).
SITE_MARKER_PROPS = frozenset((*SOCKET_TYPE_ATTRS, *MAX_OPENING_ATTRS))
#: The marker children (the canonical curve names).
MARKER_CHILD_NAMES = (FORWARD_AXIS_NAMES[0], GRIP_LINE_NAMES[0])


def compute_site_markers(prim: Usd.Prim, facts: PrimFacts | None = None) -> tuple[str, ...]:
    """Return the discovery markers (SPEC §2) that make ``prim`` a gripper site; empty if none.

    ``facts``: the prim's :func:`read_prim_facts`, when the caller has them already.
    """
    facts = read_prim_facts(prim) if facts is None else facts
    markers: list[str] = []
    if SITE_API in prim.GetAppliedSchemas():
        markers.append(SITE_API)
    # Attributes are looked up only when authored.
    authored = SITE_MARKER_PROPS.intersection(facts.authored)
    for attr_name, marker in SOCKET_TYPE_ATTRS.items():
        if attr_name in authored:
            attr = prim.GetAttribute(attr_name)
            if attr and attr.Get() == "Gripper":
                markers.append(marker)
    for attr_name in MAX_OPENING_ATTRS:
        if attr_name in authored and prim.GetAttribute(attr_name).IsAuthored():
            markers.append(attr_name)
    for child_name in MARKER_CHILD_NAMES:
        if child_name in facts.children:
            markers.append(f"child:{child_name}")
    return tuple(markers)


class PrimFacts(NamedTuple):
    """What site discovery and reading ask of a prim, asked once (see :func:`read_prim_facts`)."""

    path: str
    """The prim path as text."""
    authored: frozenset[str]
    """Names of the prim's authored properties."""
    children: list[str]
    """Names of all its children (any specifier, active or not, an instance's through its
    prototype), as ``GetChild`` finds them."""


def read_prim_facts(prim: Usd.Prim) -> PrimFacts:
    """The prim's path, authored property names and child names, in three queries."""
    return PrimFacts(
        prim.GetPath().pathString,
        frozenset(prim_get_authored_names(prim)),
        prim_get_children_names(prim, _ALL_CHILDREN),
    )


#: Every child, as ``GetChild`` finds it: an instance's children are its prototype's
#: (``GetAllChildrenNames`` alone lists none for an instance).
_ALL_CHILDREN = Usd.TraverseInstanceProxies(Usd.PrimAllPrimsPredicate)
