"""A solution's decision as numbers: how far it commits to each of the problem's options.

The monitor compares decisions with it (a continuous decision distance, not an equal/unequal
stance) and the engine measures how far a revision moved with it, so both mean the same thing
whatever model wrote the solutions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hivemind_lab.agents.schemas import OptionStance, Stance

COMMITMENT: Mapping[Stance, float] = {"pursue": 1.0, "later": 1 / 3, "avoid": 0.0}
"""Commitment to an option: do it now 1, sequence it after the options pursued now 1/3 (nearer
not doing it than doing it now: a plan is first of all its first move), do not do it 0."""
UNNAMED = 0.0
"""An option the solution does not name is not part of it: no commitment, as when it is ruled
out. (It was 0.5, a half commitment no plan makes: two plans pursuing different options, each
silent on the other's, were then only half apart on each, every pair of plans was at least ~0.4
alike, and similarity thresholds below that lumped every plan together.)"""


def commitments(stances: Iterable[OptionStance]) -> dict[int, float]:
    """Option index → commitment, for the options a solution addresses (last word wins)."""
    return {st.option: COMMITMENT[st.stance] for st in stances}


WAIT = -1
"""The first move of a plan that pursues no option now: it waits (its key among the options in
`shares`)."""


def shares(stances: Iterable[OptionStance]) -> dict[int, float]:
    """Key → the share of the solution's whole commitment that goes to it: each option it
    commits to, and `WAIT` when it pursues nothing now (a plan's first move is either some
    options or waiting, commitment 1 as a pursued option), scaled to sum to 1."""
    held = {o: c for o, c in commitments(stances).items() if c}
    if not any(c >= COMMITMENT["pursue"] for c in held.values()):
        held[WAIT] = COMMITMENT["pursue"]
    total = sum(held.values())
    return {key: c / total for key, c in held.items()}


def decision_distance(a: Sequence[OptionStance], b: Sequence[OptionStance]) -> float:
    """The share of one solution's commitment that must move to make it the other's: the total
    variation between their commitment shares (`shares`), in [0, 1].

    Each plan's commitment sums to one, so a plan is compared as a whole: a sequel weighs by
    its share of the plan (a third of a first move), whatever the number of options the other
    plan names. On two options: the same first move with or without a sequel 1/4, "A then B"
    against "B then A" 1/2, "A then B" against "B alone" 3/4, different first moves alone 1;
    "wait, then A" against "A now" 3/4, against doing nothing 1/4.
    Until 2026-12-02 it was the mean absolute difference over the options either plan commits
    to: a sequel then counted 1/6 to 2/9 (divided by the options named), every pair with the
    same first move stayed at least 7/9 alike and every pair with different first moves at most
    1/3, and the number of conclusions did not move between thresholds of about 0.5 and 0.7.
    """
    sa, sb = shares(a), shares(b)
    return 0.5 * sum(abs(sa.get(k, 0.0) - sb.get(k, 0.0)) for k in sa.keys() | sb.keys())


def changed_options(before: Sequence[OptionStance], after: Sequence[OptionStance]) -> set[int]:
    """The options whose stance differs between two stance lists (taking up or dropping an
    option is a change)."""
    sa = {st.option: st.stance for st in before}
    sb = {st.option: st.stance for st in after}
    return {o for o in sa.keys() | sb.keys() if sa.get(o) != sb.get(o)}
