"""Run a coroutine to completion from synchronous code, also inside a running event loop
(Jupyter kernels run one): then it runs on a fresh loop in a helper thread."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, or the same in a helper thread when a loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hivemind-run") as pool:
        return pool.submit(asyncio.run, coro).result()
