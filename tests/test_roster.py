"""Many models in one deliberation (issue 34): the roster's validation, the model of each agent
in the audit, the cache, the usage lines and the result, and replay and resume per model."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from hivemind_lab import Calibrations, Limits, OfflineAgentModel
from hivemind_lab.agents.backends import BackendChoice, open_models
from hivemind_lab.agents.roster import Roster, roster_from_flags, roster_from_table
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.errors import InputError
from hivemind_lab.experiments.replays import replay
from hivemind_lab.llm.base import ChatModel, ChatRequest, ChatResponse, model_name
from hivemind_lab.problems import load_problem
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.rundir import RunDir
from tests.support import KNOWLEDGE, PRACTICALITY, make_request

SETTINGS = {"sufficiency": 2, "feasibility": 1, "density": 8000}
LIMITS = Limits(max_rounds=1, max_regenerations=0)


# -- validation: the bad entry named as written -----------------------------------------------


def test_flags_parse_into_typed_entries_assigned_round_robin_and_by_id():
    roster = roster_from_flags(
        [
            "theory=openai:gpt-4.1-mini@https://a.example/v1,key=A_KEY,input=0.4,output=1.6",
            "theory=local:models/x.gguf",
            "practicality=offline",
            "theory-02=test",
        ]
    )
    first, second = roster.theory
    assert (first.backend, first.model, first.base_url, first.key_env) == (
        "openai",
        "gpt-4.1-mini",
        "https://a.example/v1",
        "A_KEY",
    )
    assert (first.input_usd_per_mtok, first.output_usd_per_mtok) == (0.4, 1.6)
    assert (second.backend, second.model_file) == ("local", Path("models/x.gguf"))
    theory = [f"theory-{i:02d}" for i in range(5)]
    assigned = roster.assign(reversed(theory), ["constraint-legal", "constraint-financial"])
    backends = {agent: entry.backend for agent, entry in assigned.items()}
    # round-robin in id order, the agent named on its own winning
    assert [backends[a] for a in theory] == ["openai", "local", "test", "local", "openai"]
    assert backends["constraint-legal"] == backends["constraint-financial"] == "offline"
    assert "monitor" not in assigned  # the run's own model


@pytest.mark.parametrize(
    ("flag", "allowed"),
    [
        ("theory=opneai:gpt-4.1-mini", "openai"),  # a backend that does not exist
        ("theroy=offline", "practicality"),  # a role that does not exist
        ("theory=openai:m,price=3", "key="),  # a setting that does not exist
        ("theory=openai:m,input=-1", None),  # a price out of range
        ("theory=offline:some-model", "'offline' alone"),
        ("theory=local:x.gguf@http://h/v1", "local:PATH.gguf"),
        ("theory", "BACKEND"),  # no entry at all
    ],
)
def test_a_bad_flag_is_named_as_written(flag, allowed):
    with pytest.raises(InputError) as caught:
        roster_from_flags([flag])
    assert caught.value.field == f"--agent-model {flag}"
    if allowed is not None:
        assert allowed in (caught.value.allowed or "")


def test_a_bad_table_entry_is_named_by_file_key_and_position(tmp_path):
    problem = tmp_path / "p.toml"
    problem.write_text(
        'id = "p"\ntitle = "P"\nquestion = "Should we A or B?"\n'
        '[roster]\ntheory = ["offline", {backend = "openai", modle = "x"}]\n'
    )
    assert load_problem(problem).roster == {
        "theory": ["offline", {"backend": "openai", "modle": "x"}]
    }
    with pytest.raises(InputError) as caught:  # the problem stage keeps the table as written
        roster_from_table(load_problem(problem).roster, where=f"{problem}: [roster]")
    assert caught.value.field == f"{problem}: [roster] theory[1]"
    assert "model" in (caught.value.allowed or "")
    from typer.testing import CliRunner

    from hivemind_lab.cli import app

    out = tmp_path / "run"
    done = CliRunner().invoke(app, ["deliberate", "--problem", str(problem), "--out", str(out)])
    assert done.exit_code != 0  # refused where the run is assembled, naming the file's entry
    assert f"{problem}: [roster] theory[1]" in " ".join(done.output.split())
    assert not out.exists()
    with pytest.raises(InputError) as caught:
        roster_from_table({"monitor": ["offline", "test"]})
    assert caught.value.field == "[roster] monitor"  # one model for one agent


def test_a_problem_file_roster_is_read_and_flags_replace_what_they_name(tmp_path):
    problem = tmp_path / "p.toml"
    problem.write_text(
        'id = "p"\ntitle = "P"\nquestion = "Should we A or B?"\n'
        '[roster]\ntheory = ["offline", "test"]\npracticality = "test"\n'
    )
    table = load_problem(problem).roster
    assert table is not None
    read = roster_from_table(table)
    assert [e.backend for e in read.theory] == ["offline", "test"]
    merged = read.over(roster_from_flags(["theory=test"]))
    assert [e.backend for e in merged.theory] == ["test"]
    assert [e.backend for e in merged.practicality] == ["test"]


def test_an_agent_the_run_does_not_have_is_refused_naming_the_entry():
    roster = roster_from_flags(["theory-09=test"])
    with pytest.raises(InputError) as caught:
        roster.assign(["theory-00", "theory-01"], ["constraint-legal"])
    assert caught.value.field == "--agent-model theory-09=test"
    assert "theory-01" in (caught.value.allowed or "")


def test_an_entry_key_variable_replaces_the_run_key_for_its_endpoint_only():
    roster = roster_from_flags(
        ["theory=openai:m-a@http://a.invalid/v1,key=A_KEY", "theory=openai:m-b@http://b.invalid/v1"]
    )
    env = {"A_KEY": "secret-a", "OPENAI_API_KEY": "run-key"}
    assigned = roster.assign(["theory-00", "theory-01"], [])
    with open_models(assigned, BackendChoice(), concurrency=2, env=env) as models:
        keys = {a: m.config.api_key for a, m in models.items()}  # type: ignore[attr-defined]
    assert keys == {"theory-00": "secret-a", "theory-01": "run-key"}
    with (
        pytest.raises(InputError) as caught,
        open_models(assigned, BackendChoice(), concurrency=2, env={}),
    ):
        pass
    assert caught.value.field.endswith("key=A_KEY")


# -- provenance: audit, cache, usage and result carry each agent's model -----------------------


class Crash(Exception):
    pass


class CrashingTestModel:
    """The content-free model, until call ``crash_at`` fails as a process crash would."""

    backend = "test"

    def __init__(self, crash_at: int | None = None) -> None:
        self.inner = TestModel()
        self.model = self.inner.model
        self.crash_at = crash_at
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.crash_at is not None and self.calls >= self.crash_at:
            raise Crash(f"crash at call {self.calls}")
        return await self.inner.complete(request)


def mixed(theory: list[str], constraints: list[str], other: ChatModel) -> dict[str, ChatModel]:
    """Odd theory agents and every constraint agent on ``other``; the rest on the default."""
    return {a: other for a in (*theory[1::2], *constraints)}


def run_mixed(run_dir: Path, problem, *, other: ChatModel, resume: bool = False):
    from hivemind_lab.deliberation.runner import prepare_knowledge

    request = make_request(problem, **SETTINGS)
    known = prepare_knowledge(
        request, knowledge_base=KNOWLEDGE, practicality_kb=PRACTICALITY, seed=0
    )
    theory = sorted(a.id for a in known.theory_agents)
    constraints = sorted(a.id for a in known.constraint_agents)
    models = mixed(theory, constraints, other)
    result = deliberate(
        request,
        Calibrations(),
        LIMITS,
        model=OfflineAgentModel(),
        models=models,
        roster=Roster(),
        run_dir=run_dir,
        knowledge_base=KNOWLEDGE,
        practicality_kb=PRACTICALITY,
        resume=resume,
    )
    return result, models


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    """One run: odd theory agents and the constraint agents on the test model, the rest (the
    monitor included) on the offline stand-in."""
    from tests.support import PROBLEMS

    run_dir = tmp_path_factory.mktemp("mixed") / "run"
    grocer = load_problem(PROBLEMS / "regional-grocer-discounter-price-war.toml")
    result, models = run_mixed(run_dir, grocer, other=TestModel())
    return run_dir, result, models


def test_every_call_record_cache_entry_and_usage_line_names_its_agents_model(mixed_run):
    run_dir, result, models = mixed_run
    tmp_path = run_dir.parent
    offline, test = model_name(OfflineAgentModel()), model_name(TestModel())
    expected = lambda actor: test if actor in models else offline  # noqa: E731

    calls = [(r.actor, r.event) for r in read_records(RunDir(tmp_path / "run").audit_path)]
    made = [(actor, e) for actor, e in calls if type(e).__name__ == "ModelCall"]
    assert {actor for actor, _ in made} >= {*models, "theory-00"}
    for actor, event in made:
        assert f"{event.backend}:{event.model}" == expected(actor), actor

    with sqlite3.connect(tmp_path / "run" / "cache.sqlite") as conn:
        cached = Counter(
            f"{b}:{m}" for b, m in conn.execute("SELECT backend, model FROM responses")
        )
    lines = {share.model: share for share in result.models}
    assert set(lines) == {offline, test} == set(cached)
    for name, share in lines.items():
        assert share.usage.model_calls == cached[name]  # each miss stored under its model
        assert all(expected(a) == name for a in share.agents)
    assert sum(s.usage.calls for s in result.models) == result.usage.calls
    assert sum(s.usage.tokens for s in result.models) == result.usage.tokens
    assert {a for s in result.models for a in s.agents} >= {*models, "monitor"}
    assert all(result.model_of(a) == test for a in models)

    manifest = RunDir(tmp_path / "run").read_manifest()
    assert {a: f"{m.backend}:{m.model}" for a, m in manifest.agent_models.items()} == {
        a: result.model_of(a) for s in result.models for a in s.agents
    }
    report = replay(tmp_path / "run")  # each model's calls from its own cache entries
    assert report.identical, report.first_difference


def test_a_run_without_a_roster_records_one_model_as_before(tmp_path, grocer):
    result = deliberate(
        make_request(grocer, **SETTINGS),
        Calibrations(),
        LIMITS,
        model=OfflineAgentModel(),
        run_dir=tmp_path / "run",
        knowledge_base=KNOWLEDGE,
        practicality_kb=PRACTICALITY,
    )
    from hivemind_lab.reports import gather
    from hivemind_lab.reports.summary import summarise

    manifest = RunDir(tmp_path / "run").read_manifest()
    assert result.models == () and manifest.roster is None and manifest.agent_models == {}
    assert summarise(gather(tmp_path / "run")).models == []


def test_a_mixed_run_resumes_per_model_to_the_uninterrupted_result(tmp_path, grocer):
    reference, _ = run_mixed(tmp_path / "ref", grocer, other=CrashingTestModel())
    with pytest.raises(Crash):
        run_mixed(tmp_path / "crashed", grocer, other=CrashingTestModel(crash_at=20))
    again = CrashingTestModel()
    resumed, _ = run_mixed(tmp_path / "crashed", grocer, other=again, resume=True)
    assert resumed.conclusions == reference.conclusions
    ref_lines = {s.model: (s.agents, s.usage.calls, s.usage.tokens) for s in reference.models}
    got_lines = {s.model: (s.agents, s.usage.calls, s.usage.tokens) for s in resumed.models}
    assert got_lines == ref_lines  # each model's line continues from the checkpoint's


def test_the_report_says_which_model_backed_each_conclusion_critique_point_and_score(mixed_run):
    from hivemind_lab.reports import gather, render_html, render_markdown
    from hivemind_lab.reports.summary import summarise

    run_dir, result, _ = mixed_run
    evidence = gather(run_dir)
    lines = {m.model: m for m in summarise(evidence).models}
    assert set(lines) == {s.model for s in result.models}
    for share in result.models:
        line = lines[share.model]
        assert (line.calls, line.tokens) == (share.usage.calls, share.usage.tokens)
        mine = set(share.agents)
        made = Counter(p.kind for c in evidence.critiques if c.critic_id in mine for p in c.points)
        assert line.critique_points == dict(made)
        scored = {c for c in result.vetoes[-1].per_constraint if f"constraint-{c}" in mine}
        assert len(line.scores) == len(scored)
        backed = [c.rank for c in result.conclusions if mine & set(c.agents)]
        assert len(line.conclusions) == len(backed)
    # every critique point and final score is someone's: the lines add up to the run's
    assert sum(sum(m.critique_points.values()) for m in lines.values()) == sum(
        len(c.points) for c in evidence.critiques
    )
    assert sum(len(m.scores) for m in lines.values()) == len(result.vetoes[-1].per_constraint)
    for text in (render_markdown(run_dir), render_html(run_dir)):
        assert all(name in text for name in lines)


# -- the command line against two OpenAI-compatible endpoints ---------------------------------


class Endpoint:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 answering with `TestModel`; it records
    the model and the key each request named."""

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from hivemind_lab.llm.base import ChatMessage

        self.seen: list[tuple[str, str]] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                import asyncio

                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    outer.seen.append((body["model"], self.headers.get("Authorization", "")))
                request = ChatRequest(
                    messages=tuple(ChatMessage(**m) for m in body["messages"]),
                    seed=body.get("seed"),
                )
                reply = asyncio.run(TestModel().complete(request))
                data = json.dumps(
                    {
                        "id": "c",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def two_endpoints():
    a, b = Endpoint(), Endpoint()
    yield a, b
    a.close()
    b.close()


def cli(*args: str, cwd: Path, env: dict[str, str]):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "hivemind_lab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def test_a_bad_agent_model_flag_is_refused_before_the_run(tmp_path):
    from tests.support import PROBLEMS, child_env

    done = cli(
        "deliberate",
        "--problem",
        str(PROBLEMS / "regional-grocer-discounter-price-war.toml"),
        "--agent-model",
        "theory=opneai:gpt-4.1-mini",
        "--out",
        str(tmp_path / "run"),
        cwd=tmp_path,
        env=child_env(tmp_path),
    )
    assert done.returncode != 0
    assert "--agent-model theory=opneai:gpt-4.1-mini" in done.stderr
    assert not (tmp_path / "run").exists()


def mixed_cli_run(tmp_path: Path, a: Endpoint, b: Endpoint) -> Path:
    """A run whose theory agents alternate between endpoint A (its own key and prices) and B,
    its constraint agents on B and its monitor on the test model (``--backend``)."""
    from tests.support import PROBLEMS, child_env

    run_dir = tmp_path / "run"
    done = cli(
        "deliberate",
        "--problem",
        str(PROBLEMS / "regional-grocer-discounter-price-war.toml"),
        "--backend",
        "test",
        "--agent-model",
        f"theory=openai:alpha@{a.url},key=A_KEY,input=1,output=2",
        "--agent-model",
        f"theory=openai:beta@{b.url}",
        "--agent-model",
        f"practicality=openai:beta@{b.url}",
        "--density",
        "8000",
        "--feasibility",
        "1",
        "--max-rounds",
        "1",
        "--max-regenerations",
        "0",
        "--kb",
        str(KNOWLEDGE),
        "--practicality-kb",
        str(PRACTICALITY),
        "--out",
        str(run_dir),
        cwd=tmp_path,
        env=child_env(tmp_path, A_KEY="secret-a", OPENAI_API_KEY="run-key"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return run_dir


def test_a_mixed_roster_against_two_openai_compatible_endpoints(tmp_path, two_endpoints):
    a, b = two_endpoints
    run_dir = mixed_cli_run(tmp_path, a, b)
    assert {m for m, _ in a.seen} == {"alpha"} and {k for _, k in a.seen} == {"Bearer secret-a"}
    assert {m for m, _ in b.seen} == {"beta"} and {k for _, k in b.seen} == {"Bearer run-key"}
    result = RunDir(run_dir).read_result()
    lines = {s.model: s for s in result.models}
    assert set(lines) == {"openai:alpha", "openai:beta", model_name(TestModel())}
    assert lines["openai:alpha"].usage.model_calls == len(a.seen)
    assert lines["openai:beta"].usage.model_calls == len(b.seen)
    alpha = lines["openai:alpha"].usage  # priced by its own entry: $1 and $2 a million
    assert alpha.cost_usd == pytest.approx(
        (alpha.prompt_tokens * 1 + alpha.completion_tokens * 2) / 1e6
    )
    assert alpha.cost_usd > 0 and lines["openai:beta"].usage.cost_usd == 0
    assert lines[model_name(TestModel())].agents == ("monitor",)
    assert replay(run_dir).identical  # no endpoint needed: each model's own cache entries


# -- into the graph: each agent's claims held by its model -------------------------------------


async def test_divergence_between_two_models_of_one_run_through_the_mcp_tool(mixed_run, tmp_path):
    from hivemind_lab.experiments.graph_export import graph_model
    from tests.mcp_support import divergence

    run_dir, _, _ = mixed_run
    manifest = RunDir(run_dir).read_manifest()
    model_of = {a: graph_model(m.backend, m.model) for a, m in manifest.agent_models.items()}
    a, b = graph_model("offline", OfflineAgentModel().model), graph_model("test", TestModel().model)
    report, held = await divergence(run_dir.parent, a, b, tmp_path / "g.lbdb")
    assert {a, b} <= held  # the models, not one name for the run
    assert not any(m.startswith("run1:theory") for m in held)
    # What A concluded that B never did: claims about A's own agents, and only those the
    # graph holds from A; the agents' subjects are theirs, so B cannot have said them.
    agents_of = lambda m: {f"run1:{x}" for x, n in model_of.items() if n == m}  # noqa: E731
    only_a = {c["subject"] for c in report["unique_to_a"]}
    only_b = {c["subject"] for c in report["unique_to_b"]}
    assert only_a and only_b
    assert agents_of(a) & only_a and not agents_of(b) & only_a
    assert agents_of(b) & only_b and not agents_of(a) & only_b
    # A stance an A agent took that a B agent reversed is a conflict between the two models
    final = {}
    for record in read_records(RunDir(run_dir).audit_path):
        if type(record.event).__name__ == "Proposal":
            final[record.event.agent_id] = record.event.solution
    judged = {
        (model_of[agent], s.option, s.stance) for agent, sol in final.items() for s in sol.stances
    }
    clash = any(
        (a, o, x) in judged and (b, o, y) in judged and x != y
        for _, o, x in judged
        for _, _, y in judged
    )
    assert bool(report["direct_conflicts"]) == clash
    assert not {c["subject"] for c in report["direct_conflicts"]} & (agents_of(a) | agents_of(b))


# -- research views: the roster as a sweep dimension ------------------------------------------

SWEEP = """
name = "rosters"
problems = ["data/problems/regional-grocer-discounter-price-war.toml"]
baselines = ["vote"]
seeds = [0]

[inputs]
sufficiency = 1
feasibility = 1
density = 8000

[limits]
max_rounds = 1
max_regenerations = 0

[space]
stubbornness = [0.3]
similarity_threshold = [0.35]
severity = [0.5]

[rosters.one-model]
theory = "offline"

[rosters.mixed]
theory = ["offline", "test"]
"""


def test_a_sweep_over_rosters_pairs_each_with_its_vote_at_equal_compute(tmp_path):
    from hivemind_lab.experiments import load, load_spec, run
    from hivemind_lab.experiments.compare import compare, compute_table
    from hivemind_lab.reports.sweep import roster_table
    from tests.support import REPO

    (tmp_path / "exp.toml").write_text(SWEEP)
    spec = load_spec(tmp_path / "exp.toml")
    assert set(spec.rosters) == {"one-model", "mixed"}
    root = tmp_path / "runs"
    report = run(spec, project=REPO, root=root)
    assert sorted((s.point.roster, s.point.strategy) for s in report.runs) == [
        ("mixed", "deliberation"),
        ("mixed", "vote"),
        ("one-model", "deliberation"),
        ("one-model", "vote"),
    ]
    by = {(s.point.roster, s.point.strategy): s for s in report.runs}
    for roster in spec.rosters:
        vote = RunDir(root / by[roster, "vote"].run_id).read_manifest()
        assert vote.budget is not None and vote.budget.calls == by[roster, "deliberation"].calls
        assert vote.roster is not None
        assert vote.roster.model_dump() == spec.rosters[roster].model_dump()
    mixed = RunDir(root / by["mixed", "deliberation"].run_id).read_result()
    assert model_name(TestModel()) in {m.model for m in mixed.models}
    homogeneous = RunDir(root / by["one-model", "deliberation"].run_id).read_result()
    assert {m.model for m in homogeneous.models} == {model_name(OfflineAgentModel())}

    runs = load(root)
    assert set(runs["roster"].to_list()) == {"one-model", "mixed"}
    assert {"initial_diversity", "final_diversity"} <= set(runs.columns)
    side = compute_table(runs)  # each vote beside its own roster's deliberation
    assert side.height == 2 and set(side["roster"].to_list()) == {"one-model", "mixed"}
    for row in side.iter_rows(named=True):
        assert row["deliberation_calls"] == by[row["roster"], "deliberation"].calls
    shown = roster_table(compare(runs, by=["roster", "strategy"]))
    assert shown.height == 4 and shown.columns[:3] == ["Roster", "Strategy", "Runs"]


def test_points_without_rosters_keep_their_run_ids():
    import hashlib

    from hivemind_lab.canonical import canonical_json
    from hivemind_lab.experiments import ExperimentSpec
    from hivemind_lab.experiments.points import expand

    spec = ExperimentSpec.model_validate(
        {
            "name": "t",
            "problems": ["p.toml"],
            "inputs": {"sufficiency": 1, "feasibility": 5, "density": 800},
        }
    )
    (point,) = expand(spec)
    body = {  # the id as sweeps made it before rosters
        "point": {
            "problem": point.problem,
            "calibrations": point.calibrations.model_dump(mode="json"),
            "seed": point.seed,
            "strategy": point.strategy,
        },
        "inputs": spec.inputs.identity(),
        "limits": spec.limits.model_dump(mode="json"),
        "backend": spec.backend,
        "model": spec.model,
        "knowledge_base": spec.knowledge_base,
        "embedder": spec.embedder,
    }
    digest = hashlib.sha256(canonical_json(body).encode()).hexdigest()[:12]
    assert point.run_id(spec) == f"deliberation-{digest}"
    with_roster = spec.model_copy(update={"rosters": {"mixed": roster_from_flags(["theory=test"])}})
    (mixed,) = expand(with_roster)
    assert mixed.roster == "mixed" and mixed.run_id(with_roster) != point.run_id(spec)


def test_a_bad_sweep_roster_is_named_by_file_and_table(tmp_path):
    from hivemind_lab.experiments import load_spec

    (tmp_path / "exp.toml").write_text(SWEEP.replace('theory = "offline"', 'theory = "ofline"'))
    with pytest.raises(InputError) as caught:
        load_spec(tmp_path / "exp.toml")
    assert caught.value.field == f"{tmp_path / 'exp.toml'}: [rosters.one-model] theory"


def test_a_roster_of_the_runs_own_model_changes_nothing_but_the_records(tmp_path, grocer):
    plain = deliberate(
        make_request(grocer, **SETTINGS),
        Calibrations(),
        LIMITS,
        model=OfflineAgentModel(),
        run_dir=tmp_path / "plain",
        knowledge_base=KNOWLEDGE,
        practicality_kb=PRACTICALITY,
    )
    same, _ = run_mixed(tmp_path / "same", grocer, other=OfflineAgentModel())
    assert same.conclusions == plain.conclusions and same.vetoes == plain.vetoes
    assert same.usage == plain.usage
    (line,) = same.models
    assert line.usage == plain.usage  # one model: its line is the run's usage


def test_a_roster_run_on_the_stand_in_goes_stale_when_its_code_changes(mixed_run):
    from hivemind_lab.experiments.freshness import Current, stale_reasons

    run_dir, _, models = mixed_run
    manifest = RunDir(run_dir).read_manifest()
    recorded = {
        m.model_info.get("code") for m in manifest.agent_models.values() if m.backend == "offline"
    }
    assert len(recorded) == 1 and not set(models) & {
        a for a, m in manifest.agent_models.items() if m.backend == "offline"
    }

    def now(code: object) -> Current:
        assert manifest.engine_code is not None and manifest.knowledge_hashes is not None
        return Current(
            request=manifest.request,
            prompt_version=manifest.prompt_version,
            engine_code=manifest.engine_code,
            model_code=str(code),
            knowledge=manifest.knowledge_hashes,
        )

    assert stale_reasons(manifest, now(next(iter(recorded)))) == ()
    assert stale_reasons(manifest, now("sha256:another-version")) == ("model",)
