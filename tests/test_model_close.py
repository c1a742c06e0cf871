"""A sweep point's model is closed on the event loop that used it.

An HTTP backend's client left open is closed when it is garbage-collected, after its loop has
ended, and asyncio then prints "Event loop is closed" tracebacks (seen after every local-model
run of a calibration sweep). `close_model` finds the backend under its wrappers; the sweep
runner calls it inside the point's own loop.
"""

from __future__ import annotations

import asyncio

from hivemind_lab.experiments import runner
from hivemind_lab.experiments.points import expand
from hivemind_lab.llm.base import ChatModel, ChatRequest, ChatResponse, close_model
from tests.support import REPO
from tests.test_experiments import spec


class Closing:
    """A backend with an HTTP client to close: records on which loop it was closed."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.closed_on: list[asyncio.AbstractEventLoop] = []
        self.used_on: set[asyncio.AbstractEventLoop] = set()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.used_on.add(asyncio.get_running_loop())
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        self.closed_on.append(asyncio.get_running_loop())


class Wrapper:
    """A cache or latency wrapper: no client of its own."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self.inner.complete(request)


class Plain:
    backend = "plain"
    model = "plain"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        raise AssertionError("not called")


def test_close_model_finds_the_client_under_wrappers_and_closes_it_once():
    backend = Closing(Plain())
    asyncio.run(close_model(Wrapper(Wrapper(backend))))
    assert len(backend.closed_on) == 1
    asyncio.run(close_model(Wrapper(Plain())))  # nothing to close: no error


def test_a_sweep_point_closes_its_model_inside_its_own_loop(tmp_path, monkeypatch):
    made: list[Closing] = []
    make = runner.make_model

    def closing_model(spec, endpoint=None, **_):
        made.append(Closing(make(spec, endpoint)))
        return made[-1]

    monkeypatch.setattr(runner, "make_model", closing_model)
    one = spec(space={"kind": "grid", "stubbornness": [0.3]}, limits={"max_rounds": 1})
    [point] = expand(one)
    summary = runner.run_point(one, point, tmp_path, REPO)
    assert summary.status
    [model] = made
    assert len(model.closed_on) == 1, "the point's model was not closed"
    assert model.used_on == {model.closed_on[0]}, "closed on the loop that ran the point"
