"""usdgrip.progress_reporter: the modes, the line rate, notes above the bar, the active reporter."""

from __future__ import annotations

import io

import pytest

from usdgrip import progress_reporter as progress
from usdgrip.progress_reporter import ProgressReporter, resolve_mode


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_is_a_bar_on_a_terminal_lines_elsewhere_none_when_quiet():
    assert resolve_mode("auto", Tty()) == "bar"
    assert resolve_mode("auto", io.StringIO()) == "lines"
    assert resolve_mode("auto", Tty(), quiet=True) == "none"
    assert resolve_mode("lines", Tty(), quiet=True) == "lines"  # asked for: shown
    with pytest.raises(ValueError, match="--progress fast: expected one of auto"):
        resolve_mode("fast", io.StringIO())


def test_lines_come_at_a_low_rate_and_the_last_one_closes_what_was_shown():
    clock, stream = Clock(), io.StringIO()
    lines = ProgressReporter(stream, "lines", clock=clock, interval=5)
    for step in range(1, 11):  # 10 updates over 9 s: at 0 s, 5 s, and the end
        lines(f"physics: {step}/10 candidates", step / 10)
        clock.now += 1
    shown = stream.getvalue().splitlines()
    assert [line.split(":")[1] for line in shown] == [" physics", " physics", " physics"]
    assert (
        "1/10" in shown[0] and "6/10" in shown[1] and "10/10 candidates (100%, 9.0 s)" in shown[2]
    )


def test_auto_without_a_terminal_says_nothing_for_a_short_command_but_notes():
    clock, stream = Clock(), io.StringIO()
    auto = ProgressReporter(stream, "auto", clock=clock, interval=5)
    auto("reading", 0.0)
    clock.now = 1
    auto("done", 1.0)
    assert stream.getvalue() == ""
    with auto.active():
        progress.note("decomposition of object /Torus, part 0: cache hit, 9 pieces")
    progress.note("not shown: no active reporter")
    assert (
        stream.getvalue()
        == "usdgrip: decomposition of object /Torus, part 0: cache hit, 9 pieces\n"
    )
    clock.now = 6
    auto("physics: 3/9 candidates", 1 / 3)  # a long command: a line after the interval
    assert stream.getvalue().endswith("usdgrip: physics: 3/9 candidates (33%, 6.0 s)\n")


def test_a_note_is_printed_above_the_bar_which_is_drawn_again():
    stream = Tty()
    bar = ProgressReporter(stream, "auto")
    bar("physics: 1/4 candidates", 0.25)
    bar.note("decomposition: computed in 3.0 s, 9 pieces")
    text = stream.getvalue()
    assert text.index("decomposition: computed") > text.index("1/4")
    assert text.endswith("[#####...............]  25% physics: 1/4 candidates")
    bar.close()
    assert stream.getvalue().endswith("\r")
    none = io.StringIO()
    silent = ProgressReporter(none, "none")
    silent("x", 0.5)
    silent.note("y")
    assert none.getvalue() == ""


def test_lines_say_when_a_stage_starts():
    clock, stream = Clock(), io.StringIO()
    lines = ProgressReporter(stream, "lines", clock=clock, interval=5)
    lines("reading mug.usda", 0.0)
    clock.now = 1
    lines("physics: 1/50 candidates", 0.02)  # a new stage: at once
    clock.now = 2
    lines("physics: 2/50 candidates", 0.04)  # the same stage within 5 s: not shown
    assert [line.split(" (")[0] for line in stream.getvalue().splitlines()] == [
        "usdgrip: reading mug.usda",
        "usdgrip: physics: 1/50 candidates",
    ]
