"""The simulation worker process's loop (:mod:`usdgrip.grasping.physics.trial_workers`)."""

from __future__ import annotations

import os
from multiprocessing.connection import Connection
from typing import Any

from usdgrip.grasping.physics import children, trial_workers


def main(argv: list[str]) -> int:
    """Serve world and chunk messages until the task pipe closes.

    ``("world", engine, obj, gripper, scene, hands, params)`` builds the engine;
    ``("chunk", tag, tasks, poses, seed)`` (tasks ``(candidate, first trial, end trial)``,
    poses one ``(H, 4, 4)`` per task) is answered ``(tag, trial results per task or error
    text)``.
    """
    if not children.die_with_parent():  # the parent died before prctl took effect
        return 0
    tasks = Connection(int(argv[0]), writable=False)
    results = Connection(int(argv[1]), readable=False)
    from usdgrip.grasping.physics.candidate_trials import run_trials
    from usdgrip.grasping.physics.engines import get_engine

    get_engine("mujoco").load()
    try:
        results.send(trial_workers.READY)
    except OSError:  # the parent is gone or done
        os._exit(0)
    engine: Any = None
    failure = "no world sent"
    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):
            os._exit(0)
        if task[0] == "world":
            _, name, obj, gripper, scene, hands, params = task
            try:
                engine = get_engine(name).build(obj, gripper, scene, hands, params)
            except Exception as exc:  # said with the chunks that need it
                engine, failure = None, f"{type(exc).__name__}: {exc}"
            continue
        _, tag, shares, poses, seed = task
        try:
            if engine is None:
                raise RuntimeError(failure)
            answer: Any = [
                run_trials(engine, p, share, seed) for share, p in zip(shares, poses, strict=True)
            ]
        except Exception as exc:  # the parent runs the chunk itself
            answer = f"{type(exc).__name__}: {exc}"
        try:
            results.send((tag, answer))
        except OSError:
            os._exit(0)


def serve(argv: list[str]) -> int:
    """:func:`main`, ended quietly when the parent goes away mid-message (no traceback)."""
    try:
        return main(argv)
    except (BrokenPipeError, ConnectionError, EOFError):
        os._exit(0)
