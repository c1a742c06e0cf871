"""The joint reliability estimate (hivemind_lab.graph.reliability): labels read with per-label
confusion rows, one-off values with one coin, independent of order, new models neutral."""

from __future__ import annotations

import math
import random

import pytest

from hivemind_lab.graph.reliability import (
    Prior,
    estimate,
    log_odds_weight,
    posterior,
)

PRIOR = Prior(0.7, 4.0)


def _labelled_domain() -> tuple[dict, dict]:
    """40 items, true label alternating 0/1. h1 and h2 are right 9 times in 10; b1..b3 are
    right on every 0 and answer 0 to three 1s in ten (a habit, not a coin)."""
    ballots: dict[str, dict[str, frozenset[str]]] = {}
    sides: dict[str, frozenset[str]] = {}
    for i in range(40):
        truth = str(i % 2)
        votes = {}
        for j, m in enumerate(("h1", "h2")):
            wrong = (i + 3 * j) % 10 == 0
            votes[m] = str(1 - int(truth)) if wrong else truth
        for j, m in enumerate(("b1", "b2", "b3")):
            votes[m] = "0" if truth == "0" or (i // 2 + 3 * j) % 10 < 3 else "1"
        ballots[f"item {i}"] = {m: frozenset([v]) for m, v in votes.items()}
        sides[f"item {i}"] = frozenset(votes.values())
    return ballots, sides


def test_a_label_everyone_overuses_weighs_less():
    """Three voters who call some 1s 0 outvote two good ones by head count, and one coin
    (they are right 85% of the time) agrees with the heads; their 0 says little, and the
    confusion rows learn that."""
    ballots, sides = _labelled_domain()
    found = estimate(ballots, sides, PRIOR)
    assert set(found.labels.rate) == {"0", "1"}
    contest = {m: frozenset(["1" if m.startswith("h") else "0"]) for m in ballots["item 1"]}
    post = posterior(contest, frozenset(["0", "1"]), found)
    assert post["1"] >= 0.618
    # the same votes on one-off values (no label recurs) fall back to one coin
    single = estimate(ballots, sides, PRIOR, label_contests=10**6)
    assert single.labels.rate == {}
    assert posterior(contest, frozenset(["0", "1"]), single)["1"] < 0.618


def test_one_off_values_are_read_with_one_coin():
    """Sides whose values never recur: the posterior is the softmax of the summed one-coin
    weights ln((k-1)p/(1-p)), exactly as before labels existed."""
    ballots, sides = _labelled_domain()
    values = {}
    unique_ballots = {}
    unique_sides = {}
    for key, by_model in ballots.items():
        unique_ballots[key] = {m: frozenset(f"{key}/{v}" for v in c) for m, c in by_model.items()}
        unique_sides[key] = frozenset(f"{key}/{v}" for v in sides[key])
        values.update({f"{key}/{v}": f"{key}/{v}" for v in sides[key]})
    found = estimate(unique_ballots, unique_sides, PRIOR, values=values, copy_rule=None)
    assert found.labels.rate == {}
    key = "item 1"
    post = found.posteriors[key]
    score = dict.fromkeys(unique_sides[key], 0.0)
    for m, c in unique_ballots[key].items():
        for s in c:
            score[s] += log_odds_weight(found.p(m), len(unique_sides[key])) / len(c)
    top = max(score.values())
    total = sum(math.exp(v - top) for v in score.values())
    for s, v in score.items():
        assert post[s] == pytest.approx(math.exp(v - top) / total, abs=1e-6)


def test_values_map_sides_of_different_contests_to_one_label():
    """Sides are assertion ids in the graph; ``values`` names their label."""
    ballots, sides = _labelled_domain()
    renamed_ballots = {
        key: {m: frozenset(f"{key}#{v}" for v in c) for m, c in by_model.items()}
        for key, by_model in ballots.items()
    }
    renamed_sides = {key: frozenset(f"{key}#{v}" for v in s) for key, s in sides.items()}
    values = {f"{key}#{v}": v for key, s in sides.items() for v in s}
    by_id = estimate(renamed_ballots, renamed_sides, PRIOR, values=values)
    by_label = estimate(ballots, sides, PRIOR)
    assert by_id.reliability == by_label.reliability
    for key in ballots:
        for v, p in by_label.posteriors[key].items():
            assert by_id.posteriors[key][f"{key}#{v}"] == pytest.approx(p, abs=1e-9)


def test_the_estimate_does_not_depend_on_the_order_of_votes():
    ballots, sides = _labelled_domain()
    first = estimate(ballots, sides, PRIOR)
    rng = random.Random(3)
    keys = list(ballots)
    rng.shuffle(keys)
    shuffled = {}
    for key in keys:
        models = list(ballots[key])
        rng.shuffle(models)
        shuffled[key] = {m: ballots[key][m] for m in models}
    again = estimate(shuffled, {k: sides[k] for k in reversed(keys)}, PRIOR)
    assert again.reliability == first.reliability
    assert again.labels == first.labels
    assert again.posteriors == first.posteriors


def test_a_new_model_starts_neutral_in_a_labelled_domain():
    ballots, sides = _labelled_domain()
    found = estimate(ballots, sides, PRIOR)
    assert found.p("newcomer") == PRIOR.mean
    assert found.named("newcomer", "1", "1") == pytest.approx(PRIOR.mean)
    # its error spreads like everyone's (the pooled error distribution)
    assert found.named("newcomer", "0", "1") == pytest.approx(1 - PRIOR.mean)
    # one newcomer's vote cannot outweigh a good voter's
    contest = {"newcomer": frozenset(["0"]), "h1": frozenset(["1"])}
    assert posterior(contest, frozenset(["0", "1"]), found)["1"] > 0.5


def test_values_that_recur_by_coincidence_in_an_open_kind_stay_one_coin():
    """Times of day: most are one-offs, a few recur across items. Only a categorical kind
    (nearly all of its values recur) gets label rows; the open kind keeps one coin, also
    beside a categorical kind in the same domain."""
    ballots, sides = _labelled_domain()
    values = {v: v for s in sides.values() for v in s}
    kinds = {"0": "label", "1": "label"}
    for i in range(40):
        key = f"time {i}"
        common, other = ("07:10", "08:15") if i < 6 else (f"07:{i:02d}", f"08:{i:02d}")
        a, b = f"{key}|{common}", f"{key}|{other}"
        ballots[key] = {"h1": frozenset([a]), "h2": frozenset([a]), "b1": frozenset([b])}
        sides[key] = frozenset([a, b])
        values.update({a: common, b: other})
        kinds.update({common: "time", other: "time"})
    found = estimate(ballots, sides, PRIOR, values=values, kinds=kinds)
    assert set(found.labels.rate) == {"0", "1"}
    assert not found.labelled(sides["time 0"])
    assert found.labelled(sides["item 0"])
    # without kinds the domain is one kind, and it is not categorical: no labels at all
    assert estimate(ballots, sides, PRIOR, values=values).labels.rate == {}


def _habit_domain(*, copiers: bool) -> tuple[dict, dict]:
    """60 items, true label alternating 0/1. g1..g5 err on one item in ten each; hab1 and hab2
    each answer 0 to a true 1 six times in ten, independently (seeded). With ``copiers``, c2
    names whatever c1 names, and c1 errs (names 0 for a true 1) on ten items."""
    rng = random.Random(11)
    ballots: dict[str, dict[str, frozenset[str]]] = {}
    sides: dict[str, frozenset[str]] = {}
    for i in range(60):
        truth = str(i % 2)
        votes = {}
        for j in range(5):
            votes[f"g{j}"] = str(1 - int(truth)) if (i + 2 * j) % 10 == 0 else truth
        for m in ("hab1", "hab2"):
            votes[m] = "0" if truth == "1" and rng.random() < 0.6 else truth
        if copiers:
            votes["c1"] = "0" if truth == "1" and i % 6 == 1 else truth
            votes["c2"] = votes["c1"]
        ballots[f"item {i}"] = {m: frozenset([v]) for m, v in votes.items()}
        sides[f"item {i}"] = frozenset(votes.values())
    return ballots, sides


def test_a_shared_habit_is_not_copying_but_copying_still_is():
    """Two sources that both call many 1s 0, independently, share many false values that the
    other voters rarely name: far above what the contests' difficulty predicts, but no more
    than their own habits do (their confusion rows), so neither is discounted. A source that
    copies another is: it shares every one of the other's errors, which neither the contests
    nor their rows (a one-in-six error rate each) explain."""
    ballots, sides = _habit_domain(copiers=False)
    assert estimate(ballots, sides, PRIOR).copies == {}
    ballots, sides = _habit_domain(copiers=True)
    found = estimate(ballots, sides, PRIOR)
    assert found.copies == {"c1": ("c2",), "c2": ("c1",)}
    assert found.independence["c1"] == 0.5


def _clique_domain(copies: int) -> tuple[dict, dict, dict]:
    """60 contests of four values (one true); five honest sources right 4 times in 5, a bad
    source right 1 time in 4, and ``copies`` sources that copy the bad one's every ballot."""
    rng = random.Random(11)
    ballots: dict[str, dict[str, frozenset[str]]] = {}
    sides: dict[str, frozenset[str]] = {}
    truth: dict[str, str] = {}
    for i in range(60):
        key, values = f"item {i}", [f"v{i}-{k}" for k in range(4)]
        truth[key] = values[0]

        def vote(p: float) -> str:
            return values[0] if rng.random() < p else rng.choice(values[1:])  # noqa: B023

        votes = {f"h{j}": vote(0.8) for j in range(5)}
        votes["bad"] = vote(0.25)
        votes.update({f"copy{c}": votes["bad"] for c in range(copies)})
        ballots[key] = {m: frozenset([v]) for m, v in votes.items()}
        sides[key] = frozenset(votes.values())
    return ballots, sides, truth


def test_a_large_clique_of_copies_is_found_and_counts_as_one():
    """Ten copies of a bad source outnumber the honest ones in every contest: the first
    estimate believes the clique, so its errors look true and the copy test saw nothing. Its
    members are near-duplicates (identical in every disputed contest), so the clique is
    estimated again counted as one source, and there its shared errors stand out."""
    ballots, sides, truth = _clique_domain(copies=10)
    found = estimate(ballots, sides, PRIOR)
    assert set(found.copies["bad"]) == {f"copy{c}" for c in range(10)}
    assert found.independence["bad"] == pytest.approx(1 / 11)
    right = 0
    for key, votes in ballots.items():
        post = posterior(votes, sides[key], found)
        right += max(post, key=post.__getitem__) == truth[key]
    heads = sum(
        max(sides[k], key=lambda s: sum(v == {s} for v in ballots[k].values())) == truth[k]
        for k in ballots
    )
    assert right > heads and right >= 50, (right, heads)
    # Honest sources that agree with each other are never discounted for it.
    ballots, sides, _ = _clique_domain(copies=0)
    assert estimate(ballots, sides, PRIOR).copies == {}
