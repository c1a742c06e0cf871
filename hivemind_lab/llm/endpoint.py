"""How to treat a model endpoint: request timeout, retries, concurrency, a shared rate limit and
the prices of its tokens, from the environment or the command line.

Light on purpose (pydantic only): the CLI validates these before the engine and the OpenAI SDK
load, and a sweep resolves them once in its driver and hands the values to every worker, so a
worker process or a Ray task on another node applies what the driver was given.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from hivemind_lab.envconfig import EnvSettings


class EndpointSettings(EnvSettings):
    """Limits on the calls to one model endpoint (a field's alias is its variable). None keeps
    the backend's own default: 120 s for a hosted endpoint, an hour for the local server, whose
    requests queue behind its own slots."""

    timeout_s: float | None = Field(
        default=None, gt=0, le=86_400, validation_alias="HIVEMIND_REQUEST_TIMEOUT_S"
    )
    """Seconds one request may take (a 70B model on a busy server needs minutes)."""
    max_retries: int | None = Field(
        default=None, ge=0, le=20, validation_alias="HIVEMIND_MAX_RETRIES"
    )
    """Attempts after the first on a 429, a 5xx, a timeout or a lost connection."""
    max_concurrency: int | None = Field(
        default=None, ge=1, le=1024, validation_alias="HIVEMIND_ENDPOINT_CONCURRENCY"
    )
    """Requests in flight at once to the endpoint from one process (a run's own
    ``concurrency`` bounds its calls; this bounds what reaches the endpoint)."""
    rate_limit_rpm: float | None = Field(
        default=None, gt=0, le=1_000_000, validation_alias="HIVEMIND_RATE_LIMIT_RPM"
    )
    """Requests a minute to the endpoint, shared by every worker of a sweep (retries count);
    None: no limit but the endpoint's own 429s."""

    def overrides(self) -> dict[str, float | int]:
        """The settings given, as `OpenAIConfig` fields (the rate limit is a gate, not one)."""
        values = {
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "max_concurrency": self.max_concurrency,
        }
        return {k: v for k, v in values.items() if v is not None}


class Prices(EnvSettings):
    """What an endpoint charges, in US dollars a million tokens (a field's alias is its
    variable): cost accounting of a run and the cost of a plan."""

    input_usd_per_mtok: float = Field(
        default=0.0, ge=0, le=10_000, validation_alias="HIVEMIND_INPUT_USD_PER_MTOK"
    )
    """A million prompt tokens."""
    output_usd_per_mtok: float = Field(
        default=0.0, ge=0, le=10_000, validation_alias="HIVEMIND_OUTPUT_USD_PER_MTOK"
    )
    """A million completion tokens."""
    cached_input_usd_per_mtok: float | None = Field(
        default=None, ge=0, le=10_000, validation_alias="HIVEMIND_CACHED_INPUT_USD_PER_MTOK"
    )
    """A million prompt tokens served from the endpoint's prefix cache; None: as input."""

    @property
    def priced(self) -> bool:
        return bool(self.input_usd_per_mtok or self.output_usd_per_mtok)

    def cost(self, prompt: int, completion: int, cached: int = 0) -> float:
        """Dollars for ``prompt`` tokens (``cached`` of them reused) and ``completion`` ones."""
        cached_price = self.cached_input_usd_per_mtok
        if cached_price is None:
            cached_price = self.input_usd_per_mtok
        return (
            (prompt - cached) * self.input_usd_per_mtok
            + cached * cached_price
            + completion * self.output_usd_per_mtok
        ) / 1e6


MODEL_BACKENDS = frozenset({"openai", "local"})
"""Backends whose every call costs money or GPU time."""


def default_critique_mode(backend: str) -> Literal["pairwise", "batched"]:
    """The critique mode a run takes when none is given: batched on a model backend (one call
    per critic a round, N instead of N(N-1)); pairwise on the offline stand-in and the test
    model, whose calls cost nothing and whose calibration figures were measured pairwise."""
    return "batched" if backend in MODEL_BACKENDS else "pairwise"


def default_score_mode(backend: str) -> Literal["per_solution", "batched"]:
    """The score mode a run takes when none is given: batched on an OpenAI-compatible endpoint
    (one call per constraint agent for the set, C instead of C×S); per solution on the local
    backend, whose bundled small models cannot hold several solutions in one reply (SmolLM2
    scored one solution twice and the other never, 2026-12-04), and on the offline stand-in
    and the test model, whose calls cost nothing and whose figures were measured per solution."""
    return "batched" if backend == "openai" else "per_solution"
