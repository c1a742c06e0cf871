"""Labelled contests in the graph: values that recur across contests (labels) are weighed with
each model's per-label rows (docs/design/consensus.md), on every store of the contract suite."""

from __future__ import annotations

T = "theory"
GOOD, HABIT = ("h1", "h2"), ("b1", "b2", "b3")


def _labels(i: int) -> dict[str, str]:
    """Item i's true label alternates 0/1; h1 and h2 are right 9 times in 10; b1..b3 are right
    on every 0 and call three 1s in ten 0 (a habit: one coin finds them 85% right)."""
    truth = str(i % 2)
    out = {}
    for j, m in enumerate(GOOD):
        out[m] = str(1 - int(truth)) if (i + 3 * j) % 10 == 0 else truth
    for j, m in enumerate(HABIT):
        out[m] = "0" if truth == "0" or (i // 2 + 3 * j) % 10 < 3 else "1"
    return out


def _vote_all(graph, items: dict[str, dict[str, str]]) -> None:
    claims = [
        {
            "subject": s,
            "predicate": "has_label",
            "obj": v,
            "confidence": 1.0,
            "model": m,
            "domain": T,
        }
        for s, votes in items.items()
        for m, v in votes.items()
    ]
    held = {
        (c["subject"], c["model"]): r.assertion_id
        for c, r in zip(claims, graph.assert_many(claims), strict=True)
    }
    side: dict[str, tuple[str, str]] = {}
    for view in graph.conflicts(T, "unresolved"):
        side.setdefault(view.assertion_a.id, (view.conflict_id, "accept_a"))
        side.setdefault(view.assertion_b.id, (view.conflict_id, "accept_b"))
    votes = [
        {"conflict_id": side[a][0], "resolution": side[a][1], "model": m}
        for (s, m), a in sorted(held.items())
        if a in side
    ]
    graph.resolve_many(votes, skip_closed=True)


def _live(graph, subject: str) -> list[str]:
    rows = graph.store.read(
        "MATCH (a:Assertion) WHERE a.status = 'active' AND a.subject = $s RETURN a.object AS o",
        {"s": subject},
    )
    return sorted(r["o"] for r in rows)


def test_a_habitual_error_does_not_outvote_two_good_voters(graph):
    items = {f"item {i}": _labels(i) for i in range(40)}
    # the test item: both good voters say 1, the three habitual voters say 0
    items["item x"] = {**dict.fromkeys(GOOD, "1"), **dict.fromkeys(HABIT, "0")}
    _vote_all(graph, items)
    assert _live(graph, "item x") == ["1"]
    record = graph.track_record("b1", T)
    hits = record.label_hits
    assert set(hits) == {"has_label 0", "has_label 1"}
    assert hits["has_label 0"] > record.reliability > hits["has_label 1"]
