"""Shared fixtures."""

from __future__ import annotations

import pytest

from hivemind_lab.problems import Problem, load_problem
from tests.support import PROBLEMS


@pytest.fixture(scope="session")
def grocer() -> Problem:
    return load_problem(PROBLEMS / "regional-grocer-discounter-price-war.toml")
