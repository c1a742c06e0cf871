"""Recorded capable-model runs: the fixtures, and readers of what the model was asked and said.

Each folder under ``tests/fixtures/recorded/<prompt version>/`` is a whole run directory made with
``--backend openai`` against an endpoint whose every reply a capable model wrote by hand, from
the request alone (its manifest names the model ``hand``; ``README.md`` there says how each was
made). Replies are never edited. Tests judge the engine's rules on them with zero model calls:
the run's own response cache answers every request (`replay_model`), and what acts after the
model (severity, the monitor, the report) is computed again from the recorded replies.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel

from hivemind_lab.agents.prompts import OUTPUT_TYPES, Task, parse_task
from hivemind_lab.llm.base import ChatMessage, ChatRequest
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.structured import extract_json
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.manifest import RunManifest
from hivemind_lab.runs.rescore import RescoreReport
from hivemind_lab.runs.rundir import RunDir
from tests.support import PRACTICALITY, REPO

RECORDED = REPO / "tests" / "fixtures" / "recorded"


SWEEP_PREFIX = "recorded-baselines-"
"""A recorded sweep (``<prompt version>/sweeps/recorded-baselines-<problem>/``): the
deliberation and both baselines at equal compute on one problem."""


def recorded_runs() -> list[Path]:
    """Every recorded deliberation, oldest prompts first: each ``<prompt version>/<run>`` and
    the deliberation of each recorded sweep."""
    alone = RECORDED.glob("*/*/manifest.json")
    swept = RECORDED.glob(f"*/sweeps/{SWEEP_PREFIX}*/deliberation-*/manifest.json")
    return sorted((p.parent for p in (*alone, *swept)), key=lambda r: (version(r), run_name(r)))


def recorded_baselines() -> list[Path]:
    """Every baseline run of the recorded sweeps (vote, single agent)."""
    found = RECORDED.glob(f"*/sweeps/{SWEEP_PREFIX}*/*/manifest.json")
    return sorted(p.parent for p in found if not p.parent.name.startswith("deliberation-"))


def version(run: Path) -> str:
    """The prompt version a run was recorded with: its folder under ``recorded/``."""
    return run.relative_to(RECORDED).parts[0]


def run_name(run: Path) -> str:
    """A recorded run's name: its folder, or for a sweep's run the sweep's problem (with the
    strategy, for a baseline)."""
    if run.parent.name.startswith(SWEEP_PREFIX):
        problem = run.parent.name.removeprefix(SWEEP_PREFIX)
        strategy = run.name.rsplit("-", 1)[0]
        return problem if strategy == "deliberation" else f"{problem}-{strategy}"
    return run.name


def named(name: str) -> Path:
    """The run called ``name`` recorded with the newest prompts that have one."""
    found = [r for r in recorded_runs() if run_name(r) == name]
    assert found, f"no recorded run called {name!r}"
    return found[-1]


def manifest(run: Path) -> RunManifest:
    return RunDir(run).read_manifest()


@contextmanager
def replay_model(run: Path) -> Iterator[CachingChatModel]:
    """The run's model in replay mode: its own response cache answers, a miss raises (so a
    test that needs a new call fails instead of reaching a network)."""
    recorded = manifest(run)
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(RunDir(run).snapshot_cache(Path(tmp) / "recorded.sqlite"))
        try:
            yield CachingChatModel(
                None, cache, mode="replay", backend=recorded.backend, model=recorded.model
            )
        finally:
            cache.close()


class Call(NamedTuple):
    """One agent call of a recorded run: the task it was sent and the reply the engine used."""

    kind: str
    task: Task
    reply: BaseModel
    actor: str


def calls(run: Path, kind: str | None = None) -> list[Call]:
    """The run's agent calls in order (``kind``: e.g. ``llm.score``), each reply read with its
    task's output type (the last reply of a call: earlier ones were repaired)."""
    found: list[Call] = []
    for record in read_records(RunDir(run).audit_path):
        event = record.event
        if not isinstance(event, events.ModelCall) or (kind and event.kind != kind):
            continue
        request = ChatRequest(messages=tuple(ChatMessage(**m) for m in event.prompt))
        task = parse_task(request)
        content = event.responses[-1]["content"]
        reply = OUTPUT_TYPES[task.task].model_validate_json(extract_json(content))
        found.append(Call(event.kind, task, reply, record.actor))
    return found


def rescored(run: Path, out: Path, severity: float) -> RescoreReport:
    """The run's judged sets scored again by the engine's own practicality path at
    ``severity``, on the run's cache in replay mode (severity is never sent, so no new call;
    a miss fails)."""
    from hivemind_lab.compliance import rescore

    with replay_model(run) as model:
        report = rescore(run, practicality_kb=PRACTICALITY, out=out, model=model, severity=severity)
        assert model.misses == 0, "a severity re-score needed a new call"
    return report


def copy_run(run: Path, into: Path) -> Path:
    """A writable copy of a recorded run (fixtures are only read)."""
    target = into / run.name
    shutil.copytree(run, target)
    return target


def intake_reply(run: Path) -> dict[str, object]:
    """The model intake's reply the run's decision was read from (its last, repaired one)."""
    call = manifest(run).decision.intake
    assert call is not None and call.replies, f"{run.name}: no model intake recorded"
    return json.loads(extract_json(call.replies[-1]))
