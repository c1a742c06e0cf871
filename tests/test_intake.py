"""The model intake: only what the model quotes from the client's text is kept, the call is
cached by content (a second intake makes no call), and on the bundled local model the reply is
schema-valid with every kept quote a substring of the text (never its wording)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from hivemind_lab.llm.base import ChatRequest
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.structured import extract_json
from hivemind_lab.llm.testing import FunctionModel
from hivemind_lab.problems.decision import decide
from hivemind_lab.problems.intake import checked, intake, normalise, quoted, read_intake
from hivemind_lab.problems.intake_task import IntakeOutput
from hivemind_lab.problems.loading import Problem
from hivemind_lab.problems.reading.facts import extract_facts
from tests.support import REPO

TEXT = (
    "Our bakery weighs three moves:  open a second shop in the old town, sell bread online, "
    "or keep the single shop. We can only afford one of them. A regional decree bans new "
    "shops in the old town. Cash covers 14 months of costs."
)
PROBLEM = Problem(id="bakery", title="Bakery", question=TEXT)

READING = {
    "options": [
        {"label": "Open a second shop", "quote": "open a second shop in the old town"},
        {"label": "Sell bread online", "quote": "sell bread online"},
        {"label": "Franchise the brand", "quote": "franchise the brand nationally"},
        {"label": "Keep the single shop", "quote": "keep the single  shop"},
    ],
    "exclusive": "one_of",
    "exclusive_quote": "We can only afford one of them.",
    "constraints": [
        {
            "text": "A decree bans new shops in the old town.",
            "quote": "A regional decree bans new shops in the old town.",
            "kind": "legal",
            "forbids": [0],
        },
        {"text": "A made-up covenant.", "quote": "the bank covenant caps debt", "forbids": [1]},
        {
            "text": "Franchising needs approval.",
            "quote": "We can only afford one",
            "limits": [2, 3],
        },
    ],
    "facts": [
        {"text": "Cash covers 14 months.", "quote": "Cash covers 14 months of costs."},
        {"text": "Sales rose 40%.", "quote": "Sales rose 40% last year."},
    ],
}


def test_only_what_is_quoted_from_the_text_is_kept() -> None:
    decision, dropped = checked(
        IntakeOutput.model_validate(READING), PROBLEM, reader_version="intake-test"
    )
    assert decision.labels == ("Open a second shop", "Sell bread online", "Keep the single shop")
    assert all(o.source == "intake" and quoted(o.quote, TEXT) for o in decision.options)
    # the ban keeps its link; the covenant is not in the text; the franchise option was dropped
    # and the third constraint's link follows the kept option (old 3 is new 2)
    assert [(c.text, c.forbids, c.limits) for c in decision.constraints] == [
        ("A decree bans new shops in the old town.", (0,), ()),
        ("Franchising needs approval.", (), (2,)),
    ]
    assert decision.exclusive is True and decision.exclusive_source == "intake"
    # the text's own facts; the model's quoted one restates one of them, so it is not added a
    # second time (the unquoted one is dropped)
    own = [f.text for f in extract_facts(TEXT, options=decision.labels)]
    assert [f.text for f in decision.facts] == own
    assert len(dropped) == 3 and all("not in the text" in d for d in dropped)


def test_the_text_facts_stay_and_the_model_facts_add_to_them_without_repeats() -> None:
    """The text's own facts stay. A model fact whose quoted words one of them already states
    is the same fact in the model's words and is not added again; a model fact from words no
    text fact holds is added, marked as the intake's reading."""
    own = extract_facts(TEXT, options=("Open a second shop", "Sell bread online"))
    assert own, "the fixture's text must yield facts without a model"
    assert not any("three moves" in f.text for f in own)
    reading = {
        "options": READING["options"][:2],
        "facts": [
            {"text": own[0].text, "quote": "We can only afford one of them."},  # a repeat
            {"text": "The shop runs 14 months on its cash.", "quote": "Cash covers 14 months"},
            {"text": "Three moves are on the table.", "quote": "Our bakery weighs three moves"},
        ],
    }
    decision, dropped = checked(IntakeOutput.model_validate(reading), PROBLEM, reader_version="v")
    texts = [f.text for f in decision.facts]
    assert texts == [*(f.text for f in own), "Three moves are on the table."]
    assert decision.facts[-1].source == "intake"
    assert len({f.id for f in decision.facts}) == len(decision.facts)  # ids stay citable
    assert dropped == ()


def test_a_long_quoted_option_without_a_verb_survives_the_intake() -> None:
    """The model's reading stands: no rule-reader judge (it once dropped this option as "a
    long phrase without a verb", the option the labelled answer puts first)."""
    text = (
        "I am a physiotherapist choosing my next post: a Band seven first-contact practitioner "
        "at the GP hub in Exeter, or staying on the ward in Plymouth. Which should I take?"
    )
    label = "Band seven first-contact practitioner at the GP hub in Exeter"
    reading = {
        "options": [
            {"label": label, "quote": label},
            {"label": "Stay on the ward in Plymouth", "quote": "staying on the ward in Plymouth"},
            {"label": "Exeter", "quote": "Exeter"},  # a one-word quote checks nothing
        ]
    }
    problem = Problem(id="physio", title="Physio", question=text)
    decision, dropped = checked(IntakeOutput.model_validate(reading), problem, reader_version="v")
    assert decision.labels == (label, "Stay on the ward in Plymouth")
    assert dropped == ("option 'Exeter': its quote is one word, found in almost any text",)


def test_a_constraint_can_bar_an_option_as_a_first_move_only() -> None:
    text = (
        "We weigh a sale and leaseback of the depot, a special dividend, or a rights issue. "
        "The covenant bars any distribution until the leaseback has closed."
    )
    reading = {
        "options": [
            {
                "label": "Sale and leaseback of the depot",
                "quote": "a sale and leaseback of the depot",
            },
            {"label": "Special dividend", "quote": "a special dividend"},
            {"label": "Rights issue", "quote": "a rights issue"},
        ],
        "constraints": [
            {
                "text": "No distribution before the leaseback closes.",
                "quote": "The covenant bars any distribution until the leaseback has closed.",
                "kind": "financial",
                "not_first": [1],
                "after": 0,
                "limits": [1, 2],
            }
        ],
    }
    problem = Problem(id="depot", title="Depot", question=text)
    decision, _ = checked(IntakeOutput.model_validate(reading), problem, reader_version="v")
    (constraint,) = decision.constraints
    assert (constraint.not_first, constraint.after, constraint.forbids) == ((1,), 0, ())
    assert constraint.limits == (1, 2)  # barred first and bounded in size: both stand
    assert decision.not_first() == (1,) and decision.forbidden() == ()


def test_quotes_are_checked_with_whitespace_and_quotation_marks_normalised_only() -> None:
    text = "They said \u201cno more than two shops\u201d.\nThen\tthey left."
    assert quoted('"no more than two shops"', text)
    assert quoted("Then they   left", text)
    assert not quoted("no more than 2 shops", text)
    assert not quoted("THEN THEY LEFT", text)
    assert normalise(" a\u2019b \n c ") == "a'b c"


def test_no_quoted_option_is_a_refusal_and_unquoted_exclusivity_is_not_stated() -> None:
    bare = {
        "options": [{"label": "Expand", "quote": "expand into Spain"}],
        "exclusive": "combinable",
        "exclusive_quote": "they can be combined",
    }
    decision, _ = checked(IntakeOutput.model_validate(bare), PROBLEM, reader_version="v")
    assert decision.options == () and decision.refusal is not None
    assert decision.exclusive is None


def _replies(request: ChatRequest) -> IntakeOutput:
    return IntakeOutput.model_validate(READING)


def test_the_intake_is_cached_by_content_and_replayed_with_no_call(tmp_path: Path) -> None:
    inner = FunctionModel(_replies, model="reader")
    cache = ResponseCache(tmp_path / "intake.sqlite")
    first = intake(CachingChatModel(inner, cache), PROBLEM)
    second = intake(CachingChatModel(inner, cache), PROBLEM)
    replay = intake(
        CachingChatModel(None, cache, mode="replay", backend="function", model="reader"), PROBLEM
    )
    cache.close()
    assert inner.calls == 1
    assert not first.call.cached and second.call.cached and replay.call.cached

    def read(d: object) -> object:
        return d.model_copy(update={"intake": None})  # type: ignore[attr-defined]

    assert read(first.decision) == read(second.decision) == read(replay.decision)
    assert first.decision.intake is not None and first.decision.intake.replies
    assert first.decision.reader_version.startswith("intake-")
    # the decision built from the reading keeps the intake's options and links
    decision = decide(PROBLEM, reading=first.decision)
    assert decision.options_source == "intake" and decision.forbidden() == (0,)


@pytest.fixture(scope="module")
def llama_binary() -> Path:
    """The server build (scripts/llama-server build reuses a cached one)."""
    script = REPO / "scripts" / "llama-server"
    done = subprocess.run([str(script), "build"], capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = subprocess.run([str(script), "path"], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


@pytest.mark.slow
def test_the_bundled_local_model_reads_quotes_from_the_text(
    tmp_path: Path, llama_binary: Path
) -> None:
    """Schema and quotes only: a 135M model's wording is never asserted."""
    from hivemind_lab.agents.backends import backend_choice, open_model

    cache = ResponseCache(tmp_path / "intake.sqlite")
    env = {"HIVEMIND_LLAMA_SERVER": str(llama_binary)}
    with (
        open_model(backend_choice("local"), concurrency=1, env=env) as chat,
        asyncio.Runner() as runner,  # one event loop: the model's client is bound to it
    ):
        first = runner.run(read_intake(CachingChatModel(chat, cache), PROBLEM))
        counted = CachingChatModel(chat, cache)
        second = runner.run(read_intake(counted, PROBLEM))
    cache.close()
    assert first.call.error is None, first.call.error
    for reply in first.call.replies[-1:]:
        IntakeOutput.model_validate_json(extract_json(reply))  # the kept reply follows the schema
    decision = first.decision
    spans = [o.quote for o in decision.options] + [c.quote for c in decision.constraints]
    spans += [decision.exclusive_quote] if decision.exclusive_quote else []
    assert all(s is not None and normalise(s) in normalise(TEXT) for s in spans)
    assert counted.misses == 0 and second.call.cached
    assert second.decision.options == first.decision.options


def test_an_option_quoted_in_one_word_is_dropped() -> None:
    """A one-word quote ("open", "1") is in almost any text: the quote check alone keeps it.
    (Until intake-3 an option the rule reader's judge called a figure, like "In 2027" quoted
    as "a second shop in 2027", was dropped too: the model's reading now stands.)"""
    text = "We could open a second shop in 2027 or sell bread online. Option 1 has risks."
    numbered = {"options": [{"label": "1", "quote": "1"}, {"label": "open", "quote": "open"}]}
    problem = Problem(id="p", title="p", question=text)
    decision, dropped = checked(IntakeOutput.model_validate(numbered), problem, reader_version="v")
    assert decision.options == () and decision.refusal is not None
    assert len(dropped) == 2 and all("quote is one word" in d for d in dropped)
    one_word_label = {"options": [{"label": "Online", "quote": "sell bread online"}]}
    kept, why = checked(IntakeOutput.model_validate(one_word_label), problem, reader_version="v")
    assert kept.labels == ("Online",) and why == ()  # the label is the model's wording
