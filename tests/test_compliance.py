"""The compliance loop: knowledge hashes in manifests, rescoring a finished run against updated
constraint knowledge (verdict flips, both runs linked, the original untouched), and kb diff."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from hivemind_lab import Limits
from hivemind_lab.agents import testing
from hivemind_lab.agents.schemas import (
    BatchScoreOutput,
    BatchScoreTask,
    ProposalOutput,
    ScoreOutput,
    ScoreTask,
)
from hivemind_lab.cli import app
from hivemind_lab.compliance import read_rescore, rescore
from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.inputs import Calibrations
from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.knowledge.fingerprint import diff_folders, knowledge_hash
from hivemind_lab.problems import Problem
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records, verify_log
from hivemind_lab.runs.rundir import RunDir, read_manifest
from tests.support import KNOWLEDGE, PRACTICALITY, run

FEASIBILITY = 60
NEW_RULE = "-99-new-rule"
"""The document `_stricter_knowledge` adds to every constraint's knowledge."""


def _judged(evidence_documents: set[str]) -> ScoreOutput:
    if any(NEW_RULE in d for d in evidence_documents):
        return ScoreOutput(score=0, reason="The new rule forbids it.", flags=["new rule"])
    return ScoreOutput(score=100, reason="No concern.")


def judge(task: testing.Task, seed: int | None) -> BaseModel:
    """The test model, whose theory agents recommend the options they take (so retrieval finds
    what the constraint knowledge says of them) and whose constraint agents judge by one rule:
    a plan is infeasible (0, flagged) when their evidence holds the new rule, and raises no
    concern (100) otherwise. A rescore's verdicts then flip exactly when the knowledge it reads
    does, whatever the stand-in would make of the rule's words."""
    if isinstance(task, ScoreTask):
        return _judged({e.document_id for e in task.evidence})
    if isinstance(task, BatchScoreTask):
        by_id = {e.id: e.document_id for e in task.evidence}
        return BatchScoreOutput.model_validate(
            {
                "scores": [
                    {
                        "solution_id": item.solution_id,
                        **_judged({by_id[i] for i in item.evidence_ids if i in by_id}).model_dump(),
                    }
                    for item in task.solutions
                ]
            }
        )
    answer = testing.answer(task, seed)
    if isinstance(answer, ProposalOutput) and answer.stances:  # a revision is one too
        pursued = [task.options[s.option] for s in answer.stances if s.stance != "avoid"]
        return answer.model_copy(update={"recommendations": pursued or list(task.options)})
    return answer


def judge_model() -> testing.FunctionModel:
    """`judge` as the test backend (what a rescore from the command line opens again)."""
    model = testing.FunctionModel(judge, model=testing.TEST_MODEL_ID)
    model.backend = "test"
    return model


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def original(tmp_path_factory, grocer: Problem) -> Path:
    """A run whose final set clears the practicality network."""
    run_dir = tmp_path_factory.mktemp("original") / "run"
    result = run(
        run_dir,
        grocer,
        model=judge_model(),
        limits=Limits(max_regenerations=1),
        feasibility=FEASIBILITY,
    )
    assert result.conclusions and not result.vetoes[-1].vetoed
    return run_dir


def _stricter_knowledge(root: Path, grocer: Problem, constraints: tuple[str, ...]) -> Path:
    """A copy of the constraint knowledge where a new rule in every constraint flags each of
    the problem's options (so whatever the run concluded now raises red flags)."""
    target = root / "practicality"
    shutil.copytree(PRACTICALITY, target)
    flags = ", ".join(json.dumps(o.lower()) for o in grocer.options)
    for name in constraints:
        (target / name / f"pr-{name}-99-new-rule.md").write_text(
            f"---\nid: pr-{name}-99-new-rule\ntitle: New rule on the client's options\n"
            f"constraint: {name}\nred_flags: [{flags}]\n---\n\n"
            "A new rule makes each of these courses of action infeasible for this client: "
            + "; ".join(grocer.options)
            + ". None can proceed under the rule.\n",
            encoding="utf-8",
        )
    return target


def test_manifest_records_content_hashes_of_theory_and_constraint_knowledge(original, tmp_path):
    manifest = read_manifest(original)
    hashes = manifest.knowledge_hashes
    assert hashes is not None
    assert hashes.theory == knowledge_hash(load_documents(KNOWLEDGE))
    assert set(hashes.constraints) == set(manifest.constraints)
    for name, digest in hashes.constraints.items():
        assert digest == knowledge_hash(load_documents(PRACTICALITY / name))
    assert len(set(hashes.constraints.values())) == len(hashes.constraints)
    # A manifest written before knowledge hashes existed still reads.
    old = json.loads((original / "manifest.json").read_text())
    del old["knowledge_hashes"], old["rescore_of"]
    (tmp_path / "manifest.json").write_text(json.dumps(old))
    assert read_manifest(tmp_path).knowledge_hashes is None


def test_document_hash_ignores_location_but_not_content(tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(PRACTICALITY / "legal", moved)
    assert knowledge_hash(load_documents(moved)) == knowledge_hash(
        load_documents(PRACTICALITY / "legal")
    )
    doc = sorted(moved.glob("*.md"))[0]
    doc.write_text(doc.read_text() + "\nOne more sentence.\n")
    assert knowledge_hash(load_documents(moved)) != knowledge_hash(
        load_documents(PRACTICALITY / "legal")
    )


def test_rescore_flips_a_verdict_links_both_runs_and_leaves_the_original_untouched(
    original, tmp_path, grocer
):
    manifest = read_manifest(original)
    before = _snapshot(original)
    updated = _stricter_knowledge(tmp_path, grocer, manifest.constraints)
    out = tmp_path / "rescored"

    report = rescore(original, practicality_kb=updated, out=out, model=judge_model())

    final = report.sets[-1]
    assert final.final and not final.before.vetoed
    assert final.after.vetoed and final.outcome == "now_vetoed"
    assert final.after.mean_score <= FEASIBILITY < final.before.mean_score
    assert set(report.knowledge.values()) == {"changed"}
    assert report.conclusions and len(report.conclusions) == len(
        RunDir(original).read_result().conclusions
    )
    for conclusion in report.conclusions:
        assert conclusion.after_mean < conclusion.before_mean
        assert conclusion.flags  # why: the new rule's red flags
        assert set(conclusion.reasons) == set(manifest.constraints)
    assert not report.regenerated and "--regenerate" in report.regeneration_note
    assert not RunDir(out).finished  # no new deliberation without --regenerate

    # Linked: the new manifest names the original and its audit head; the new audit opens
    # with it and verifies.
    head = verify_log(original / "audit.jsonl").head
    assert head == RunDir(original).read_result().audit_head
    new_manifest = read_manifest(out)
    assert new_manifest.rescore_of is not None
    assert Path(new_manifest.rescore_of.run_dir) == original.resolve()
    assert new_manifest.rescore_of.audit_head == head
    assert new_manifest.rescore_of.knowledge_hashes == manifest.knowledge_hashes
    assert new_manifest.practicality_kb == str(updated)
    assert new_manifest.knowledge_hashes is not None and manifest.knowledge_hashes is not None
    assert new_manifest.knowledge_hashes.theory == manifest.knowledge_hashes.theory
    assert new_manifest.knowledge_hashes.constraints != manifest.knowledge_hashes.constraints
    records = list(read_records(out / "audit.jsonl"))
    assert isinstance(records[0].event, events.RescoreStart)
    assert records[0].payload["original"]["audit_head"] == head
    assert verify_log(out / "audit.jsonl").ok
    assert read_rescore(out) == report
    assert report.audit_head == records[-1].hash

    # The original run, byte for byte.
    assert _snapshot(original) == before


def test_rescore_against_the_same_knowledge_reproduces_the_verdicts(original, tmp_path):
    report = rescore(
        original, practicality_kb=PRACTICALITY, out=tmp_path / "same", model=judge_model()
    )
    assert set(report.knowledge.values()) == {"unchanged"}
    for s in report.sets:
        assert s.outcome in ("still_passes", "still_vetoed")
        assert s.after.mean_score == s.before.mean_score
        assert s.after.per_constraint == s.before.per_constraint
    assert "no new veto" in report.regeneration_note


def test_rescore_with_regenerate_continues_the_deliberation_from_the_new_veto(tmp_path, grocer):
    # The continued generation must propose a set: a threshold above the text's share leaves
    # room for new plans (below it, plans that share their decisions are refused as repeats).
    original = tmp_path / "original"
    first = run(
        original,
        grocer,
        model=judge_model(),
        calibrations=Calibrations(similarity_threshold=0.6),
        limits=Limits(max_regenerations=1),
        feasibility=FEASIBILITY,
    )
    assert first.conclusions and not first.vetoes[-1].vetoed
    updated = _stricter_knowledge(tmp_path, grocer, read_manifest(original).constraints)
    out = tmp_path / "regenerated"
    report = rescore(
        original, practicality_kb=updated, out=out, model=judge_model(), regenerate=True
    )
    assert report.sets[-1].outcome == "now_vetoed"
    assert report.regenerated
    result = RunDir(out).read_result()
    assert report.status == result.status
    assert result.regenerations == report.sets[-1].regeneration + 1
    assert result.vetoes[0] == report.sets[-1].after  # the new veto heads the continued run
    # Every generation of the continued run is judged and its verdict recorded in order.
    assert [v.regeneration for v in result.vetoes] == list(range(result.regenerations + 1))
    # A new generation follows only a veto; whether the last one passes is the model's judgement,
    # and the run's status says which.
    assert all(v.vetoed for v in result.vetoes[:-1])
    assert (result.status == "vetoed_out") == result.vetoes[-1].vetoed
    kinds = [r.kind for r in read_records(out / "audit.jsonl")]
    assert kinds[0] == "rescore.start" and kinds[-1] == "rescore.result"
    # One engine, one loop: the next generation is checkpointed after the last verdict and the
    # deliberation goes on from it; nothing is resumed from a checkpoint written beside the engine.
    after_verdicts = kinds.index("engine.checkpoint")
    assert kinds[after_verdicts - 1] == "rescore.verdict"
    assert kinds[after_verdicts + 1] == "llm.propose"  # the next generation's first call
    assert "engine.resume" not in kinds
    assert verify_log(out / "audit.jsonl").ok


def test_rescore_refuses_bad_inputs_and_writes_nothing(original, tmp_path):
    model = judge_model()
    with pytest.raises(InputError, match="not a finished run"):
        rescore(tmp_path, practicality_kb=PRACTICALITY, out=tmp_path / "x", model=model)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("x")
    with pytest.raises(InputError, match="already holds files"):
        rescore(original, practicality_kb=PRACTICALITY, out=busy, model=model)
    with pytest.raises(InputError, match="profile"):
        rescore(
            original, practicality_kb=PRACTICALITY, out=tmp_path / "p", model=model, profile="x"
        )
    assert not (tmp_path / "p").exists()
    tampered = tmp_path / "tampered"
    shutil.copytree(original, tampered)
    audit = tampered / "audit.jsonl"
    audit.write_text(audit.read_text().replace('"engine.result"', '"engine.resultx"', 1))
    with pytest.raises(AuditIntegrityError):
        rescore(tampered, practicality_kb=PRACTICALITY, out=tmp_path / "t", model=model)
    assert not (tmp_path / "t").exists()


def test_rescore_command_prints_json_and_tables(original, tmp_path, grocer, monkeypatch):
    monkeypatch.setattr(testing, "answer", judge)  # the run's backend, opened by the command
    updated = _stricter_knowledge(tmp_path, grocer, read_manifest(original).constraints)
    runner = CliRunner()
    out = tmp_path / "cli"
    args = ["rescore", str(original), "--practicality", str(updated), "--out", str(out), "--json"]
    result = runner.invoke(app, args, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["sets"][-1]["outcome"] == "now_vetoed"
    table = runner.invoke(
        app,
        ["rescore", str(original), "--practicality", str(updated), "--out", str(tmp_path / "t")],
        env={"COLUMNS": "160"},
    )
    assert table.exit_code == 0, table.output
    assert "now vetoed" in table.output and "not regenerated" in table.output


# -- kb diff ------------------------------------------------------------------------------------


def _edited_copy(src: Path, root: Path) -> tuple[Path, Path, dict[str, str]]:
    """Two copies of a knowledge folder; the second with one document removed, one edited and
    one added. Returns both and the expected change per id."""
    old, new = root / "old", root / "new"
    shutil.copytree(src, old)
    shutil.copytree(src, new)
    docs = load_documents(new)
    removed, edited = docs[0], docs[1]
    Path(removed.source).unlink()
    edited_path = Path(edited.source)
    edited_path.write_text(edited_path.read_text() + "\nA sentence added in review.\n")
    (new / "zz-added.md").write_text("# An added note\n\nSomething new to know.\n")
    return old, new, {removed.id: "removed", edited.id: "changed", "zz-added": "added"}


@pytest.mark.parametrize("src", [KNOWLEDGE, PRACTICALITY], ids=["theory", "constraints"])
def test_kb_diff_names_added_removed_and_changed_documents(src, tmp_path):
    old, new, expected = _edited_copy(src, tmp_path)
    diff = diff_folders(old, new)
    assert {c.id: c.change for c in diff.changes} == expected
    assert diff.unchanged == len(load_documents(src)) - 2
    assert diff.old_hash == knowledge_hash(load_documents(old)) != diff.new_hash
    for c in diff.changes:
        assert (c.old_hash is None) == (c.change == "added")
        assert (c.new_hash is None) == (c.change == "removed")
    assert diff_folders(src, old).identical


def test_kb_diff_command_json_table_and_exit_code(tmp_path):
    old, new, expected = _edited_copy(PRACTICALITY, tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["kb", "diff", str(old), str(new), "--json"])
    assert result.exit_code == 1
    assert {c["id"]: c["change"] for c in json.loads(result.output)["changes"]} == expected
    table = runner.invoke(app, ["kb", "diff", str(old), str(new)], env={"COLUMNS": "200"})
    assert "1 added, 1 removed, 1 changed" in table.output
    same = runner.invoke(app, ["kb", "diff", str(old), str(PRACTICALITY)])
    assert same.exit_code == 0 and "0 added, 0 removed, 0 changed" in same.output
    missing = runner.invoke(app, ["kb", "diff", str(old), str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
