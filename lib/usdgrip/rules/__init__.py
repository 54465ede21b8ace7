"""usdgrip validation rules: GR (gripper sites), GS (grasp slots), GA (asset), GSP/GP (grasp lines).

Public API::

    from usdgrip.rules import RULES, DEFAULT_PARAMS, validate, check_prim, check_stage_level

    report = validate("asset.usda", rules=["GR.003"], params={"orthogonality_tolerance_deg": 5})
    report.ok, report.counts, report.issues, report.apply_fixes(), report.to_json()

Importing this package registers every rule in :data:`RULES` (keyed by code).
"""

from __future__ import annotations

from usdgrip.rules import (  # noqa: F401  (register rules)
    articulation_rules,
    asset_rules,
    grasp_line_rules,
    site_rules,
    slot_rules,
)
from usdgrip.rules.contexts import SiteContext, SlotContext, StageContext
from usdgrip.rules.engine import (
    Report,
    check_prim,
    check_stage_level,
    compute_marker_hints,
    iter_candidates,
    resolve_params,
    select_rules,
    validate,
)
from usdgrip.rules.records import (
    BLOCKING,
    DEFAULT_PARAMS,
    PARAM_DOCS,
    RULES,
    SEVERITIES,
    Finding,
    Fix,
    Issue,
    Rule,
    get_docs_dir,
    rule,
)

__all__ = [
    "BLOCKING",
    "DEFAULT_PARAMS",
    "PARAM_DOCS",
    "RULES",
    "SEVERITIES",
    "Finding",
    "Fix",
    "Issue",
    "Report",
    "Rule",
    "SiteContext",
    "SlotContext",
    "StageContext",
    "check_prim",
    "check_stage_level",
    "compute_marker_hints",
    "get_docs_dir",
    "iter_candidates",
    "resolve_params",
    "rule",
    "select_rules",
    "validate",
]
