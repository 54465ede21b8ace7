"""The options of planning and physics, each one frozen, keyword-only record checked once.

:class:`PlanningOptions` (``plan_grasps(options=...)``) and :class:`EvaluationOptions`
(``evaluate_grasps``, ``evaluate_targets``, ``evaluate_grasp_lines``: ``options=...``)
check every field when they are made, so a bad value is refused before any file is read,
by one message naming the option; the CLI and the usdview dialogs build them once from
what the user typed, and render a refusal with the command-line flag
(:meth:`OptionError.cli_message`).

Both records carry the support the object rests on (``table``, or ``scene`` with
``support``) and the gripper collision model: what the input reader
(:func:`usdgrip.grasping.inputs.read_grasp_inputs`) reads, so planning and physics use
the same support.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from usdgrip.grasping.backends.antipodal import DEFAULT_CLEARANCE
from usdgrip.grasping.backends.antipodal_approach import DEFAULT_PAIR_DECAY
from usdgrip.grasping.backends.antipodal_contacts import get_ray_backend
from usdgrip.grasping.backends.registry import parse_methods
from usdgrip.grasping.gripper_defaults import MAX_GRIP_FORCE
from usdgrip.grasping.inputs import GRIPPER_MODELS, check_support_choice
from usdgrip.site_limits import MAX_OPENING_M

#: Default retreat distance along -approach, metres.
DEFAULT_RETREAT_DISTANCE = 0.1
#: Largest accepted retreat distance, metres (a larger value is a unit mistake
#: and makes the collision checks meaningless or endless).
MAX_RETREAT_DISTANCE = 10.0
#: Simulation engines by name (:mod:`usdgrip.grasping.physics.engines`); MuJoCo on the CPU.
DEFAULT_ENGINE = "mujoco"
#: Most trials per candidate (the usdview dialog's limit too): more only repeat the estimate.
MAX_TRIALS = 1000


class OptionError(ValueError):
    """A refused option: the library's message, and the command line's (``--flag VALUE: ...``)."""

    def __init__(self, message: str, cli: str) -> None:
        super().__init__(message)
        self.cli = cli

    @classmethod
    def of(cls, name: str, rest: str) -> OptionError:
        """``name rest`` for the library, ``--name rest`` (the flag) for the command line."""
        return cls(f"{name} {rest}", f"{_flag(name)} {rest}")

    def cli_message(self) -> str:
        """The refusal as the CLI words it, naming the flag."""
        return self.cli


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else f"{value}"


def _check_count(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise OptionError(
            f"{name} is {value!r}; expected an integer >= {minimum}",
            f"{_flag(name)} {value}: expected an integer >= {minimum}",
        )


def _check_positive(name: str, value: Any, unit: str, cli_unit: str | None = None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} is {type(value).__name__}; expected a number")
    if not (math.isfinite(value) and value > 0):
        expected = f"a finite value > 0 {unit}".rstrip()
        cli = f"a finite value > 0 {unit if cli_unit is None else cli_unit}".rstrip()
        raise OptionError(
            f"{name} is {value!r}; expected {expected}",
            f"{_flag(name)} {_number(value)}: expected {cli}",
        )


def _check_grip_force_limit(force: float | None) -> None:
    if force is not None and force > MAX_GRIP_FORCE:
        expected = f"at most {MAX_GRIP_FORCE:g} N, the strongest plausible grip: a unit mistake?"
        raise OptionError(
            f"force is {force!r}; expected {expected}", f"--force {force:g}: expected {expected}"
        )


def _check_gripper_model(value: str) -> None:
    if value not in GRIPPER_MODELS:
        raise OptionError(
            f"gripper model {value!r}; expected one of {', '.join(GRIPPER_MODELS)}",
            f"--gripper-model {value}: expected one of {', '.join(GRIPPER_MODELS)}",
        )


def _check_support(table: bool, scene: str | None, support: str | None) -> None:
    try:
        check_support_choice(table, scene, support)
    except ValueError as exc:
        cli = "--table and --support: choose one thing the object rests on"
        raise OptionError(str(exc), cli) from None


@dataclass(frozen=True, kw_only=True)
class PlanningOptions:
    """Everything :func:`usdgrip.plan_grasps` is asked besides the request (checked once).

    Raises:
        OptionError (a ValueError): a bad method list, distance, count, factor, model or
            support choice, naming the option.
    """

    methods: tuple[str, ...] | str | None = None
    """Backends to run (``"antipodal,slots"`` or a sequence; normalised to a tuple);
    ``None``: every backend that applies."""
    table: bool = False
    """The object rests on a plane just under its lowest point along the stage's up axis:
    planned as an obstacle (a grasp whose hand cuts it is dropped) and its support."""
    support: str | None = None
    """The scene obstacle the object rests on (prim path, or a ``CollisionScene`` name)."""
    retreat_distance: float = DEFAULT_RETREAT_DISTANCE
    """Metres to move back along -approach with the object, in ``(0, MAX_RETREAT_DISTANCE]``."""
    retreat_steps: int = 5
    """Poses sampled along the retreat (>= 1)."""
    clearance: float = DEFAULT_CLEARANCE
    """Antipodal opening kept free beyond the contact width, metres, in ``[0, 2]``."""
    gripper_model: str = "auto"
    """``auto``, ``proxy`` or ``geometry`` (:func:`usdgrip.grasping.inputs.read_gripper_model`)."""
    ray_backend: str = "auto"
    """Antipodal ray casting: ``auto``, ``embree`` or ``triangle``."""
    pair_decay: float = DEFAULT_PAIR_DECAY
    """Soft-NMS factor in (0, 1] per extra approach of one contact pair; 1: off."""
    rays: str = field(init=False, compare=False)
    """The ray backend that runs (``ray_backend`` resolved)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", parse_methods(self.methods))
        _check_support(self.table, None, self.support)
        _check_gripper_model(self.gripper_model)
        distance = self.retreat_distance
        if not (math.isfinite(distance) and 0 < distance <= MAX_RETREAT_DISTANCE):
            message = (
                f"retreat distance is {distance!r} m; expected a finite value in "
                f"(0, {MAX_RETREAT_DISTANCE:g}] m"
            )
            raise OptionError(message, f"--retreat: {message}")
        _check_count("retreat_steps", self.retreat_steps, 1)
        if not (math.isfinite(self.clearance) and 0 <= self.clearance <= MAX_OPENING_M):
            raise OptionError(
                f"clearance is {self.clearance!r} m; expected a finite value in "
                f"[0, {MAX_OPENING_M:g}] m",
                f"clearance {self.clearance!r} m: expected a finite value in "
                f"[0, {MAX_OPENING_M:g}]",
            )
        # ValueError for an unknown or unavailable backend
        object.__setattr__(self, "rays", get_ray_backend(self.ray_backend))
        if not (math.isfinite(self.pair_decay) and 0 < self.pair_decay <= 1):
            raise OptionError(
                f"pair decay is {self.pair_decay!r}; expected a value in (0, 1]",
                f"pair decay {self.pair_decay!r}: expected a value in (0, 1]",
            )

    @property
    def requested(self) -> tuple[str, ...] | None:
        """The methods asked for (``None``: every one that applies)."""
        return self.methods  # type: ignore[return-value]  # normalised in __post_init__


@dataclass(frozen=True, kw_only=True)
class EvaluationOptions:
    """The options of the grasp-and-lift evaluation (checked once, keyword-only).

    Taken by :func:`usdgrip.evaluate_grasps`, :func:`usdgrip.evaluate_targets` and
    :func:`usdgrip.evaluate_grasp_lines` as ``options=``; docs/physics.md has every
    default.

    Raises:
        OptionError (a ValueError): a count below its minimum, a force, friction or
            density that is not a finite value > 0, a table with a support, a support
            without its scene file, a scene without a support, an unknown gripper model
            or engine, naming the option.
        TypeError: a number option that is not a number.
    """

    trials: int = 3
    """Trials per candidate (trial 0 nominal, the others perturbed)."""
    force: float | None = None
    """Grip force per finger, N; wins over the site's ``gripper:maxGripForce``."""
    friction: float | None = None
    """Friction when no ``UsdPhysics.MaterialAPI`` friction is bound."""
    density: float | None = None
    """kg/m³ when no mass or density is authored."""
    scene: str | None = None
    """USD file holding ``support``."""
    support: str | None = None
    """Prim the object rests on, in ``scene``."""
    table: bool = False
    """A plane just under the object's lowest point instead."""
    gripper_model: str = "auto"
    """``auto``, ``proxy``, ``geometry`` (the planner's collision model) or ``articulation``
    (the physics simulates the gripper's own joints; ``auto`` does when it has some)."""
    jobs: int = 1
    """Worker processes; results do not depend on it."""
    seed: int = 0
    """The same seed gives the same outcomes."""
    params: Any = None
    """:class:`~usdgrip.grasping.physics.EvaluationParams` (``trials`` wins)."""
    cache_dir: str | None = None
    """CoACD cache folder (default: the engine's)."""
    engine: str = DEFAULT_ENGINE
    """Simulation engine (:data:`usdgrip.grasping.physics.engines.ENGINES`): ``mujoco``
    (MuJoCo on the CPU) or ``mjwarp`` (MuJoCo Warp, every candidate × trial one world,
    the ``gpu`` extra; refused when it or its device is missing)."""
    dump_scene: str | None = None
    """Folder (``--dump-scene DIR``): each candidate's nominal trial is written there as
    MJCF, ``candidate_NNNN.xml`` (object pieces, hands at the grasp pose, support), for
    MuJoCo's viewer (``python -m mujoco.viewer --mjcf FILE``)."""

    def __post_init__(self) -> None:
        for name, minimum in (("trials", 1), ("jobs", 1), ("seed", 0)):
            _check_count(name, getattr(self, name), minimum)
        if self.trials > MAX_TRIALS:
            raise OptionError(
                f"trials is {self.trials}; expected at most {MAX_TRIALS}",
                f"--trials {self.trials}: expected at most {MAX_TRIALS} per candidate",
            )
        from usdgrip.grasping.physics.trial_workers import check_jobs

        too_many = check_jobs(self.jobs)
        if too_many is not None:
            raise OptionError(f"jobs is {self.jobs}; {too_many}", f"--jobs {self.jobs}: {too_many}")
        _check_positive("force", self.force, "N")
        _check_grip_force_limit(self.force)
        _check_positive("friction", self.friction, "")
        _check_positive("density", self.density, "kg/m³", "kg/m3")
        _check_support(self.table, self.scene, self.support)
        if self.support is not None and self.scene is None:
            raise OptionError(
                f"support {self.support!r} needs a scene file holding that prim",
                f"--support {self.support}: needs --scene FILE holding that prim",
            )
        if self.scene is not None and self.support is None:
            raise OptionError(
                f"scene {self.scene!r} without a support: the evaluation simulates only what "
                "the object rests on; name it (--support PRIM) or use --table",
                f"--scene {self.scene}: needs --support PRIM (the evaluation simulates only "
                "what the object rests on), or use --table",
            )
        _check_gripper_model(self.gripper_model)
        from usdgrip.grasping.physics.engines import get_engine

        try:  # an unknown engine, or one missing a package or a device here
            get_engine(self.engine).check()
        except ValueError as exc:
            message = str(exc)
            cli = message if message.startswith("--engine") else f"--engine {self.engine}: {exc}"
            raise OptionError(message, cli) from None

    def evaluation_params(self) -> Any:
        """The engine's :class:`EvaluationParams` with ``trials`` set."""
        from usdgrip.grasping.physics import EvaluationParams

        params = self.params if self.params is not None else EvaluationParams()
        return replace(params, trials=self.trials)


#: The old evaluation keywords (:class:`EvaluationOptions`' fields but ``engine``).
LEGACY_EVALUATION_KEYWORDS = (
    "trials", "force", "friction", "density", "scene", "support", "table", "gripper_model",
    "jobs", "seed", "params", "cache_dir",
)  # fmt: skip


def make_evaluation_options(
    options: EvaluationOptions | None, keywords: dict[str, Any], caller: str
) -> EvaluationOptions:
    """``options``, or one made from the old keywords (the one-release shim); not both.

    Raises:
        TypeError: both given, ``options`` of another type, or an unknown keyword.
        OptionError: as :class:`EvaluationOptions`.
    """
    given = {name: value for name, value in keywords.items() if value is not UNSET}
    unknown = sorted(set(given) - set(LEGACY_EVALUATION_KEYWORDS))
    if unknown:
        raise TypeError(
            f"{caller}() got an unexpected keyword argument {unknown[0]!r}; options go in "
            f"options=EvaluationOptions(...) ({', '.join(LEGACY_EVALUATION_KEYWORDS)})"
        )
    if options is None:
        return EvaluationOptions(**given)
    if not isinstance(options, EvaluationOptions):
        raise TypeError(f"options is {type(options).__name__}; expected EvaluationOptions")
    if given:
        raise TypeError(
            f"{caller}: pass options=EvaluationOptions(...) or the keywords "
            f"{', '.join(sorted(given))}, not both"
        )
    return options


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


#: Default of the old evaluation keywords: "not given" (so ``options=`` can be checked alone).
UNSET: Any = _Unset()
