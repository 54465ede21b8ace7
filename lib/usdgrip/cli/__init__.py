"""The ``usdgrip`` command line: one entry point, one module per subcommand.

Each command module in this package defines ``NAME``, ``HELP``, ``ORDER`` (position
in ``--help``), ``add_arguments(parser)`` and ``run(args) -> int``; they are
discovered here, so adding a subcommand touches no other file. A module without
``NAME`` (:mod:`usdgrip.cli.common`, the helpers commands share) is not a command.

Exit codes: 0 ok, 1 findings (or nothing survived), 2 usage or unreadable input, 141
when standard output was closed early (``usdgrip info FILE | head -1``; quietly, as a
Unix tool killed by SIGPIPE).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import os
import pkgutil
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
#: 128 + SIGPIPE: what the shell reports for a Unix tool whose reader went away.
EXIT_CLOSED_OUTPUT = 141


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own usage errors → exit 2, one line
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"usdgrip: error: {message}\n")


@functools.cache
def _subcommand_modules() -> list:
    """The subcommand modules, found once per process.

    A process that later loses access to the install (one switched to another user)
    keeps its commands.
    """
    modules = [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
        if not info.name.startswith("_")
    ]
    commands = [m for m in modules if hasattr(m, "NAME")]
    return sorted(commands, key=lambda m: (m.ORDER, m.NAME))


@functools.cache
def _command_names() -> frozenset[str]:
    """This package's module names, listed once per process (an install later unreadable)."""
    return frozenset(info.name for info in pkgutil.iter_modules(__path__))


def _named_command(argv: Sequence[str]) -> list | None:
    """The one subcommand module ``argv`` names (``usdgrip evaluate ...``), else None.

    Importing every command module costs a few tenths of a second of start-up that one
    command does not need; ``usdgrip --help``, ``--version`` and a misspelt name still
    get the full parser.
    """
    name = str(argv[0]) if argv else ""
    if not name or name.startswith(("-", "_")):
        return None
    if name not in _command_names():
        return None
    module = importlib.import_module(f"{__name__}.{name}")
    return [module] if getattr(module, "NAME", None) == name else None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Build the argument parser: every discovered subcommand, or only the one ``argv`` names."""
    modules = (_named_command(argv) if argv is not None else None) or _subcommand_modules()
    parser = _Parser(
        prog="usdgrip",
        description=(
            "Gripper sites and grasp slots in USD: inspect, validate, sample, plan.\n"
            "Start with `usdgrip info FILE`; `usdgrip COMMAND --help` explains each command."
        ),
        epilog="Exit codes: 0 ok, 1 findings, 2 usage or unreadable input.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from usdgrip import __version__

    parser.add_argument("--version", action="version", version=f"usdgrip {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in modules:
        sub = subparsers.add_parser(
            module.NAME,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def open_input(path: str | Path, output: str | Path | None = None) -> Any:
    """Open a command's input stage (:func:`usdgrip.usd.stage.open_stage`), every failure named.

    A file name that is not UTF-8 and text that is not UTF-8 (in the file or a
    layer it reads) get a message naming the file, line and the text found there.
    ``output``, the file the command will write, may be none of the files the stage
    reads (:func:`usdgrip.usd.dependencies.list_stage_files`): ``path`` itself is refused before
    it is opened, its sublayers, references and payloads once it is.

    Raises:
        ValueError: the name or the text is not UTF-8, or ``output`` is a file the stage reads.
        StageOpenError: as ``open_stage``.
    """
    from usdgrip.fileio import check_output_path, check_utf8_name
    from usdgrip.usd.dependencies import list_stage_files
    from usdgrip.usd.stage import open_stage

    check_utf8_name(path)
    if output is not None:
        check_output_path(output, [path])
    with reading(path), _usd_warnings(path):
        stage = open_stage(path)
    if output is not None:
        check_output_path(output, list_stage_files(stage))
    return stage


def take_snapshot(path: str | Path) -> Any:
    """:class:`usdgrip.fileio.FileSnapshot` of an input the command will rewrite.

    Taken before USD reads it; None for what is not a readable regular file
    (:func:`open_input` then says why).
    """
    import stat

    from usdgrip.fileio import FileSnapshot

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # never read a pipe here: it would block
        return FileSnapshot.take(path)
    except OSError:
        return None


def print_notes(path: str | Path, notes: Sequence[str]) -> None:
    """``warning: FILE: NOTE`` on stderr, one line each (what a rewrite could not keep)."""
    from usdgrip.fileio import display_path

    for note in notes:
        print(f"warning: {display_path(path)}: {note}", file=sys.stderr)


#: USD's own diagnostic: ``Warning: in FUNC at line N of FILE -- MESSAGE (on stage ...)``.
_USD_KINDS = r"(Warning|Error|Runtime Error|Coding Error): in \S+ at line \d+ of \S+ -- "
_USD_DIAGNOSTIC = re.compile(
    rf"^{_USD_KINDS}(.*?)"
    r"(?:\s*\((?:instantiating|recomposing) stage on stage @[^@]*@ <0x[0-9a-f]+>\))?$",
    re.DOTALL,
)
#: The parser's grammar dump in a parse error says nothing to a user.
_USD_GRAMMAR = re.compile(r"parse error matching .*? at '")


@contextlib.contextmanager
def _usd_warnings(path: str | Path) -> Iterator[None]:
    """Restate what USD's C++ prints on stderr while ``path`` opens, one line per diagnostic.

    ``usdgrip: FILE: USD warning: MESSAGE``, without USD's source locations.
    """
    from usdgrip.fileio import display_path

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real standard error: nothing to catch
        yield
        return
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            text = caught.read().decode("utf-8", "backslashreplace")
            for chunk in re.split(rf"\n(?={_USD_KINDS})", text.strip()):
                match = _USD_DIAGNOSTIC.match(chunk)
                if match:
                    kind = "warning" if match[1] == "Warning" else "error"
                    chunk = f"USD {kind}: {_USD_GRAMMAR.sub('parse error at ', match[2])}"
                if chunk:
                    line = " ".join(chunk.split())
                    print(f"usdgrip: {display_path(path)}: {line}", file=sys.stderr)


@contextlib.contextmanager
def reading(path: str | Path) -> Iterator[None]:
    """A ``UnicodeDecodeError`` while reading ``path`` → ``ValueError`` naming file and line."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise ValueError(_describe_non_utf8(path, exc)) from None


def _describe_non_utf8(path: str | Path, exc: UnicodeDecodeError) -> str:
    from pxr import Sdf, Tf

    from usdgrip.fileio import display_path, find_non_utf8_line
    from usdgrip.usd.dependencies import list_layer_dependencies

    todo, seen = [str(path)], set()
    while todo:  # the root file, then the layers it names, breadth first
        file = todo.pop(0)
        if file in seen:
            continue
        seen.add(file)
        found = find_non_utf8_line(file)
        if found is not None:
            line, byte, text = found
            where = "" if file == str(path) else f"reads {display_path(file)}: "
            return (
                f"{display_path(path)}: {where}line {line}: byte 0x{byte:02x} is not UTF-8 "
                f"in `{text}`; USD text must be UTF-8: re-save the file as UTF-8"
            )
        try:
            layer = Sdf.Layer.FindOrOpen(file)
        except (Tf.ErrorException, UnicodeDecodeError):
            continue  # unreadable: nothing more to look into
        if layer is None:
            continue
        todo.extend(list_layer_dependencies(layer))
    return (
        f"{display_path(path)}: holds text that is not UTF-8 (byte 0x{exc.object[exc.start]:02x}); "
        "USD text must be UTF-8: re-save the file as UTF-8"
    )


class _StandardOutput:
    """``sys.stdout`` whose write errors say they were writing standard output."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._guard(self._stream.write, text)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def _guard(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OSError(f"cannot write standard output: {exc.strerror or exc}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_closed_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (captured in tests)
        pass


def _command_extras(args: argparse.Namespace) -> tuple[str, ...]:
    """The extras the command in ``args`` needs beyond OpenUSD (:mod:`usdgrip.extras`)."""
    from usdgrip.extras import COMMAND_EXTRAS

    action = getattr(args, "batch_action", None)
    extras = [COMMAND_EXTRAS.get(f"{args.command} {action}" if action else args.command)]
    if getattr(args, "executor", None) == "dask":
        extras.append("dask")
    return tuple(extra for extra in extras if extra)


def _end_children() -> None:
    """Stop every child process this command started (simulation workers, a CoACD run)."""
    children = sys.modules.get("usdgrip.grasping.physics.children")
    workers = sys.modules.get("usdgrip.grasping.physics.trial_workers")
    if workers is not None:
        workers.stop_workers(grace=0)
    if children is not None:
        children.end_all()


def _terminated(command: str, number: int) -> int:
    import signal

    from usdgrip import interrupts

    interrupts.ignore()  # a second SIGTERM does not interrupt the clean-up
    _end_children()
    print(f"usdgrip {command}: terminated ({signal.Signals(number).name})", file=sys.stderr)
    return 128 + number


def _fill_closed_standard_streams() -> None:
    """Point a closed stdin, stdout or stderr (``2>&-``) at the null device.

    Else the next file opened takes its descriptor (an output's temp file would get what
    USD's C++ prints to fd 2) and Python's ``sys.stderr`` is ``None`` (every warning an
    AttributeError: exit 1 with nothing said).
    """
    import os

    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115 (for the process)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; library errors become one line on stderr and exit code 2."""
    _fill_closed_standard_streams()
    from usdgrip import interrupts
    from usdgrip.errors import GripperError
    from usdgrip.extras import check_extras, describe_missing_extra

    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # reports name the command
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    stdout, sys.stdout = sys.stdout, _StandardOutput(sys.stdout)
    # From here SIGTERM/SIGHUP end the command, children stopped, exit 128 + N (before:
    # the default action ends a process that has started nothing).
    interrupts.install()
    try:
        try:
            check_extras(_command_extras(args))
            code = int(args.run(args))
            sys.stdout.flush()
        except BaseException as exc:
            # A signal's raise inside an import or a C extension comes out as another
            # exception (ImportError "initialization failed", a pyo3 PanicException).
            number = interrupts.received()
            if number is not None and not isinstance(
                exc, (KeyboardInterrupt, interrupts.Terminated)
            ):
                raise interrupts.interruption(number) from exc
            raise
        if interrupts.received() is not None:  # its raise was lost (a __del__, a bare except)
            raise interrupts.interruption(interrupts.received())
        return code
    except BrokenPipeError:
        sys.stdout = stdout
        _silence_closed_stdout()
        return EXIT_CLOSED_OUTPUT
    except (GripperError, ValueError, OSError, ImportError) as exc:
        # A missing optional module, also one behind a ValueError: the extra that brings it.
        message = describe_missing_extra(exc, _command_extras(args))
        if message is None and isinstance(exc, ImportError) and not isinstance(exc, GripperError):
            raise  # not an extra's module: a bug, shown as one
        print(f"usdgrip {args.command}: {message or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        _end_children()
        print(f"usdgrip {args.command}: interrupted", file=sys.stderr)
        return 130
    except interrupts.Terminated as exc:
        return _terminated(args.command, exc.signal)
    finally:
        sys.stdout = stdout


def run_and_exit() -> None:
    """The ``usdgrip`` command and ``python -m usdgrip``: :func:`main`, then the process ends.

    Without Python's teardown of every module and of the C++ libraries' objects (pxr's
    registries, MuJoCo's models), about 0.1 s of every command: the ``atexit`` handlers
    still run first (children reaped, temporary folders removed) and the standard streams
    are flushed. A process with other threads still running, or whose streams do not
    flush, exits the ordinary way (which waits for the threads and reports the stream).
    """
    import atexit
    import threading

    code = main()
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None or threading.active_count() > 1 or not _flush_outputs():
        sys.exit(code)
    run_exit_handlers()
    _flush_outputs()  # a handler's last words to a stream gone: the exit status stands
    os._exit(code)


def _flush_outputs() -> bool:
    """Flush ``sys.stdout`` and ``sys.stderr``; False when one cannot be flushed."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


if __name__ == "__main__":
    run_and_exit()
