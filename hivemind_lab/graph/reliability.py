"""Track records estimated jointly: a converged soft one-coin EM over a domain's whole vote set,
with a Beta prior and a discount for sources that copy each other (see docs/design/consensus.md).

Pure functions. The result depends on the set of votes only, never on the order they arrived
in: the start is the unweighted vote share of every contest, the contests and models are
visited in sorted order and the iteration runs to convergence.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_WEIGHT = 5.0
"""A vote's log-odds weight is capped, so one near-perfect record cannot dictate."""


@dataclass(frozen=True)
class Prior:
    """Beta prior of a model's reliability (the chance its vote names the true value): mean
    ``mean``, worth ``strength`` votes. A model without votes has reliability ``mean``."""

    mean: float = 0.7
    strength: float = 4.0


@dataclass(frozen=True)
class CopyRule:
    """When two sources agree on false values far above chance (see `copy_pairs`)."""

    min_shared_false: int = 4
    """At least this many contests in which both named the same false value."""
    ratio: float = 2.0
    """Observed shared false values at least this many times the expected count."""
    z: float = 4.0
    """And this many standard deviations above it."""


def log_odds_weight(p: float, values: int) -> float:
    """``ln((k-1)·p/(1-p))``: the weight under which a weighted vote of independent voters of
    reliability p picks the likeliest of k values; 0 for a voter no better than chance, capped
    at `MAX_WEIGHT`."""
    p = min(max(p, 1e-9), 1 - 1e-9)
    raw = math.log(max(1, values - 1) * p / (1 - p))
    return round(min(max(raw, 0.0), MAX_WEIGHT), 9)


Ballots = Mapping[str, Mapping[str, frozenset[str]]]
"""Contest key → model → the sides its ballot named (several: its weight is split)."""


@dataclass(frozen=True)
class Estimate:
    """Every model's estimated reliability in a domain, and how it was reached."""

    prior: Prior
    reliability: dict[str, float]
    """Model → posterior-mean chance that its vote names the true value."""
    soft_correct: dict[str, float]
    """Model → expected number of its ballots that named the true value."""
    ballots: dict[str, int]
    """Model → contests (with at least two voters) it voted in."""
    independence: dict[str, float] = field(default_factory=dict)
    """Model → its weight's discount for copying: 1 / (1 + sources it copies or is copied by)."""
    copies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Model → the sources it agrees with on false values far above chance."""
    posteriors: dict[str, dict[str, float]] = field(default_factory=dict)
    """Contest key → side → posterior probability that it is the true value."""
    iterations: int = 0

    def p(self, model: str) -> float:
        return self.reliability.get(model, self.prior.mean)

    def weight(self, model: str, values: int = 2) -> float:
        """The model's vote weight in a contest of ``values`` sides (log odds × discount)."""
        return round(log_odds_weight(self.p(model), values) * self.independence.get(model, 1.0), 9)


def _posterior(
    by_model: Mapping[str, frozenset[str]], sides: frozenset[str], weight: Mapping[str, float]
) -> dict[str, float]:
    score = dict.fromkeys(sorted(sides), 0.0)
    for model in sorted(by_model):
        picked = by_model[model]
        for side in picked:
            score[side] += weight[model] / len(picked)
    top = max(score.values())
    odds = {s: math.exp(v - top) for s, v in score.items()}
    total = sum(odds.values())
    return {s: o / total for s, o in odds.items()}


def posterior(
    by_model: Mapping[str, frozenset[str]], sides: frozenset[str], estimate: Estimate
) -> dict[str, float]:
    """The posterior of each side of one contest given its ballots (uniform prior over sides,
    independent voters of the estimated reliabilities, copies discounted)."""
    k = max(2, len(sides))
    return _posterior(by_model, sides, {m: estimate.weight(m, k) for m in by_model})


def _em(
    ballots: Mapping[str, dict[str, frozenset[str]]],
    sides: Mapping[str, frozenset[str]],
    prior: Prior,
    discount: Mapping[str, float],
    *,
    tolerance: float,
    max_iterations: int,
) -> tuple[dict[str, float], dict[str, float], dict[str, dict[str, float]], int]:
    """Soft one-coin EM, vectorised: votes are rows (contest, model, side, share of ballot)."""
    import numpy as np

    keys = sorted(ballots)
    models = sorted({m for key in keys for m in ballots[key]})
    model_ix = {m: i for i, m in enumerate(models)}
    side_names: list[tuple[str, str]] = []
    side_contest: list[int] = []
    values: list[int] = []
    vote_model: list[int] = []
    vote_side: list[int] = []
    vote_share: list[float] = []
    for c, key in enumerate(keys):
        names = sorted(sides[key])
        base = len(side_names)
        local = {s: base + j for j, s in enumerate(names)}
        side_names.extend((key, s) for s in names)
        side_contest.extend([c] * len(names))
        values.append(max(2, len(names)))
        for m in sorted(ballots[key]):
            picked = sorted(ballots[key][m])
            for s in picked:
                vote_model.append(model_ix[m])
                vote_side.append(local[s])
                vote_share.append(1 / len(picked))
    n_models, n_sides = len(models), len(side_names)
    sc = np.asarray(side_contest, dtype=np.int64)
    vm = np.asarray(vote_model, dtype=np.int64)
    vs = np.asarray(vote_side, dtype=np.int64)
    vf = np.asarray(vote_share, dtype=np.float64)
    log_k1 = np.log(np.asarray(values, dtype=np.float64) - 1)[sc[vs]]
    disc = np.asarray([discount.get(m, 1.0) for m in models], dtype=np.float64)
    ballots_per_model = np.bincount(vm, weights=vf, minlength=n_models).astype(np.float64)
    n_contests = len(keys)

    def softmax(score: Any) -> Any:
        top = np.full(n_contests, -np.inf)
        np.maximum.at(top, sc, score)
        odds = np.exp(score - top[sc])
        return odds / np.bincount(sc, weights=odds, minlength=n_contests)[sc]

    post = softmax(np.log(np.bincount(vs, weights=vf, minlength=n_sides) + 1e-300))
    a0, n0 = prior.mean * prior.strength, prior.strength
    p = np.full(n_models, prior.mean)
    correct: Any = np.zeros(n_models, dtype=np.float64)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - reported
        correct = np.bincount(vm, weights=vf * post[vs], minlength=n_models)
        new_p = (a0 + correct) / (n0 + ballots_per_model)
        change = float(np.max(np.abs(new_p - p))) if n_models else 0.0
        p = new_p
        q = np.clip(p, 1e-9, 1 - 1e-9)
        logit = np.log(q / (1 - q))
        w = np.clip(log_k1 + logit[vm], 0.0, MAX_WEIGHT) * disc[vm]
        post = softmax(np.bincount(vs, weights=vf * w, minlength=n_sides))
        if change < tolerance:
            break
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (key, side), value in zip(side_names, post.tolist(), strict=True):
        out[key][side] = value
    return (
        dict(zip(models, p.tolist(), strict=True)),
        dict(zip(models, correct.tolist(), strict=True)),
        dict(out),
        iterations,
    )


def copy_pairs(
    ballots: Mapping[str, Mapping[str, frozenset[str]]],
    sides: Mapping[str, frozenset[str]],
    post: Mapping[str, Mapping[str, float]],
    rule: CopyRule,
) -> list[tuple[str, str]]:
    """Pairs of sources that name the same false value far more often than chance.

    In each contest a value is false when its posterior is below one half. For a pair (a, b)
    the observed count is the contests where both named the same false value; the expected
    count, given how hard each contest was, is the share of the contest's *other* voters who
    named that value (so a value that fooled everyone does not make its voters copiers).
    """
    observed: dict[tuple[str, str], int] = defaultdict(int)
    expected: dict[tuple[str, str], float] = defaultdict(float)
    variance: dict[tuple[str, str], float] = defaultdict(float)
    for key in sorted(ballots):
        single = {m: next(iter(c)) for m, c in ballots[key].items() if len(c) == 1}
        if len(single) < 2:
            continue
        k = max(2, len(sides[key]))
        tally: dict[str, int] = defaultdict(int)
        for v in single.values():
            tally[v] += 1
        others_total = len(single) - 2
        voters = sorted(single)
        for i, a in enumerate(voters):
            va = single[a]
            for b in voters[i + 1 :]:
                vb = single[b]
                pair = (a, b)
                for mine in (va, vb):
                    if post[key].get(mine, 0.0) >= 0.5:
                        continue
                    others = tally[mine] - (mine == va) - (mine == vb)
                    f = (others + 1) / (others_total + k)
                    expected[pair] += f / 2
                    variance[pair] += f * (1 - f) / 2
                if va == vb and post[key].get(va, 0.0) < 0.5:
                    observed[pair] += 1
    flagged = []
    for pair, o in sorted(observed.items()):
        e = expected[pair]
        if o < rule.min_shared_false or o < rule.ratio * e:
            continue
        if (o - e) / math.sqrt(variance[pair] + 1e-9) >= rule.z:
            flagged.append(pair)
    return flagged


def estimate(
    ballots: Ballots,
    sides: Mapping[str, frozenset[str]],
    prior: Prior,
    *,
    copy_rule: CopyRule | None = CopyRule(),
    tolerance: float = 1e-7,
    max_iterations: int = 500,
) -> Estimate:
    """Estimate every model's reliability from every contest of a domain.

    ``ballots`` names, per contest, each voter's sides (``fork``/``synthesize`` ballots are
    left out by the caller); ``sides`` lists every side of each contest. Contests with fewer
    than two voters carry no information about anyone and are skipped. With ``copy_rule``, a
    second EM runs with copiers discounted: each source's weight is divided by one plus the
    number of sources it shares false values with far above chance.
    """
    usable = {
        key: dict(by_model)
        for key, by_model in ballots.items()
        if len(by_model) >= 2 and key in sides
    }
    p, correct, post, iterations = _em(
        usable, sides, prior, {}, tolerance=tolerance, max_iterations=max_iterations
    )
    partners: dict[str, set[str]] = defaultdict(set)
    if copy_rule is not None:
        for a, b in copy_pairs(usable, sides, post, copy_rule):
            partners[a].add(b)
            partners[b].add(a)
    discount = {m: 1 / (1 + len(partners[m])) for m in sorted(partners)}
    if discount:
        p, correct, post, more = _em(
            usable,
            sides,
            prior,
            discount,
            tolerance=tolerance,
            max_iterations=max_iterations,
        )
        iterations += more
    counts: dict[str, int] = defaultdict(int)
    for by_model in usable.values():
        for m in by_model:
            counts[m] += 1
    return Estimate(
        prior=prior,
        reliability={m: round(v, 9) for m, v in sorted(p.items())},
        soft_correct={m: round(v, 6) for m, v in sorted(correct.items())},
        ballots=dict(sorted(counts.items())),
        independence=discount,
        copies={m: tuple(sorted(partners[m])) for m in sorted(partners)},
        posteriors=post,
        iterations=iterations,
    )
