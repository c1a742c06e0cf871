"""Whether a prohibition or limit cue in a sentence binds the decider, or only tells a fact.

A binding constraint restricts what the decision-maker may do or obtain: a law, a covenant, a
cap, a deadline, a lender or landlord refusing the client something. The same cue words also
state facts about others, the past and what has not happened:

- what other people can or cannot do ("walkers cannot afford hotel prices", "rivals can't
  offer evening meals"): a market fact, unless the client is who it is withheld from ("the
  brewery can't supply us after May");
- what could not be done in the past ("the previous owners could not get a licence", "last
  year we couldn't fill the shifts"): a past event, not a bar on the choice now;
- a cue inside a hypothetical clause ("if the county refused consent, …", "were the council
  to ban…") or a denied one ("there is no cap on rooms"): nothing has been forbidden;
- a "may not" that guesses ("walkers may not like the climb", "it may not matter"), where a
  rule's "may not" binds ("tenants may not sublet").

Passive rules stay binding whoever states them ("the roof cannot be altered"), as do things'
limits ("the old boiler cannot heat the loft") and the client's own ("we cannot close in
summer"). Pure functions over general English, never one problem's words.
"""

from __future__ import annotations

import re

ABILITY = re.compile(
    r"(?:cannot|can\s*not|can't|can’t|could\s+not|couldn't|couldn’t|runs?\s+out|running\s+out)",
    re.IGNORECASE,
)
"""Cues that say what someone can or cannot do, or has left: they bind only the decider (or a
thing the decider would act on: "our cash runs out in May"). "May not" is left out: it is as
often a rule on others the client must keep ("pupils may not use phones") as a guess."""
_PAST_ABILITY = re.compile(r"(?:could\s+not|couldn't|couldn’t|run\s+out)", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:no|without(?:\s+any)?|not\s+any)\s+(?:such\s+|[a-z-]+\s+)?$", re.I)
"""What denies a bar or a cap before its noun: "no such ban has been proposed", "there is no
legal cap"."""
_NOUN_CUE = re.compile(
    r"bans?|bars?|covenants?|limits?|caps?|ceiling|maximum|deadline|prohibitions?", re.I
)

_PAST = re.compile(
    r"\b(?:previously|previous|formerly|former|in\s+the\s+past|at\s+the\s+time|back\s+then|"
    r"used\s+to|until\s+recently|historically|\w+\s+ago|last\s+(?:year|month|week|summer|"
    r"winter|spring|autumn|season|quarter|time|january|february|march|april|may|june|july|"
    r"august|september|october|november|december))\b",
    re.IGNORECASE,
)
"""Words that put a sentence's "could not" in the past."""

_HYPOTHESIS = re.compile(
    r"\b(?:if|in\s+the\s+event|in\s+case|suppose|supposing|assuming|hypothetically)\b|"
    r"(?:^|(?<=[,;:(]\s))were\s+(?:\w+\s+){1,4}?to\b",
    re.IGNORECASE,
)
"""What opens a hypothetical clause ("were" only where it opens one: "were the council to ban
…", never "we were asked to")."""

_BOUNDARY = re.compile(
    r"[,;:()\u2013\u2014]|\s-\s|\b(?:and|but|because|so|while|whereas|although|though|since|"
    r"as|when|then|that|which|who|unless|or)\b",
    re.IGNORECASE,
)
"""Where one clause ends and another begins."""

_PRONOUNS = frozenset({"he", "she", "they", "who"})
"""Who a pronoun stands for is another party, or the client's own (`_own_party`)."""

_DECIDER = frozenset({"we", "i", "us", "me", "our", "my", "ourselves", "myself"})
"""First person: the client writing (a firm's "we", a person's "I")."""

_OTHERS = frozenset(
    """he she they who someone anyone nobody everyone people public customer customers client
    clients consumer consumers shopper shoppers buyer buyers user users patient patients
    resident residents villager villagers local locals family families household households
    visitor visitors tourist tourists guest guests traveller travellers passenger passengers
    reader readers viewer viewers listener listeners subscriber subscribers audience audiences
    fan fans student students pupil pupils competitor competitors rival rivals others friend
    friends neighbour neighbours brother brothers sister sisters cousin cousins uncle aunt
    nephew niece mum mother dad father parents grandparents""".split()  # noqa: SIM905
)
"""Who is not the decider: pronouns of others, market and public parties, competitors, and
relatives outside the household (a partner or spouse decides with the writer)."""

_GRANTS = re.compile(
    r"grant|approve|permit|allow|authori[sz]e|license|licence|lend|fund|finance|insure|renew|"
    r"extend|supply|deliver|provide|install|guarantee",
    re.IGNORECASE,
)
"""What another party grants the client: its "cannot approve" withholds it from the client."""

_RULE = re.compile(
    r"\b(?:under|by|according\s+to|in\s+line\s+with)\s+(?:the|our|my|its)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:law|laws|act|licen[cs]e|regulations?|rules?|policy|contract|covenant|agreement|lease|"
    r"terms|standards?|code|conditions)\b",
    re.IGNORECASE,
)
"""A rule the client keeps, named as the source of what others cannot do: "under the premises
licence, customers cannot buy drinks after 11pm" binds the client's trade."""

_ADVERB = re.compile(
    r"(?!(?:family|supply|apply|reply|rely|july|italy|assembly|ally|monopoly)\b)\w+ly|still|now|"
    r"also|even|just|often|ever|then|already|yet"
)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:['’][a-z]+)?", text.casefold())


def _clause_before(before: str) -> str:
    """The words of the clause a cue stands in, up to the cue."""
    cuts = list(_BOUNDARY.finditer(before))
    return before[cuts[-1].end() :] if cuts else before


def _clause_after(after: str) -> str:
    """The words after a cue, up to the clause's end."""
    cut = _BOUNDARY.search(after)
    return after[: cut.start()] if cut else after


def _subject_before(sentence: str, start: int) -> str:
    """The words before a cue that name who cannot: its own clause, or, when the cue opens a
    relative clause ("owners who could not sell"), the clause the relative refers back to."""
    before = sentence[:start]
    clause = _clause_before(before)
    cuts = list(_BOUNDARY.finditer(before))
    joint = cuts[-1].group().casefold() if cuts else ""
    if any(not _ADVERB.fullmatch(w) for w in _words(clause)):
        # "walkers who pass the village cannot …": the subject is whoever "who" stands for
        return ("who " if joint == "who" else "") + clause
    if joint in {"that", "which", "who"}:
        return ("who " if joint == "who" else "") + _clause_before(before[: cuts[-1].start()])
    if joint in {"and", "but", "or", "then"}:  # "my sister helps with bookings but can't …"
        first = _BOUNDARY.search(before)
        return before[: first.start()] if first else before
    return clause


_STANDING = re.compile(r"breach\w*|in\s+breach|would\s+breach|exceed\w*", re.IGNORECASE)
"""Cues that presuppose a bound already in force: "if we breach the covenant" speaks of a
covenant the client has, not of one that might be imposed."""
_DEFINITE = re.compile(r"\b(?:the|our|its|their|my|this|that)\s+(?:[\w-]+\s+)?$", re.IGNORECASE)


def hypothetical(sentence: str, start: int, cue: str = "") -> bool:
    """Whether the words at ``start`` stand inside a hypothetical clause ("if the board
    refused consent, …", "were the council to ban …"): an open condition with no clause
    boundary (comma, semicolon, "then") between it and the cue. A bound the condition takes
    as standing ("if we breach the covenant", "if borrowing exceeds our cap") is no
    hypothesis: the condition only says when it bites."""
    before = sentence[:start]
    if _STANDING.fullmatch(cue) or (_NOUN_CUE.fullmatch(cue) and _DEFINITE.search(before)):
        return False
    opened = list(_HYPOTHESIS.finditer(before))
    if not opened:
        return False
    rest = before[opened[-1].end() :]
    return not re.search(r"[,;:()\u2013\u2014]|\bthen\b", rest)


def conditional(sentence: str, cue: re.Match[str]) -> bool:
    """Whether a cue holds only if something happens: the sentence opens with the condition
    ("If we sell the paddock, we cannot build there") or the cue's own clause goes on with one
    ("will not lend if debt passes three times profit"). "Even if" is no condition: the bar
    holds either way."""
    fronted = re.match(r"\W*(?:\d[\d.]*\s+)?if\b", sentence, re.IGNORECASE)
    after = _clause_after(sentence[cue.end() :])
    return bool(fronted) or bool(re.search(r"(?<!even\s)\bif\b", after, re.IGNORECASE))


_MAY_NOT = re.compile(r"may\s+not\b", re.IGNORECASE)
_RULE_WORDS = (
    r"(?:law|laws|act|statute|regulations?|rules?|by-?laws?|policy|constitution|governing|"
    r"articles|licen[cs]es?|lease|tenancy|terms|conditions|contract|agreement|covenants?|"
    r"charter|code|permit|consent|planning|deeds?|franchise|insurance|insurers?)\b"
)
_RULE_SOURCE = re.compile(r"\b" + _RULE_WORDS, re.IGNORECASE)
"""What names a rule: a "may not" in a sentence that names one is a prohibition."""
_UNDER_RULE = re.compile(
    r"\b(?:under|by|according\s+to|in\s+line\s+with)\s+(?:[\w'’-]+\s+){0,3}?" + _RULE_WORDS,
    re.IGNORECASE,
)
"""A rule named as the source after the cue: "… under the council's code of conduct"."""
_GUESSED = re.compile(
    r"(?:like|love|enjoy|want|wish|welcome|care|mind|appreciate|trust|believe|accept|agree|"
    r"notice|see|understand|know|realise|realize|remember|need|expect|feel|think|bother|"
    r"tolerate|matter|work|last|help|happen|succeed|survive|recover|follow|return|come|"
    r"turn\s+up|show\s+up|find|get|even|necessarily|always|really|quite|entirely|yet)\b",
    re.IGNORECASE,
)
"""After "may not": an attitude, a perception, an outcome or a hedge ("customers may not like
it", "it may not matter", "they may not even need it") — a guess about what will happen."""
_ATTITUDE = re.compile(
    r"(?:interested|pleased|satisfied|convinced|prepared|impressed|bothered|worried|"
    r"concerned|inclined|tempted|persuaded|keen|willing|ready|able)\b",
    re.IGNORECASE,
)
_PARTICIPLE = re.compile(
    r"(?:\w+ed|\w+en|built|sold|let|sublet|held|kept|made|paid|put|set|run|shown|spent|"
    r"sent|lent|brought|bought|dug|cut|split|shut|left|told|taught|felt|fought)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:some|many|most|several|few|a\s+lot\s+of|lots\s+of|plenty\s+of|not\s+all|"
    r"half\s+of|think|thinks|worry|worries|worried|fear|fears|feared|suspect|doubt|guess|"
    r"reckon|afraid|risk|chance|possible|possibly|perhaps|maybe)\b",
    re.IGNORECASE,
)
"""Before "may not": a quantified subject or a hedging frame ("some parishioners may not",
"I worry that buyers may not", "there is a risk it may not")."""
_GUESSING_REPORT = re.compile(
    r",\s*(?:\w+\s+){1,4}?(?:warned|feared|worried|suspects?|thinks?|reckons?|guessed)\b",
    re.IGNORECASE,
)


def guessed(sentence: str, cue: re.Match[str]) -> bool:
    """Whether a "may not" is a guess about what others will like or do, or about how things
    will turn out ("older customers may not like it", "the recipe may not be enough", "it may
    not matter"), not a rule ("tenants may not sublet", "the hall may not be hired for events").
    A sentence that names a rule (a lease, a licence, the terms, a policy) keeps its "may not"
    as a prohibition, as does a passive with its participle."""
    if not _MAY_NOT.match(cue.group()) or _RULE_SOURCE.search(sentence[: cue.start()]):
        return False  # "the policy says staff may not accept gifts": a rule named first
    if _UNDER_RULE.search(sentence):
        return False  # "… may not accept gifts under the council's code of conduct"
    before = _clause_before(sentence[: cue.start()])
    after = sentence[cue.end() :].lstrip()
    words = _words(before)
    if re.match(r"be\s+", after, re.IGNORECASE):
        complement = after[2:].lstrip()
        return bool(_ATTITUDE.match(complement)) or not _PARTICIPLE.match(complement)
    return (
        bool(_GUESSED.match(after))
        or bool(_HEDGE.search(sentence[: cue.start()]))
        or bool(words and words[0] in {"it", "this", "that", "there", "they"})
        or bool(_GUESSING_REPORT.search(sentence[cue.end() :]))
    )


def binds_decider(sentence: str, cue: re.Match[str]) -> bool:
    """Whether a cue found in ``sentence`` binds the decision-maker (see the module's note)."""
    if hypothetical(sentence, cue.start(), cue.group()) or guessed(sentence, cue):
        return False
    said = cue.group()
    if _NOUN_CUE.fullmatch(said) and _NEGATED.search(sentence[: cue.start()]):
        return False
    if not ABILITY.fullmatch(said):
        return True
    if _PAST_ABILITY.fullmatch(said) and _PAST.search(sentence):
        return False
    after = _words(_clause_after(sentence[cue.end() :]))
    rest = [w for w in after if not _ADVERB.fullmatch(w)]
    if rest[:1] == ["be"]:  # a passive rule on a thing: "cannot be transferred"
        return True
    if _DECIDER & set(after):  # withheld from the decider: "can't supply us after May"
        return True
    if _RULE.search(sentence):  # "under the premises licence, customers cannot buy …"
        return True
    subject = set(_words(_subject_before(sentence, cue.start())))
    if subject & {"we", "i"}:
        return True
    named = subject & _OTHERS - _PRONOUNS  # customers, rivals, relatives: named others
    if not named and rest[:1] and _GRANTS.fullmatch(rest[0]):
        return True  # "the planners cannot approve a storey", "they cannot deliver before May"
    if not named and subject & _PRONOUNS and _own_party(sentence[: cue.start()]):
        return True  # "our landlord says he cannot extend the lease": the client's own party
    return not subject & _OTHERS


def _own_party(before: str) -> bool:
    """Whether the words before a cue name a party of the client's own that a pronoun may
    stand for ("our landlord", "my suppliers"), other than customers, rivals or relatives."""
    return any(
        noun.casefold() not in _OTHERS
        for noun in re.findall(
            r"\b(?:our|my)\s+(?:[\w-]+\s+)?([^\W\d_]+)\s+(?:says?|said|told|"
            r"has|have|tells?|confirmed|warned|wrote)\b",
            before,
            re.IGNORECASE,
        )
    )
