"""The one place a backend name becomes a `ChatModel` (CLI, sweeps, notebooks).

It lives beside the agents, not in `hivemind_lab.llm`, because one of its backends is the agents'
own deterministic stand-in (`hivemind_lab.agents.policy`): the wire layer never imports agents.
``offline`` is that stand-in, ``openai`` any OpenAI-compatible endpoint, ``local``
a llama.cpp server this process starts and stops (`hivemind_lab.llm.local`), ``test`` the
content-free `hivemind_lab.agents.testing.TestModel` (schema-valid, seeded replies with no
domain reasoning: for tests of the machinery, never advice). A local server has
a lifetime, so callers use `open_model` (a context manager) — or start one `LocalServer` and
hand its `LocalEndpoint` to `make_model` when many runs share it (a sweep).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import Field

from hivemind_lab.errors import InputError
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.models import Frozen

if TYPE_CHECKING:  # the backends load only when used: the CLI validates input first, fast
    from hivemind_lab.agents.roster import RosterEntry
    from hivemind_lab.llm.endpoint import EndpointSettings, Prices
    from hivemind_lab.llm.limits import ModelLimits
    from hivemind_lab.llm.local import LocalEndpoint, LocalServer, LocalServerPool
    from hivemind_lab.llm.ratelimit import RateGate

BackendName = Literal["offline", "openai", "local", "test"]
BACKENDS: tuple[str, ...] = get_args(BackendName)


class BackendChoice(Frozen):
    """Which model answers agent tasks."""

    backend: BackendName = "offline"
    model: str | None = None
    """openai: the model id (else HIVEMIND_MODEL)."""
    base_url: str | None = None
    """openai: the endpoint (else OPENAI_BASE_URL)."""
    model_file: Path | None = None
    """local: a GGUF file (else HIVEMIND_MODEL_FILE, else the bundled SmolLM2-135M)."""
    context_size: int = Field(default=8192, ge=256)
    """local: tokens of context per slot."""
    latency_s: float = Field(default=0.0, ge=0.0)
    """Artificial seconds per call (demos and benchmarks)."""


def backend_choice(backend: str, **values: object) -> BackendChoice:
    """A `BackendChoice` from a user's string; an unknown backend names the allowed ones."""
    if backend not in BACKENDS:
        raise InputError("backend", f"unknown backend {backend!r}", allowed=", ".join(BACKENDS))
    return BackendChoice.model_validate({"backend": backend, **values})


def make_model(
    choice: BackendChoice,
    *,
    endpoint: LocalEndpoint | None = None,
    env: Mapping[str, str] | None = None,
    settings: EndpointSettings | None = None,
    gate: RateGate | None = None,
    prices: Prices | None = None,
) -> ChatModel:
    """The chat model for ``choice``; the local backend needs the ``endpoint`` of a running
    server (see `open_model`). ``settings`` (else read from ``env``) bound its requests to the
    endpoint; ``gate`` is a rate gate shared with other callers (a sweep's), else one of this
    model's own when the settings name a rate limit; ``prices`` (else read from ``env``) cost
    its tokens."""
    from hivemind_lab.llm.endpoint import EndpointSettings
    from hivemind_lab.llm.endpoint import Prices as EnvPrices
    from hivemind_lab.llm.latency import LatencyChatModel
    from hivemind_lab.llm.ratelimit import LocalGate

    env = os.environ if env is None else env
    if choice.backend in ("openai", "local"):
        settings = settings or EndpointSettings.from_env(env)
        if gate is None and settings.rate_limit_rpm is not None:
            gate = LocalGate(settings.rate_limit_rpm)
    chat: ChatModel
    if choice.backend == "offline":
        from hivemind_lab.agents.policy import OfflineAgentModel

        chat = OfflineAgentModel()
    elif choice.backend == "openai":
        from hivemind_lab.llm.openai_backend import OpenAIChatModel, OpenAIConfig

        assert settings is not None
        config = OpenAIConfig.from_env(
            env,
            model=choice.model,
            base_url=choice.base_url,
            **settings.overrides(),
            **(prices or EnvPrices.from_env(env)).model_dump(),
        )
        chat = OpenAIChatModel(config, gate=gate)
    elif choice.backend == "test":
        from hivemind_lab.agents.testing import TestModel

        chat = TestModel()
    elif choice.backend == "local":
        if endpoint is None:
            raise InputError(
                "backend", "the local backend needs a running server", allowed="open_model()"
            )
        from hivemind_lab.llm.local import LocalChatModel

        assert settings is not None
        given = {k: v for k, v in settings.overrides().items() if k != "max_concurrency"}
        local = LocalChatModel(endpoint, concurrency=settings.max_concurrency, **given)
        local.gate = gate
        chat = local
    else:  # pragma: no cover - exhaustive over BackendName
        raise InputError("backend", f"unknown backend {choice.backend!r}")
    return LatencyChatModel(chat, choice.latency_s) if choice.latency_s > 0 else chat


def local_server(
    choice: BackendChoice, *, slots: int, port: int = 0, env: Mapping[str, str] | None = None
) -> LocalServer:
    """A (not yet started) server for ``choice``: binary and model file checked first."""
    from hivemind_lab.llm.local import (
        LocalServer,
        LocalServerConfig,
        find_binary,
        resolve_model_file,
    )

    env = os.environ if env is None else env
    model_file = resolve_model_file(choice.model_file, env)  # the user's input, named first
    return LocalServer(
        LocalServerConfig(
            binary=find_binary(env),
            model_file=model_file,
            context_size=choice.context_size,
            slots=max(1, min(slots, 64)),
            port=port,
        )
    )


@contextmanager
def open_model(
    choice: BackendChoice,
    *,
    concurrency: int,
    env: Mapping[str, str] | None = None,
    settings: EndpointSettings | None = None,
    prices: Prices | None = None,
) -> Iterator[ChatModel]:
    """The chat model for ``choice``; for ``local`` a server with ``concurrency`` slots runs
    for the duration of the block and is stopped by its PID afterwards, whatever happens."""
    if choice.backend != "local":
        yield make_model(choice, env=env, settings=settings, prices=prices)
        return
    with local_server(choice, slots=concurrency, env=env) as server:
        yield make_model(
            choice, endpoint=server.endpoint, env=env, settings=settings, prices=prices
        )


@contextmanager
def open_models(
    assignment: Mapping[str, RosterEntry],
    default: BackendChoice,
    *,
    concurrency: int,
    env: Mapping[str, str] | None = None,
    settings: EndpointSettings | None = None,
    prices: Prices | None = None,
) -> Iterator[dict[str, ChatModel]]:
    """A roster's models for the block, by agent id (``assignment``: `Roster.assign`'s).

    One chat model per distinct entry, whichever agents share it; one llama-server per
    distinct local model file (``concurrency`` slots each, `LocalServerPool`), stopped by its
    PID afterwards. An entry's key variable and prices replace the run's for its endpoint
    only; its context size and latency are the run's (``default``).
    """
    from hivemind_lab.llm.endpoint import Prices as EnvPrices
    from hivemind_lab.llm.limits import model_limits

    env = os.environ if env is None else env
    base_prices = prices or EnvPrices.from_env(env)
    with ExitStack() as stack:
        made: dict[str, ChatModel] = {}
        pool: LocalServerPool | None = None
        out: dict[str, ChatModel] = {}
        for agent, entry in assignment.items():
            key = entry.model_dump_json()  # equal entries written twice are one model
            if key not in made:
                choice = entry.choice(default)
                endpoint = None
                if choice.backend == "local":
                    from hivemind_lab.llm.local import (
                        LocalServerPool,
                        find_binary,
                        resolve_model_file,
                    )

                    model_file = resolve_model_file(choice.model_file, env)  # named first
                    if pool is None:
                        pool = stack.enter_context(
                            LocalServerPool(
                                binary=find_binary(env),
                                context_size=default.context_size,
                                slots=max(1, min(concurrency, 64)),
                            )
                        )
                    endpoint = pool.endpoint(model_file)
                model = make_model(
                    choice,
                    endpoint=endpoint,
                    env=entry.environment(env),
                    settings=settings,
                    prices=base_prices.model_copy(update=entry.prices),
                )
                made[key] = with_limits(model, entry.limits(model_limits(model)))
            out[agent] = made[key]
        yield out


def with_limits(model: ChatModel, limits: ModelLimits | None) -> ChatModel:
    """``model`` declaring ``limits`` (a roster entry's window), so its agents' evidence is
    packed to them: a local server's model takes them itself (it stays the one whose
    ``server`` the command line reports), any other is wrapped."""
    from hivemind_lab.llm.limits import LimitedChatModel, model_limits
    from hivemind_lab.llm.local import LocalChatModel

    if limits is None or limits == model_limits(model):
        return model
    if isinstance(model, LocalChatModel):
        model.limits = limits
        return model
    return LimitedChatModel(model, limits)
