"""How the offline model reads: stances of sentences towards options, and option judgements.

Deterministic and lexical by design (it is not an LLM): a sentence bears on an option when it
shares the option's distinctive word stems (or those of the option's action family: "buy" also
matches "acquisition"); its polarity comes from cue words for success and harm, with a negator
flipping the cue it governs. Judging an option sums the polarity of the sentences that bear on
it, weighted by how much they bear on it and by the passage's retrieval score. Every reading is
cached by text, so a passage read by many critics is tokenised once.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hivemind_lab.agents.policy.lexicon import families, raw_words, words
from hivemind_lab.agents.schemas import Evidence, OptionStance
from hivemind_lab.problems.decision import Fact, has_quantity
from hivemind_lab.text import split_sentences, word_stems
from hivemind_lab.text import stems as stems_of

RELEVANT = 0.34
"""Share of an option's weighted stems a sentence must carry to bear on it."""
NEGATOR_REACH = 3
"""Words after a negator whose cue it flips ("not a success", "never really pays")."""


@functools.cache
def _clause_break() -> re.Pattern[str]:
    """Where one clause ends (punctuation or a contrasting conjunction): a negative-quantity
    word does not reach across it."""
    conjunctions = "|".join(map(re.escape, raw_words("clause_breaks")))
    return re.compile(rf"[,;:()]|\b(?:{conjunctions})\b")


@dataclass(frozen=True)
class Sentence:
    text: str
    stems: frozenset[str]
    polarity: float
    """-1 (harm) … +1 (success), from cue words; 0 when neutral."""
    prescriptive: bool


@functools.lru_cache(maxsize=65536)
def polarity(text: str) -> float:
    """Net cue polarity of a text in [-1, 1].

    A cue word for success or harm counts +1 or -1. A negative-quantity word turns the nearest
    cue of its clause ("interest in the product is low", "losses are declining") and is then
    not a cue of its own; a negator flips the cues in the `NEGATOR_REACH` words after it."""
    positive, negative = words("positive"), words("negative")
    negators, diminishers = words("negators"), words("diminishers")
    pos = neg = 0
    for clause in _clause_break().split(text.casefold()):
        raw = word_stems(clause)
        signs = [1 if w in positive else -1 if w in negative else 0 for w in raw]
        used: set[int] = set()
        governed: set[int] = set()
        for j, w in enumerate(raw):
            cues = [
                i
                for i, sign in enumerate(signs)
                if sign and i != j and i not in governed and raw[i] not in diminishers
            ]
            if w in diminishers and cues:
                i = min(cues, key=lambda i: (abs(i - j), i))
                signs[i] = -signs[i]
                governed.add(i)
                used.add(j)
        flip_until = -1
        for i, w in enumerate(raw):
            if w in negators or w.endswith("n't"):
                flip_until = i + NEGATOR_REACH
                continue
            sign = 0 if i in used else signs[i]
            if sign and i <= flip_until:
                sign = -sign
            pos += sign > 0
            neg += sign < 0
    return 0.0 if pos == neg == 0 else (pos - neg) / (pos + neg)


@functools.lru_cache(maxsize=32768)
def read_passage(text: str) -> tuple[Sentence, ...]:
    """The sentences of a passage with their stems and polarity (cached by text)."""
    out = []
    for sentence in split_sentences(text):
        stems = frozenset(stems_of(sentence))
        if len(stems) < 3:
            continue
        prescriptive = bool(set(word_stems(sentence)) & words("prescriptive"))
        out.append(Sentence(sentence, stems, polarity(sentence), prescriptive))
    return tuple(out)


def expand(stems: frozenset[str]) -> frozenset[str]:
    """Stems plus the other members of their action families."""
    extra = {m for family in families() if stems & family for m in family}
    return stems | extra


@functools.lru_cache(maxsize=4096)
def option_weights(options: tuple[str, ...]) -> tuple[dict[str, float], ...]:
    """Per option, the weight of each stem: distinctive stems weigh 1, shared ones less."""
    own = [frozenset(stems_of(o)) for o in options]
    weights = []
    for stems in own:
        w: dict[str, float] = {}
        for stem in expand(stems):
            shared = sum(stem in expand(other) for other in own)
            base = 1.0 if stem in stems else 0.6
            w[stem] = base / shared if shared else base
        weights.append(w)
    return tuple(weights)


def bearing(stems: frozenset[str], weights: dict[str, float]) -> float:
    """How much a text bears on an option: its share of the option's own-stem weight."""
    total = sum(weights.values()) or 1.0
    got = sum(w for s, w in weights.items() if s in stems)
    return min(1.0, 1.6 * got / total)


def is_hold(option: str) -> bool:
    """Whether an option keeps the status quo or waits (stay, keep, decline, defer …)."""
    own = stems_of(option)
    return bool(own) and own[0] in words("hold")


def is_terminal(option: str) -> bool:
    """Whether an option ends the client's organisation as it is (selling or closing the whole
    business, liquidating, winding down), so nothing of its own can follow it in a sequence.
    Selling products or closing some stores is not: it must name the whole or its buyer."""
    own = stems_of(option)
    if not own:
        return False
    ending = own[0] in words("ending") and bool(set(own[1:5]) & words("whole"))
    return own[0] in words("terminal") or ending


def commitment(option: str) -> float:
    """How costly and irreversible an option is: 1 high, 0.5 neutral, 0 low."""
    own = expand(frozenset(stems_of(option)))
    high, low = words("commitment_high"), words("commitment_low")
    if own & high and not own & low:
        return 1.0
    if own & low:
        return 0.0
    return 0.5


@dataclass(frozen=True)
class Judgement:
    """An agent's reading of one option from its own evidence and the client's facts."""

    option: int
    score: float
    """Net stance in about [-1.5, 1.5]: positive favours doing it now."""
    support: tuple[str, ...]
    """Passage ids whose sentences favour the option."""
    against: tuple[str, ...]
    facts_for: tuple[str, ...]
    facts_against: tuple[str, ...]
    topics: tuple[str, ...]
    """Topics of the passages that decided it, strongest first."""

    @property
    def weight(self) -> float:
        """How much evidence the judgement rests on (0 none … 1 a lot)."""
        n = len(self.support) + len(self.against)
        return 1.0 - math.exp(-n / 3)


def stress(facts: Sequence[Fact]) -> float:
    """How strained the client's capacity is, from negative facts about cash, debt, income."""
    hits = sum(
        1
        for f in facts
        if f.source != "market" and set(stems_of(f.text)) & words("strain") and polarity(f.text) < 0
    )
    return min(1.0, hits / 2)


def declined(options: Sequence[str], index: int) -> int | None:
    """The option that option ``index`` declines ("Decline to acquire Beta" declines "Acquire
    Beta"), or None. Evidence for a move is evidence against declining it, so such an option
    reads the declined move's sentences with their polarity flipped."""
    refusal = words("refusal")
    head = stems_of(options[index])
    if not head or head[0] not in refusal or len(head) < 2:
        return None
    rest = set(head[1:])
    for other, option in enumerate(options):
        own = set(stems_of(option))
        if other != index and own and own <= rest and rest <= own | refusal:
            return other
    return None


def judge(
    options: tuple[str, ...], evidence: Sequence[Evidence], facts: Sequence[Fact]
) -> tuple[Judgement, ...]:
    """Judge every option from the evidence that bears on it and from the facts (memoised: a
    critic judges the options once for all the peers it critiques)."""
    return _judge(tuple(options), tuple(evidence), tuple(facts))


@functools.lru_cache(maxsize=4096)
def _judge(
    options: tuple[str, ...], evidence: tuple[Evidence, ...], facts: tuple[Fact, ...]
) -> tuple[Judgement, ...]:
    weights = option_weights(options)
    top = max((e.score for e in evidence), default=0.0) or 1.0
    strain = stress(facts)
    out = []
    for index, w in enumerate(weights):
        move = declined(options, index)
        net = 0.0
        mass = 0.0
        support: dict[str, float] = {}
        against: dict[str, float] = {}
        topics: dict[str, float] = {}
        for ev in evidence:
            retrieved_for = index in ev.about
            prior = 1.0 if retrieved_for or not ev.about else 0.5
            rank = 0.5 + 0.5 * ev.score / top
            for sentence in read_passage(ev.text):
                # A passage retrieved for the option bears on it as a whole, more so in the
                # sentences that name it.
                b = max(bearing(sentence.stems, w), 0.4 if retrieved_for else 0.0)
                if b < RELEVANT:
                    continue
                tone = sentence.polarity or (0.5 if sentence.prescriptive else 0.0)
                if move is not None and bearing(sentence.stems, weights[move]) >= RELEVANT:
                    tone = -tone  # "acquisitions fail" speaks for declining one
                weight = b * prior * rank
                mass += weight
                net += weight * tone
                if tone > 0:
                    support[ev.id] = support.get(ev.id, 0.0) + weight * tone
                elif tone < 0:
                    against[ev.id] = against.get(ev.id, 0.0) - weight * tone
                for topic in ev.topics[:1]:
                    topics[topic] = topics.get(topic, 0.0) + weight * abs(tone)
        evidence_score = net / (mass + 0.5)
        facts_for, facts_against, fact_score = [], [], 0.0
        for fact in facts:
            b = bearing(frozenset(stems_of(fact.text)), w)
            if b < RELEVANT:
                continue
            tone = polarity(fact.text)
            if (
                move is not None
                and bearing(frozenset(stems_of(fact.text)), weights[move]) >= RELEVANT
            ):
                tone = -tone
            fact_score += 0.15 * b * tone
            if tone > 0:
                facts_for.append(fact.id)
            elif tone < 0:
                facts_against.append(fact.id)
        score = evidence_score + fact_score - 0.15 * strain * commitment(options[index])
        out.append(
            Judgement(
                option=index,
                score=round(score, 6),
                support=tuple(sorted(support, key=lambda k: (-support[k], k))),
                against=tuple(sorted(against, key=lambda k: (-against[k], k))),
                facts_for=tuple(facts_for),
                facts_against=tuple(facts_against),
                topics=tuple(sorted(topics, key=lambda k: (-topics[k], k))),
            )
        )
    return tuple(out)


STANCE_VALUE = {"pursue": 1.0, "later": 0.3, "avoid": -1.0}


def stance_map(stances: Sequence[OptionStance]) -> dict[int, str]:
    """Option index → stance (the last word on an option counts)."""
    return {s.option: s.stance for s in stances}


def distinct_bearing(stems: frozenset[str], weights: Sequence[dict[str, float]], own: int) -> float:
    """How much more a text bears on option ``own`` than on any other option."""
    others = max((bearing(stems, w) for i, w in enumerate(weights) if i != own), default=0.0)
    return bearing(stems, weights[own]) - others


def relevant_fact(
    option: str, options: tuple[str, ...], facts: Sequence[Fact], *, prefer: Sequence[str] = ()
) -> Fact | None:
    """The client fact that bears most distinctively on an option (client data first), or the
    first fact with an amount (else any figure) when none does. A fact that names every option
    (the question restating its choices) bears on none of them."""
    if not facts:
        return None
    if option in options:
        weights, own = option_weights(options), options.index(option)
    else:
        weights, own = (dict.fromkeys(stems_of(option), 1.0),), 0
    rank = {"client": 0, "market": 1, "question": 2}

    def distinct(f: Fact) -> float:
        preferred = 0.5 if f.id in prefer else 0.0
        return distinct_bearing(frozenset(stems_of(f.text)), weights, own) + preferred

    ranked = [
        (distinct(f) < RELEVANT * 0.5, rank[f.source], -distinct(f), position, f)
        for position, f in enumerate(facts)
    ]
    best = min(ranked, key=lambda r: r[:4])
    if not best[0]:
        return best[4]
    figures = (
        [r for r in ranked if has_quantity(r[4].text)]
        or [r for r in ranked if any(ch.isdigit() for ch in r[4].text)]
        or ranked
    )  # an amount to plan on before a date ("Prepared on 14 November 2026")
    return min(figures, key=lambda r: (r[1], r[3]))[4]
