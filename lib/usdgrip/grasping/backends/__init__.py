"""Proposal backends of the planner, one module each, listed in :mod:`.registry`.

A backend is one module with a ``propose_<name>(obj, gripper, *, count, rng, settings)``
function returning a :class:`~usdgrip.grasping.proposals.ProposalBatch` in frame M, and
one :class:`~usdgrip.grasping.proposals.Backend` record ``BACKEND`` naming it, saying when
it applies and what its proposals come from; :data:`.registry.BACKENDS` lists the records.
"""
