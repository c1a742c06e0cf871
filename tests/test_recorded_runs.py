"""The engine's rules judged on recorded capable-model runs, with zero model calls.

Every test reads the fixtures of `tests.recorded` (whole runs whose replies a capable model
wrote by hand, answering each request alone) and asks whether what the engine did with those
replies is right: it never pins a model's wording. Severity, the monitor and the report act
after the model, so they are computed again from the recorded replies; a replay re-runs the
whole engine on the run's own cache.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hivemind_lab.agents.prompts import PROMPT_VERSION, split_task_block
from hivemind_lab.agents.schemas import (
    BatchScoreOutput,
    BatchScoreTask,
    OptionStance,
    ProposalOutput,
    ScoreOutput,
    ScoreTask,
)
from hivemind_lab.compliance import recorded_solutions
from hivemind_lab.deliberation import practicality
from hivemind_lab.experiments.replays import replay
from hivemind_lab.problems import Problem
from hivemind_lab.problems.intake import checked, quoted
from hivemind_lab.problems.intake_task import IntakeOutput
from hivemind_lab.reports.evidence import gather
from hivemind_lab.reports.summary import BODY_CONCERNS, summarise
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.rundir import RunDir
from tests.recorded import (
    calls,
    copy_run,
    intake_reply,
    manifest,
    named,
    recorded_baselines,
    recorded_runs,
    rescored,
    run_name,
    version,
)
from tests.support import PRACTICALITY

RUNS = recorded_runs()
IDS = [f"{run_name(r)}@{version(r)}" for r in RUNS]
CURRENT = [r for r in RUNS if manifest(r).prompt_version == PROMPT_VERSION]
"""Runs recorded with today's prompts: the engine runs again on them (replay, re-scoring) with
zero calls. Older runs stay readable (their calls, results and reports); they replay at the
commit their manifest names, since a prompt change changes every request."""
CURRENT_IDS = [run_name(r) for r in CURRENT]
SEVERITIES = (0.0, 0.25, 0.5, 0.75, 1.0)
OPTION_KEYS = {"option", "instead", "forbids", "limits", "not_first", "after", "about"}

pytestmark = pytest.mark.skipif(not RUNS, reason="no recorded runs in tests/fixtures/recorded")


def test_the_recorded_runs_cover_what_a_deliberation_meets():
    """At least eight runs at today's prompts: both profiles, exclusive and combinable
    decisions, an open question, a binding constraint that bars an option, one that only
    limits, and a veto."""
    made = [manifest(r) for r in CURRENT]
    assert len(made) >= 8
    assert {m.request.profile for m in made} >= {"enterprise", "individual"}
    decisions = [m.decision for m in made]
    assert any(d.exclusive is True for d in decisions)
    assert any(d.exclusive is False for d in decisions)
    assert any(not d.options for d in decisions)
    assert any(c.forbids or c.not_first for d in decisions for c in d.constraints)
    assert any(c.limits and not c.forbids for d in decisions for c in d.constraints)
    results = [RunDir(r).read_result() for r in CURRENT]
    assert any(result.vetoes and result.vetoes[0].vetoed for result in results)


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_a_recorded_run_says_what_model_it_was(run: Path):
    recorded = manifest(run)
    assert (recorded.backend, recorded.model) == ("openai", "hand")
    assert recorded.prompt_version <= PROMPT_VERSION


@pytest.mark.slow
@pytest.mark.parametrize("run", CURRENT, ids=CURRENT_IDS)
def test_a_recorded_run_replays_exactly_with_zero_calls(run: Path):
    report = replay(run)
    assert report.network_calls == 0
    assert report.identical, report.first_difference


BASELINES = recorded_baselines()


@pytest.mark.slow
@pytest.mark.parametrize("run", BASELINES, ids=[run_name(r) for r in BASELINES])
def test_a_recorded_baseline_replays_exactly_with_zero_calls(run: Path):
    report = replay(run)
    assert report.network_calls == 0
    assert report.identical, report.first_difference


def test_the_recorded_baselines_spend_no_more_than_their_deliberation():
    """Equal compute: on each recorded sweep, the vote and the single agent stay within the
    calls and tokens the deliberation beside them spent (on at least three problems)."""
    sweeps = {r.parent for r in BASELINES}
    assert len(sweeps) >= 3
    for sweep in sweeps:
        (deliberation,) = sweep.glob("deliberation-*")
        spent = RunDir(deliberation).read_result().usage
        for baseline in (r for r in BASELINES if r.parent == sweep):
            used = RunDir(baseline).read_result().usage
            assert used.calls <= spent.calls, run_name(baseline)
            assert used.tokens <= spent.tokens, run_name(baseline)


# -- severity acts once ------------------------------------------------------------------------


def _score_calls(run: Path) -> list[tuple[ScoreTask, ScoreOutput]]:
    """Every score the run's constraint agents gave, one per solution judged: a batched call's
    reply read as the single task of each solution it holds (with that solution's passages)."""
    out = []
    for call in calls(run):
        if call.kind == "llm.score":
            assert isinstance(call.task, ScoreTask) and isinstance(call.reply, ScoreOutput)
            out.append((call.task, call.reply))
        elif call.kind == "llm.score_batch":
            assert isinstance(call.task, BatchScoreTask)
            assert isinstance(call.reply, BatchScoreOutput)
            out += list(zip(call.task.singles(), call.reply.scores, strict=True))
    return out


def test_at_the_default_severity_a_constraint_agent_score_stands():
    """The rubric's score already weighs the agent's concerns: the engine takes it as given at
    the default severity, and moves it the same way for every model above and below."""
    replies = [out for run in RUNS for _, out in _score_calls(run)]
    assert len(replies) >= 40
    for out in replies:
        assert practicality.constraint_score(out, 0.5) == out.score
        moved = [practicality.constraint_score(out, s) for s in SEVERITIES]
        assert moved == sorted(moved, reverse=True)
    # severity has something to act on: the capable model's unmitigated concerns
    assert sum(any(not c.mitigated for c in out.concerns) for out in replies) >= 10


@pytest.mark.slow
def test_plans_the_constraint_agents_judge_feasible_pass_at_the_default_severity(tmp_path):
    """Re-judged by the engine on the recorded replies (zero calls): a set whose constraint
    agents' own scores average above the client's feasibility, with no binding veto, passes at
    the default severity, and severity moves set means and veto counts monotonically."""
    moved_somewhere = judged = 0
    for run in CURRENT:
        replies = {(t.constraint, t.solution.text()): out for t, out in _score_calls(run)}
        solutions = recorded_solutions(RunDir(run).audit_path)
        by_severity = {s: rescored(run, tmp_path / f"{run_name(run)}-{s}", s) for s in SEVERITIES}
        for verdict in by_severity[0.5].sets:
            after = verdict.after
            if any(score.vetoes for score in after.scores):
                continue  # a binding veto is 0 whatever the model judged
            own = [
                replies[score.constraint, solutions[score.solution_id].view().text()].score
                for score in after.scores
            ]
            model_mean = sum(own) / len(own)
            assert after.mean_score == pytest.approx(model_mean, abs=0.5)
            assert after.vetoed is (after.mean_score <= after.feasibility), (run_name(run), verdict)
            if model_mean > after.feasibility + 1:
                assert not after.vetoed, (run_name(run), model_mean, after.feasibility)
            judged += 1
        means = [[v.after.mean_score for v in by_severity[s].sets] for s in SEVERITIES]
        for column in zip(*means, strict=True):
            assert list(column) == sorted(column, reverse=True), (run_name(run), column)
            moved_somewhere += column[0] != column[-1]
        vetoes = [sum(v.after.vetoed for v in by_severity[s].sets) for s in SEVERITIES]
        assert vetoes == sorted(vetoes), (run_name(run), vetoes)
    assert judged and moved_somewhere


def test_a_plan_that_pursues_a_barred_option_scores_zero_whatever_the_model_wrote():
    """For every recorded score reply of a decision with a binding constraint that bars an
    option now, the same reply on a plan pursuing that option is 0: the decision's own record
    decides, not the model's number or words."""
    checked_any = False
    for run in RUNS:
        network = manifest(run).constraints
        for task, out in _score_calls(run):
            for constraint in task.constraints:
                for option in (*constraint.forbids, *constraint.not_first):
                    if not practicality.answers_for(constraint.kind, task.constraint, network):
                        continue
                    view = task.solution.model_copy(
                        update={"stances": (OptionStance(option=option, stance="pursue"),)}
                    )
                    bound = practicality.apply_binding(
                        round(practicality.constraint_score(out, 0.5)),
                        out,
                        task,
                        view,
                        agent=task.constraint,
                        network=network,
                    )
                    assert bound.score == 0 and bound.vetoes, (run_name(run), constraint.id)
                    checked_any = True
    assert checked_any


# -- the model's reading stands ------------------------------------------------------------------


def _problem(run: Path) -> Problem:
    request = manifest(run).request
    return Problem(
        id=request.problem_id,
        title=request.problem_title or request.problem_id,
        question=request.problem,
        client_data=request.client_data,
        market_data=request.market_data,
    )


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_every_option_the_model_quoted_is_kept(run: Path):
    """Read again by today's intake checks, the recorded reading keeps every option whose
    quote is in the text (nothing but the quote is checked), and the text's own facts stay
    with the model's added."""
    if manifest(run).decision.intake is None:
        pytest.skip("the problem file gave its options: no model intake")
    reply = IntakeOutput.model_validate(intake_reply(run))
    problem = _problem(run)
    decision, dropped = checked(reply, problem, reader_version="recheck")
    text = problem.question
    kept = {o.label for o in decision.options}
    for option in reply.options:
        if quoted(option.quote, text) and len(option.quote.split()) >= 2:
            assert option.label.strip() in kept or any(
                option.label.strip().casefold() == k.casefold() for k in kept
            ), (option, dropped)
    for reason in dropped:
        assert "quote" in reason or "twice" in reason, reason
    facts = " ".join(f.text for f in decision.facts).casefold()
    for fact in reply.facts:  # each quoted model fact is kept, or a text fact states its words
        if quoted(fact.quote, text):
            kept = " ".join(fact.text.split())[:200].casefold() in facts
            stated = " ".join(fact.quote.split()).strip(" \"'").casefold() in facts
            assert kept or stated, fact


# -- a solution says one thing -------------------------------------------------------------------


def _said(title: str, recommendations, stances) -> tuple[str, tuple[str, ...], frozenset]:
    return (
        title,
        tuple(recommendations),
        frozenset((s.option, s.stance) for s in stances),
    )


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_every_solution_is_one_reply_whole_or_the_previous_one(run: Path):
    """A solution's title, steps and stances come from one model reply of its agent, or are
    its previous solution whole (a revision held): never stances edited under other words."""
    replies: dict[str, set] = {}
    for call in calls(run):
        if isinstance(call.reply, ProposalOutput):
            agent = getattr(call.task, "agent_id", "")
            n = len(getattr(call.task, "options", ()))
            stances = [s for s in call.reply.stances if s.option < n]
            replies.setdefault(agent, set()).add(
                _said(call.reply.title, call.reply.recommendations, stances)
            )
    previous: dict[str, tuple] = {}
    seen = 0
    for record in read_records(RunDir(run).audit_path):
        event = record.event
        if not isinstance(event, events.Proposal):
            continue
        said = _said(event.title, event.recommendations, event.stances)
        assert said in replies.get(event.agent_id, set()) or said == previous.get(event.agent_id), (
            run.name,
            event.id,
        )
        previous[event.agent_id] = said
        seen += 1
    assert seen


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_the_report_headline_and_its_plan_come_from_one_solution(run: Path):
    evidence = gather(run)
    result = evidence.result
    if not result.conclusions:
        pytest.skip("no conclusion to head the report")  # a veto-out run shows the closest
    top = result.conclusions[0]
    own = evidence.own_justifications(top)
    shown = evidence.solutions[own[0].solution_id]
    assert tuple(shown.recommendations) == tuple(top.recommendations)
    report = summarise(evidence)
    plan = report.recommendation or report.unbacked
    assert plan is not None
    labels = list(evidence.decision.labels)
    for st in shown.stances:
        if st.stance == "pursue" and st.option < len(labels):
            assert labels[st.option] in plan.title, (plan.title, labels[st.option])


# -- the wire ------------------------------------------------------------------------------------


def _option_refs(node: object, key: str = "") -> list[object]:
    if isinstance(node, dict):
        return [v for k, child in node.items() for v in _option_refs(child, k)]
    if isinstance(node, list):
        return [v for child in node for v in _option_refs(child, key)]
    return [node] if key in OPTION_KEYS and node is not None else []


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_no_request_names_an_option_by_a_zero_based_index(run: Path):
    """Options reach the model as letters (the client reads the list from A), whatever the
    engine keeps inside."""
    found = 0
    for record in read_records(RunDir(run).audit_path):
        event = record.event
        if not isinstance(event, events.ModelCall):
            continue
        user = next(m["content"] for m in event.prompt if m["role"] == "user")
        block = split_task_block(user)
        assert block is not None
        refs = _option_refs(json.loads(block.data))
        assert all(isinstance(r, str) and len(r) == 1 and r.isupper() for r in refs), refs
        found += len(refs)
    if manifest(run).decision.options:
        assert found


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_a_score_request_carries_only_its_own_knowledge_signals(run: Path):
    """Red flags and mitigations come from the documents the constraint agent retrieved for
    that solution, not from the whole constraint corpus."""
    agents = {
        a.constraint: a
        for a in practicality.build_constraint_agents(PRACTICALITY, manifest(run).constraints)
    }
    for call in calls(run):
        task = call.task
        if not isinstance(task, ScoreTask | BatchScoreTask):
            continue
        flags, mitigations = agents[task.constraint].signals(task.evidence)
        assert set(task.red_flags) == set(flags) and set(task.mitigations) == set(mitigations)


def test_every_recorded_call_kind_is_read():
    kinds = {c.kind for run in RUNS for c in calls(run)}
    assert {"llm.propose", "llm.revise", "llm.score", "llm.score_batch"} <= kinds
    assert kinds >= {"llm.critique", "llm.critique_batch", "llm.synthesize"}


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_a_recorded_run_report_is_sized_for_an_executive(run: Path, tmp_path: Path):
    """The body (from the summary to the appendix) stays under a word budget; each concern of the plan is
    said once; the engine's ids (agents, constraints, facts) never reach the reader."""
    from hivemind_lab.reports import render_markdown

    copy = copy_run(run, tmp_path)
    body = render_markdown(copy).split("## Appendix")[0]
    # what the report writes, from the summary on (above it: the client's own question,
    # options and constraints)
    words = len(body.split("## Summary")[1].split())
    others = len(RunDir(run).read_result().conclusions[1:])  # a split shows each side's plan
    assert words <= 2500 + 750 * others, words
    assert not re.search(r"\btheory-\d+\b|\bconstraint\.\d+\b|\bquestion\.\d+\b", body)
    concerns = re.findall(r"raised by [^:]+: “(.{40,}?)”", body)
    assert len(concerns) == len(set(concerns))
    review = body.split("## Feasibility review")[-1] if "## Feasibility review" in body else ""
    assert review.count("raised by") <= BODY_CONCERNS  # the rest are in the appendix
    assert re.search(r"^- A\. ", body, re.MULTILINE) or not manifest(run).decision.options


def test_a_stop_after_the_plans_passed_review_does_not_read_as_a_near_miss(tmp_path: Path):
    """A run stopped by its budget after its set passed the practicality review (a recorded
    grocer run, its result set to that outcome) says the set passed, not 'closest to passing'
    nor a feasibility that 'would have passed' it."""
    from hivemind_lab.reports import render_markdown

    copy = copy_run(named("grocer"), tmp_path)
    result = RunDir(copy).read_result()
    assert result.vetoes and not result.vetoes[-1].vetoed
    stopped = result.model_copy(update={"status": "budget_exhausted", "conclusions": ()})
    (copy / "result.json").write_text(stopped.model_dump_json())
    text = " ".join(render_markdown(copy).split())
    assert "passed the practicality review" in text
    assert "Closest to passing" not in text and "would have passed it" not in text


@pytest.mark.browser
def test_page_one_of_a_recorded_run_pdf_is_the_decision(tmp_path: Path):
    """Printed, a capable model's report opens with the decision and its recommendation on
    page 1 (the client's long question stays folded)."""
    import subprocess

    from hivemind_lab.reports import write_report

    copy = copy_run(named("bakery"), tmp_path)
    write_report(copy, out=tmp_path / "r.html", pdf=True)
    first = subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", str(tmp_path / "r.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "The decision" in first and "Summary" in first and "Pursue" in first


# -- many models in one run: a capable model beside the stand-in ----------------------------------

MIXED = [r for r in CURRENT if manifest(r).roster is not None]


@pytest.mark.parametrize("run", MIXED, ids=[run_name(r) for r in MIXED])
def test_a_recorded_mixed_run_says_which_model_answered_each_call(run: Path):
    """Every call record names the model of the agent that made it, the per-model usage lines
    add up to the run's, and the result lists each model with its agents."""
    recorded, result = manifest(run), RunDir(run).read_result()
    models = {a: f"{m.backend}:{m.model}" for a, m in recorded.agent_models.items()}
    assert len(set(models.values())) >= 2
    for record in read_records(RunDir(run).audit_path):
        event = record.event
        if isinstance(event, events.ModelCall) and record.actor in models:
            assert f"{event.backend}:{event.model}" == models[record.actor], record.actor
    lines = {share.model: share for share in result.models}
    assert set(lines) >= set(models.values())
    assert sum(s.usage.calls for s in lines.values()) == result.usage.calls
    for agent, name in models.items():
        assert agent in lines[name].agents


@pytest.mark.parametrize("run", MIXED, ids=[run_name(r) for r in MIXED])
async def test_what_one_model_of_a_recorded_run_concluded_the_other_never_did(
    run: Path, tmp_path: Path
):
    """Exported to the graph, a mixed run's claims are held by each agent's model, and
    hivemind_divergence answers what the capable model concluded that the stand-in did not."""
    from hivemind_lab.experiments.graph_export import agent_models
    from tests.mcp_support import divergence

    copy = copy_run(run, tmp_path / "runs")
    model_of = agent_models(manifest(copy))
    a, b = sorted(set(model_of.values()))
    report, held = await divergence(copy.parent, a, b, tmp_path / "g.lbdb")
    assert {a, b} <= held
    mine = {m: {x for x, n in model_of.items() if n == m} for m in (a, b)}
    for side, model in (("unique_to_a", a), ("unique_to_b", b)):
        agents = {c["subject"].rsplit(":", 1)[-1] for c in report[side]} & set(model_of)
        assert agents and agents <= mine[model], (side, agents)
