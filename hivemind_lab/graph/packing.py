"""The context packer: fill a token budget section by section, never past it.

Sections get fixed shares of the budget (the spec: high-confidence facts 40 %, supporting
evidence 30 %, open conflicts 20 %, peripheral 10 %); budget a section leaves unused rolls over
to the next. An item is a claim line plus optional detail sentences; details are cut only
between sentences. Every figure comes from the project's token counter, and the final text is
re-counted, so the output never exceeds ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hivemind_lab.text import split_sentences
from hivemind_lab.tokens import TokenCounter

SECTION_SHARES = (
    ("High-Confidence Facts", 0.4),
    ("Supporting Evidence", 0.3),
    ("Open Conflicts", 0.2),
    ("Peripheral", 0.1),
)


@dataclass(frozen=True)
class Item:
    """One entry: a line that must appear whole, and detail that may be cut at sentences."""

    line: str
    detail: str = ""


@dataclass(frozen=True)
class Packed:
    text: str
    used: int
    included: int
    dropped: int


def pack(
    header: str,
    sections: Sequence[Sequence[Item]],
    *,
    max_tokens: int,
    counter: TokenCounter,
    titles: Sequence[tuple[str, float]] = SECTION_SHARES,
) -> Packed:
    """Render ``header`` then each section's items within its share of ``max_tokens``."""
    footer_template = "\n### Token Budget\nUsed: {used} / {max}\n"
    reserve = counter.count(footer_template.format(used=max_tokens, max=max_tokens)) + 2
    head = header.rstrip() + "\n"
    available = max_tokens - counter.count(head) - reserve
    lines: list[str] = [head]
    included = dropped = 0
    carry = 0
    for (title, share), items in zip(titles, sections, strict=True):
        budget = int(available * share) + carry
        heading = f"\n### {title}\n"
        spent = counter.count(heading)
        body: list[str] = []
        for item in items:
            line = f"- {item.line}\n"
            cost = counter.count(line)
            if spent + cost > budget:
                dropped += 1
                continue
            spent += cost
            body.append(line)
            included += 1
            for sentence in split_sentences(item.detail):
                piece = f"  > {sentence}\n"
                piece_cost = counter.count(piece)
                if spent + piece_cost > budget:
                    break
                spent += piece_cost
                body.append(piece)
        if not body:
            body = ["- (nothing within budget)\n"] if items else ["- (none)\n"]
            spent += counter.count(body[0])
        if spent <= budget:
            lines.append(heading)
            lines.extend(body)
            carry = budget - spent
        else:
            carry = budget
    text = "".join(lines)
    # Final, exact accounting on the whole text (the footer states its own total, so iterate to
    # a fixed point); trim whole lines should joins have changed the count.
    while True:
        used = counter.count(text + footer_template.format(used=0, max=max_tokens))
        for _ in range(4):
            final = text + footer_template.format(used=used, max=max_tokens)
            exact = counter.count(final)
            if exact == used:
                break
            used = exact
        if used <= max_tokens or "\n" not in text.rstrip("\n"):
            break
        text = text.rstrip("\n").rsplit("\n", 1)[0] + "\n"
        dropped += 1
    return Packed(text=final, used=used, included=included, dropped=dropped)
