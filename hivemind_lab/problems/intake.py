"""The model intake: a language model reads the client's decision out of their text, and only
what it quotes from that text is kept.

The model fills a bounded schema (`IntakeOutput`: options, exclusivity, constraints and facts,
each with the exact words it comes from). Every quote is checked against the text —
whitespace and quotation marks normalised, nothing else — and anything whose quote is not
there is dropped (a constraint's links to dropped options go with them). The model's reading
is not judged by the rule reader's word rules: an option is dropped only when its quote is not
in the text, its quote is a single word (`MIN_QUOTE_WORDS`: a check of the quote, not of the
model's wording), or it is blank or given twice. When no option survives, the decision is a
refusal that lists what was dropped and why. The facts the text yields without a model
(`extract_facts`, as the offline reader reads them) stay, and the model's quoted facts are
added to them. The call goes
through whatever `ChatModel` it is given: wrapped in the response cache
(`hivemind_lab.llm.cache.CachingChatModel`) a second intake of the same text is served from
the cache and a replay makes no call. The call itself (its prompt, cache key, replies with
their usage, cache hit, what was dropped) is kept on the decision (`IntakeRecord`): the
manifest records it, and a run's audit trail writes it as its own event (``llm.intake``) right
after the decision, copied from the recorded decision on replay, so the model is never asked
again. The offline backend never gets here: it reads with the rule reader
(`hivemind_lab.problems.reading`).
"""

from __future__ import annotations

import asyncio
import re
from typing import NamedTuple

from hivemind_lab.llm.base import ChatModel
from hivemind_lab.llm.structured import StructuredOutputError, complete_structured
from hivemind_lab.problems.intake_task import IntakeOutput, IntakeTask, render_intake
from hivemind_lab.problems.loading import Problem
from hivemind_lab.problems.model import (
    MAX_FACT_CHARS,
    Constraint,
    Decision,
    Fact,
    IntakeRecord,
    Option,
    Refusal,
)
from hivemind_lab.problems.reading.facts import extract_facts

INTAKE_VERSION = "intake-3"
"""Bumped whenever the intake's prompt, schema or checks change; recorded (with the model) in
every `Decision` the intake reads. intake-3: no rule-reader judge on the model's options, the
text's own facts kept beside the model's, constraints may bar an option as a first move
(``not_first``, ``after``), room for eight constraints and twelve facts."""

MIN_QUOTE_WORDS = 2
"""An option's quote is at least two words: a one-word quote ("open", "1") is in almost any
text, so finding it there checks nothing. This bounds the quote, the evidence that the option
is the client's; the label is the model's own wording and is not judged (until intake-3 a
label also needed two words and had to pass the rule reader's plausibility judge, which
dropped a correctly quoted "Band seven first-contact practitioner at the GP hub in Exeter" as
"a long phrase without a verb"). Only options: a fact's figure is often quoted in one token."""
REPAIRS = 1
"""Replies that break the schema are shown their error and asked again once; a reader that
cannot follow the schema twice refuses (the rule reader's rule: refusing beats guessing)."""

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"'})  # fmt: skip


def normalise(text: str) -> str:
    """Whitespace collapsed and typographic quotation marks made plain: the only differences a
    quote may have from the text it comes from."""
    return re.sub(r"\s+", " ", text.translate(_QUOTES)).strip()


def quoted(quote: str | None, text: str) -> bool:
    """Whether ``quote`` occurs in ``text`` (both normalised; an empty quote never does)."""
    if not quote:
        return False
    found = normalise(quote).strip(" \"'")
    return bool(found) and found in normalise(text)


class IntakeResult(NamedTuple):
    decision: Decision
    """The decision read, with its `IntakeRecord` (``decision.intake``)."""
    call: IntakeRecord


def checked(
    output: IntakeOutput,
    problem: Problem,
    *,
    reader_version: str,
) -> tuple[Decision, tuple[str, ...]]:
    """The decision the model's reading supports: every option, constraint, exclusivity and
    fact whose quote is in the problem's text, constraints relinked to the options kept, and
    the facts the text yields without a model first (the model's facts are added to them, an
    exact repeat of one left out). Also returns what was dropped, each with why. Pure."""
    text = problem.question
    dropped: list[str] = []
    options: list[Option] = []
    index: dict[int, int] = {}
    seen: set[str] = set()
    for n, option in enumerate(output.options):
        label = normalise(option.label)
        if not quoted(option.quote, text):
            dropped.append(f"option {label!r}: its quote is not in the text")
        elif len(normalise(option.quote or "").split()) < MIN_QUOTE_WORDS:
            dropped.append(f"option {label!r}: its quote is one word, found in almost any text")
        elif not label or label.casefold() in seen:
            dropped.append(f"option {label!r}: blank or given twice")
        else:
            seen.add(label.casefold())
            index[n] = len(options)
            options.append(Option(label=label, source="intake", quote=normalise(option.quote)))
    constraints: list[Constraint] = []
    for c in output.constraints:
        if not quoted(c.quote, text):
            dropped.append(f"constraint {c.text!r}: its quote is not in the text")
            continue
        forbids = {index[i] for i in c.forbids if i in index}
        not_first = {index[i] for i in c.not_first if i in index} - forbids
        after = index.get(c.after) if c.after is not None else None
        if after in not_first:  # an option cannot have to come after itself
            not_first.discard(after)
        constraints.append(
            Constraint(
                id=f"constraint.{len(constraints) + 1}",
                text=normalise(c.text),
                quote=normalise(c.quote),
                kind=c.kind,
                forbids=tuple(sorted(forbids)),
                limits=tuple(
                    # a dividend lawful only after the leaseback may also be capped in
                    # size: not first and limited are both true of it
                    sorted({index[i] for i in c.limits if i in index} - forbids)
                ),
                not_first=tuple(sorted(not_first)),
                after=after if not_first else None,
                source="intake",
            )
        )
    exclusive: bool | None = None
    if output.exclusive != "not_stated":
        if quoted(output.exclusive_quote, text):
            exclusive = output.exclusive == "one_of"
        else:
            dropped.append(f"exclusivity {output.exclusive!r}: its quote is not in the text")
    own = extract_facts(
        text,
        [(d.id, d.text) for d in problem.client_data],
        [(d.id, d.text) for d in problem.market_data],
        options=[o.label for o in options],
    )
    known = {normalise(f.text) for f in own}
    stated = [normalise(f.text).casefold() for f in own]
    n = max([0, *(int(f.id.split(".", 1)[1]) for f in own if f.source == "question")])
    facts: list[Fact] = []
    for f in output.facts:
        said = normalise(f.text)[:MAX_FACT_CHARS]
        words = normalise(f.quote).strip(" \"'").casefold()
        if not quoted(f.quote, text):
            dropped.append(f"fact {f.text[:80]!r}: its quote is not in the text")
        elif any(words in fact for fact in stated):
            # the text's own fact already states the words the model quoted: its reading would
            # be the same fact twice (recorded runs listed each fact twice, once in the
            # model's words, labelled as the client's)
            continue
        elif said and said not in known:
            known.add(said)
            n += 1
            facts.append(Fact(id=f"question.{n}", text=said, source="intake"))
    refusal = None
    if not options:
        reason = (
            "the model's options are not quoted from the text"
            if output.options
            else "the model found no options in the text"
        )
        refusal = Refusal(reason=reason, found=tuple(d for d in dropped if d.startswith("option")))
    decision = Decision(
        options=tuple(options),
        options_source="intake" if options else "agents",
        facts=(*own, *facts),
        constraints=tuple(constraints),
        exclusive=exclusive,
        exclusive_quote=normalise(output.exclusive_quote or "") or None
        if exclusive is not None
        else None,
        exclusive_source="intake" if exclusive is not None else None,
        reader_version=reader_version,
        refusal=refusal,
    )
    return decision, tuple(dropped)


async def read_intake(model: ChatModel, problem: Problem, *, seed: int = 0) -> IntakeResult:
    """Ask ``model`` to read the problem's decision and keep what its quotes support. A reply
    that never follows the schema (after the usual repairs) is a refusal, not an error."""
    request = render_intake(IntakeTask(text=problem.question), seed=seed)
    reader_version = f"{INTAKE_VERSION}:{model.backend}/{model.model}"
    key = request.cache_key(backend=model.backend, model=model.model)
    try:
        result = await complete_structured(model, request, IntakeOutput, max_repairs=REPAIRS)
    except StructuredOutputError as exc:
        call = IntakeRecord(
            backend=model.backend,
            model=model.model,
            request_key=key,
            error=str(exc)[:1000],
            prompt=request.messages,
        )
        decision = Decision(
            reader_version=reader_version,
            refusal=Refusal(
                reason=f"the model's reading did not follow the schema ({str(exc)[:200]})"
            ),
            intake=call,
        )
        return IntakeResult(decision, call)
    decision, dropped = checked(result.value, problem, reader_version=reader_version)
    call = IntakeRecord(
        backend=model.backend,
        model=model.model,
        request_key=key,
        replies=tuple(r.content for r in result.responses),
        cached=all(r.cached for r in result.responses),
        dropped=dropped,
        prompt=request.messages,
        usage=tuple(r.usage for r in result.responses),
    )
    return IntakeResult(decision.model_copy(update={"intake": call}), call)


def intake(model: ChatModel, problem: Problem, *, seed: int = 0) -> IntakeResult:
    """`read_intake` for synchronous callers (the command line, benchmarks)."""
    return asyncio.run(read_intake(model, problem, seed=seed))
