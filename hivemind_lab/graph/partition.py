"""Split a bulk load into parts that touch disjoint entity sets, for parallel loaders.

Two loaders that create relationships on the same entity node queue on its lock (or deadlock
and retry), so rows are grouped by the connected components of their subject and object keys
(union-find) and whole components are packed into balanced bins, largest first.
"""

from __future__ import annotations

from collections.abc import Sequence

from hivemind_lab.graph.store import Row


def _root(parent: dict[str, str], key: str) -> str:
    while parent[key] != key:
        parent[key] = parent[parent[key]]
        key = parent[key]
    return key


def partition_rows(rows: Sequence[Row], parts: int) -> list[list[Row]]:
    """Rows grouped into at most ``parts`` non-empty bins whose entity keys are disjoint.

    Rows keep their input order inside a bin. Fewer bins come back when the rows form fewer
    connected components than ``parts`` (one giant component gives one bin).
    """
    parent: dict[str, str] = {}
    for row in rows:
        s, o = row["subject_key"], row["object_key"]
        parent.setdefault(s, s)
        parent.setdefault(o, o)
        a, b = _root(parent, s), _root(parent, o)
        if a != b:
            parent[b] = a
    components: dict[str, list[Row]] = {}
    for row in rows:
        components.setdefault(_root(parent, row["subject_key"]), []).append(row)
    bins: list[list[Row]] = [[] for _ in range(max(1, parts))]
    for component in sorted(components.values(), key=len, reverse=True):
        min(bins, key=len).extend(component)
    order = {id(row): i for i, row in enumerate(rows)}
    return [sorted(b, key=lambda r: order[id(r)]) for b in bins if b]
