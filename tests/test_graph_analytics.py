"""Motif names a reader can tell apart: every connected 3-node shape has its own name, and a
mutual pair reads as A<->B, not as two edges in a row."""

from __future__ import annotations

import re

import igraph as ig

from hivemind_lab.graph.analytics import _shape_name


def _connected_shapes() -> list[ig.Graph]:
    shapes = [ig.Graph.Isoclass(3, i, directed=True) for i in range(16)]
    return [g for g in shapes if g.is_connected(mode="weak")]


def test_every_connected_motif_has_a_distinct_readable_name():
    names = [_shape_name(g) for g in _connected_shapes()]
    assert len(names) == 13 and len(set(names)) == 13
    for name in names:
        edges = set(re.split(r"[,\s]+", name))
        for a, b in ("AB", "AC", "BC"):
            assert not {f"{a}->{b}", f"{b}->{a}"} <= edges, name


def test_a_fully_mutual_triad_is_named_by_its_pairs():
    full = ig.Graph.Isoclass(3, 15, directed=True)
    assert _shape_name(full) == "A<->B, A<->C, B<->C"
