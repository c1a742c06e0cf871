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


def decision_distance(a: Sequence[OptionStance], b: Sequence[OptionStance]) -> float:
    """Mean absolute difference in commitment over the options either solution commits to
    (pursues or sequences), in [0, 1]; 0 when neither commits to any.

    Options both solutions avoid or leave unnamed do not count: agreeing on what not to do says
    little about whether two plans agree. Pursuing different options is 1 (opposite plans: the
    similarity the monitor thresholds reaches 0), "A then B" against "B then A" 2/3, the same
    first move with a different sequel 1/6 to 2/9: plans with the same first move are closer
    than plans with different first moves, by steps, not all or nothing.
    """
    ca, cb = commitments(a), commitments(b)
    options = {o for o in ca.keys() | cb.keys() if ca.get(o, UNNAMED) or cb.get(o, UNNAMED)}
    if not options:
        return 0.0
    return sum(abs(ca.get(o, UNNAMED) - cb.get(o, UNNAMED)) for o in options) / len(options)


def changed_options(before: Sequence[OptionStance], after: Sequence[OptionStance]) -> set[int]:
    """The options whose stance differs between two stance lists (taking up or dropping an
    option is a change)."""
    sa = {st.option: st.stance for st in before}
    sb = {st.option: st.stance for st in after}
    return {o for o in sa.keys() | sb.keys() if sa.get(o) != sb.get(o)}
