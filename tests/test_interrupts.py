"""usdgrip.interrupts: a SIGTERM whose raise is swallowed still ends the command 128+N."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from usdgrip import interrupts


@pytest.fixture
def handlers():
    saved = {n: signal.getsignal(n) for n in (*interrupts.HANDLED, signal.SIGINT)}
    hook = sys.unraisablehook
    yield
    for number, handler in saved.items():
        signal.signal(number, handler)
    sys.unraisablehook = hook
    interrupts._received.clear()


def test_terminated_is_no_exception_and_a_lost_raise_is_raised_again(handlers):
    interrupts.install()
    assert not issubclass(interrupts.Terminated, Exception)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pthread_kill(signal.pthread_self(), 0)  # let the handler run here
    except BaseException:  # a library's bare except: the raise is lost
        pass
    assert interrupts.received() == signal.SIGTERM
    with pytest.raises(interrupts.Terminated) as caught:
        interrupts.check()
    assert caught.value.exit_code == 143


def test_the_cli_never_exits_0_after_a_swallowed_sigterm(handlers, monkeypatch, capsys):
    from usdgrip import cli
    from usdgrip.cli import rules

    def swallowing_run(args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs between these bytecodes
                pass
        except Exception:
            pass
        except BaseException:
            pass
        return 0

    monkeypatch.setattr(rules, "run", swallowing_run)
    assert cli.main(["rules"]) == 143
    assert "usdgrip rules: terminated (SIGTERM)" in capsys.readouterr().err


def test_nohup_keeps_sighup_ignored():
    code = (
        "import signal; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
        "from usdgrip import interrupts; interrupts.install(); "
        "print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN, "
        "signal.getsignal(signal.SIGTERM) is interrupts._handler)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "True"], done.stderr
