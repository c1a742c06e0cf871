"""The model intake's call is audited like every other model call: a run on the decision an
intake read writes that call (prompt, replies with usage, cache key, what was dropped) as its
own event right after ``decision.recorded``, copied from the recorded decision, so neither a
replay nor a resume asks the model again."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hivemind_lab.agents.testing import TestModel
from hivemind_lab.cli import app
from hivemind_lab.experiments.replays import replay
from hivemind_lab.inputs import Limits
from hivemind_lab.llm.base import ChatRequest
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.testing import FunctionModel, Reply, reply_text
from hivemind_lab.problems.decision import decide
from hivemind_lab.problems.intake import intake
from hivemind_lab.problems.intake_task import IntakeOutput
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.rundir import RunDir, read_manifest
from tests.support import run
from tests.test_intake import PROBLEM, READING, TEXT


class Reader:
    """One wire model for the intake (answered with `READING`) and every agent task (answered
    by the content-free test model); it counts the intake requests it was sent."""

    def __init__(self) -> None:
        self.agents = TestModel()
        self.intakes: list[ChatRequest] = []
        self.model = FunctionModel(self.reply, model="reader")

    def reply(self, request: ChatRequest) -> Reply:
        if request.response_format is not None and request.response_format.name == "IntakeOutput":
            self.intakes.append(request)
            return IntakeOutput.model_validate(READING)
        return self.agents.function(request)


def _intake_events(run_dir: Path) -> list[tuple[int, events.AnyEvent]]:
    return [
        (n, r.event)
        for n, r in enumerate(read_records(RunDir(run_dir).audit_path))
        if r.kind == "llm.intake"
    ]


def test_the_intake_call_is_the_audit_s_second_record_and_replay_makes_no_call(
    tmp_path: Path,
) -> None:
    reader = Reader()
    cache = ResponseCache(tmp_path / "intake.sqlite")
    read = intake(CachingChatModel(reader.model, cache), PROBLEM)
    cache.close()
    decision = decide(PROBLEM, reading=read.decision)
    run(
        tmp_path / "run",
        PROBLEM,
        model=reader.model,
        decision=decision,
        limits=Limits(max_rounds=1, max_regenerations=0),
    )
    records = list(read_records(RunDir(tmp_path / "run").audit_path))
    assert [r.kind for r in records[:2]] == ["decision.recorded", "llm.intake"]
    (n, call), *more = _intake_events(tmp_path / "run")
    assert n == 1 and more == []
    assert isinstance(call, events.IntakeCalled)
    sent = reader.intakes[0]
    assert call.prompt == [m.model_dump() for m in sent.messages]
    assert TEXT in call.prompt[-1]["content"]
    assert call.request_key == read.call.request_key
    assert [r["content"] for r in call.responses] == [
        reply_text(IntakeOutput.model_validate(READING))
    ]
    assert call.responses[0]["usage"]["prompt_tokens"] > 0 and not call.responses[0]["cached"]
    assert len(call.dropped) == 3  # what the quote checks dropped, as the decision recorded
    assert read_manifest(tmp_path / "run").decision.intake == read.call
    again = replay(tmp_path / "run")
    assert again.identical and again.network_calls == 0
    assert len(reader.intakes) == 1  # the intake was asked once, at intake


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Reader:
    """The command line's language-model backend answered by a `Reader`, in a folder of its own
    (the intake cache is kept under the working directory)."""
    from hivemind_lab.agents import backends

    model = Reader()
    model.model.backend = "openai"  # as the run records it, and --resume reopens it

    @contextlib.contextmanager
    def open_model(choice: object, **_: object) -> Iterator[FunctionModel]:
        yield model.model

    monkeypatch.setattr(backends, "open_model", open_model)
    monkeypatch.chdir(tmp_path)
    return model


def test_the_command_line_audits_the_intake_and_resuming_never_reads_again(
    reader: Reader, tmp_path: Path
) -> None:
    model = ["--backend", "openai", "--model", "reader", "--base-url", "http://127.0.0.1:9/v1"]
    limits = ["--max-rounds", "1", "--max-regenerations", "0"]
    done = CliRunner().invoke(
        app, ["deliberate", "--problem", TEXT, *model, "--out", "run", *limits]
    )
    assert done.exit_code == 0, done.output
    assert len(reader.intakes) == 1
    assert read_manifest(tmp_path / "run").decision.options_source == "intake"
    assert [n for n, _ in _intake_events(tmp_path / "run")] == [1]
    # a run cut short before its result is continued from its manifest: no second intake
    (tmp_path / "run" / "result.json").unlink()
    resumed = CliRunner().invoke(app, ["deliberate", "--resume", "run"])
    assert resumed.exit_code == 0, resumed.output
    assert (tmp_path / "run" / "result.json").exists()
    assert len(reader.intakes) == 1
    assert [n for n, _ in _intake_events(tmp_path / "run")] == [1]
