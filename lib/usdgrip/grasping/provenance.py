"""Facts that travel with a candidate or a run as data: where a grasp came from, and notes.

A :class:`Provenance` names the backend that proposed a candidate, the slot or grasp
line it was sampled on and its diversity group; it goes with the candidate through
ranking and collision checks into the result model (``GraspCandidate.slot``,
``grasp_line``, ``group``) and the Isaac-Grasp file, so no later step parses an id.

A :class:`Note` is one thing a run wants its user to know (a default taken, an input
skipped): a stable ``code``, the ``subject`` it is about (a prim path, a slot name, a
gripper) and the ``text``. Notes are rendered to the words of ``metadata.warnings``
only at the edge (:meth:`Note.render`); code that reacts to a note (the grasp-line
report explaining why a line has no candidate) matches its code and subject, never its
words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple


class Provenance(NamedTuple):
    """Where one candidate came from."""

    method: str
    """Backend name (``antipodal``, ``slots``, ``lines``)."""
    slot: str | None = None
    """The GripperSlot it was sampled on (``slots``), else ``None``."""
    grasp_line: str | None = None
    """Prim path of the grasp vector line it closes along (``lines``), else ``None``."""
    group: int | None = None
    """Its diversity group within the gripper and method (antipodal: the contact pair,
    lines: the line): candidates of one group are approaches of one grasp, thinned
    by the soft-NMS; ``None`` when each candidate is its own group (slots)."""


@dataclass(frozen=True)
class Note:
    """One structured warning: a stable code, what it is about, and the words.

    ``context`` holds the labels rendered before the text, outermost first (``gripper
    examples/gripper.usda:/Gripper/tcp``, ``lines``, ``grasp line 'a' skipped``), so the
    rendered line reads ``gripper ...: lines: grasp line 'a' skipped: it does not meet
    the object (GP.001)`` while the reason stays apart in ``text``.
    """

    code: str
    """Stable machine name of the kind of note, e.g. ``line_misses_object``."""
    subject: str
    """What the note is about: a prim path, a slot name, a gripper, ``""`` for the run."""
    text: str
    """The words, without the context labels."""
    context: tuple[str, ...] = ()
    """Labels rendered before ``text``, outermost first."""

    def render(self) -> str:
        """The warning line: the context labels and the text, joined by ``": "``."""
        return ": ".join((*self.context, self.text))

    def within(self, *labels: str) -> Note:
        """The same note with ``labels`` put before its context (outermost first)."""
        return replace(self, context=(*labels, *self.context))


def render_notes(notes: Iterable[Note]) -> tuple[str, ...]:
    """The warning lines of ``notes``, in order."""
    return tuple(note.render() for note in notes)


def find_note(notes: Iterable[Note], codes: Iterable[str], subject: str) -> Note | None:
    """The first note with one of ``codes`` about ``subject``, else ``None``."""
    wanted = frozenset(codes)
    return next((n for n in notes if n.code in wanted and n.subject == subject), None)
