"""Every usda example in docs/rules is executed with the verdict the doc claims."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from usdgrip.rules import RULES, validate

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"
BLOCK = re.compile(r"```usda\n(.*?)```", re.S)
VERDICT = re.compile(r"^# (Invalid|Valid)\b", re.M)


def _examples():
    for code in sorted(RULES):
        blocks = BLOCK.findall((DOCS / f"{code}.md").read_text())
        for index, block in enumerate(blocks):
            yield pytest.param(code, block, id=f"{code}-{index}")


@pytest.mark.parametrize(("code", "block"), list(_examples()))
def test_doc_example_verdict(code, block, write_usda):
    verdict = VERDICT.search(block)
    assert verdict, f"{code}: example without '# Invalid' / '# Valid' line"
    report = validate(write_usda(block))
    found = {i.code for i in report.issues}
    if verdict.group(1) == "Invalid":
        assert code in found, f"{code}: invalid example not flagged ({found})"
    else:
        assert code not in found
        assert report.ok, [i.describe() for i in report.issues]


@pytest.mark.parametrize("code", sorted(RULES))
def test_doc_format(code):
    rule = RULES[code]
    text = (DOCS / f"{code}.md").read_text()
    assert text == rule.doc
    assert text.startswith(f"# {rule.name}\n")
    assert f"| {code} | {rule.validator} | {rule.compatibility} |" in text
    assert f"| {rule.severity} |" in text
    for heading in (
        "## Summary",
        "## Description",
        "## Why is it required?",
        "## Examples",
        "## How to comply",
        "## For More Information",
    ):
        assert heading in text, f"{code}: missing {heading}"
    verdicts = VERDICT.findall("\n".join(BLOCK.findall(text)))
    assert "Invalid" in verdicts and "Valid" in verdicts


def test_gr003_doc_keeps_the_seed_contract():
    text = (DOCS / "GR.003.md").read_text()
    assert (
        "It is not validated: GR.003 only requires a BasisCurves child with at least 2 points."
        in (text)
    )


def test_index_lists_every_rule():
    index = (DOCS / "README.md").read_text()
    for code, rule in RULES.items():
        assert f"[{code}]({code}.md) | {rule.name} | {rule.severity} |" in index
