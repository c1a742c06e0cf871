"""Language-model wire layer: one async ChatModel protocol, an OpenAI-compatible backend, a local
llama.cpp server, structured outputs and a content-addressed replay cache.

It knows nothing of agents: the deterministic offline stand-in lives in `hivemind_lab.agents.policy`
and the backend chooser in `hivemind_lab.agents.backends`. Names load on first use, so importing
`hivemind_lab.llm.base` does not load the OpenAI SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import homes, lazy_exports

if TYPE_CHECKING:  # the package's public names, each with its home (read by `homes`)
    from hivemind_lab.llm.base import ChatMessage as ChatMessage
    from hivemind_lab.llm.base import ChatModel as ChatModel
    from hivemind_lab.llm.base import ChatRequest as ChatRequest
    from hivemind_lab.llm.base import ChatResponse as ChatResponse
    from hivemind_lab.llm.base import Usage as Usage
    from hivemind_lab.llm.cache import CachingChatModel as CachingChatModel
    from hivemind_lab.llm.cache import ResponseCache as ResponseCache
    from hivemind_lab.llm.openai_backend import OpenAIChatModel as OpenAIChatModel
    from hivemind_lab.llm.openai_backend import OpenAIConfig as OpenAIConfig
    from hivemind_lab.llm.structured import Structured as Structured
    from hivemind_lab.llm.structured import complete_structured as complete_structured


_HOMES = homes(__name__)
"""Each public name and the module that defines it, read from the ``TYPE_CHECKING`` block
above (the one place the names are written): ``__all__`` and ``__getattr__`` come from it."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_exports(__name__, _HOMES)
