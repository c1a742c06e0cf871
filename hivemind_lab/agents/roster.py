"""A roster: which model answers each agent of a run (issue 34).

A run names one default model (``--backend`` and its flags) and may name others per role or per
agent: a ``[roster]`` table in a problem or experiment file, or repeated ``--agent-model`` flags.
Both are read here, by one parser, into a frozen `Roster`; `Roster.assign` then maps each agent
id to its `RosterEntry` (round-robin over a role's agents in id order; an agent id named on its
own wins). Agents the roster does not name keep the default, so a run without a roster is what
it always was: one model for every agent.

An entry is one endpoint: a backend, the model id (``openai``) or weights file (``local``), the
base URL, the variable that holds its key and its prices. Written as text it reads
``BACKEND[:MODEL][@BASE_URL][,key=VAR][,input=USD][,output=USD]``::

    --agent-model theory=openai:gpt-4.1-mini@https://api.openai.com/v1,key=OPENAI_API_KEY
    --agent-model theory=local:models/gemma-3-270m.gguf
    --agent-model practicality=offline
    --agent-model theory-03=test

or, in a file, as the same text or a table of the entry's fields::

    [roster]
    theory = ["openai:gpt-4.1-mini", {backend = "openai", model = "llama-3.3-70b",
              base_url = "https://api.groq.com/openai/v1", key_env = "GROQ_API_KEY"}]
    practicality = "offline"

Light on purpose (pydantic only): the command line checks a roster before the engine loads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, ValidationError

from hivemind_lab.agents.backends import BACKENDS, BackendChoice, BackendName
from hivemind_lab.errors import InputError, did_you_mean
from hivemind_lab.llm.limits import ModelLimits
from hivemind_lab.models import Frozen

Role = Literal["theory", "practicality", "monitor"]
ROLES: tuple[str, ...] = get_args(Role)
ROLE_PREFIX: dict[str, str] = {"theory": "theory-", "practicality": "constraint-"}
"""The agent ids of a role start so (the monitor is one agent, ``monitor``)."""
AGENT_ID = re.compile(r"^(?:theory-\d+|constraint-[a-z0-9][a-z0-9_.-]*|monitor)$")
_SETTINGS = {
    "key": "key_env",
    "input": "input_usd_per_mtok",
    "output": "output_usd_per_mtok",
    "window": "context_window",
    "max_output": "output_limit",
}
_FIELDS = (
    "backend",
    "model",
    "base_url",
    "model_file",
    "key_env",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "context_window",
    "output_limit",
)
SPEC_FORM = (
    "BACKEND[:MODEL][@BASE_URL][,key=VAR][,input=USD][,output=USD][,window=N][,max_output=N]"
)
KEYS_ALLOWED = "theory, practicality, monitor or an agent id (theory-03, constraint-legal)"


class RosterEntry(Frozen):
    """One model of a roster: a backend and one endpoint's settings."""

    backend: BackendName
    model: str | None = Field(default=None, min_length=1)
    """openai: the model id (else HIVEMIND_MODEL)."""
    base_url: str | None = Field(default=None, min_length=1)
    """openai: the endpoint (else OPENAI_BASE_URL)."""
    model_file: Path | None = None
    """local: the GGUF file (else HIVEMIND_MODEL_FILE, else the bundled SmolLM2-135M)."""
    key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """openai: the environment variable that holds this endpoint's key (else OPENAI_API_KEY)."""
    input_usd_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    """US dollars a million prompt tokens (else the run's price)."""
    output_usd_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    """US dollars a million completion tokens (else the run's price)."""
    context_window: int | None = Field(default=None, ge=256, le=10_000_000)
    """Tokens of prompt plus reply one request may hold: declared, its agents' evidence is
    packed to it (`hivemind_lab.agents.budget`). local: the server's context per slot (else
    the run's ``--context-size``); other backends: the endpoint's window (else none)."""
    output_limit: int | None = Field(default=None, gt=0)
    """Most reply tokens one request may ask for (needs ``context_window`` except on local,
    whose server declares its own)."""
    given: str = Field(default="", exclude=True, repr=False)
    """The entry as the user wrote it (its flag or table key), for errors."""

    def choice(self, default: BackendChoice) -> BackendChoice:
        """The backend choice this entry makes (context size and latency as the run's)."""
        return BackendChoice(
            backend=self.backend,
            model=self.model,
            base_url=self.base_url,
            model_file=self.model_file,
            context_size=self.context_window or default.context_size,
            latency_s=default.latency_s,
        )

    def limits(self, declared: ModelLimits | None) -> ModelLimits | None:
        """This entry's token limits over what its model ``declared`` (a local server its
        context per slot): the entry's window and output limit where it gives them."""
        if self.context_window is None and self.output_limit is None:
            return declared
        window = self.context_window or (declared.context_window if declared else None)
        if window is None:
            return None  # refused when read: an output limit alone has no window to pack to
        base = declared or ModelLimits(context_window=window)
        output = self.output_limit if self.output_limit is not None else base.output_limit
        return base.model_copy(update={"context_window": window, "output_limit": output})

    def environment(self, env: Mapping[str, str]) -> Mapping[str, str]:
        """``env`` as this entry's endpoint reads it: its own key variable as the key."""
        if self.key_env is None:
            return env
        key = env.get(self.key_env)
        if not key:
            raise InputError(
                self.given or self.key_env,
                f"names the key variable {self.key_env!r}, which is not set",
                allowed="a variable set in the environment",
            )
        return {**env, "OPENAI_API_KEY": key}

    @property
    def prices(self) -> dict[str, float]:
        """The prices this entry sets (the run's apply to the others)."""
        return {
            k: v
            for k, v in (
                ("input_usd_per_mtok", self.input_usd_per_mtok),
                ("output_usd_per_mtok", self.output_usd_per_mtok),
            )
            if v is not None
        }


class Roster(Frozen):
    """Which model answers each agent: per role, round-robin over the role's agents in id
    order, and per agent id (which wins). Agents it does not name take the run's model."""

    theory: tuple[RosterEntry, ...] = ()
    practicality: tuple[RosterEntry, ...] = ()
    monitor: RosterEntry | None = None
    """The monitor's calls (each cluster's combined rationale)."""
    agents: dict[str, RosterEntry] = {}
    """By agent id (``theory-03``, ``constraint-legal``)."""

    @property
    def empty(self) -> bool:
        return not (self.theory or self.practicality or self.monitor or self.agents)

    def entries(self) -> tuple[RosterEntry, ...]:
        """Every entry, in the order written (role lists, the monitor, then by agent id)."""
        monitor = (self.monitor,) if self.monitor else ()
        return (*self.theory, *self.practicality, *monitor, *self.agents.values())

    def over(self, other: Roster) -> Roster:
        """This roster with ``other``'s roles and agents in place of its own (flags over a
        file's table)."""
        return Roster(
            theory=other.theory or self.theory,
            practicality=other.practicality or self.practicality,
            monitor=other.monitor or self.monitor,
            agents={**self.agents, **other.agents},
        )

    def assign(self, theory: Iterable[str], constraints: Iterable[str]) -> dict[str, RosterEntry]:
        """The entry of each agent the roster names, by agent id.

        Raises:
            InputError: an agent id the run does not have, named as written.
        """
        ids = {"theory": sorted(theory), "practicality": sorted(constraints)}
        out: dict[str, RosterEntry] = {}
        for role, agents in ids.items():
            entries: tuple[RosterEntry, ...] = getattr(self, role)
            for i, agent in enumerate(agents):
                if entries:
                    out[agent] = entries[i % len(entries)]
        if self.monitor is not None:
            out["monitor"] = self.monitor
        known = {*ids["theory"], *ids["practicality"], "monitor"}
        for agent, entry in self.agents.items():
            if agent not in known:
                hint = did_you_mean(agent, known)
                raise InputError(
                    entry.given or agent,
                    f"this run has no agent {agent!r}; {hint}".rstrip("; "),
                    allowed=", ".join(sorted(known)),
                )
            out[agent] = entry
        return out


# -- the one parser -----------------------------------------------------------------------------


def parse_entry(text: str, *, given: str) -> RosterEntry:
    """One entry written as ``BACKEND[:MODEL][@BASE_URL][,key=VAR][,input=USD][,output=USD]``;
    errors name ``given`` (the flag or table key as the user wrote it)."""
    head, *settings = (part.strip() for part in text.strip().split(","))
    backend, _, rest = head.partition(":")
    target, _, url = rest.partition("@")
    values: dict[str, Any] = {"backend": backend.strip()}
    if target.strip():
        values["model_file" if values["backend"] == "local" else "model"] = target.strip()
    if url.strip():
        values["base_url"] = url.strip()
    for setting in settings:
        name, sep, value = setting.partition("=")
        if not sep or name.strip() not in _SETTINGS:
            raise InputError(
                given,
                f"unknown setting {setting!r}",
                allowed=f"{', '.join(f'{k}=...' for k in _SETTINGS)} after the model, "
                f"as in {SPEC_FORM}",
            )
        values[_SETTINGS[name.strip()]] = value.strip()
    return entry_of(values, given=given)


def entry_of(value: object, *, given: str) -> RosterEntry:
    """An entry from its text or its table of fields; errors name ``given``."""
    if isinstance(value, str):
        return parse_entry(value, given=given)
    if not isinstance(value, Mapping):
        raise InputError(
            given,
            f"is neither text nor a table, got {value!r}",
            allowed=f"{SPEC_FORM}, or a table of {', '.join(_FIELDS)}",
        )
    backend = value.get("backend")
    if backend not in BACKENDS:
        said = "names no backend" if backend is None else f"unknown backend {backend!r}"
        hint = did_you_mean(str(backend), BACKENDS) if isinstance(backend, str) else ""
        raise InputError(given, f"{said}; {hint}".rstrip("; "), allowed=", ".join(BACKENDS))
    unknown = sorted(str(k) for k in value if k not in _FIELDS)
    if unknown:
        raise InputError(given, f"unknown field {unknown[0]!r}", allowed=", ".join(_FIELDS))
    try:
        entry = RosterEntry.model_validate({**value, "given": given})
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"])
        raise InputError(
            given, f"{field}: {err['msg'][:1].lower()}{err['msg'][1:]}, got {err['input']!r}"
        ) from None
    if entry.backend in ("offline", "test") and (entry.model or entry.base_url or entry.key_env):
        raise InputError(
            given,
            f"the {entry.backend} backend takes no model, base URL or key",
            allowed=f"{entry.backend!r} alone",
        )
    if entry.output_limit is not None and entry.context_window is None and entry.backend != "local":
        raise InputError(
            given,
            "max_output needs the window it is part of",
            allowed="window=N with max_output=N (tokens), as in "
            "openai:gpt-4.1-mini,window=128000,max_output=16384",
        )
    if entry.context_window and entry.output_limit and entry.output_limit >= entry.context_window:
        raise InputError(
            given,
            f"max_output={entry.output_limit} leaves no room in window={entry.context_window}",
            allowed="a max_output below the window",
        )
    if entry.backend == "local" and (entry.base_url or entry.key_env):
        raise InputError(
            given,
            "a local entry runs its own server: it takes a model file, no base URL or key",
            allowed="local or local:PATH.gguf",
        )
    return entry


def _key(key: str, *, given: str) -> str:
    """A roster key as written: a role or an agent id."""
    if key in ROLES or AGENT_ID.match(key):
        return key
    hint = did_you_mean(key, ROLES)
    raise InputError(
        given, f"unknown role or agent {key!r}; {hint}".rstrip("; "), allowed=KEYS_ALLOWED
    )


def roster_of(pairs: Iterable[tuple[str, RosterEntry]]) -> Roster:
    """A roster from (role or agent id, entry) pairs in the order written: a role takes every
    entry given for it (round-robin), the monitor and an agent id one each."""
    roles: dict[str, list[RosterEntry]] = {"theory": [], "practicality": []}
    monitor: RosterEntry | None = None
    agents: dict[str, RosterEntry] = {}
    for key, entry in pairs:
        if key in roles:
            roles[key].append(entry)
        elif (key == "monitor" and monitor is not None) or key in agents:
            raise InputError(
                entry.given, f"{key!r} is given twice", allowed="one entry per agent id"
            )
        elif key == "monitor":
            monitor = entry
        else:
            agents[key] = entry
    return Roster(
        theory=tuple(roles["theory"]),
        practicality=tuple(roles["practicality"]),
        monitor=monitor,
        agents=agents,
    )


def roster_from_flags(values: Sequence[str], *, flag: str = "--agent-model") -> Roster:
    """Repeated ``--agent-model ROLE_OR_AGENT=ENTRY`` flags as a roster."""
    pairs = []
    for value in values:
        given = f"{flag} {value}"
        key, sep, text = value.partition("=")
        if not sep or not text.strip():
            raise InputError(
                given, "is not ROLE=ENTRY", allowed=f"{KEYS_ALLOWED}, then = and {SPEC_FORM}"
            )
        key = _key(key.strip(), given=given)
        pairs.append((key, parse_entry(text, given=given)))
    return roster_of(pairs)


def roster_from_table(table: object, *, where: str = "[roster]") -> Roster:
    """A ``[roster]`` table: each key a role or an agent id, each value an entry (text or a
    table) or, for a role, a list of them."""
    if not isinstance(table, Mapping):
        raise InputError(where, f"is not a table, got {table!r}", allowed=KEYS_ALLOWED)
    pairs = []
    for raw_key, value in table.items():
        key = _key(str(raw_key), given=f"{where} {raw_key}")
        listed = isinstance(value, list)
        if listed and key not in ROLE_PREFIX:
            raise InputError(
                f"{where} {raw_key}",
                "is a list, but only a role (theory, practicality) takes several models",
                allowed="one entry",
            )
        for i, item in enumerate(value if listed else [value]):
            given = f"{where} {raw_key}[{i}]" if listed else f"{where} {raw_key}"
            pairs.append((key, entry_of(item, given=given)))
    return roster_of(pairs)
