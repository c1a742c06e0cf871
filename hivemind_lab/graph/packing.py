"""The context packer: fill a token budget section by section, never past it.

Sections get fixed shares of the budget (the spec: high-confidence facts 40 %, supporting
evidence 30 %, open conflicts 20 %, peripheral 10 %); budget a section leaves unused rolls over
to the next. An item is a claim line plus optional detail sentences; details are cut only
between sentences. Every figure comes from the project's token counter, and the final text is
re-counted, so the output never exceeds ``max_tokens``. A section stops looking once
`GIVE_UP_AFTER` items in a row did not fit, so packing costs what fits, not what was found.

Which items fit is `hivemind_lab.tokens.fill`, the one rule the agents' evidence packing
(`hivemind_lab.agents.budget`) also fits a small model's context window by.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hivemind_lab.text import split_sentences
from hivemind_lab.tokens import TokenCounter, fill

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
    cost: int = -1
    """Tokens of the rendered line, when already counted (see `priced`)."""
    pieces: tuple[tuple[str, int], ...] | None = None
    """The rendered detail sentences with their token counts, when already counted."""


def _line(item: Item) -> str:
    return f"- {item.line}\n"


def _pieces(item: Item, counter: TokenCounter) -> tuple[tuple[str, int], ...]:
    if item.pieces is not None:
        return item.pieces
    rendered = [f"  > {sentence}\n" for sentence in split_sentences(item.detail)]
    return tuple((piece, counter.count(piece)) for piece in rendered)


def priced(item: Item, counter: TokenCounter) -> Item:
    """The item with its token counts attached, so packing it again costs no counting (the
    graph caches priced items per assertion)."""
    return Item(item.line, item.detail, counter.count(_line(item)), _pieces(item, counter))


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
        detail: dict[int, tuple[tuple[str, int], ...]] = {}  # priced once, when taken

        def cost(i: int, items: Sequence[Item] = items) -> int:
            item = items[i]
            return item.cost if item.cost >= 0 else counter.count(_line(item))

        def piece_costs(
            i: int, items: Sequence[Item] = items, detail: dict[int, Any] = detail
        ) -> Sequence[int]:
            if i not in detail:
                detail[i] = _pieces(items[i], counter)
            return [c for _, c in detail[i]]

        filled = fill(
            len(items), budget, cost=cost, pieces=piece_costs, spent=counter.count(heading)
        )
        spent = filled.spent
        body: list[str] = []
        for i, kept in filled.taken:
            body.append(_line(items[i]))
            body.extend(piece for piece, _ in detail.get(i, ())[:kept])
        included += len(filled.taken)
        dropped += len(items) - len(filled.taken)
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
