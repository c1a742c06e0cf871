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
    """Observed shared false values at least this many times the count the contests'
    difficulty predicts."""
    z: float = 4.0
    """And this many standard deviations above it, and above the count the pair's own habits
    (their confusion rows) predict."""
    duplicate_contests: int = 20
    """Disputed contests two sources must share to be near-duplicates (`near_duplicates`)."""
    duplicate_share: float = 0.95
    """Share of them in which their ballots must be identical."""


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
class Labels:
    """What the estimate knows about *labels*: values (a side's predicate and object key) that
    are sides of at least `LABEL_CONTESTS` contests of the domain, of a categorical predicate
    (`CATEGORICAL_SHARE`). A contest whose sides are all labels is read with the Dawid–Skene
    model (docs/design/consensus.md): each model's chance of naming the true label depends on
    that label, its errors have a distribution over the other labels, and labels have a base
    rate. Every other contest uses the one-coin model."""

    rate: dict[str, float] = field(default_factory=dict)
    """Label → how often it is the true value of a labelled contest (smoothed)."""
    hit: dict[tuple[str, str], float] = field(default_factory=dict)
    """(model, true label) → chance the model names it (shrunk toward the model's one coin)."""
    error: dict[tuple[str, str, str], float] = field(default_factory=dict)
    """(model, true label, named label) → chance of that error given an error."""
    pooled_error: dict[tuple[str, str], float] = field(default_factory=dict)
    """(true label, named label) → every model's error distribution (the models' prior)."""
    pooled_floor: dict[str, float] = field(default_factory=dict)
    """True label → the pooled chance of an error no model has made yet."""


LABEL_CONTESTS = 5
"""A value is a label (gets its own base rate and confusion rows) once it is a side of this
many contests; rarer values (names, dates) are read with the one-coin model."""
CATEGORICAL_SHARE = 0.9
"""...and only when its kind (its predicate) is categorical: at least this share of the kind's
values as sides are such recurring values. A kind of open values (times, names) where some
values recur by coincidence stays with one coin: there the label model would spread errors
over every recurring value and weigh each vote by ln(labels - 1), close to a head count."""


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
    values: dict[str, str] = field(default_factory=dict)
    """Side → its value, where it differs from the side itself."""
    labels: Labels = field(default_factory=Labels)

    def p(self, model: str) -> float:
        return self.reliability.get(model, self.prior.mean)

    def weight(self, model: str, values: int = 2) -> float:
        """The model's vote weight in a one-coin contest of ``values`` sides (log odds ×
        discount)."""
        return round(log_odds_weight(self.p(model), values) * self.independence.get(model, 1.0), 9)

    def value(self, side: str) -> str:
        return self.values.get(side, side)

    def named(self, model: str, side: str, truth: str) -> float:
        """The chance that ``model`` names ``side`` when ``truth`` is true, in a labelled
        contest (Dawid–Skene rows)."""
        lab, t, v = self.labels, self.value(truth), self.value(side)
        hit = min(max(lab.hit.get((model, t), self.p(model)), 1e-9), 1 - 1e-9)
        if v == t:
            return hit
        err = lab.error.get(
            (model, t, v), lab.pooled_error.get((t, v), lab.pooled_floor.get(t, 0.0))
        )
        return (1 - hit) * err

    def labelled(self, sides: frozenset[str]) -> bool:
        """Whether a contest of these sides is read with the Dawid–Skene model."""
        return len(sides) >= 1 and all(self.value(s) in self.labels.rate for s in sides)

    def evidence(
        self,
        by_model: Mapping[str, frozenset[str]],
        sides: frozenset[str],
        factor: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        """Side → log score that it is the true value given the ballots (softmax them for the
        posterior): the label base rate and each voter's log likelihood in a labelled contest,
        the summed one-coin weights otherwise; each voter's part × its copy discount × its
        ``factor`` (the graph's confidence factor, 1 by default)."""
        names = sorted(sides)
        k = max(2, len(names))
        scale = {
            m: self.independence.get(m, 1.0) * (1.0 if factor is None else factor.get(m, 1.0))
            for m in by_model
        }
        if not self.labelled(sides):
            score = dict.fromkeys(names, 0.0)
            for m in sorted(by_model):
                picked = by_model[m]
                w = log_odds_weight(self.p(m), k) * scale[m]
                for s in picked:
                    if s in score:
                        score[s] += w / len(picked)
            return score
        lab = self.labels
        score = {s: math.log(lab.rate[self.value(s)]) for s in names}
        for s in names:
            for m in sorted(by_model):
                picked = by_model[m]
                for v in picked:
                    ll = math.log(max(self.named(m, v, s), 1e-300))
                    score[s] += ll * scale[m] / len(picked)
        return score


def softmax(score: Mapping[str, float]) -> dict[str, float]:
    top = max(score.values())
    odds = {s: math.exp(v - top) for s, v in score.items()}
    total = sum(odds.values())
    return {s: o / total for s, o in odds.items()}


def posterior(
    by_model: Mapping[str, frozenset[str]], sides: frozenset[str], estimate: Estimate
) -> dict[str, float]:
    """The posterior of each side of one contest given its ballots (independent voters of the
    estimated reliabilities, copies discounted; see `Estimate.evidence`)."""
    return softmax(estimate.evidence(by_model, sides))


def _em(
    ballots: Mapping[str, dict[str, frozenset[str]]],
    sides: Mapping[str, frozenset[str]],
    values: Mapping[str, str],
    labels: frozenset[str],
    prior: Prior,
    discount: Mapping[str, float],
    *,
    tolerance: float,
    max_iterations: int,
) -> tuple[dict[str, float], dict[str, float], dict[str, dict[str, float]], int, Labels]:
    """Soft EM, vectorised. Votes are rows (contest, model, side, share of ballot); in a
    labelled contest every (vote, candidate true side) pair is a row too.

    One-coin contests: a voter of reliability p adds ln((k-1)p/(1-p)) (clipped to [0, 5]) to
    the side it names. Labelled contests (Dawid–Skene with a hierarchical prior): side t scores
    ln rate(t) + Σ ln P(named | t), P(t | t) = hit(m, t), P(v | t) = (1 - hit(m, t))·err(m, t, v);
    hit(m, t) is shrunk toward the model's one coin p_m by the prior's strength, err(m, t, ·)
    toward the pooled error distribution by the same strength, the base rate toward uniform by
    one contest per label. p_m comes from every contest, under the Beta prior."""
    import numpy as np

    keys = sorted(ballots)
    models = sorted({m for key in keys for m in ballots[key]})
    model_ix = {m: i for i, m in enumerate(models)}
    label_names = sorted(labels)
    label_ix = {v: i for i, v in enumerate(label_names)}
    n_labels = len(label_names)
    side_names: list[tuple[str, str]] = []
    side_contest: list[int] = []
    side_label: list[int] = []
    n_values: list[int] = []
    vote_model: list[int] = []
    vote_side: list[int] = []
    vote_share: list[float] = []
    # (vote, candidate) pairs of labelled contests
    pair_vote: list[int] = []
    pair_side: list[int] = []
    pair_truth: list[int] = []
    pair_named: list[int] = []
    for c, key in enumerate(keys):
        names = sorted(sides[key])
        labelled = all(values.get(s, s) in labels for s in names)
        base = len(side_names)
        local = {s: base + j for j, s in enumerate(names)}
        side_names.extend((key, s) for s in names)
        side_contest.extend([c] * len(names))
        side_label.extend(label_ix[values.get(s, s)] if labelled else -1 for s in names)
        n_values.append(max(2, len(names)))
        for m in sorted(ballots[key]):
            picked = sorted(ballots[key][m])
            for s in picked:
                if labelled:
                    for t in names:
                        pair_vote.append(len(vote_model))
                        pair_side.append(local[t])
                        pair_truth.append(label_ix[values.get(t, t)])
                        pair_named.append(label_ix[values.get(s, s)])
                vote_model.append(model_ix[m])
                vote_side.append(local[s])
                vote_share.append(1 / len(picked))
    n_models, n_sides, n_contests = len(models), len(side_names), len(keys)
    sc = np.asarray(side_contest, dtype=np.int64)
    sl = np.asarray(side_label, dtype=np.int64)
    vm = np.asarray(vote_model, dtype=np.int64)
    vs = np.asarray(vote_side, dtype=np.int64)
    vf = np.asarray(vote_share, dtype=np.float64)
    one_coin = sl[vs] < 0
    log_k1 = np.log(np.asarray(n_values, dtype=np.float64) - 1)[sc[vs]]
    disc = np.asarray([discount.get(m, 1.0) for m in models], dtype=np.float64)
    ballots_per_model = np.bincount(vm, weights=vf, minlength=n_models).astype(np.float64)
    pv = np.asarray(pair_vote, dtype=np.int64)
    ps = np.asarray(pair_side, dtype=np.int64)
    pt = np.asarray(pair_truth, dtype=np.int64)
    pn = np.asarray(pair_named, dtype=np.int64)
    pm = vm[pv]
    pf = vf[pv] * disc[pm]
    same = pt == pn
    # (model, truth) and (model, truth, named) cells that occur, compressed
    mt_cells, mt_of = np.unique(pm * max(1, n_labels) + pt, return_inverse=True)
    mtv_cells, mtv_of = np.unique(
        (pm * max(1, n_labels) + pt) * max(1, n_labels) + pn, return_inverse=True
    )
    mtv_mt = np.searchsorted(mt_cells, mtv_cells // max(1, n_labels))
    tv_cells, tv_inv = np.unique(pt * max(1, n_labels) + pn, return_inverse=True)
    mtv_tv = np.searchsorted(tv_cells, mtv_cells % max(1, n_labels * n_labels))
    labelled_side = sl >= 0

    def softmax_(score: Any) -> Any:
        top = np.full(n_contests, -np.inf)
        np.maximum.at(top, sc, score)
        odds = np.exp(score - top[sc])
        return odds / np.bincount(sc, weights=odds, minlength=n_contests)[sc]

    post = softmax_(np.log(np.bincount(vs, weights=vf, minlength=n_sides) + 1e-300))
    a0, n0 = prior.mean * prior.strength, prior.strength
    p = np.full(n_models, prior.mean)
    correct: Any = np.zeros(n_models, dtype=np.float64)
    labels_out = Labels()
    hit: Any = np.zeros(0)
    err: Any = np.zeros(0)
    rate: Any = np.zeros(0)
    pooled: Any = np.zeros(0)
    floor: Any = np.zeros(0)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - reported
        correct = np.bincount(vm, weights=vf * post[vs], minlength=n_models)
        new_p = (a0 + correct) / (n0 + ballots_per_model)
        change = float(np.max(np.abs(new_p - p))) if n_models else 0.0
        p = new_p
        q = np.clip(p, 1e-9, 1 - 1e-9)
        logit = np.log(q / (1 - q))
        w = np.clip(log_k1 + logit[vm], 0.0, MAX_WEIGHT) * disc[vm] * one_coin
        score = np.bincount(vs, weights=vf * w, minlength=n_sides)
        if len(pv):
            truth = post[ps] * vf[pv]
            n_mt = np.bincount(mt_of, weights=truth, minlength=len(mt_cells))
            c_mt = np.bincount(mt_of, weights=truth * same, minlength=len(mt_cells))
            p_m = p[mt_cells // max(1, n_labels)]
            hit = np.clip((c_mt + n0 * p_m) / (n_mt + n0), 1e-9, 1 - 1e-9)
            wrong = truth * ~same
            err_cell = np.bincount(mtv_of, weights=wrong, minlength=len(mtv_cells))
            err_mt = np.bincount(mt_of, weights=wrong, minlength=len(mt_cells))
            # pooled error distribution over the other labels, +1 smoothing (sparse)
            wrong_t = np.bincount(pt, weights=wrong, minlength=n_labels)
            floor = 1.0 / (wrong_t + max(1, n_labels - 1))
            pooled = (np.bincount(tv_inv, weights=wrong, minlength=len(tv_cells)) + 1.0) * floor[
                tv_cells // n_labels
            ]
            pooled_cell = pooled[mtv_tv]
            err = (err_cell + n0 * pooled_cell) / (err_mt[mtv_mt] + n0)
            rate = np.bincount(sl[labelled_side], weights=post[labelled_side], minlength=n_labels)
            rate = (rate + 1.0) / (rate.sum() + n_labels)
            ll = np.where(
                same,
                np.log(hit[mt_of]),
                np.log(1 - hit[mt_of]) + np.log(np.maximum(err[mtv_of], 1e-300)),
            )
            score = score + np.bincount(ps, weights=pf * ll, minlength=n_sides)
            score = score + np.where(labelled_side, np.log(rate)[np.maximum(sl, 0)], 0.0)
        new_post = softmax_(score)
        moved = float(np.max(np.abs(new_post - post))) if n_sides else 0.0
        post = new_post
        if max(change, moved) < tolerance:
            break
    if len(pv):
        mt_models = [models[i] for i in (mt_cells // n_labels).tolist()]
        mt_truths = [label_names[i] for i in (mt_cells % n_labels).tolist()]
        labels_out = Labels(
            rate=dict(zip(label_names, rate.tolist(), strict=True)),
            hit={(m, t): h for m, t, h in zip(mt_models, mt_truths, hit.tolist(), strict=True)},
            error={
                (
                    models[int(cell) // (n_labels * n_labels)],
                    label_names[int(cell) // n_labels % n_labels],
                    label_names[int(cell) % n_labels],
                ): e
                for cell, e in zip(mtv_cells.tolist(), err.tolist(), strict=True)
                if int(cell) // n_labels % n_labels != int(cell) % n_labels
            },
            pooled_error={
                (label_names[int(c) // n_labels], label_names[int(c) % n_labels]): e
                for c, e in zip(tv_cells.tolist(), pooled.tolist(), strict=True)
                if int(c) // n_labels != int(c) % n_labels
            },
            pooled_floor=dict(zip(label_names, floor.tolist(), strict=True)),
        )
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (key, side), value in zip(side_names, post.tolist(), strict=True):
        out[key][side] = value
    return (
        dict(zip(models, p.tolist(), strict=True)),
        dict(zip(models, correct.tolist(), strict=True)),
        dict(out),
        iterations,
        labels_out,
    )


def copy_pairs(
    ballots: Mapping[str, Mapping[str, frozenset[str]]],
    sides: Mapping[str, frozenset[str]],
    post: Mapping[str, Mapping[str, float]],
    rule: CopyRule,
    rows: Estimate | None = None,
    counted: Mapping[str, float] | None = None,
) -> list[tuple[str, str]]:
    """Pairs of sources that name the same false value far more often than chance.

    In each contest a value is false when its posterior is below one half. For a pair (a, b)
    the observed count is the contests where both named the same false value. It must exceed
    two expected counts under independence (`CopyRule`):

    - given how hard each contest was (``ratio`` times and ``z`` standard deviations): the
      share of the contest's *other* voters who named the value, so a value that fooled
      everyone does not make its voters copiers;
    - given each source's own habits (``rows``, the first estimate; ``z`` standard
      deviations): the chance that both name the same false value, Σ_t P(t)·P_a(v | t)·
      P_b(v | t) over the contest's posterior, from their confusion rows in a labelled
      contest and their one-coin chance otherwise. Two sources that both call many 1s 0 share
      many errors the other voters rarely make, yet no more than their rows predict: a habit,
      not a copy. A copy shares every error, which even a bad source's rows do not predict.

    ``counted`` says how much each other voter counts in a contest's share (default 1; less for
    the members of a clique of near-duplicates, which would otherwise vouch for each other).
    """
    observed: dict[tuple[str, str], int] = defaultdict(int)
    expected: dict[tuple[str, str], float] = defaultdict(float)
    variance: dict[tuple[str, str], float] = defaultdict(float)
    by_rows: dict[tuple[str, str], float] = defaultdict(float)
    rows_variance: dict[tuple[str, str], float] = defaultdict(float)
    for key in sorted(ballots):
        single = {m: next(iter(c)) for m, c in ballots[key].items() if len(c) == 1}
        if len(single) < 2:
            continue
        k = max(2, len(sides[key]))
        share = {m: 1.0 if counted is None else counted.get(m, 1.0) for m in single}
        tally: dict[str, float] = defaultdict(float)
        for m, v in single.items():
            tally[v] += share[m]
        everyone = sum(share.values())
        voters = sorted(single)
        truths, chances = _error_chances(rows, voters, sides[key], post[key]) if rows else ({}, {})
        for i, a in enumerate(voters):
            va = single[a]
            for b in voters[i + 1 :]:
                vb = single[b]
                pair = (a, b)
                others_total = everyone - share[a] - share[b]
                for mine in (va, vb):
                    if post[key].get(mine, 0.0) >= 0.5:
                        continue
                    others = tally[mine] - share[a] * (mine == va) - share[b] * (mine == vb)
                    f = (others + 1) / (others_total + k)
                    expected[pair] += f / 2
                    variance[pair] += f * (1 - f) / 2
                if va == vb and post[key].get(va, 0.0) < 0.5:
                    observed[pair] += 1
                if truths:
                    both = sum(
                        weight * chances[a][cell] * chances[b][cell]
                        for cell, weight in truths.items()
                    )
                    by_rows[pair] += both
                    rows_variance[pair] += both * (1 - both)
    flagged = []
    for pair, o in sorted(observed.items()):
        e = expected[pair]
        if o < rule.min_shared_false or o < rule.ratio * e:
            continue
        if (o - e) / math.sqrt(variance[pair] + 1e-9) < rule.z:
            continue
        if rows is not None:
            e = by_rows[pair]
            if (o - e) / math.sqrt(rows_variance[pair] + 1e-9) < rule.z:
                continue
        flagged.append(pair)
    return flagged


def near_duplicates(ballots: Ballots, rule: CopyRule) -> set[tuple[str, str]]:
    """Pairs of sources whose ballots are identical in at least ``rule.duplicate_share`` of
    the disputed contests (two or more sides named) they both voted in, over at least
    ``rule.duplicate_contests`` of them. Honest sources that are both right agree this often
    too: a near-duplicate pair is only a candidate for the copy test (see `estimate`)."""
    same: dict[tuple[str, str], int] = defaultdict(int)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for key in sorted(ballots):
        by_model = ballots[key]
        if len(set(by_model.values())) < 2:
            continue
        voters = sorted(by_model)
        for i, a in enumerate(voters):
            for b in voters[i + 1 :]:
                shared[(a, b)] += 1
                same[(a, b)] += by_model[a] == by_model[b]
    return {
        pair
        for pair, n in shared.items()
        if n >= rule.duplicate_contests and same[pair] >= rule.duplicate_share * n
    }


def _error_chances(
    rows: Estimate, voters: list[str], sides: frozenset[str], post: Mapping[str, float]
) -> tuple[dict[tuple[str, str], float], dict[str, dict[tuple[str, str], float]]]:
    """For one contest, every (t, v) with v false (posterior below one half): the posterior of
    t, and per voter its chance of naming v when t is true."""
    names = sorted(sides)
    k = max(2, len(names))
    cells = [(t, v) for t in names for v in names if v != t and post.get(v, 0.0) < 0.5]
    labelled = rows.labelled(sides)
    out: dict[str, dict[tuple[str, str], float]] = {}
    for m in voters:
        if labelled:
            out[m] = {(t, v): rows.named(m, v, t) for t, v in cells}
        else:
            out[m] = dict.fromkeys(cells, (1 - rows.p(m)) / (k - 1))
    return {c: post.get(c[0], 0.0) for c in cells}, out


def label_values(
    sides: Mapping[str, frozenset[str]],
    values: Mapping[str, str],
    min_contests: int,
    kinds: Mapping[str, str] | None = None,
) -> frozenset[str]:
    """Values that are sides of at least ``min_contests`` contests, of kinds (``kinds``: value
    → e.g. its predicate; one kind without it) whose values are labels in at least
    `CATEGORICAL_SHARE` of their appearances as sides (see `Labels`)."""
    seen: dict[str, int] = defaultdict(int)
    for key in sorted(sides):
        for v in {values.get(s, s) for s in sides[key]}:
            seen[v] += 1
    recurring = {v for v, n in seen.items() if n >= min_contests}
    kind_of = kinds or {}
    total: dict[str, int] = defaultdict(int)
    labelled: dict[str, int] = defaultdict(int)
    for v, n in seen.items():
        kind = kind_of.get(v, "")
        total[kind] += n
        labelled[kind] += n if v in recurring else 0
    return frozenset(
        v
        for v in recurring
        if labelled[kind_of.get(v, "")] >= CATEGORICAL_SHARE * total[kind_of.get(v, "")]
    )


def estimate(
    ballots: Ballots,
    sides: Mapping[str, frozenset[str]],
    prior: Prior,
    *,
    values: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    copy_rule: CopyRule | None = CopyRule(),
    label_contests: int = LABEL_CONTESTS,
    tolerance: float = 1e-7,
    max_iterations: int = 500,
) -> Estimate:
    """Estimate every model's reliability from every contest of a domain.

    ``ballots`` names, per contest, each voter's sides (``fork``/``synthesize`` ballots are
    left out by the caller); ``sides`` lists every side of each contest; ``values`` gives each
    side's value (the same value recurs across contests, e.g. a label; a side missing from it is
    its own value; ``kinds`` gives each value's kind, e.g. its predicate). Contests with fewer
    than two voters carry no information about anyone and are skipped. Contests whose sides
    are all labels (`label_values`: values that are sides of at least ``label_contests``
    contests, of a categorical kind) are read with the Dawid–Skene model, the rest with the
    one-coin model (see `_em`). With ``copy_rule``, a second EM runs with copiers discounted: each
    source's weight is divided by one plus the number of sources it shares false values with
    far above chance.
    """
    usable = {
        key: dict(by_model)
        for key, by_model in ballots.items()
        if len(by_model) >= 2 and key in sides
    }
    used = {key: sides[key] for key in usable}
    named = dict(values or {})
    labels = label_values(used, named, label_contests, kinds)
    p, correct, post, iterations, found = _em(
        usable,
        used,
        named,
        labels,
        prior,
        {},
        tolerance=tolerance,
        max_iterations=max_iterations,
    )
    partners: dict[str, set[str]] = defaultdict(set)
    if copy_rule is not None:
        first = Estimate(
            prior=prior,
            reliability=p,
            soft_correct=correct,
            ballots={},
            posteriors=post,
            values={s: v for s, v in named.items() if v != s},
            labels=found,
        )
        flagged = set(copy_pairs(usable, used, post, copy_rule, first))
        duplicates = near_duplicates(usable, copy_rule)
        if duplicates - flagged:
            # A large clique of near-identical sources carries the first estimate and hides
            # its own errors from the copy test. Estimated again with each source counted as
            # one over its near-duplicates, a near-duplicate pair is tested once more.
            grouped: dict[str, int] = defaultdict(int)
            for a, b in duplicates:
                grouped[a] += 1
                grouped[b] += 1
            counted = {m: 1 / (1 + n) for m, n in sorted(grouped.items())}
            again = _em(
                usable,
                used,
                named,
                labels,
                prior,
                counted,
                tolerance=tolerance,
                max_iterations=max_iterations,
            )
            iterations += again[3]
            regrouped = Estimate(
                prior=prior,
                reliability=again[0],
                soft_correct=again[1],
                ballots={},
                posteriors=again[2],
                values=first.values,
                labels=again[4],
            )
            tested = copy_pairs(usable, used, again[2], copy_rule, regrouped, counted)
            flagged |= duplicates & set(tested)
        for a, b in sorted(flagged):
            partners[a].add(b)
            partners[b].add(a)
    discount = {m: 1 / (1 + len(partners[m])) for m in sorted(partners)}
    if discount:
        p, correct, post, more, found = _em(
            usable,
            used,
            named,
            labels,
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
    side_ids = {s for key in used for s in used[key]}
    return Estimate(
        prior=prior,
        reliability={m: round(v, 9) for m, v in sorted(p.items())},
        soft_correct={m: round(v, 6) for m, v in sorted(correct.items())},
        ballots=dict(sorted(counts.items())),
        independence=discount,
        copies={m: tuple(sorted(partners[m])) for m in sorted(partners)},
        posteriors=post,
        iterations=iterations,
        values={s: v for s, v in sorted(named.items()) if s in side_ids and v != s},
        labels=found,
    )
