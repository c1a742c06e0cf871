"""Binding constraints: the prohibitions and limits a client's text states, and the options
each rules out or bounds.

Generic reading: a sentence is a constraint when it carries a prohibition cue (ban, may not,
must not, cannot be transferred, illegal, unlawful, would breach …) or a limit cue (covenant,
limit, cap, no more than, deadline, expires, runs out, requires approval …) that binds the
decider (`binds`: not what others cannot do, a past event, a hypothetical); it is linked to
the option whose words it shares most (Snowball stems, at least two; a prohibition naming the
act an option leads with, "acquisition" for "Buy …", counts as two), never through one
problem's words. A prohibition forbids that option; a limit only limits it. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from hivemind_lab.problems.model import MAX_CONSTRAINTS, ConstraintKind
from hivemind_lab.problems.reading.binds import binds_decider, conditional
from hivemind_lab.problems.reading.options import question_sentences, span
from hivemind_lab.text import stem

PROHIBITION = re.compile(
    r"\b(?:ban|bans|banned|banning|bar|bars|barred|prohibit\w*|forbid\w*|outlaw\w*|"
    r"may\s+not|must\s+not|cannot|can\s*not|can't|could\s+not|couldn't|"
    r"(?:not|never)\s+(?:be\s+)?(?:permitted|allowed|possible|permissible|lawful|legal)|"
    r"illegal|unlawful|impermissible|in\s+breach|would\s+breach|breach(?:es|ing)?|"
    r"no\s+longer\s+(?:possible|available|permitted|allowed)|impossible|void|"
    r"(?:criminal|an)\s+offence|"
    r"(?:refused|rejected|declined|turned\s+down|withheld|denied)\s+(?:\w+\s+){0,3}?"
    r"(?:consent|permission|approval|planning|licen[cs]e|authori[sz]ation)|"
    r"(?:(?:will|would)\s+not|won't|refuses?\s+to|refused\s+to|declined\s+to)\s+"
    r"(?:grant|approve|permit|allow|authori[sz]e|license|lend|fund|finance|insure|renew|sell|"
    r"lease|let))\b",
    re.IGNORECASE,
)
"""Cues that rule something out."""
CONDITIONAL = re.compile(
    r"\b(?:unless|except\s+(?:if|where|when)|provided\s+(?:that\s+)?|as\s+long\s+as|"
    r"so\s+long\s+as)\b",
    re.IGNORECASE,
)
"""A prohibition with a way out ("will not renew cover unless repairs begin") or that holds
only if something happens ("if we sell the paddock, we cannot build there"): it bounds the
options, and the one that meets its condition is its remedy, not what it rules out. "Until
2031" is no way out, nor "even if": the option is ruled out now."""


def binding_cue(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` carries one of ``pattern``'s cues that binds the decider (not what
    others cannot do, what could not be done in the past, or a hypothetical: `binds`)."""
    return any(binds_decider(text, cue) for cue in pattern.finditer(text))


def rules_out(text: str) -> bool:
    """Whether a constraint's text rules something out: a prohibition cue that binds the
    decider, with no condition that lifts it (a conditional prohibition only limits)."""
    return not CONDITIONAL.search(text) and any(
        binds_decider(text, cue) and not conditional(text, cue)
        for cue in PROHIBITION.finditer(text)
    )


_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "hundred": 100,
}
_FIGURE = r"(?:\d+(?:\.\d+)?|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
"""A figure in digits or a number word, for comparing a level with a minimum."""
_OBLIGED = (
    r"(?:oblig\w*|requires?|required|must|has\s+to|have\s+to|bound\s+to|(?:a|the)\s+duty\s+to|"
    r"mandat\w*)"
)
"""What makes a minimum an obligation, not a wish ("we need at least 300 covers" is none)."""
_AT_LEAST = (
    r"(?:at\s+least|a\s+minimum\s+of|minimum\s+of|no\s+fewer\s+than|not\s+fewer\s+than|"
    r"no\s+less\s+than|not\s+less\s+than)"
)
LIMIT = re.compile(
    r"\b(?:covenants?|limit|limits|limited|caps?|capped|ceiling|maximum|at\s+most|"
    r"no\s+more\s+than|not\s+more\s+than|(?:must\s+not|cannot|may\s+not)\s+exceed|exceed\w*|"
    r"deadline|expires?|expired|expiry|runs?\s+out|running\s+out|"
    r"requires?\s+(?:\w+\s+){0,3}?(?:approval|consent|permission|vote)|"
    r"subject\s+to\s+(?:\w+\s+){0,2}?(?:approval|consent|planning)|"
    r"by\s+(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*\b|by\s+the\s+end\s+of|"
    # an obligation with a minimum: "the licence obliges us to open at least five days a week"
    rf"{_OBLIGED}\s+(?:[\w'’-]+\s+){{0,12}}?{_AT_LEAST}\s+{_FIGURE})\b",
    re.IGNORECASE,
)
"""Cues that bound something: a cap, a covenant, a deadline, an approval, an obligation with a
minimum."""

_KINDS: tuple[tuple[ConstraintKind, re.Pattern[str]], ...] = (
    (
        "legal",
        re.compile(
            r"\b(?:illegal|unlawful|law|laws|legal\w*|legislation|decree|statut\w*|court|"
            r"licen[cs]e\w*|contract\w*|procurement|restrictive\s+covenant|ban|banned|charter|"
            r"prohibit\w*|rights?|lease|tenancy)\b",
            re.I,
        ),
    ),
    (
        "regulatory",
        re.compile(
            r"\b(?:regulat\w*|approval|consent|permit|permits|planning|complian\w*|ministerial|"
            r"inspector\w*|registration|authority|accredit\w*)\b",
            re.I,
        ),
    ),
    (
        "financial",
        re.compile(
            r"\b(?:bank|loan|debt|ebitda|cash|budget|capital|funding|covenants?|facility|spend|"
            r"afford\w*|savings|pension|borrow\w*|lend\w*)\b|[£$€¥]\s?\d",
            re.I,
        ),
    ),
    (
        "deadline",
        re.compile(
            r"\b(?:deadline|expires?|expiry|runs?\s+out|by\s+(?:\d{1,2}\s+)?[A-Z][a-z]+|"
            r"by\s+the\s+end|within\s+\d+\s+(?:days|weeks|months|years))\b",
        ),
    ),
    (
        "social",
        re.compile(
            r"\b(?:union\w*|family|partner|wife|husband|children|community|members)\b", re.I
        ),
    ),
    (
        "operational",
        re.compile(r"\b(?:capacity|vacanc\w*|staff\w*|drivers?|site|space|grid|supply)\b", re.I),
    ),
)

_STOP = frozenset(
    """a an the and or of to in on at for with by from into as is are be been was were it its
    this that these those we our us i my you your they their them he she his her not no do does
    would should could can may might must will shall has have had there which what who how
    than then so if but also any all some more most such only own other up out over under
    about after before new""".split()  # noqa: SIM905
)


class ReadConstraint(NamedTuple):
    """A constraint as the reader found it."""

    text: str
    quote: str | None
    kind: ConstraintKind
    forbids: tuple[int, ...]
    limits: tuple[int, ...]


def stems(text: str) -> frozenset[str]:
    """Content words, Snowball-stemmed, without stop words or figures."""
    words = [w for w in re.findall(r"[^\W\d_]+", text.casefold()) if w not in _STOP and len(w) > 1]
    return frozenset(stem(w) for w in words)


def kind_of(text: str) -> ConstraintKind:
    """The first kind whose cue words the text carries (legal before regulatory before
    financial …), else ``other``."""
    return next((kind for kind, cue in _KINDS if cue.search(text)), "other")


_ACTIONS: tuple[frozenset[str], ...] = tuple(
    frozenset(stem(w) for w in group.split())
    for group in (
        "buy buys bought buying purchase purchases purchasing acquire acquires acquiring "
        "acquisition acquisitions takeover",
        "sell sells sold selling sale sales dispose disposal divest divestment",
        "build builds built construct constructs construction constructing erect erection",
        "close closes closing closure closures shut",
        "borrow borrows borrowing borrowed loan loans lend lending",
        "extend extends extending extension extensions",
        "demolish demolishes demolishing demolition",
        "merge merges merging merger mergers",
        "hire hires hiring recruit recruits recruiting recruitment",
        "lease leases leasing rent rents renting let letting tenancy sublet",
        "expand expands expanding expansion",
        "convert converts converting conversion",
        "transfer transfers transferring transferred",
        "export exports exporting",
        "outsource outsources outsourcing subcontract subcontracting",
    )
)
"""An option's leading verb and the nouns a constraint names the same act by ("Buy the
tenement" / "any new property acquisition"): general English, never one problem's words."""


Acts = frozenset[frozenset[str]]
"""Groups of `_ACTIONS`."""


def _acts(text: str) -> Acts:
    """The acts (as groups of `_ACTIONS`) a text's words name."""
    said = frozenset(stem(w) for w in re.findall(r"[^\W\d_]+", text.casefold()))
    return frozenset(group for group in _ACTIONS if group & said)


def _capitalised(text: str) -> frozenset[str]:
    """Stems of the capitalised words of a text."""
    return stems(" ".join(re.findall(r"\b[A-Z][^\W\d_]*", text)))


def _shared(said: frozenset[str], named: frozenset[str], acts: Acts, option: str) -> int:
    """Content stems a constraint shares with an option, plus two when it names the very act
    the option leads with (its first word). A word the option has only inside a name
    ("Merge with the Riverside Choir Hall Trust") counts only when the constraint writes it as
    a name too: "our choir hall lease" is no mention of another society's trust."""
    words = option.split()
    head: Acts = _acts(words[0]) if words else frozenset()
    rest = " ".join(words[1:])
    in_name = _capitalised(rest) - stems(re.sub(r"\b[A-Z][^\W\d_]*", " ", rest))
    common = len(said & (stems(option) - in_name)) + len(named & in_name)
    return common + (2 if head & acts else 0)


def link(text: str, options: Sequence[str]) -> tuple[int, ...]:
    """The option a constraint speaks of: the one sharing most content stems with it (at least
    two, and more than any other option), or none. A prohibition that names the act an
    option leads with ("cannot take on any new acquisition" / "Buy the tenement")
    counts that as two shared stems; a limit's acts do not count ("operating leases don't
    count" under a debt cap is no lease option's limit)."""
    said, named = stems(text), _capitalised(text)
    acts: Acts = _acts(text) if rules_out(text) else frozenset()  # the acts it rules out
    shared = [_shared(said, named, acts, option) for option in options]
    if not shared:
        return ()
    best = max(shared)
    if best < 2 or shared.count(best) > 1:
        return ()
    return (shared.index(best),)


_NAME = re.compile(r"(?<=[a-z0-9,;:)]\s)[A-Z][a-z]+")
"""A capitalised word inside a sentence (never its first word): a name, a place, an organisation."""
_CALENDAR = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()  # noqa: SIM905
)


def _names(text: str) -> frozenset[str]:
    return frozenset(n for n in _NAME.findall(text) if n.casefold() not in _CALENDAR)


def link_by_names(text: str, statements: Sequence[str]) -> tuple[int, ...]:
    """The option whose own sentence shares a name with a prohibition ("the Arnside Road site
    cannot be sold" / "…, funded by the sale of the Arnside Road site") and at least two content
    stems, when exactly one option's sentence does: for an option whose label, cut to its head
    clause, lost the detail the prohibition speaks of. Months and days are no names."""
    said, named = stems(text), _names(text)
    hits = [
        k
        for k, statement in enumerate(statements)
        if named & _names(statement) and len(said & stems(statement)) >= 2
    ]
    return tuple(hits) if len(hits) == 1 else ()


_AMOUNT = (
    r"(?P<money>[£$€])?\s?(?P<value>\d[\d,]*(?:\.\d+)?)\s*"
    r"(?P<unit>%|per\s*cent\b|percent\b|times\b|x\b|bn\b|billion\b|m\b|million\b|k\b)?"
)
_CAP = re.compile(
    r"\b(?:caps?|capped|ceiling|maximum|at\s+most|no\s+more\s+than|not\s+more\s+than|"
    r"limit(?:s|ed)?\s+(?:to|at))\s+(?:[\w-]+\s+){0,4}?(?:at\s+|of\s+|to\s+)?" + _AMOUNT,
    re.IGNORECASE,
)
"""A cap stated with its figure: "caps debt at 3 times EBITDA", "capped at 15% of hours"."""
_PROJECTED = re.compile(
    r"\b(?:would|will|could)\s+(?:take|push|bring|raise|lift|put|increase|leave)\s+"
    r"(?:[\w'-]+\s+){0,3}?(?:to|at|over|above)\s+(?:about|around|roughly|some|nearly|almost|"
    r"approximately|over|~)?\s*" + _AMOUNT,
    re.IGNORECASE,
)
"""Where a course would take the capped figure: "the new loan would take us to 3.6 times"."""
_MOST = re.compile(r"\b(?:most|all|the\s+(?:majority|bulk))\s+of\b", re.IGNORECASE)
"""An option's share that is over half of what it speaks of ("staff most of the night shifts")."""
_SCALE = {"k": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}


def _amount(match: re.Match[str]) -> tuple[str, float] | None:
    """A figure as (kind, value): a share ("%"), a multiple ("x") or money; None when the
    figure carries no unit (a count of months, people or shifts is never compared)."""
    unit = (match["unit"] or "").casefold().replace(" ", "")
    value = float(match["value"].replace(",", ""))
    if unit in {"%", "percent"}:
        return "%", value
    if unit in {"times", "x"}:
        return "x", value
    if match["money"]:
        return f"money{match['money']}", value * _SCALE.get(unit, 1.0)
    return None


def exceeds_cap(text: str, option: str) -> bool:
    """Whether a limit's own words put an option over its stated cap: the text says where the
    course would take the capped figure ("caps debt at 3 times EBITDA; the new loan would take
    us to 3.6 times"), or caps a share under half that the option takes most or all of
    ("agency nurses capped at 15% of hours" / "Staff most of the night shifts with agency
    nurses"). Figures of different kinds (a share, a multiple, money) are never compared."""
    caps = [a for m in _CAP.finditer(text) if (a := _amount(m))]
    if not caps:
        return False
    projected = [a for m in _PROJECTED.finditer(text) if (a := _amount(m))]
    if any(kind == cap_kind and value > cap for kind, value in projected for cap_kind, cap in caps):
        return True
    return bool(_MOST.search(option)) and any(k == "%" and cap < 50 for k, cap in caps)


_PERIOD = r"(?:\s+(?:a|an|per|each)\s+(?P<period>day|week|month|year|night|shift|hour))?"
_MINIMUM = re.compile(
    rf"{_AT_LEAST}\s+(?P<value>{_FIGURE})\s+(?P<noun>[^\W\d_]+){_PERIOD}", re.IGNORECASE
)
"""A minimum with what it counts, after an obligation: "obliges the operator to run at least
four crossings a day" is (4, crossing, day)."""
_OBLIGATION = re.compile(rf"\b{_OBLIGED}\s", re.IGNORECASE)
_LEVEL = re.compile(
    rf"\bfrom\s+(?P<old>{_FIGURE})\s+(?P<noun>[^\W\d_]+){_PERIOD}\s+(?:[\w'’-]+\s+){{0,3}}?"
    rf"to\s+(?P<value>{_FIGURE})\b|"
    rf"(?:\b(?P<to>to|only|just)\s+)?(?<![\w-])(?P<value2>{_FIGURE})\s+(?P<noun2>[^\W\d_]+)"
    r"(?:\s+(?:a|an|per|each)\s+(?P<period2>day|week|month|year|night|shift|hour))?",
    re.IGNORECASE,
)
"""The level an option sets: "from six crossings a day to three" is three crossings a day (the
figure after "to" counts what the one before it counts), "cut the ward to eight beds" eight
beds, "open on two days a week" a rate. A bare count is no level: "open three new branches"
adds to what there is."""


_ADDED = frozenset({"add", "adds", "adding", "extra", "more", "another", "further", "new"})
_SPANS = frozenset({"hour", "day", "week", "month", "year", "decad"})
"""Stems of spans of time, compared only as a rate ("three days a week")."""


def _count(word: str) -> float:
    word = word.casefold()
    return float(_NUMBERS[word]) if word in _NUMBERS else float(word)


def below_minimum(text: str, option: str) -> bool:
    """Whether an option sets a level under a minimum the text obliges ("obliges the operator
    to run at least four crossings a day" / "Cut the timetable from six crossings a day to
    three"). Only figures that count the same thing (the same noun, and the same period when
    both give one) are compared: a minimum of departures says nothing of a fleet of buses."""
    minima = [
        (_count(m["value"]), stem(m["noun"]), m["period"])
        for obliged in [_OBLIGATION.search(text)]
        if obliged  # minima in the obligation's own clause, up to a semicolon, colon or stop
        for m in _MINIMUM.finditer(re.split(r"[;:]|\.\s", text[obliged.end() :])[0])
    ]
    for m in _LEVEL.finditer(option):
        value, noun = (m["value"], m["noun"]) if m["value"] else (m["value2"], m["noun2"])
        period = m["period"] if m["value"] else m["period2"]
        before = option[: m.start()].split()[-1:]
        added = bool(before) and before[0].casefold() in _ADDED
        if not m["value"] and not m["to"] and (not period or added):
            continue  # a bare count ("three new branches", "add two crossings a day") may add
        noun_stem = stem(noun)
        if noun_stem in _SPANS and not period:
            continue  # "for three years" is a span of time: no level of what the minimum counts
        for least, counted, per in minima:
            same = noun_stem == counted and (
                not period or not per or period.casefold() == per.casefold()
            )
            if same and _count(value) < least:
                return True
    return False


def bound(text: str, options: Sequence[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """What a constraint does to the options, as (forbids, limits): the option it links to is
    forbidden when it rules it out or the option would break its stated cap, and any option
    that sets a level under the minimum it obliges; the rest it links to are limited."""
    linked = link(text, options)
    if rules_out(text) or (linked and exceeds_cap(text, options[linked[0]])):
        return linked, ()
    short = tuple(k for k, option in enumerate(options) if below_minimum(text, option))
    return short, tuple(k for k in linked if k not in short)


def read_constraints(text: str, options: Sequence[str] = ()) -> tuple[ReadConstraint, ...]:
    """The binding constraints a text states, prohibitions first, each linked to the options it
    forbids or limits."""
    prohibitions: list[ReadConstraint] = []
    limits: list[ReadConstraint] = []
    for sentence in question_sentences(text):
        if sentence.rstrip().endswith("?") or len(sentence.split()) < 4:
            continue
        if not binding_cue(PROHIBITION, sentence) and not binding_cue(LIMIT, sentence):
            continue
        forbids, limited = bound(sentence, options)
        found = ReadConstraint(
            text=re.sub(r"\s+", " ", sentence).strip(),
            quote=span(text, sentence),
            kind=kind_of(sentence),
            forbids=forbids,
            limits=limited,
        )
        (prohibitions if forbids or rules_out(sentence) else limits).append(found)
    return tuple([*prohibitions, *limits][:MAX_CONSTRAINTS])
