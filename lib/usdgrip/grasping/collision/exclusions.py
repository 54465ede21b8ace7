"""Scene exclusions: the intended contacts a collision scene does not check."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from usdgrip.grasping.collision.fcl_shapes import ObjectId


class SceneIndex(Protocol):
    """What :meth:`SceneExclusions.validate` asks of a scene (a ``CollisionScene`` has it all).

    A protocol rather than the scene class, so this module does not import the scene that
    imports it.
    """

    def __contains__(self, object_id: object) -> bool: ...

    def is_attached(self, object_id: ObjectId) -> bool: ...

    def name_of(self, object_id: ObjectId) -> str: ...

    def describe_ids(self) -> str: ...


# --------------------------------------------------------------------- exclusions


ExclusionKind = Literal["robot", "attached", "obstacle"]


class ExclusionError(ValueError):
    """An exclusion that does not fit the scene it is used with."""


@dataclass(frozen=True)
class Exclusion:
    """One intended contact: do not check attached shape ``subject`` against ``partner``.

    ``partner`` is a robot shape index (``kind == "robot"``), another attached
    shape's id (``"attached"``, applies both ways) or an obstacle id (``"obstacle"``).
    """

    kind: ExclusionKind
    subject: ObjectId
    partner: ObjectId | int

    def __post_init__(self) -> None:
        if self.kind not in ("robot", "attached", "obstacle"):
            raise ExclusionError(
                f"exclusion kind is {self.kind!r}; expected 'robot', 'attached' or 'obstacle'"
            )
        if not isinstance(self.subject, ObjectId):
            raise TypeError(
                f"exclusion {self.kind}: subject is {self.subject!r}; expected an ObjectId "
                "returned by the scene"
            )
        if self.kind == "robot":
            if isinstance(self.partner, bool) or not isinstance(self.partner, (int, np.integer)):
                raise TypeError(
                    f"exclusion robot({self.subject}, ...): shape index is {self.partner!r}; "
                    "expected an int index into the robot's link shapes"
                )
            object.__setattr__(self, "partner", int(self.partner))
        elif not isinstance(self.partner, ObjectId):
            raise TypeError(
                f"exclusion {self.kind}({self.subject}, ...): partner is {self.partner!r}; "
                "expected an ObjectId returned by the scene"
            )

    @classmethod
    def robot(cls, part: ObjectId, shape_index: int) -> Exclusion:
        """Attached ``part`` is not checked against robot shape ``shape_index``."""
        return cls("robot", part, shape_index)

    @classmethod
    def attached(cls, a: ObjectId, b: ObjectId) -> Exclusion:
        """Attached ``a`` and attached ``b`` are not checked against each other."""
        return cls("attached", a, b)

    @classmethod
    def obstacle(cls, part: ObjectId, obstacle_id: ObjectId) -> Exclusion:
        """Attached ``part`` is not checked against obstacle ``obstacle_id``."""
        return cls("obstacle", part, obstacle_id)

    def __str__(self) -> str:
        return f"{self.kind}({self.subject}, {self.partner})"

    def to_dict(self) -> dict[str, Any]:
        """Plain record for results files: ``{"kind", "subject", "partner"}`` (ints)."""
        partner = self.partner.value if isinstance(self.partner, ObjectId) else self.partner
        return {"kind": self.kind, "subject": self.subject.value, "partner": partner}


class SceneExclusions:
    """A set of :class:`Exclusion` published next to a scene.

    The builders :meth:`robot`, :meth:`attached` and :meth:`obstacle` add one
    exclusion and return ``self`` (chainable). A self-reference is rejected when
    added; ids, subjects and shape indices are validated against the scene by
    :meth:`validate`, which every check calls.
    """

    def __init__(self, exclusions: Iterable[Exclusion] = ()) -> None:
        self._items: list[Exclusion] = []
        for e in exclusions:
            self.add(e)

    def add(self, exclusion: Exclusion) -> SceneExclusions:
        """Add one exclusion (duplicates are kept once).

        Raises:
            ExclusionError: the exclusion references its own subject.
        """
        if not isinstance(exclusion, Exclusion):
            raise TypeError(f"expected an Exclusion, got {type(exclusion).__name__}")
        if exclusion.kind != "robot" and exclusion.partner == exclusion.subject:
            raise ExclusionError(
                f"exclusion {exclusion}: references itself (subject and partner are both "
                f"{exclusion.subject}); an object never collides with itself"
            )
        if exclusion not in self._items:
            self._items.append(exclusion)
        return self

    def robot(self, part: ObjectId, shape_index: int) -> SceneExclusions:
        """Exclude attached ``part`` × robot shape ``shape_index``; returns self."""
        return self.add(Exclusion.robot(part, shape_index))

    def attached(self, a: ObjectId, b: ObjectId) -> SceneExclusions:
        """Exclude attached ``a`` × attached ``b`` (both directions); returns self."""
        return self.add(Exclusion.attached(a, b))

    def obstacle(self, part: ObjectId, obstacle_id: ObjectId) -> SceneExclusions:
        """Exclude attached ``part`` × obstacle ``obstacle_id``; returns self."""
        return self.add(Exclusion.obstacle(part, obstacle_id))

    def copy(self) -> SceneExclusions:
        """Independent copy."""
        return SceneExclusions(self._items)

    @property
    def items(self) -> tuple[Exclusion, ...]:
        """The exclusions, in insertion order."""
        return tuple(self._items)

    def __iter__(self) -> Iterator[Exclusion]:
        return iter(tuple(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"SceneExclusions([{', '.join(str(e) for e in self._items)}])"

    def validate(self, scene: SceneIndex, shape_count: int) -> None:
        """Check every exclusion against ``scene`` and a robot with ``shape_count`` shapes.

        Raises:
            ExclusionError: an id not in the scene, a self-reference, a robot shape
                index outside ``[0, shape_count)``, a subject that is not an attached
                shape, or a partner of the wrong kind. The message names the
                exclusion, the id and the problem.
        """
        for e in self._items:
            where = f"exclusion {e}"
            if e.kind != "robot" and e.partner == e.subject:
                raise ExclusionError(f"{where}: references itself ({e.subject})")
            if e.subject not in scene:
                raise ExclusionError(
                    f"{where}: subject {e.subject} is not in the scene (removed, or from another "
                    f"scene); objects in the scene: {scene.describe_ids()}"
                )
            if not scene.is_attached(e.subject):
                raise ExclusionError(
                    f"{where}: subject {e.subject} ({scene.name_of(e.subject)}) is an obstacle, "
                    "not an attached shape; the subject of an exclusion must be attached "
                    "(CollisionScene.attach or add_attached)"
                )
            if e.kind == "robot":
                if not 0 <= e.partner < shape_count:
                    raise ExclusionError(
                        f"{where}: robot shape index {e.partner} does not exist; the robot has "
                        f"{shape_count} shapes (valid indices 0..{shape_count - 1})"
                    )
                continue
            if e.partner not in scene:
                raise ExclusionError(
                    f"{where}: partner {e.partner} is not in the scene (removed, or from another "
                    f"scene); objects in the scene: {scene.describe_ids()}"
                )
            partner_attached = scene.is_attached(e.partner)
            if e.kind == "attached" and not partner_attached:
                raise ExclusionError(
                    f"{where}: partner {e.partner} ({scene.name_of(e.partner)}) is an obstacle; "
                    f"use obstacle({e.subject}, {e.partner})"
                )
            if e.kind == "obstacle" and partner_attached:
                raise ExclusionError(
                    f"{where}: partner {e.partner} ({scene.name_of(e.partner)}) is attached, not "
                    f"an obstacle; use attached({e.subject}, {e.partner})"
                )

    def excludes(self, a: tuple[str, Any], b: tuple[str, Any]) -> Exclusion | None:
        """The exclusion covering the pair of body keys ``(kind, id_or_index)``, if any."""
        for e in self._items:
            if _covers(e, a, b) or _covers(e, b, a):
                return e
        return None


def _covers(e: Exclusion, subject: tuple[str, Any], partner: tuple[str, Any]) -> bool:
    return subject == ("attached", e.subject) and partner == (e.kind, e.partner)
