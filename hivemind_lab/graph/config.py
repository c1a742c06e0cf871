"""Configuration of the knowledge graph: one typed object, read from the environment only at the
edge (`GraphConfig.from_env`), never at import time."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from hivemind_lab.envconfig import EnvSettings
from hivemind_lab.errors import InputError

StoreKind = Literal["ladybug", "neo4j"]

DEFAULT_DOMAINS = ("general", "theory", "entity", "method", "meta", "strategy")
DEFAULT_MODEL_BUDGETS = {"grok": 100_000, "gemini": 50_000, "claude": 20_000}
"""Default query budgets per model family: a larger context window gets a larger packed slice."""


def default_db_path(env: Mapping[str, str] | None = None) -> Path:
    """The embedded store's default file, under the user's data folder (``XDG_DATA_HOME`` of
    ``env``, the process environment when None)."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hivemind_lab" / "hivemind.lbdb"


class GraphConfig(EnvSettings):
    """Everything the knowledge graph needs to know (a field's alias is its variable)."""

    store: StoreKind = Field(default="ladybug", validation_alias="HIVEMIND_STORE")
    """Backend: embedded LadybugDB (default) or a Neo4j server or cluster."""
    db_path: Path = Field(default_factory=default_db_path, validation_alias="HIVEMIND_DB_PATH")
    """LadybugDB database file."""
    neo4j_uri: str | None = Field(default=None, validation_alias="NEO4J_URI")
    neo4j_user: str | None = Field(default=None, validation_alias="NEO4J_USER")
    neo4j_password: str | None = Field(default=None, repr=False, validation_alias="NEO4J_PASSWORD")
    neo4j_database: str | None = Field(default=None, validation_alias="NEO4J_DATABASE")
    conflict_threshold: int = Field(default=3, ge=1, le=1000, validation_alias="CONFLICT_THRESHOLD")
    """Minimum number of voters before a conflict can be decided (not a stopping rule: the
    decision waits for the electorate, see `voting_window_hours`)."""
    consensus_phi: float = Field(default=0.618, gt=0.5, le=1.0, validation_alias="CONSENSUS_PHI")
    """Weighted share the top resolution needs (φ⁻¹ by default)."""
    consensus_quorum: float = Field(
        default=0.5, gt=0.0, le=1.0, validation_alias="CONSENSUS_QUORUM"
    )
    """Share of a contest's holders that must have voted to decide when the voting window
    closes before all of them have."""
    voting_window_hours: float = Field(default=72.0, gt=0, validation_alias="VOTING_WINDOW_HOURS")
    """After this long (from the contest's first conflict) a quorum suffices; before it, every
    model holding a side must have voted."""
    record_prior_mean: float = Field(default=0.7, gt=0.0, lt=1.0)
    """Prior share of decided claims won, for a model without a track record."""
    record_prior_strength: float = Field(default=4.0, gt=0.0)
    """How many decided claims the prior is worth."""
    domains: Annotated[tuple[str, ...], NoDecode] = Field(
        default=DEFAULT_DOMAINS, validation_alias="HIVEMIND_DOMAINS"
    )
    """Allowed knowledge domains (the variable: separated by commas)."""
    auto_fork_days: float = Field(default=30.0, gt=0)
    """Unresolved conflicts older than this are forked automatically."""
    max_context_tokens: int = Field(default=50_000, ge=100, validation_alias="MAX_CONTEXT_TOKENS")
    """Hard ceiling on any query's budget."""
    default_query_tokens: int = Field(default=2_000, ge=50)
    """Budget when neither the caller nor its model family sets one."""
    model_budgets: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_MODEL_BUDGETS))
    """Default query budget per model-name prefix (e.g. ``grok`` covers ``grok-2``)."""
    max_text: int = Field(default=1_000, ge=10)
    """Longest subject, predicate or object accepted (characters)."""
    max_evidence: int = Field(default=10_000, ge=10)
    """Longest evidence text accepted (characters)."""
    snapshot_max_age_s: float = Field(default=5.0, ge=0)
    """How stale the analytics snapshot (PageRank) may get when other processes write."""

    @field_validator("domains", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return (
            tuple(d.strip() for d in value.split(",") if d.strip())
            if isinstance(value, str)
            else value
        )

    def budget_for(self, model: str) -> int:
        """Default query budget for a model name."""
        for prefix, budget in sorted(self.model_budgets.items(), key=lambda kv: -len(kv[0])):
            if model.lower().startswith(prefix):
                return min(budget, self.max_context_tokens)
        return min(self.default_query_tokens, self.max_context_tokens)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """Build from HIVEMIND_STORE, HIVEMIND_DB_PATH, NEO4J_*, CONFLICT_THRESHOLD,
        CONSENSUS_PHI, CONSENSUS_QUORUM, VOTING_WINDOW_HOURS, MAX_CONTEXT_TOKENS and
        HIVEMIND_DOMAINS (the default database under ``env``'s XDG_DATA_HOME). Neo4j
        credentials are required for the neo4j store and never defaulted."""
        env = os.environ if env is None else env
        if not env.get("HIVEMIND_DB_PATH") and overrides.get("db_path") is None:
            overrides["db_path"] = default_db_path(env)
        config = super().from_env(env, **overrides)
        if config.store == "neo4j":
            missing = [
                var
                for var, value in (
                    ("NEO4J_URI", config.neo4j_uri),
                    ("NEO4J_USER", config.neo4j_user),
                    ("NEO4J_PASSWORD", config.neo4j_password),
                )
                if not value
            ]
            if missing:
                raise InputError(
                    ", ".join(missing), "required when HIVEMIND_STORE=neo4j (never defaulted)"
                )
        return config
