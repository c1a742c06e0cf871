"""Experiment specifications: a TOML file in experiments/ describing a calibration sweep."""

from __future__ import annotations

import hashlib
import itertools
import random
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from hivemind_lab.agents.roster import Roster, roster_from_table
from hivemind_lab.calibrations import CALIBRATIONS, allowed, bounds
from hivemind_lab.canonical import canonical_json
from hivemind_lab.deliberation.embedders import DEFAULT_EMBEDDER, EmbedderName
from hivemind_lab.errors import InputError, did_you_mean
from hivemind_lab.inputs import Calibrations, Limits
from hivemind_lab.models import FrozenRecord as Frozen

Strategy = Literal["deliberation", "vote", "single_agent"]
Objective = Literal["rounds_no_veto", "fewest_conclusions", "highest_feasibility"]


class FixedInputs(Frozen):
    """What every run of a sweep takes as `deliberate` takes it: the sliders, and the profile,
    options, constraints and exclusivity its flags give (for every problem of the sweep)."""

    sufficiency: int = Field(ge=1)
    feasibility: int = Field(ge=1, le=100)
    density: int = Field(gt=0)
    critique_mode: Literal["pairwise", "batched"] = "pairwise"
    score_mode: Literal["per_solution", "batched"] = "per_solution"
    profile: str | None = Field(default=None, min_length=1)
    """enterprise, individual or comma-separated constraint names (as ``--profile``); None:
    each problem's own."""
    options: tuple[str, ...] = ()
    """The client's options (as ``--option``): they replace those read from each problem."""
    constraints: tuple[str, ...] = ()
    """Binding constraints (as ``--constraint``), added to each problem's own."""
    exclusive: bool | None = None
    """true: the client takes one option; false: they may be combined (as ``--exclusive`` or
    ``--combinable``); None: as each problem states or the question reads."""

    @field_validator("options")
    @classmethod
    def _options(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from hivemind_lab.problems.decision import checked_options

        try:
            return checked_options(value, given="row")
        except InputError as exc:
            raise ValueError(exc.worded(exc.field)) from None

    @field_validator("constraints")
    @classmethod
    def _constraints(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not c.strip() for c in value):
            raise ValueError("a constraint is blank")
        return tuple(c.strip() for c in value)

    def identity(self) -> dict[str, Any]:
        """The inputs as a run id hashes them: a field added since ids were first made counts
        only when set, so the ids of sweeps that do not use it stay as they were."""
        values = self.model_dump(mode="json")
        for name in _ADDED_INPUTS:
            if getattr(self, name) == FixedInputs.model_fields[name].default:
                del values[name]
        return values


_ADDED_INPUTS = ("profile", "options", "constraints", "exclusive", "score_mode")


class Space(Frozen):
    """The calibration space: a grid of values, or [low, high] ranges for random or Optuna search."""

    kind: Literal["grid", "random", "optuna"] = "grid"
    stubbornness: tuple[float, ...] = (0.3,)
    similarity_threshold: tuple[float, ...] = (0.65,)
    severity: tuple[float, ...] = (0.5,)
    samples: int = Field(default=10, ge=1, le=10_000)
    """Points drawn (random) or trials run (optuna)."""
    objective: Objective = "rounds_no_veto"
    """What Optuna minimises: rounds to halt plus a penalty per veto and for non-convergence."""
    seed: int = 0

    @model_validator(mode="after")
    def _values(self) -> Space:
        for name in CALIBRATIONS:
            values = getattr(self, name)
            low, high = bounds(name)
            if not values or any(not low <= v <= high for v in values):
                raise ValueError(f"{name} values must lie in {allowed(name)}, got {list(values)}")
            if self.kind != "grid" and (len(values) != 2 or values[0] > values[1]):
                raise ValueError(
                    f"{name} must be [low, high] for a {self.kind} search, got {list(values)}"
                )
        return self


class ExperimentSpec(Frozen):
    """A sweep: problems × calibration points × seeds (× baselines)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    problems: tuple[str, ...] = Field(min_length=1)
    """Problem files, .toml, .txt or .md, read as `deliberate` reads them (relative to the
    spec's folder's parent, i.e. the project root)."""
    knowledge_base: str = "data/knowledge"
    practicality_kb: str = "data/practicality"
    backend: Literal["offline", "openai", "local", "test"] = "offline"
    model: str | None = None
    model_file: str | None = None
    """local backend: a GGUF file (relative to the project root); None: the bundled
    SmolLM2-135M, which checks the plumbing but gives no real strategy."""
    inputs: FixedInputs
    limits: Limits = Limits()
    space: Space = Space()
    seeds: tuple[int, ...] = (0,)
    baselines: tuple[Literal["vote", "single_agent"], ...] = ()
    embedder: EmbedderName = DEFAULT_EMBEDDER
    """The monitor's embedder (a similarity threshold means something only for one embedder)."""
    latency_s: float = Field(default=0.0, ge=0.0, le=60.0)
    """Artificial seconds added to every model call (benchmarks of parallel sweeps)."""
    rosters: dict[str, Roster] = {}
    """Named rosters (``[rosters.<name>]``, or one ``[roster]``), a dimension of the sweep:
    every point runs under each, its baselines too (empty: every agent on ``backend``)."""

    @field_validator("rosters")
    @classmethod
    def _roster_names(cls, value: dict[str, Roster]) -> dict[str, Roster]:
        bad = [n for n in value if not re.match(r"^[a-z0-9][a-z0-9._-]{0,63}$", n)]
        if bad:
            raise ValueError(f"roster name {bad[0]!r} must be lower-case letters, digits, . _ -")
        return value

    @model_validator(mode="after")
    def _rosters_on_a_grid(self) -> ExperimentSpec:
        if self.rosters and self.space.kind == "optuna":
            raise ValueError("rosters are a dimension of grid and random sweeps, not of optuna")
        return self

    @model_validator(mode="before")
    @classmethod
    def _critique_by_backend(cls, data: object) -> object:
        """A spec that names no critique or score mode takes the backend's (batched on a model
        backend, pairwise and per solution offline: `hivemind_lab.llm.endpoint`)."""
        if not isinstance(data, dict):
            return data
        inputs = data.get("inputs")
        if isinstance(inputs, dict):
            from hivemind_lab.llm.endpoint import default_critique_mode, default_score_mode

            backend = str(data.get("backend", "offline"))
            defaults = {
                "critique_mode": default_critique_mode(backend),
                "score_mode": default_score_mode(backend),
            }
            data = {**data, "inputs": defaults | inputs}
        return data

    @property
    def digest(self) -> str:
        """Hash of the specification (recorded in every run's manifest)."""
        return hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()

    def calibration_points(self) -> list[Calibrations]:
        """Grid or random points (Optuna proposes its own as it goes)."""
        s = self.space
        combos: Iterable[tuple[float, ...]]
        if s.kind == "grid":
            combos = itertools.product(*(getattr(s, name) for name in CALIBRATIONS))
        elif s.kind == "random":
            rng = random.Random(s.seed)
            combos = (
                tuple(round(rng.uniform(*getattr(s, name)), 4) for name in CALIBRATIONS)
                for _ in range(s.samples)
            )
        else:
            return []
        return [Calibrations(**dict(zip(CALIBRATIONS, combo, strict=True))) for combo in combos]


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate an experiment file; errors name the file and the field."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise InputError(
            "spec", f"{str(path)!r} does not exist", allowed="an experiments/*.toml file"
        ) from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError("spec", f"{str(path)!r} is not valid TOML ({exc})") from None
    raw.setdefault("name", path.stem)
    raw = _rosters_read(raw, path)
    try:
        return ExperimentSpec.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"]) or "spec"
        if err["type"] == "extra_forbidden":
            *section, key = (str(p) for p in err["loc"])
            known = _keys_at(section)
            where = f"a key of [{'.'.join(section)}]" if section else "a top-level key"
            hint = did_you_mean(key, known)
            raise InputError(
                f"{path}: {loc}",
                f"not {where}" + (f"; {hint.strip()}" if hint else ""),
                allowed=", ".join(known),
            ) from None
        said = err["msg"].rstrip(".")
        said = said[:1].lower() + said[1:]  # as the command line's errors read
        got = err.get("input")
        if isinstance(got, str | int | float | bool):
            said += f", got {got!r}"
        if err["type"] == "literal_error":  # a mistyped name: the nearest allowed one
            hint = did_you_mean(str(got), re.findall(r"'([^']*)'", err["ctx"]["expected"]))
            said += f"; {hint.strip()}" if hint else ""
        raise InputError(f"{path}: {loc}", said) from None


def _rosters_read(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """A spec's ``[roster]`` (one, named ``roster``) or ``[rosters.<name>]`` tables through the
    one roster parser, whose errors name the file and the entry as written."""
    if "roster" in raw and "rosters" in raw:
        raise InputError(
            f"{path}: [roster]",
            "given beside [rosters.*]",
            allowed="one [roster] for every run, or named [rosters.<name>] to compare",
        )
    if "roster" in raw:
        table = raw.pop("roster")
        return {**raw, "rosters": {"roster": roster_from_table(table, where=f"{path}: [roster]")}}
    tables = raw.get("rosters")
    if tables is None:
        return raw
    if not isinstance(tables, dict):
        raise InputError(f"{path}: rosters", "is not a table", allowed="[rosters.<name>] tables")
    return {
        **raw,
        "rosters": {
            name: roster_from_table(table, where=f"{path}: [rosters.{name}]")
            for name, table in tables.items()
        },
    }


def _keys_at(section: list[str]) -> list[str]:
    """The keys a spec allows in a section (``[]`` the top level, ``["space"]`` [space])."""
    model: type[BaseModel] = ExperimentSpec
    for name in section:
        inner = model.model_fields[name].annotation
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return []
        model = inner
    return list(model.model_fields)
