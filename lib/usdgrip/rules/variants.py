"""Checking every variant selection, one at a time, as ``usdchecker`` does (issue 23 item 3).

:func:`check_variants` takes the issues of the stage as composed and the prims with
variant sets its one walk found, and for ``mode="all"``:

- for each outermost variant prim (not an instance proxy: its selection cannot be
  authored), for each combination of its variant sets' variants (the product over its
  sets that have variants, ``usdchecker``'s ``_TraverseVariants``), authors the selection
  in the **session layer**, walks that prim's subtree once and runs the rules there
  (site and slot rules, GA.001's errors under it, the graspable-prop rules when the
  subtree holds the default prim or a line), then restores the session layer exactly;
  nested variant prims are enumerated the same way under each selection;
- an issue found under every selection is reported once, without a label; one found under
  some is reported once per selection that shows it, labelled ``hand=bad`` (several sets:
  ``hand=bad, size=small``; nested: the outer selection first);
- the issues of the composed stage under those prims are replaced by these.

At most ``limit`` selections are checked per stage (:data:`MAX_VARIANT_SELECTIONS`); the
rest are left unchecked with a warning that says how many and where. ``mode="selected"``
checks the stage as composed and labels the issues under variant prims with the
current selection.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from pxr import Sdf, Usd

from usdgrip.rules.records import Issue, Rule

#: Selections (variant combinations of one prim, nested ones counted) checked per stage.
MAX_VARIANT_SELECTIONS = 64
VARIANT_MODES = ("none", "selected", "all")

Labels = tuple[str, ...]


def check_variants(
    context: Any,
    base: list[Issue],
    rules: tuple[Sequence[Rule], Sequence[Rule], Sequence[Rule]],
    run: Any,
    *,
    mode: str,
    limit: int = MAX_VARIANT_SELECTIONS,
) -> tuple[list[Issue], list[str]]:
    """The issues with variants accounted for, and warnings about what was not checked.

    Args:
        context: the run's :class:`~usdgrip.rules.contexts.StageContext` (its walk
            looked for variant prims).
        base: the issues of the stage as composed.
        rules: the selected ``(site, slot, stage)`` rules.
        run: ``(context, site, slot, stage rules) -> issues`` (the engine's check).
        mode: ``"selected"`` or ``"all"``.
        limit: selections checked at most.
    """
    prims = [p for p in context.scan.variant_prims if not p.IsInstanceProxy()]
    if not prims:
        return base, []
    if mode == "selected":
        return [_label_selected(issue, prims) for issue in base], []
    stage = context.stage
    session = stage.GetSessionLayer()
    if session is None or not session.permissionToEdit:
        return [_label_selected(issue, prims) for issue in base], [
            "variants: the session layer cannot be edited, so only the current selections "
            "were checked (the issues say which)"
        ]
    checker = _Enumeration(context, rules, run, limit)
    outermost = _outermost(prims)
    kept = [issue for issue in base if not _under_any(issue.prim, outermost)]
    found: list[tuple[Issue, Labels]] = []
    for prim in outermost:
        found.extend(checker.enumerate(prim, _under(base, prim)))
    by_key = {_key(issue): issue for issue in base}
    merged = []
    for issue, labels in found:
        if labels:
            merged.append(replace(issue, variant=", ".join(labels), fixes=()))
        else:  # every selection: the composed stage's issue (with its fixes) when it has one
            merged.append(by_key.get(_key(issue), replace(issue, fixes=())))
    return kept + merged, checker.warnings


def _key(issue: Issue) -> tuple:
    return issue.code, issue.severity, issue.prim, issue.message


def _outermost(prims: Sequence[Usd.Prim]) -> list[Usd.Prim]:
    paths = sorted({p.GetPath(): p for p in prims}.items())
    found: list[tuple[Sdf.Path, Usd.Prim]] = []
    for path, prim in paths:
        if not found or not path.HasPrefix(found[-1][0]):
            found.append((path, prim))
    return [prim for _, prim in found]


def _under(issues: list[Issue], prim: Usd.Prim) -> list[Issue]:
    """The issues at or under ``prim``."""
    return [i for i in issues if _under_any(i.prim, [prim])]


def _under_any(prim_path: str, prims: Sequence[Usd.Prim]) -> bool:
    if prim_path == "/" or not prim_path:
        return False
    path = Sdf.Path(prim_path)
    return any(path.HasPrefix(p.GetPath()) for p in prims)


def _selection_labels(prim: Usd.Prim) -> Labels:
    sets = prim.GetVariantSets()
    return tuple(f"{name}={sets.GetVariantSelection(name) or '<none>'}" for name in sets.GetNames())


def _label_selected(issue: Issue, prims: Sequence[Usd.Prim]) -> Issue:
    """``issue`` labelled with the current selections of the variant prims above it."""
    if issue.prim in ("/", ""):
        return issue
    path = Sdf.Path(issue.prim)
    labels: list[str] = []
    for prim in sorted(prims, key=lambda p: p.GetPath()):
        if path.HasPrefix(prim.GetPath()):
            labels.extend(_selection_labels(prim))
    return replace(issue, variant=", ".join(labels)) if labels else issue


class _Enumeration:
    """One stage's enumeration: the selection budget, warnings, the session layer edits."""

    def __init__(self, context: Any, rules: tuple, run: Any, limit: int) -> None:
        self.context = context
        self.rules = rules
        self.run = run
        self.left = limit
        self.limit = limit
        self.skipped: list[tuple[Sdf.Path, list[str], int, int]] = []
        self.notes: list[str] = []

    def enumerate(self, prim: Usd.Prim, composed: list[Issue]) -> list[tuple[Issue, Labels]]:
        """The issues at and under ``prim`` over its selections, with the labels that show them.

        Labels start at ``prim``'s own selection (``()``: in every selection). The current
        selection (or the nearest) is checked first; when no selection is left in the budget,
        ``composed`` (the issues under ``prim`` as composed now) stands for it, labelled.
        """
        sets = prim.GetVariantSets()
        names = [n for n in sets.GetNames() if sets.GetVariantSet(n).GetVariantNames()]
        choices = [sets.GetVariantSet(n).GetVariantNames() for n in names]
        combos = list(itertools.product(*choices))
        # The selection a user sees (or the nearest, sets without one) comes first: it
        # survives the limit.
        current = tuple(sets.GetVariantSelection(n) for n in names)
        combos.sort(key=lambda combo: sum(a != b for a, b in zip(combo, current, strict=True)))
        runs: list[tuple[Labels, list[tuple[Issue, Labels]]]] = []
        path = prim.GetPath()
        for index, combo in enumerate(combos):
            if self.left <= 0:
                self._warn_skipped(path, names, len(combos) - index, len(combos))
                if not runs:
                    labels = _selection_labels(prim)
                    return [(issue, labels) for issue in composed]
                break
            self.left -= 1
            own = tuple(f"{n}={v}" for n, v in zip(names, combo, strict=True))
            selection = dict(zip(names, combo, strict=True))
            with _selected(self.context.stage.GetSessionLayer(), path, selection):
                runs.append((own, self._check(self.context.stage.GetPrimAtPath(path))))
        if not combos:  # variant sets without variants: the prim as composed
            return self._check(prim)
        return _merge(runs, len(combos))

    def _check(self, prim: Usd.Prim) -> list[tuple[Issue, Labels]]:
        """The issues of ``prim``'s subtree under the current selection (nested prims too)."""
        from usdgrip.rules.contexts import StageContext

        outer = self.context
        context = StageContext(
            outer.stage,
            outer.params,
            scan_mode="traverse",
            kinds=outer.kinds,
            lines=outer.lines,
            colliders=outer.colliders,
            physics=outer.physics,
            variants=True,
            root=prim,
            outer_scan=outer.scan,
        )
        site, slot, stage_rules = self.rules
        stage_rules = [r for r in stage_rules if _applies_under(r, context)]
        nested = _outermost(
            [p for p in context.scan.variant_prims if p != prim and not p.IsInstanceProxy()]
        )
        top = prim.GetPath()
        issues = [
            i
            for i in self.run(context, site, slot, stage_rules)
            if i.prim not in ("/", "") and Sdf.Path(i.prim).HasPrefix(top)
        ]
        found: list[tuple[Issue, Labels]] = [
            (i, ()) for i in issues if not _under_any(i.prim, nested)
        ]
        for inner in nested:
            found.extend(self.enumerate(inner, _under(issues, inner)))
        return found

    def _warn_skipped(self, path: Sdf.Path, names: list[str], skipped: int, total: int) -> None:
        self.skipped.append((path, names, skipped, total))

    @property
    def warnings(self) -> list[str]:
        """One warning for every selection left unchecked (``[]``: all were checked)."""
        if not self.skipped:
            return list(self.notes)
        how = (
            f"at most {self.limit} selections are checked per stage "
            "(--max-variant-selections), each prim's current selection first; the report "
            "holds the selections checked"
        )
        if len(self.skipped) == 1:
            ((path, names, skipped, total),) = self.skipped
            return [
                *self.notes,
                f"variants: {skipped} of the {total} selections of <{path}> "
                f"({' x '.join(names)}) were not checked: {how}",
            ]
        count = sum(skipped for _, _, skipped, _ in self.skipped)
        shown = ", ".join(
            f"<{path}> ({skipped} of {total})" for path, _, skipped, total in self.skipped[:3]
        )
        more = len(self.skipped) - 3
        return [
            *self.notes,
            f"variants: {count} selections of {len(self.skipped)} prims were not checked: "
            f"{shown}{f' and {more} more prims' if more > 0 else ''}; {how}",
        ]


def _applies_under(rule: Rule, context: Any) -> bool:
    """Whether a stage rule runs in a per-selection subtree run.

    GA.001 (its errors under the prim) and the graspable-prop rules (lines and colliders
    of the subtree) do; GSP.001 only when the subtree holds the default prim (it speaks
    for the whole prop); GA.002 and GA.003 read layer metadata no selection changes.
    """
    if rule.code == "GA.001":
        return True
    if "lines" not in rule.reads:
        return False
    if rule.code == "GSP.001":
        default = context.stage.GetDefaultPrim()
        return bool(default) and default.GetPath().HasPrefix(context.root.GetPath())
    return True


def _merge(
    runs: list[tuple[Labels, list[tuple[Issue, Labels]]]], total: int
) -> list[tuple[Issue, Labels]]:
    """One prim's runs → issues: once when in every selection, else per selection, labelled."""
    seen: dict[tuple, list[tuple[Labels, Issue, Labels]]] = {}
    for own, found in runs:
        for issue, deeper in found:
            seen.setdefault((*_key(issue), deeper), []).append((own, issue, deeper))
    merged: list[tuple[Issue, Labels]] = []
    for occurrences in seen.values():
        if len({own for own, _, _ in occurrences}) == total == len(runs):
            _, issue, deeper = occurrences[0]
            merged.append((issue, deeper))
        else:
            merged.extend((issue, (*own, *deeper)) for own, issue, deeper in occurrences)
    return merged


@contextlib.contextmanager
def _selected(layer: Sdf.Layer, path: Sdf.Path, selections: dict[str, str]) -> Iterator[None]:
    """Author ``selections`` on ``path`` in ``layer`` (the session layer), then restore it.

    The layer's content is exactly as before afterwards: selections that were there get
    their values back, specs this created are removed (deepest first).
    """
    created = []
    ancestor = path
    while ancestor != Sdf.Path.absoluteRootPath:
        if not layer.GetPrimAtPath(ancestor):
            created.append(ancestor)
        ancestor = ancestor.GetParentPath()
    with Sdf.ChangeBlock():
        spec = Sdf.CreatePrimInLayer(layer, path)
        before = dict(spec.variantSelections)
        for name, value in selections.items():
            spec.variantSelections[name] = value
    try:
        yield
    finally:
        with Sdf.ChangeBlock():
            spec = layer.GetPrimAtPath(path)
            if spec:
                for name in selections:
                    if name in before:
                        spec.variantSelections[name] = before[name]
                    elif name in spec.variantSelections:
                        del spec.variantSelections[name]
            for created_path in created:  # deepest first
                parent = created_path.GetParentPath()
                if parent == Sdf.Path.absoluteRootPath:
                    del layer.rootPrims[created_path.name]
                else:
                    owner = layer.GetPrimAtPath(parent)
                    if owner:
                        del owner.nameChildren[created_path.name]
