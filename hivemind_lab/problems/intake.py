"""The model intake: a language model reads the client's decision out of their text, and only
what it quotes from that text is kept.

The model fills a bounded schema (`IntakeOutput`: options, exclusivity, constraints and facts,
each with the exact words it comes from). Every quote is checked against the text —
whitespace and quotation marks normalised, nothing else — and anything whose quote is not
there is dropped (a constraint's links to dropped options go with them), and so is an option
labelled or quoted in fewer than two words or that the rule reader's plausibility judge refuses (a figure, a
question, a place, an attribute: the same fail-closed test as the rule reader); when no option
survives, the decision is a refusal that lists what was dropped and why. The call goes
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

from hivemind_lab.agents.prompts import render_intake
from hivemind_lab.agents.schemas import IntakeOutput, IntakeTask
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.llm.structured import StructuredOutputError, complete_structured
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
from hivemind_lab.problems.reading.plausible import judge, trim

INTAKE_VERSION = "intake-2"
"""Bumped whenever the intake's prompt, schema or checks change; recorded (with the model) in
every `Decision` the intake reads."""

MIN_WORDS = 2
"""An option's label and quote state a course of action in at least two words each: a one-word
quote ("open", "1") is in almost any text, so the quote check alone would let it through, and a
one-word label ("Open") does not say what is done."""
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
    fact whose quote is in the problem's text, constraints relinked to the options kept. Also
    returns what was dropped, each with why. Pure."""
    text = problem.question
    dropped: list[str] = []
    options: list[Option] = []
    index: dict[int, int] = {}
    seen: set[str] = set()
    for n, option in enumerate(output.options):
        label = normalise(option.label)
        if not quoted(option.quote, text):
            dropped.append(f"option {label!r}: its quote is not in the text")
        elif min(len(label.split()), len(normalise(option.quote or "").split())) < MIN_WORDS:
            dropped.append(f"option {label!r}: too short to state a course of action")
        elif label and (why := judge(trim(label), named=True)) is not None:
            dropped.append(f"option {label!r}: {why}")
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
        constraints.append(
            Constraint(
                id=f"constraint.{len(constraints) + 1}",
                text=normalise(c.text),
                quote=normalise(c.quote),
                kind=c.kind,
                forbids=tuple(sorted({index[i] for i in c.forbids if i in index})),
                limits=tuple(
                    sorted(
                        {index[i] for i in c.limits if i in index}
                        - {index[i] for i in c.forbids if i in index}
                    )
                ),
                source="intake",
            )
        )
    exclusive: bool | None = None
    if output.exclusive != "not_stated":
        if quoted(output.exclusive_quote, text):
            exclusive = output.exclusive == "one_of"
        else:
            dropped.append(f"exclusivity {output.exclusive!r}: its quote is not in the text")
    facts: list[Fact] = []
    for f in output.facts:
        if quoted(f.quote, text):
            facts.append(
                Fact(
                    id=f"question.{len(facts) + 1}",
                    text=normalise(f.text)[:MAX_FACT_CHARS],
                    source="question",
                )
            )
        else:
            dropped.append(f"fact {f.text[:80]!r}: its quote is not in the text")
    data_facts = extract_facts(
        "",
        [(d.id, d.text) for d in problem.client_data],
        [(d.id, d.text) for d in problem.market_data],
    )
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
        facts=(*data_facts, *facts),
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
