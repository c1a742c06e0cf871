"""The offline agent model: it reasons about the client's options, deterministically."""

from __future__ import annotations

import json

import pytest

from hivemind_lab.agents.policy import OfflineAgentModel
from hivemind_lab.agents.policy.practicality import matched
from hivemind_lab.agents.prompts import MAX_TOKENS, parse_task, render
from hivemind_lab.agents.schemas import (
    BatchCritiqueTask,
    CritiquePoint,
    CritiqueTarget,
    CritiqueTask,
    Evidence,
    OptionStance,
    ProposalOutput,
    ProposeTask,
    ReceivedCritique,
    ReviseTask,
    ScoreTask,
    SolutionView,
)
from hivemind_lab.llm.base import ChatMessage, ChatRequest
from hivemind_lab.problems.decision import Fact

PROBLEM = (
    "An e-bike maker must choose between premium cargo bikes, licensing its drivetrain to car "
    "makers, or a subscription service."
)
OPTIONS = (
    "Premium cargo bikes",
    "Licensing its drivetrain to car makers",
    "A subscription service",
)
FACTS = (
    Fact(id="cd-1.1", text="Cash runway is 14 months at the current burn rate.", source="client"),
    Fact(
        id="cd-1.2",
        text="Two car makers sent licensing enquiries for the drivetrain in 2026.",
        source="client",
    ),
    Fact(id="md-1.1", text="Cargo bike sales in Europe grew 11 percent in 2025.", source="market"),
)
LICENSING_GOOD = Evidence(
    id="lic#0",
    document_id="lic",
    score=9.0,
    topics=("licensing",),
    about=(1,),
    text=(
        "Licensing a proven component to larger manufacturers earns royalties with little "
        "capital and succeeds when the licensor keeps improving the technology. Firms that "
        "license their drivetrain gain scale and steady revenue."
    ),
)
CARGO_RISKY = Evidence(
    id="cargo#0",
    document_id="cargo",
    score=8.0,
    topics=("product-launch",),
    about=(0,),
    text=(
        "Premium cargo bike launches are costly: tooling, dealer training and inventory burn "
        "cash for years, and most new premium lines struggle to reach volume."
    ),
)
SUBSCRIPTION_GOOD = Evidence(
    id="sub#0",
    document_id="sub",
    score=8.5,
    topics=("business-models",),
    about=(2,),
    text=(
        "A subscription service builds recurring revenue and loyal customers, and subscription "
        "models succeed where maintenance is a real burden for owners."
    ),
)


def propose_task(*evidence: Evidence, **extra) -> ProposeTask:
    return ProposeTask(
        agent_id="theory-00",
        problem=PROBLEM,
        options=OPTIONS,
        facts=FACTS,
        evidence=evidence,
        **extra,
    )


async def ask(task, seed: int | None = 0) -> dict:
    response = await OfflineAgentModel().complete(render(task, seed=seed))
    return json.loads(response.content)


async def test_same_request_gives_byte_identical_reply():
    task = propose_task(LICENSING_GOOD, CARGO_RISKY, SUBSCRIPTION_GOOD)
    model = OfflineAgentModel()
    a = await model.complete(render(task, seed=3))
    b = await model.complete(render(task, seed=3))
    assert a.content == b.content


async def test_proposal_chooses_among_the_options_and_names_a_client_fact():
    out = ProposalOutput.model_validate(await ask(propose_task(LICENSING_GOOD, CARGO_RISKY)))
    stances = {s.option: s.stance for s in out.stances}
    assert stances[1] == "pursue"  # the evidence favours licensing
    assert stances.get(0) == "avoid"  # and weighs against the costly launch
    assert OPTIONS[1].lower() in out.recommendations[0].lower()
    assert "lic#0" in out.citations
    assert out.facts_used and set(out.facts_used) <= {f.id for f in FACTS}
    fact_texts = {f.id: f.text for f in FACTS}
    quoted = [
        fid
        for fid in out.facts_used
        if fact_texts[fid].rstrip(".") in " ".join(out.recommendations)
    ]
    assert quoted, out.recommendations
    for rec in out.recommendations:  # every recommendation names an option or a fact
        assert any(o.lower() in rec.lower() for o in OPTIONS) or any(
            f.text.rstrip(".")[:40] in rec for f in FACTS
        ), rec


async def test_different_evidence_gives_a_different_decision():
    licensing = ProposalOutput.model_validate(await ask(propose_task(LICENSING_GOOD, CARGO_RISKY)))
    subscription = ProposalOutput.model_validate(
        await ask(propose_task(SUBSCRIPTION_GOOD, CARGO_RISKY))
    )
    assert licensing.stances != subscription.stances
    doing = {s.option for s in subscription.stances if s.stance in ("pursue", "later")}
    assert 2 in doing
    assert 2 not in {s.option for s in licensing.stances}


async def test_excluded_plans_are_not_proposed_again():
    first = ProposalOutput.model_validate(await ask(propose_task(LICENSING_GOOD, CARGO_RISKY)))
    again = ProposalOutput.model_validate(
        await ask(propose_task(LICENSING_GOOD, CARGO_RISKY, excluded=(first.view(),)))
    )
    assert again.stances != first.stances
    assert again.recommendations != first.recommendations


async def test_without_options_agents_propose_their_own_and_say_so():
    advice = Evidence(
        id="adv#0",
        document_id="adv",
        score=3.0,
        text="Firms that want to grow should license a proven component before building plants.",
    )
    task = ProposeTask(agent_id="a", problem="How should we grow?", evidence=(advice,))
    out = ProposalOutput.model_validate(await ask(task))
    assert out.course is not None and out.course.backed
    assert "license a proven component" in out.course.action
    assert not out.stances


NEWSPAPER = (
    "The Harbour Gazette is a regional newspaper: print circulation fell 18% in two years and "
    "advertising revenue is down a quarter. What should the newspaper do about its readers?"
)
PAY = Evidence(
    id="pay#0",
    document_id="pay",
    score=9.0,
    text="Boards should tie executive pay to long-term growth rather than to the share price.",
)
READERS = Evidence(
    id="readers#0",
    document_id="readers",
    score=2.0,
    text=(
        "Publishers whose print circulation declines should convert loyal print readers to "
        "digital subscriptions before cutting print days."
    ),
)


async def test_an_own_course_answers_the_problem_not_whatever_shares_strategy_words():
    only_pay = ProposeTask(agent_id="a", problem=NEWSPAPER, evidence=(PAY,))
    out = ProposalOutput.model_validate(await ask(only_pay))
    assert "pay#0" not in out.citations
    assert "executive" not in out.recommendations[0].lower()
    assert "evidence" in out.recommendations[0].lower()  # it says the evidence is missing
    both = ProposeTask(agent_id="a", problem=NEWSPAPER, evidence=(PAY, READERS))
    out = ProposalOutput.model_validate(await ask(both))
    assert out.citations == ["readers#0"]  # the weaker hit that bears on the problem's terms


async def test_an_own_course_speaks_to_what_the_problem_asks_not_to_its_background():
    problem = (
        "A family bakery with 12 employees and two vans sells sourdough in three villages. "
        "How should the bakery price its sourdough?"
    )
    background = Evidence(
        id="bg#0",
        document_id="bg",
        score=5.0,
        text="Family owners should give long-serving employees a share of the vans they drive.",
    )
    describes = Evidence(
        id="de#0",
        document_id="de",
        score=5.0,
        text="The chapter focuses on how a bakery can price sourdough against supermarkets.",
    )
    task = ProposeTask(agent_id="a", problem=problem, evidence=(background, describes))
    out = ProposalOutput.model_validate(await ask(task))
    assert not out.citations  # neither advises on the ask: one is background, one describes
    assert "evidence" in out.recommendations[0].lower()


def test_a_course_about_firms_in_general_is_put_to_the_problems_own_subject():
    from hivemind_lab.agents.policy.own_course import addressed, subject_of

    assert subject_of("Sales fell. How should the regional grocer respond?") == (
        "the regional grocer"
    )
    assert subject_of("How should we grow?") is None
    course = addressed("Firms should price both sides jointly.", "the marketplace")
    assert "the marketplace" in course and "price both sides" in course
    assert addressed("Publishers should go digital.", "the gazette") == (
        "Publishers should go digital."
    )


def _critique(position: SolutionView, target: SolutionView, *evidence: Evidence) -> CritiqueTask:
    return CritiqueTask(
        critic_id="theory-01",
        problem=PROBLEM,
        options=OPTIONS,
        facts=FACTS,
        critic_position=position,
        target_id="theory-02",
        target=target,
        evidence=evidence,
    )


def _view(*stances: tuple[int, str], recs: tuple[str, ...] = ("Do it.",)) -> SolutionView:
    return SolutionView(
        title="t",
        recommendations=recs,
        stances=tuple(OptionStance.model_validate({"option": o, "stance": s}) for o, s in stances),
    )


async def test_critique_contradiction_comes_from_evidence_without_negation_words():
    # The critic's evidence on cargo bikes speaks of cost and struggle: no "not", "never", "no".
    target = _view((0, "pursue"), recs=("Choose premium cargo bikes now.",))
    position = _view((1, "pursue"), (0, "avoid"))
    out = await ask(_critique(position, target, CARGO_RISKY, LICENSING_GOOD))
    points = [CritiquePoint.model_validate(p) for p in out["points"]]
    contradiction = [p for p in points if p.kind == "contradiction"]
    assert contradiction and contradiction[0].option == 0
    assert contradiction[0].citation == "cargo#0"
    assert contradiction[0].recommendation == 0
    assert any(p.kind == "gap" and p.option == 1 for p in points)  # licensing ignored


async def test_critique_names_a_client_fact_the_target_ignores():
    target = _view((1, "pursue"), recs=("Choose licensing its drivetrain to car makers.",))
    out = await ask(_critique(_view((1, "pursue")), target, LICENSING_GOOD))
    gaps = [p for p in out["points"] if p["kind"] == "gap" and p["citation"] == "cd-1.2"]
    assert gaps, out["points"]


async def test_batched_critique_says_the_same_as_pairwise():
    position = _view((1, "pursue"), (0, "avoid"))
    targets = [_view((0, "pursue")), _view((2, "pursue"))]
    pairwise = [await ask(_critique(position, t, CARGO_RISKY, LICENSING_GOOD)) for t in targets]
    batch = await ask(
        BatchCritiqueTask(
            critic_id="theory-01",
            problem=PROBLEM,
            options=OPTIONS,
            facts=FACTS,
            critic_position=position,
            targets=tuple(
                CritiqueTarget(target_id=f"t{i}", target=t) for i, t in enumerate(targets)
            ),
            evidence=(CARGO_RISKY, LICENSING_GOOD),
        )
    )
    assert [c["points"] for c in batch["critiques"]] == [p["points"] for p in pairwise]


def _point(option: int, citation: str, strength: int = 4) -> CritiquePoint:
    return CritiquePoint.model_validate(
        {
            "kind": "contradiction",
            "option": option,
            "claim": f"Against option {option} ({citation}).",
            "strength": strength,
            "citation": citation,
        }
    )


def engine_lists(critiques, stubbornness: float) -> dict:
    """The points the engine tells the reviser to answer or weigh (every citation shown)."""
    from hivemind_lab.deliberation.theory import weigh_points

    shown = {c.critic_id: frozenset(p.citation for p in c.points if p.citation) for c in critiques}
    weighing = weigh_points(critiques, shown, stubbornness)
    return {"must_answer": weighing.must_answer, "may_weigh": weighing.may_weigh}


def _revise(stubbornness: float, critiques: tuple[ReceivedCritique, ...]) -> ReviseTask:
    # The reviser's own reading must not back cargo bikes (it would then rightly reject a
    # point it may weigh): no market fact on cargo sales, licensing evidence only.
    current = ProposalOutput(
        title="Premium cargo bikes",
        stances=[OptionStance(option=0, stance="pursue")],
        recommendations=["Choose premium cargo bikes."],
        rationale="r",
    )
    return ReviseTask(
        agent_id="theory-00",
        problem=PROBLEM,
        options=OPTIONS,
        facts=tuple(f for f in FACTS if f.source == "client"),
        current=current,
        critiques=critiques,
        stubbornness=stubbornness,
        evidence=(LICENSING_GOOD,),
        **engine_lists(critiques, stubbornness),
    )


async def test_stubbornness_acts_across_its_whole_range():
    # Three independent passages against cargo bikes: evidence weight about 0.88.
    three = (
        ReceivedCritique(critic_id="a", points=(_point(0, "p1", 4),)),
        ReceivedCritique(critic_id="b", points=(_point(0, "p2", 3),)),
        ReceivedCritique(critic_id="c", points=(_point(0, "p3", 3),)),
    )
    adopted = {
        s: len((await ask(_revise(s, three)))["adopted"]) for s in (0.0, 0.5, 0.8, 0.95, 1.0)
    }
    assert adopted[0.0] == adopted[0.5] == adopted[0.8] == 1
    assert adopted[0.95] == adopted[1.0] == 0
    moved = await ask(_revise(0.8, three))
    assert {s["option"]: s["stance"] for s in moved["stances"]}.get(0) != "pursue"


async def test_points_weigh_by_evidence_not_by_how_many_critics_repeat_them():
    same_passage = tuple(
        ReceivedCritique(critic_id=c, points=(_point(0, "p1", 5),)) for c in "abcdef"
    )
    distinct = tuple(
        ReceivedCritique(critic_id=c, points=(_point(0, f"p{i}", 5),))
        for i, c in enumerate("abcdef")
    )
    # Six critics citing one passage weigh as one (0.75); six passages weigh far more.
    assert (await ask(_revise(0.8, same_passage)))["adopted"] == []
    assert len((await ask(_revise(0.8, distinct)))["adopted"]) == 1


def _score_task(recs: tuple[str, ...], stances=((1, "pursue"),)) -> ScoreTask:
    return ScoreTask(
        problem=PROBLEM,
        options=OPTIONS,
        facts=FACTS,
        constraint="financial",
        solution_id="s",
        solution=_view(*stances, recs=recs),
        evidence=(),
        red_flags=("market allocation", "minority stake", "debt-financed acquisition"),
        mitigations=("staged rollout",),
    )


def test_red_flags_match_as_phrases_in_context():
    assert matched(["market allocation"], ["Agree a market allocation with the rival."])
    assert not matched(["market allocation"], ["Create new market space; allocation of staff."])
    assert not matched(["minority stake"], ["Everything is at stake for the minority owners."])
    assert not matched(["market allocation"], ["Do not agree a market allocation."])


async def test_flags_become_concerns_and_severity_is_left_to_the_engine():
    from hivemind_lab.agents.schemas import ScoreOutput
    from hivemind_lab.deliberation.practicality import constraint_score

    risky = ("Fund a debt-financed acquisition of a rival.",)
    # the stand-in only judges: severity is not in what it is asked, and acts in the engine
    assert "severity" not in ScoreTask.model_fields
    strict = await ask(_score_task(risky))
    assert "debt-financed acquisition" in strict["flags"]
    assert any(not c["mitigated"] for c in strict["concerns"])
    risky_out = ScoreOutput.model_validate(strict)
    assert constraint_score(risky_out, 0.1) > constraint_score(risky_out, 0.9)
    clean = ScoreOutput.model_validate(
        await ask(_score_task(("License the drivetrain with a staged rollout.",)))
    )
    assert constraint_score(clean, 0.5) > constraint_score(risky_out, 0.5)


async def test_offline_model_refuses_prompts_that_are_not_agent_tasks():
    request = ChatRequest(messages=(ChatMessage(role="user", content="Tell me a joke"),))
    with pytest.raises(ValueError, match="only answers hivemind agent task"):
        await OfflineAgentModel().complete(request)


def test_task_round_trips_through_the_prompt_with_a_token_limit():
    task = propose_task(LICENSING_GOOD)
    request = render(task)
    assert parse_task(request) == task
    assert request.max_tokens == MAX_TOKENS["propose"]


def test_every_output_list_and_string_is_bounded():
    from hivemind_lab.agents.prompts import OUTPUT_TYPES

    def walk(schema: dict, defs: dict, path: str) -> None:
        if "$ref" in schema:
            walk(defs[schema["$ref"].split("/")[-1]], defs, path)
            return
        for alt in schema.get("anyOf", []):
            walk(alt, defs, path)
        kind = schema.get("type")
        if kind == "array":
            assert "maxItems" in schema, path
            walk(schema["items"], defs, path + "[]")
        elif kind == "string" and "enum" not in schema and "const" not in schema:
            assert "maxLength" in schema, path
        elif kind in ("number", "integer"):
            assert "enum" in schema, path  # grammars do not enforce ranges, only enums
        for name, sub in schema.get("properties", {}).items():
            walk(sub, defs, f"{path}.{name}")

    for name, output in OUTPUT_TYPES.items():
        schema = output.model_json_schema()
        walk(schema, schema.get("$defs", {}), name)


def _member(agent: str, stances, facts_used, citations) -> dict:
    return {
        "agent_id": agent,
        "title": "t",
        "stances": [{"option": o, "stance": s} for o, s in stances],
        "recommendations": ["r"],
        "rationale": "why",
        "citations": citations,
        "facts_used": facts_used,
    }


async def test_offline_synthesis_names_shared_reasons_differences_and_the_objection():
    from hivemind_lab.agents.schemas import RationaleOutput, SynthesizeTask

    task = SynthesizeTask.model_validate(
        {
            "problem": PROBLEM,
            "options": OPTIONS,
            "facts": [f.model_dump() for f in FACTS],
            "cluster_index": 0,
            "members": [
                _member("theory-00", [(1, "pursue"), (0, "avoid")], ["cd-1.2"], ["lic#0", "a#1"]),
                _member("theory-01", [(1, "pursue"), (2, "later")], ["cd-1.2"], ["lic#0"]),
                _member("theory-02", [(1, "pursue")], ["cd-1.2", "cd-1.1"], ["b#3"]),
            ],
            "objections": [
                {
                    "critic_id": "theory-05",
                    "target_id": "theory-01",
                    "option": 1,
                    "claim": "Licensing hands rivals the drivetrain.",
                    "strength": 4,
                    "citation": "x#1",
                }
            ],
        }
    )
    out = RationaleOutput.model_validate(await ask(task))
    assert "All 3 agents choose “Licensing its drivetrain to car makers”" in out.shared
    assert "Two car makers sent licensing enquiries" in out.shared  # the fact all three use
    differences = out.differences.casefold()
    assert "premium cargo bikes" in differences and "a subscription service" in differences
    assert "Licensing hands rivals the drivetrain." in out.objection
    assert "lic#0" in out.citations and "lic#0" not in out.text()  # ids cited, never listed


def test_stances_on_options_the_problem_lacks_are_dropped():
    from hivemind_lab.deliberation.theory import _solution

    out = ProposalOutput.model_validate(
        {
            "title": "t",
            "stances": [
                {"option": 6, "stance": "pursue"},
                {"option": 1, "stance": "later"},
                {"option": 1, "stance": "pursue"},
            ],
            "recommendations": ["r"],
            "rationale": "",
        }
    )
    solution = _solution("theory-00", out, regeneration=0, round=0, n_options=3)
    assert [(s.option, s.stance) for s in solution.stances] == [(1, "pursue")]


def test_a_sale_of_the_business_is_never_a_first_step_with_something_after_it():
    from hivemind_lab.agents.policy.theory import plans

    options = ("Sell the company to a trade buyer", "Build a second plant", "Sell online")
    for scores in ([0.6, 0.55, 0.1], [0.55, 0.6, 0.1], [0.6, 0.1, 0.55]):
        for plan in plans(options, scores):
            assert not (plan.now == (0,) and plan.later), (scores, plan)
    # selling products is not selling the business: it may still come first
    assert any(p.now == (2,) and p.later == (1,) for p in plans(options, [0.1, 0.55, 0.6]))


def test_waiting_first_is_titled_as_waiting_not_as_a_first_step():
    from hivemind_lab.agents.policy.theory import Plan, plan_title

    options = ("Acquire the rival", "Decline to acquire the rival")
    assert "first, then" not in plan_title(options, Plan((1,), (0,)))
    assert "first, then" in plan_title(options, Plan((0,), (1,)))


def test_evidence_against_a_move_speaks_for_declining_it():
    from hivemind_lab.agents.policy.reading import judge
    from hivemind_lab.agents.schemas import Evidence

    options = ("Acquire the rival", "Decline to acquire the rival")
    text = "Acquisitions of rivals usually fail and destroy value. Buyers overpay."
    evidence = [Evidence(id="d#1", document_id="d", text=text, score=1.0, about=(0, 1))]
    acquire, decline = judge(options, evidence, ())
    assert acquire.score < 0 < decline.score
    assert "d#1" in decline.support and "d#1" in acquire.against


def test_the_combined_rationale_names_the_options_whole():
    from hivemind_lab.agents.policy.monitor import synthesize
    from hivemind_lab.agents.schemas import ClusterMember, OptionStance, SynthesizeTask

    pursue = OptionStance.model_validate({"option": 0, "stance": "pursue"})
    members = tuple(
        ClusterMember(
            agent_id=a, title="t", stances=(pursue,), recommendations=("r",), rationale=""
        )
        for a in ("a", "b")
    )
    task = SynthesizeTask(
        problem="Should Acme acquire Beta?",
        options=("Acquire Beta", "Decline to acquire Beta"),
        facts=(),
        cluster_index=0,
        members=members,
    )
    assert "Acquire Beta" in synthesize(task).shared


def test_a_quoted_client_fact_is_marked_and_never_cut_open():
    from hivemind_lab.agents.policy.phrasing import quoting
    from hivemind_lab.wire import MAX_TEXT

    fact = Fact(id="q.1", text="I earn $185k at a bank. " * 12, source="question")
    for lead in ("Join the startup: judged against ", "Xy " * 100 + ": ", "Xy " * 130 + ": "):
        text = quoting(lead, fact)
        assert len(text) <= MAX_TEXT
        assert text.count("“") == 1 and text.count("”") == 1


def _own(course: str, *, backed: bool = True):
    from hivemind_lab.agents.schemas import OwnCourse, ProposalOutput

    return ProposalOutput(
        title=course[:150],
        course=OwnCourse(action=course, backed=backed),
        recommendations=[course],
        rationale="",
    )


def test_on_an_open_question_a_critic_argues_for_its_own_course_from_its_evidence():
    from hivemind_lab.agents.policy.open_ended import critique_own
    from hivemind_lab.agents.schemas import DecisionContext, Evidence

    ctx = DecisionContext(problem="How should the newspaper survive?", options=(), facts=())
    evidence = [
        Evidence(
            id="a#1", document_id="a", text="Paywalls succeed and grow loyal readers.", score=1
        ),
        Evidence(id="b#1", document_id="b", text="Print cuts fail and erode readers.", score=1),
    ]
    mine, theirs = _own("Build a digital paywall"), _own("Cut print editions")
    points, _ = critique_own(ctx, mine.view(), theirs.view(), evidence)
    assert [p.kind for p in points] == ["contradiction"]
    assert points[0].course == "Build a digital paywall"


def test_on_an_open_question_an_agent_adopts_a_course_peers_back_with_enough_evidence():
    from hivemind_lab.agents.policy.open_ended import course_of, revise_own
    from hivemind_lab.agents.schemas import CritiquePoint, ReceivedCritique, ReviseTask

    def critique(critic: str, course: str, cite: str) -> ReceivedCritique:
        point = CritiquePoint(
            kind="contradiction", claim="another course", course=course, strength=4, citation=cite
        )
        return ReceivedCritique(critic_id=critic, points=(point,))

    def revised(stubbornness: float, *critiques: ReceivedCritique) -> str | None:
        task = ReviseTask(
            problem="How should we grow?",
            options=(),
            facts=(),
            agent_id="t",
            current=_own("Open a shop"),
            critiques=critiques,
            stubbornness=stubbornness,
            **engine_lists(critiques, stubbornness),
        )
        return course_of(revise_own(task).view())

    two = (critique("c1", "Sell online", "a#1"), critique("c2", "Sell online", "b#1"))
    assert revised(0.3, *two) == "Sell online"
    assert revised(1.0, *two) == "Open a shop"  # 1 never moves
    # two lone proposers never swap back and forth: only the course that sorts first wins
    assert revised(0.3, critique("c1", "Rent a van", "a#1")) == "Open a shop"
    assert revised(0.3, critique("c1", "Bake at night", "a#1")) == "Bake at night"


def test_an_agent_without_evidence_adopts_a_lone_peers_course_that_has_some():
    from hivemind_lab.agents.policy.open_ended import course_of, revise_own
    from hivemind_lab.agents.schemas import CritiquePoint, ReceivedCritique, ReviseTask

    point = CritiquePoint(
        kind="contradiction",
        claim="another course",
        course="Sell subscriptions",
        strength=4,
        citation="a#1",
    )
    task = ReviseTask(
        problem="How should the newspaper survive?",
        options=(),
        facts=(),
        agent_id="t",
        current=_own("Decide from the client's own facts", backed=False),
        critiques=(ReceivedCritique(critic_id="c1", points=(point,)),),
        stubbornness=0.3,
        **engine_lists((ReceivedCritique(critic_id="c1", points=(point,)),), 0.3),
    )
    assert course_of(revise_own(task).view()) == "Sell subscriptions"


def test_one_normaliser_keeps_international_apart_from_internal():
    from hivemind_lab.agents.policy.reading import bearing, option_weights
    from hivemind_lab.text import stem, stems

    assert stem("international") != stem("internal")
    assert stem("acquisitions") == stem("acquisition")
    (w,) = option_weights(("Expand internationally",))
    assert bearing(frozenset(stems("Internal development keeps costs down.")), w) == 0.0
    assert bearing(frozenset(stems("International expansion pays off.")), w) > 0.0


@pytest.mark.parametrize(
    ("sentence", "sign"),
    [
        ("Interest in the product is low.", -1),  # the probe
        ("Interest in the product is high.", 1),
        ("Demand for the new service is weak.", -1),
        ("Low interest among younger buyers.", -1),
        ("Customer losses are declining.", 1),
        ("The firm's debt is low.", 1),
        ("Sales fell sharply last year.", -1),
        ("Acquisitions rarely succeed.", -1),
        ("The launch did not succeed.", -1),
        ("Loyalty is strong, and churn is low.", 1),
    ],
)
def test_polarity_turns_a_cue_that_a_negative_quantity_word_governs(sentence, sign):
    from hivemind_lab.agents.policy.reading import polarity

    assert polarity(sentence) * sign > 0, polarity(sentence)


def test_a_negative_quantity_word_does_not_reach_into_another_clause():
    from hivemind_lab.agents.policy.reading import polarity

    assert polarity("Interest is strong, but margins are low.") > 0
    assert polarity("Margins are low; interest is strong.") > 0


def test_every_word_list_is_a_data_file_with_its_origin():
    from importlib import resources

    from hivemind_lab.agents.policy.lexicon import words

    folder = resources.files("hivemind_lab.agents.policy").joinpath("lexicon")
    names = [f.name for f in folder.iterdir() if f.name.endswith(".txt")]
    assert len(names) >= 10
    for name in names:
        head = folder.joinpath(name).read_text("utf-8").splitlines()[0]
        assert head.startswith("# ") and "not tuned to any sample problem" in head, name
        if name != "families.txt":
            assert words(name.removesuffix(".txt")), name


@pytest.mark.parametrize(
    ("sentence", "sign"),
    [
        ("Operating margins fell to 1 percent.", -1),
        ("Incumbents that cut prices saw their margins fall.", -1),
        ("Like-for-like sales down 8 percent in the first year.", -1),
        ("Sales up 4 percent per year.", 1),
        ("It kept its share within two points.", 1),
        ("Costs rose 9 percent.", -1),
        ("Cutting costs saved the plant.", 1),
        ("Hard work succeeds.", 1),  # "hard" is not "hardly"
        ("The launch hardly succeeded.", -1),
    ],
)
def test_an_outcome_takes_its_sign_from_the_word_that_moves_it(sentence, sign):
    from hivemind_lab.agents.policy.reading import polarity

    assert polarity(sentence) * sign > 0, polarity(sentence)


def test_an_outcome_without_a_direction_and_a_word_whose_stem_is_neutral_read_neutral():
    from hivemind_lab.agents.policy.reading import polarity

    assert polarity("Operating margin 2.9 percent.") == 0
    assert polarity("Store labour costs 11 percent of revenue.") == 0  # "costly" is not "cost"
    assert polarity("Eight staff will take on weekend work.") == 0  # "works" is not "work"


def _evidence(id_: str, text: str, about: tuple[int, ...] = ()) -> Evidence:
    return Evidence(id=id_, document_id=id_, text=text, score=1.0, about=about)


CARRIER = ("Open routes to the islands", "Refit the existing ferries")


def test_advice_against_a_course_weighs_against_the_option_that_pursues_it():
    from hivemind_lab.agents.policy.reading import judge

    denied = _evidence(
        "d#0", "Operators should not open routes to the islands until traffic is proven."
    )
    (routes, _) = judge(CARRIER, (denied,), ())
    assert routes.score < 0 and routes.against == ("d#0",), routes


def test_a_fact_reporting_harm_from_a_course_weighs_against_the_option_that_pursues_it():
    from hivemind_lab.agents.policy.reading import judge

    harm = Fact(
        id="md-1.1",
        text="Operators that opened routes to the islands saw operating margins fall to 1 percent.",
        source="market",
    )
    (routes, refit) = judge(CARRIER, (), (harm,))
    assert routes.facts_against == ("md-1.1",) and routes.score < 0
    assert refit.facts_against == () and refit.score == 0


def test_a_clause_about_another_option_lends_its_tone_to_that_option():
    from hivemind_lab.agents.policy.reading import judge

    mixed = Fact(
        id="md-1.2",
        text=(
            "One operator opened routes to two islands, while refitting the existing ferries "
            "kept its margins above 3 percent."
        ),
        source="market",
    )
    (routes, refit) = judge(CARRIER, (), (mixed,))
    assert refit.facts_for == ("md-1.2",) and refit.score > 0
    assert routes.facts_for == () and routes.score <= 0


def test_the_problems_setting_does_not_make_a_fact_bear_on_an_option_that_names_it():
    from hivemind_lab.agents.policy.reading import judge

    options = ("Match the rival ferry line on fares", "Refit the existing ferries")
    setting = tuple(
        Fact(id=f"cd-1.{n}", text=text, source="client")
        for n, text in enumerate(
            [
                "The rival ferry line opened four crossings last year.",
                "Bookings near the rival ferry line's ports fell 6 percent.",
                "The rival ferry line carries 30 percent of island traffic.",
            ],
            1,
        )
    )
    judged = judge(options, (), setting)
    # Every fact names the rival: that is the situation, not evidence on matching its fares.
    assert [j.facts_for + j.facts_against for j in judged] == [(), ()]


@pytest.mark.parametrize(
    ("claim", "passage", "contradicts"),
    [
        ("A man is playing a guitar.", "No man is playing a guitar.", True),
        ("Incumbents match the entrant's price.", "Incumbents should not match the price.", True),
        ("The launch succeeded.", "The launch failed badly.", True),
        ("The launch succeeded.", "The launch was a success.", False),
        ("A man is playing a guitar.", "A woman is slicing an onion.", False),  # no bearing
    ],
)
def test_a_denial_contradicts_what_it_bears_on(claim, passage, contradicts):
    from hivemind_lab.agents.policy.reading import contradicts as reads_contradiction

    assert reads_contradiction(claim, passage) is contradicts


def test_a_question_sentence_that_restates_the_choice_weighs_for_no_option():
    from hivemind_lab.agents.policy.reading import judge

    debate = Fact(
        id="question.2",
        text=(
            "The founder wants to open routes to the islands, while the engineer argues to "
            "refit the existing ferries for a faster and safer crossing."
        ),
        source="question",
    )
    judged = judge(CARRIER, (), (debate,))
    assert [j.facts_for + j.facts_against for j in judged] == [(), ()]
    assert [j.score for j in judged] == [0, 0]
    as_data = judge(CARRIER, (), (debate.model_copy(update={"source": "client"}),))
    assert as_data[1].facts_for == ("question.2",)  # the same words as client data do weigh
