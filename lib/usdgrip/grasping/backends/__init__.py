"""Proposal backends of the planner: ``antipodal`` (mesh surface) and ``slots`` (GripperSlots).

A backend is one module with a ``propose_<name>(obj, max_opening, *, count, ...)``
function returning ids, poses ``(N, 4, 4)`` in frame M, widths and scores.
"""
