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
from hivemind_lab.text import STOPWORDS, split_sentences, stem, word_stems
from hivemind_lab.text import stems as stems_of
from hivemind_lab.text import words as text_words

RELEVANT = 0.34
"""Share of an option's weighted stems a sentence must carry to bear on it."""
NEGATOR_REACH = 3
"""Words after a negator whose cue it flips ("not a success", "never really succeeds")."""


@functools.cache
def _clause_break() -> re.Pattern[str]:
    """Where one clause ends (punctuation or a contrasting conjunction): a negative-quantity
    word does not reach across it."""
    conjunctions = "|".join(map(re.escape, raw_words("clause_breaks")))
    return re.compile(rf"[,;:()]|\b(?:{conjunctions})\b")


@dataclass(frozen=True)
class Clause:
    """One clause of a sentence (split at punctuation and contrasting conjunctions)."""

    stems: frozenset[str]
    positive: int
    """Cue and outcome words that read as success, after negators."""
    negative: int
    negated: bool


def _net(clauses: Sequence[Clause]) -> float:
    pos = sum(c.positive for c in clauses)
    neg = sum(c.negative for c in clauses)
    return 0.0 if pos == neg == 0 else (pos - neg) / (pos + neg)


@dataclass(frozen=True)
class Sentence:
    text: str
    stems: frozenset[str]
    polarity: float
    """-1 (harm) … +1 (success), from cue words; 0 when neutral."""
    prescriptive: bool
    negated: bool
    """Whether it holds a negator: with no cue it denies what it is about ("incumbents should
    not match a rival's price", "no man is playing")."""
    clauses: tuple[Clause, ...] = ()

    @property
    def tone(self) -> float:
        """How the sentence speaks of what it bears on: its cue polarity; else a denial reads
        against it (-0.5) and advice without a cue for it (+0.5); else neutral."""
        return self.polarity or (-0.5 if self.negated else 0.5 if self.prescriptive else 0.0)

    def tone_on(
        self, weights: Sequence[dict[str, float]], index: int, rivals: Sequence[int]
    ) -> float:
        """The tone of the clauses that speak of option ``index``: a clause that bears on
        another option more ("while investing in service it kept its margins") lends its tone
        to that option, not to this one. The whole sentence's tone when no clause does."""
        kept = [c for c in self.clauses if not _elsewhere(c.stems, weights, index, rivals)]
        if len(kept) == len(self.clauses):
            return self.tone
        if not kept:
            return 0.0
        net = _net(kept)
        negated = any(c.negated for c in kept)
        return net or (-0.5 if negated else 0.5 if self.prescriptive else 0.0)


def _elsewhere(
    stems: frozenset[str], weights: Sequence[dict[str, float]], index: int, rivals: Sequence[int]
) -> bool:
    """Whether a text bears on another option more than on option ``index``."""
    own = bearing(stems, weights[index])
    other = max((bearing(stems, weights[j]) for j in rivals), default=0.0)
    return other >= RELEVANT and other > own


OUTCOME_REACH = 4
"""Content words between an outcome word and the rise or fall word that gives it a sign."""


def _signs(raw: Sequence[str]) -> tuple[list[int], set[int]]:
    """The sign of each word of a clause, and the words spent on another (not cues).

    A cue word for success or harm is +1 or -1. An outcome word (a quantity wanted more of,
    like sales or margin, or less of, like cost or debt) takes its sign from a rise or fall
    word within `OUTCOME_REACH` content words ("margins fall", "sales up 2 percent", "kept its
    share", "lost 31 percent of operating profit", "costs rose"), and is neutral without one
    ("operating margin 2.9 percent"). A negative-quantity word turns the nearest cue of its
    clause ("interest is low", "losses are declining"). Nearest pairs are matched first, and
    the governing word is spent, not a cue of its own."""
    positive, negative = words("positive"), words("negative")
    good, bad = words("outcomes_good"), words("outcomes_bad")
    rises, falls, diminishers = words("rises"), words("falls"), words("diminishers")
    signs = [1 if w in positive else -1 if w in negative else 0 for w in raw]
    stop = _stop_stems()
    place, count = [], 0
    for w in raw:
        place.append(count)
        count += w not in stop and not w[:1].isdigit()
    directions = [j for j, w in enumerate(raw) if w in rises or w in falls or w in diminishers]
    pairs = []
    for i, w in enumerate(raw):
        if i in directions:
            continue
        outcome = w in good or w in bad
        for j in directions:
            gap = abs(place[i] - place[j])
            if (outcome and gap <= OUTCOME_REACH) or (signs[i] and raw[j] in diminishers):
                pairs.append((gap, abs(i - j), i, j))
    spent: set[int] = set()
    governed: set[int] = set()
    for _, _, i, j in sorted(pairs):
        if i in governed or j in spent:
            continue
        turn = 1 if raw[j] in rises else -1
        if raw[i] in good or raw[i] in bad:
            signs[i] = turn * (1 if raw[i] in good else -1)
        else:
            signs[i] = -signs[i]
        governed.add(i)
        spent.add(j)
    return signs, spent


@functools.cache
def _stop_stems() -> frozenset[str]:
    return frozenset(stem(w) for w in STOPWORDS)


def is_negator(word: str) -> bool:
    """Whether a word as written negates ("not", "never", "hardly", "n't" …; matched unstemmed:
    "hardly" is a negator, "hard" is not)."""
    return word in raw_words("negators") or word.endswith("n't")


def negated(text: str) -> bool:
    """Whether a text holds a negator."""
    return any(is_negator(w) for w in text_words(text))


@functools.lru_cache(maxsize=65536)
def clauses(text: str) -> tuple[Clause, ...]:
    """The clauses of a text, each with its signed words counted.

    Each clause's words are signed by `_signs` (cue words, outcome words that a rise or fall
    word signs, negative-quantity words turning a cue); a negator then flips the signs in the
    `NEGATOR_REACH` words after it ("not a success", "never really succeeds")."""
    out = []
    for clause in _clause_break().split(text.casefold()):
        written = text_words(clause)
        raw = tuple(stem(w) for w in written)
        signs, spent = _signs(raw)
        pos = neg = 0
        flip_until = -1
        for i, w in enumerate(written):
            if is_negator(w):
                flip_until = i + NEGATOR_REACH
                continue
            sign = 0 if i in spent else signs[i]
            if sign and i <= flip_until:
                sign = -sign
            pos += sign > 0
            neg += sign < 0
        negated = any(is_negator(w) for w in written)
        out.append(Clause(frozenset(stems_of(clause)), pos, neg, negated))
    return tuple(out)


def polarity(text: str) -> float:
    """Net cue polarity of a text in [-1, 1], over its `clauses`."""
    return _net(clauses(text))


@functools.lru_cache(maxsize=65536)
def read_sentence(text: str, *, advice: bool = True) -> Sentence:
    """One sentence read: its stems, polarity, clauses, and whether it advises (a client fact
    is read with ``advice=False``: "the board must decide by March" backs no option)."""
    parts = clauses(text)
    prescriptive = advice and bool(set(word_stems(text)) & words("prescriptive"))
    return Sentence(
        text,
        frozenset(stems_of(text)),
        _net(parts),
        prescriptive,
        any(c.negated for c in parts),
        parts,
    )


@functools.lru_cache(maxsize=32768)
def read_passage(text: str) -> tuple[Sentence, ...]:
    """The sentences of a passage with their stems and polarity (cached by text)."""
    out = []
    for sentence in split_sentences(text):
        read = read_sentence(sentence)
        if len(read.stems) >= 3:
            out.append(read)
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
        for s in expand(stems):
            shared = sum(s in expand(other) for other in own)
            base = 1.0 if s in stems else 0.6
            w[s] = base / shared if shared else base
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


def _rivals(options: tuple[str, ...], index: int) -> tuple[int, ...]:
    """The options a text may bear on instead of option ``index``: all others but the move it
    declines and the option that declines it (those read the same sentences, flipped)."""
    move = declined(options, index)
    return tuple(
        j for j in range(len(options)) if j != index and j != move and declined(options, j) != index
    )


SETTING_SHARE = 1 / 3
"""Share of the client's facts (at least three) a stem must occur in to be the setting."""


def setting_stems(facts: Sequence[Fact]) -> frozenset[str]:
    """Stems that at least `SETTING_SHARE` of the facts (and at least three) hold: the words
    of the client's situation, which every fact repeats whatever it reports."""
    counts: dict[str, int] = {}
    for fact in facts:
        for s in set(stems_of(fact.text)):
            counts[s] = counts.get(s, 0) + 1
    floor = max(3.0, SETTING_SHARE * len(facts))
    return frozenset(s for s, n in counts.items() if n >= floor)


def facts_weights(options: tuple[str, ...], facts: Sequence[Fact]) -> list[dict[str, float]]:
    """Per option, the stem weights through which a client fact bears on it: the option's
    weights without the problem's setting (`setting_stems`), unless that leaves none."""
    setting = setting_stems(facts)
    return [{k: v for k, v in w.items() if k not in setting} or w for w in option_weights(options)]


def restates(fact: Fact, bears: Sequence[float]) -> bool:
    """Whether a question sentence restates the choice: it names two options or more ("the
    chief executive wants to open a marketplace, while the operations director argues for
    faster delivery"), so it reports nothing about any of them and lends none its words' tone."""
    return fact.source == "question" and sum(b >= RELEVANT for b in bears) >= 2


def distinct_share(b: float, rivals: Sequence[float]) -> float:
    """A text's bearing on an option, scaled down by how much more it bears on another option
    ("cut prices on key lines while investing in service" is about the service option more
    than about a price option, so it counts mostly there)."""
    top = max(rivals, default=0.0)
    return b if top <= b else b * b / top


@functools.lru_cache(maxsize=4096)
def _judge(
    options: tuple[str, ...], evidence: tuple[Evidence, ...], facts: tuple[Fact, ...]
) -> tuple[Judgement, ...]:
    weights = option_weights(options)
    top = max((e.score for e in evidence), default=0.0) or 1.0
    strain = stress(facts)
    read = [
        (ev, sentence, tuple(bearing(sentence.stems, w) for w in weights))
        for ev in evidence
        for sentence in read_passage(ev.text)
    ]
    # A client fact bears on an option through the option's words that are not the
    # problem's setting: a stem most facts share (the rival's or the market's name) says
    # which problem this is, not which option a fact speaks of.
    fact_weights = facts_weights(options, facts)
    fact_reads = [
        (
            read_sentence(fact.text, advice=False),
            fact,
            tuple(bearing(frozenset(stems_of(fact.text)), w) for w in fact_weights),
        )
        for fact in facts
    ]
    out = []
    for index in range(len(options)):
        move = declined(options, index)
        rivals = _rivals(options, index)
        net = 0.0
        mass = 0.0
        support: dict[str, float] = {}
        against: dict[str, float] = {}
        topics: dict[str, float] = {}
        for ev, sentence, bears in read:
            retrieved_for = index in ev.about
            prior = 1.0 if retrieved_for or not ev.about else 0.5
            rank = 0.5 + 0.5 * ev.score / top
            others = [bears[j] for j in rivals]
            # A passage retrieved for the option bears on it as a whole, more so in the
            # sentences that name it, but not in a sentence that names another option instead.
            b = bears[index]
            if retrieved_for and max(others, default=0.0) < max(b, RELEVANT):
                b = max(b, 0.4)
            if b < RELEVANT:
                continue
            tone = sentence.tone_on(weights, index, rivals)
            if move is not None and bears[move] >= RELEVANT:
                tone = -tone  # "acquisitions fail" speaks for declining one
            weight = distinct_share(b, others) * prior * rank
            mass += weight
            net += weight * tone
            if tone > 0:
                support[ev.id] = support.get(ev.id, 0.0) + weight * tone
            elif tone < 0:
                against[ev.id] = against.get(ev.id, 0.0) - weight * tone
            for topic in ev.topics[:1]:
                topics[topic] = topics.get(topic, 0.0) + weight * abs(tone)
        # A client fact is read like a sentence of evidence retrieved for the option, at the
        # top of the ranking: the client's own figures weigh at least as much as a passage.
        facts_for, facts_against = [], []
        for read_fact, fact, bears in fact_reads:
            b = bears[index]
            if b < RELEVANT or restates(fact, bears):
                continue
            tone = read_fact.tone_on(fact_weights, index, rivals)
            if move is not None and bears[move] >= RELEVANT:
                tone = -tone
            weight = distinct_share(b, [bears[j] for j in rivals])
            mass += weight
            net += weight * tone
            if tone > 0:
                facts_for.append(fact.id)
            elif tone < 0:
                facts_against.append(fact.id)
        score = net / (mass + 0.5) - 0.15 * strain * commitment(options[index])
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


def stance_sign(sentence: Sentence) -> int:
    """Which way a sentence speaks of what it is about: its tone's sign, and an affirmative
    sentence with no cue (+1: "the firm matched the price") against a denial (-1)."""
    tone = sentence.tone
    return 1 if tone > 0 else -1 if tone < 0 else 1


def contradicts(claim: str, passage: str) -> bool:
    """Whether a passage contradicts a claim, the way a critic reads its evidence against an
    option: the passage bears on the claim (its share of the claim's stems, either way round,
    at least `RELEVANT`) and the two speak of it in opposite ways (`stance_sign`: opposite cue
    polarity, or one denies what the other asserts)."""
    a, b = read_sentence(claim), read_sentence(passage)
    (wa,) = option_weights((claim,))
    (wb,) = option_weights((passage,))
    bears = max(bearing(b.stems, wa), bearing(a.stems, wb)) >= RELEVANT
    return bears and stance_sign(a) != stance_sign(b)
