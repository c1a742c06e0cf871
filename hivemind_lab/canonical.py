"""Canonical JSON: the one serialisation every hash of the project is taken over.

The audit chain, the response cache's keys, knowledge fingerprints and experiment ids must agree
byte for byte, so they share this definition; it sits on the ground floor (standard library
only) so that any layer may import it.
"""

from __future__ import annotations

import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Deterministic JSON used for hashing (sorted keys, no spaces, UTF-8)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
