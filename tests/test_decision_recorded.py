"""The decision is recorded once and never read again: manifest v3 holds it once, the audit
trail opens with it, replay and rescore use its facts after the reader changes, and older
manifests still read (an open question keeps its empty options)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hivemind_lab.agents.testing import TestModel
from hivemind_lab.compliance import rescore
from hivemind_lab.experiments.replays import replay
from hivemind_lab.problems import Problem
from hivemind_lab.problems import decision as deciding
from hivemind_lab.problems.model import Decision, Fact, Option
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.manifest import MANIFEST_VERSION
from hivemind_lab.runs.rundir import RunDir, read_manifest
from tests.support import PRACTICALITY, make_request, run_free

CHANGED = (Fact(id="question.1", text="A fact the new reader would read.", source="question"),)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, grocer: Problem) -> Path:
    run_dir = tmp_path_factory.mktemp("recorded") / "run"
    run_free(run_dir, grocer)
    return run_dir


def _changed_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that now reads other facts and finds options in any text."""

    def read(text: str, **_: object) -> Decision:
        return Decision(
            options=(
                Option(label="Read option one", source="reader"),
                Option(label="Read option two", source="reader"),
            ),
            options_source="reader",
            facts=CHANGED,
            reader_version="changed",
        )

    monkeypatch.setattr(deciding, "read_decision", read)
    monkeypatch.setattr(deciding, "extract_facts", lambda *a, **k: CHANGED)


def test_the_manifest_and_the_audit_trail_open_with_the_decision(recorded: Path) -> None:
    raw = json.loads((recorded / "manifest.json").read_text())
    assert raw["schema_version"] == MANIFEST_VERSION == 3
    assert "decision" not in raw["request"] and "options" not in raw["request"]  # once
    manifest = read_manifest(recorded)
    assert manifest.decision == manifest.request.decision
    assert manifest.decision.facts and not manifest.decision.derived
    first = next(iter(read_records(RunDir(recorded).audit_path)))
    assert isinstance(first.event, events.DecisionRecorded)
    assert first.event.decision == manifest.decision


def test_replay_and_rescore_use_the_recorded_facts_after_the_reader_changes(
    recorded: Path, grocer: Problem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = read_manifest(recorded).decision
    _changed_reader(monkeypatch)
    assert make_request(grocer).facts() == CHANGED  # the reader did change
    assert read_manifest(recorded).decision == before
    again = replay(recorded)
    assert again.identical and again.network_calls == 0
    rescore(recorded, practicality_kb=PRACTICALITY, out=tmp_path / "rescored", model=TestModel())
    assert read_manifest(tmp_path / "rescored").decision == before


def _as_v2(recorded: Path, target: Path, *, keep_decision: bool, **request: object) -> Path:
    raw = json.loads((recorded / "manifest.json").read_text())
    raw["schema_version"] = 2
    decision = raw.pop("decision")
    # As version 2 wrote it: the decision in the request, with its options and exclusivity
    # again in older words (or, before decisions existed, those words alone).
    raw["request"].update(
        options=[o["label"] for o in decision["options"]],
        options_source="given",
        exclusive=bool(decision["exclusive"]),
        exclusive_source="problem",
    )
    if keep_decision:
        raw["request"]["decision"] = decision
    raw["request"].update(request)
    target.mkdir()
    (target / "manifest.json").write_text(json.dumps(raw))
    return target


def test_an_old_open_question_manifest_keeps_its_empty_options(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _changed_reader(monkeypatch)
    open_question = _as_v2(
        recorded, tmp_path / "v2", keep_decision=False, options=[], options_source="agents"
    )
    decision = read_manifest(open_question).decision
    assert decision.options == () and decision.derived
    assert read_manifest(open_question).request.options == ()
    # older still: no options recorded at all (runs from before options existed)
    older = json.loads((open_question / "manifest.json").read_text())
    for key in ("options", "options_source", "exclusive", "exclusive_source"):
        older["request"].pop(key)
    (tmp_path / "older").mkdir()
    (tmp_path / "older" / "manifest.json").write_text(json.dumps(older))
    oldest = read_manifest(tmp_path / "older")
    assert oldest.decision.options == () and oldest.decision.exclusive in (None, False)


def test_a_v2_manifest_with_its_decision_reads_it_unchanged(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = read_manifest(recorded).decision
    _changed_reader(monkeypatch)
    v2 = read_manifest(_as_v2(recorded, tmp_path / "v2", keep_decision=True))
    assert v2.schema_version == 3 and v2.decision == before and not v2.decision.derived
    # one recorded before decisions existed keeps its options; nothing is read again
    old = read_manifest(_as_v2(recorded, tmp_path / "old", keep_decision=False))
    assert old.decision.labels == before.labels and old.decision.derived
    assert old.decision.facts == () and old.request.exclusive == bool(before.exclusive)
