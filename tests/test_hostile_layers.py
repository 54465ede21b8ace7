"""Layer files USD must not read: deeply nested usda text (a parser segfault) and named pipes
(a read that blocks forever), refused with one line and exit 2 (issue 13, items 9 and 10).

The commands run in a child process, so a regression crashes or hangs that process (the
timeout ends it), never the test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from usdgrip.usd.dependencies import MAX_LAYER_NESTING, compute_nesting_depth

REPO = Path(__file__).resolve().parent.parent


def usdgrip(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "lib")}
    return subprocess.run(
        [sys.executable, "-m", "usdgrip", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def nested_defs(levels: int) -> str:
    return "#usda 1.0\n(\n    metersPerUnit = 1\n)\n" + 'def "a" {\n' * levels + "}\n" * levels


@pytest.mark.parametrize("command", ["info", "validate"])
def test_300000_nested_prims_are_refused_not_a_segfault(tmp_path, command):
    (tmp_path / "deep.usda").write_text(nested_defs(300_000))  # 3.6 MB
    result = usdgrip(command, "deep.usda", cwd=tmp_path)
    assert result.returncode == 2, (result.returncode, result.stderr[-500:])
    assert result.stderr == (
        f"usdgrip {command}: deep.usda: nests prims, dictionaries or values more than "
        f"{MAX_LAYER_NESTING:,} levels deep; USD's text parser would overflow its stack (a "
        "crash, not an error), so the file is not opened\n"
    )


def test_a_deep_sublayer_is_named_with_the_layer_that_names_it(tmp_path):
    (tmp_path / "deep.usda").write_text(nested_defs(MAX_LAYER_NESTING + 1))
    (tmp_path / "root.usda").write_text("#usda 1.0\n(\n    subLayers = [@./deep.usda@]\n)\n")
    result = usdgrip("info", "root.usda", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr.startswith("usdgrip info: root.usda: sublayer @./deep.usda@: ")
        and result.stderr.count("\n") == 1
    ), result.stderr
    assert f"{tmp_path / 'deep.usda'}: nests prims" in result.stderr


def test_nesting_depth_ignores_strings_asset_paths_and_comments():
    assert compute_nesting_depth(b'#usda 1.0\ndef "a" {\n def "b" {\n }\n}\n') == 2
    hidden = b"[" * 20_000
    text = (
        b'#usda 1.0\ndef "a" (\n doc = """'
        + hidden
        + b'"""\n) {\n string s = "'
        + hidden
        + b'"\n # '
        + hidden
        + b"\n asset p = @"
        + hidden
        + b"@\n}\n"
    )
    assert compute_nesting_depth(text) == 1  # the byte count bound is 80,001: then exact
    assert compute_nesting_depth(b"(" * 5 + b")" * 5) == 5
    assert compute_nesting_depth(b"{" * (MAX_LAYER_NESTING + 5)) == MAX_LAYER_NESTING + 1


@pytest.mark.parametrize(
    ("layer", "named"),
    [
        (
            "#usda 1.0\n(\n    subLayers = [@./pipe.usda@]\n)\n",
            "root.usda: sublayer @./pipe.usda@: ",
        ),
        (
            '#usda 1.0\ndef "A" (\n    prepend references = @./pipe.usda@\n)\n{\n}\n',
            "root.usda: reference or payload @./pipe.usda@: ",
        ),
        (
            '#usda 1.0\ndef "A" (\n    variantSets = "v"\n    variants = {string v = "b"}\n)\n'
            '{\n    variantSet "v" = {\n        "a" (\n            prepend payload = '
            '@./pipe.usda@\n        ) {\n        }\n        "b" {\n        }\n    }\n}\n',
            "root.usda: reference or payload @./pipe.usda@: ",
        ),
        (None, ""),  # the input itself
    ],
    ids=["sublayer", "reference", "payload-in-unselected-variant", "root"],
)
@pytest.mark.parametrize("command", ["info", "validate"])
def test_a_named_pipe_layer_is_refused_not_waited_on(tmp_path, layer, named, command):
    os.mkfifo(tmp_path / "pipe.usda")
    target = "pipe.usda"
    if layer is not None:
        (tmp_path / "root.usda").write_text(layer)
        target = "root.usda"
    result = usdgrip(command, target, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    pipe = tmp_path / "pipe.usda" if layer is not None else "pipe.usda"
    assert result.stderr == (
        f"usdgrip {command}: {named}{pipe}: is a named pipe (FIFO), not a regular file; USD "
        "would wait on it forever\n"
    )
