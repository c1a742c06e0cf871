"""The research loop: a run's (or a sweep's) agent calls exported as chat-format JSON lines,
filtered by role and outcome, with client data redacted unless asked for."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from hivemind_lab import Limits
from hivemind_lab.agents import testing
from hivemind_lab.agents.prompts import split_task_block
from hivemind_lab.agents.schemas import ProposalOutput, ScoreOutput
from hivemind_lab.cli import app
from hivemind_lab.errors import InputError
from hivemind_lab.problems import Problem
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import AuditRecord, read_records
from hivemind_lab.runs.chat_export import PROBLEM_REDACTED, export_chat, read_chat
from hivemind_lab.runs.manifest import utc_now
from hivemind_lab.runs.rundir import read_manifest
from hivemind_lab.runs.sweepdir import SweepDir
from tests.support import run


def quoting(task: testing.Task, seed: int | None) -> BaseModel:
    """The content-free test model, but its agents speak of the client's decision as capable
    models do: a plan recommends the options it takes (so retrieval finds passages on them),
    and its rationale and every score's reason quote a client fact, without its full stop and
    inside quotation marks. What the export must then keep out is known, whatever the
    stand-in would have said."""
    answer = testing.answer(task, seed)
    fact = task.facts[0].text.rstrip(".") if task.facts else task.problem
    if isinstance(answer, ProposalOutput) and answer.stances:
        pursued = [task.options[s.option] for s in answer.stances if s.stance != "avoid"]
        return answer.model_copy(
            update={"recommendations": pursued or list(task.options), "rationale": f"“{fact}”"}
        )
    if isinstance(answer, ScoreOutput):
        return answer.model_copy(update={"reason": f"The client says “{fact}”."})
    return answer


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, grocer: Problem) -> Path:
    """A folder of two runs: one whose set clears the practicality network, one vetoed out."""
    root = tmp_path_factory.mktemp("sweep")
    model = testing.FunctionModel(quoting, model=testing.TEST_MODEL_ID)
    cleared = run(root / "runs" / "cleared", grocer, model=model, feasibility=1)
    vetoed = run(
        root / "runs" / "vetoed",
        grocer,
        model=model,
        feasibility=100,
        limits=Limits(max_regenerations=0),
    )
    assert cleared.conclusions and not cleared.vetoes[-1].vetoed
    assert vetoed.status == "vetoed_out"
    return root


def _lines(path: Path) -> list[dict]:
    """Read back with a plain JSON-lines reader."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _llm_records(run_dir: Path) -> list[AuditRecord]:
    records = read_records(run_dir / "audit.jsonl")
    return [r for r in records if isinstance(r.event, events.ModelCall)]


def _client_texts(run_dir: Path) -> list[str]:
    request = read_manifest(run_dir).request
    return [request.problem, *(f.text for f in request.facts() if len(f.text) >= 12)]


def test_every_agent_call_becomes_a_chat_record_that_round_trips(sweep, tmp_path):
    run_dir = sweep / "runs" / "cleared"
    out = tmp_path / "chat.jsonl"
    header = export_chat(run_dir, out)
    lines = _lines(out)
    assert lines[0]["type"] == "header" and lines[0]["records"] == len(lines) - 1
    assert lines[0]["client_data"] == "redacted" and lines[0]["redaction"]
    calls = _llm_records(run_dir)
    assert len(lines) - 1 == len(calls) == header.records
    manifest = read_manifest(run_dir)
    for line, call in zip(lines[1:], calls, strict=True):
        assert line["type"] == "chat" and line["seq"] == call.seq
        assert [m["role"] for m in line["messages"]] == ["system", "user", "assistant"]
        assert line["task"] == call.kind.removeprefix("llm.") and line["agent"] == call.actor
        assert (line["backend"], line["model"]) == (manifest.backend, manifest.model)
        expected_role = {"score": "practicality", "synthesize": "monitor"}.get(
            line["task"], "theory"
        )
        assert line["role"] == expected_role
        assert line["messages"][0]["content"] == call.payload["prompt"][0]["content"]
        if line["task"] in ("propose", "score"):
            assert line["evidence_ids"]
            for evidence_id in line["evidence_ids"]:
                assert evidence_id in line["messages"][1]["content"]
        assert line["outcome"] == "cleared"
    header_back, records = read_chat(out)
    assert header_back == header and len(records) == header.records
    assert {r.role for r in records} >= {"theory", "practicality"}


def test_client_data_is_redacted_by_default_and_kept_when_asked(sweep, tmp_path):
    run_dir = sweep / "runs" / "cleared"
    texts = _client_texts(run_dir)
    redacted, kept = tmp_path / "redacted.jsonl", tmp_path / "kept.jsonl"
    export_chat(run_dir, redacted)
    export_chat(run_dir, kept, include_client_data=True)
    raw_redacted, raw_kept = redacted.read_text("utf-8"), kept.read_text("utf-8")
    as_json = [json.dumps(t, ensure_ascii=False)[1:-1] for t in texts]
    assert not any(t in raw_redacted for t in as_json)
    assert all(t in raw_kept for t in as_json)  # what the agents saw is really in the calls
    assert _lines(kept)[0]["client_data"] == "included"
    for line in _lines(redacted)[1:]:
        user = line["messages"][1]["content"]
        block = split_task_block(user)  # the decision and the rest of the task, joined
        assert block is not None
        task = json.loads(block.data)
        assert task["problem"] == PROBLEM_REDACTED
        assert all("redacted" in f["text"] for f in task["facts"])
        assert task["options"]  # the options are kept
        json.loads(line["messages"][2]["content"])  # replies stay JSON


def test_a_sweep_exports_all_its_runs_filtered_by_role_and_outcome(sweep, tmp_path):
    out = tmp_path / "sweep.jsonl"
    header = export_chat(sweep, out)
    assert [r.run for r in header.runs] == ["runs/cleared", "runs/vetoed"]
    total = sum(len(_llm_records(sweep / r.run)) for r in header.runs)
    assert header.records == total

    export_chat(sweep, out, outcome="cleared")
    _, cleared = read_chat(out)
    assert cleared and {r.run for r in cleared} == {"runs/cleared"}
    assert {r.outcome for r in cleared} == {"cleared"}

    export_chat(sweep, out, outcome="vetoed")
    _, vetoed = read_chat(out)
    assert vetoed and {r.run for r in vetoed} == {"runs/vetoed"}

    header = export_chat(sweep, out, roles=["practicality"])
    _, scores = read_chat(out)
    assert header.roles == ("practicality",)
    assert {(r.role, r.task) for r in scores} == {("practicality", "score")}
    assert len(scores) == sum(
        1 for r in header.runs for c in _llm_records(sweep / r.run) if c.kind == "llm.score"
    )
    synth = sum(
        1 for r in header.runs for c in _llm_records(sweep / r.run) if c.kind == "llm.synthesize"
    )
    export_chat(sweep, out, roles=["monitor"])
    assert len(read_chat(out)[1]) == synth


def test_a_sweep_exports_its_current_runs_never_the_stale_ones(sweep, tmp_path):
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    folder = SweepDir(copy / "runs")
    folder.move_aside(folder.run("vetoed"), created_at=utc_now(), reasons=["prompt"])
    header = export_chat(copy, tmp_path / "sweep.jsonl")
    assert [r.run for r in header.runs] == ["runs/cleared"]
    assert [r.run for r in export_chat(copy / "runs", tmp_path / "one.jsonl").runs] == ["cleared"]


def test_bad_filters_and_empty_folders_are_refused(sweep, tmp_path):
    with pytest.raises(InputError, match="role"):
        export_chat(sweep, tmp_path / "x.jsonl", roles=["critic"])  # type: ignore[list-item]
    with pytest.raises(InputError, match="outcome"):
        export_chat(sweep, tmp_path / "x.jsonl", outcome="passed")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="holds no runs"):
        export_chat(tmp_path, tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_audit_export_command_writes_chat_jsonl(sweep, tmp_path):
    out = tmp_path / "cli.jsonl"
    args = ["audit", "export", str(sweep), "--format", "chat-jsonl", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--role", "theory", "--outcome", "cleared"])
    assert result.exit_code == 0, result.output
    header, records = read_chat(out)
    assert header.client_data == "redacted" and header.outcome == "cleared"
    assert records and {(r.role, r.outcome) for r in records} == {("theory", "cleared")}
    result = CliRunner().invoke(app, [*args, "--include-client-data"])
    assert result.exit_code == 0 and read_chat(out)[0].client_data == "included"
    bad = CliRunner().invoke(app, [*args, "--role", "critic"])
    assert bad.exit_code == 2 and "theory, practicality, monitor" in bad.output


def _strings(value: object) -> list[str]:
    """Every string in a value, descending into strings that hold JSON."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "[{":
            try:
                return [value, *_strings(json.loads(text))]
            except ValueError:
                pass
        return [value]
    return []


def _windows(text: str, n: int = 6) -> set[str]:
    words = re.findall(r"[^\W_]+", text.casefold())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def test_no_record_carries_client_text_quoted_cut_or_json_encoded(sweep, tmp_path):
    """The agents quote the client's facts (without their full stop, inside “quotes”, in JSON
    replies); no record of the export may carry six consecutive words of any of them."""
    run_dir = sweep / "runs" / "cleared"
    request = read_manifest(run_dir).request
    client = [request.problem, *(f.text for f in request.facts())]
    client += [d.text for d in (*request.client_data, *request.market_data)]
    windows = set().union(*(_windows(t) for t in client))
    replies = " ".join(
        str(r.payload["responses"][-1]["content"])
        for r in _llm_records(run_dir)
        if r.payload.get("responses")
    )
    quoted = windows & _windows(" ".join(_strings(replies)))
    assert quoted, "the run's agents must quote client facts for this test to mean anything"
    out = tmp_path / "chat.jsonl"
    header = export_chat(run_dir, out)
    for number, line in enumerate(out.read_text("utf-8").splitlines()[1:], start=1):
        seen = set().union(*(_windows(s) for s in _strings(json.loads(line))))
        leaked = seen & windows
        assert not leaked, f"record {number} carries client text: {sorted(leaked)[:3]}"
    assert "assistant" in header.redaction and "6 or more consecutive words" in header.redaction
