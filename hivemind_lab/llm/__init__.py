"""Language-model wire layer: one async ChatModel protocol, an OpenAI-compatible backend, a local
llama.cpp server, structured outputs and a content-addressed replay cache.

It knows nothing of agents: the deterministic offline stand-in lives in `hivemind_lab.agents.policy`
and the backend chooser in `hivemind_lab.agents.backends`. Names load on first use, so importing
`hivemind_lab.llm.base` does not load the OpenAI SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hivemind_lab.lazy import lazy_exports

if TYPE_CHECKING:
    from hivemind_lab.llm.base import ChatMessage, ChatModel, ChatRequest, ChatResponse, Usage
    from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
    from hivemind_lab.llm.openai_backend import OpenAIChatModel, OpenAIConfig
    from hivemind_lab.llm.structured import Structured, complete_structured

_HOMES = {
    "ChatMessage": "hivemind_lab.llm.base",
    "ChatModel": "hivemind_lab.llm.base",
    "ChatRequest": "hivemind_lab.llm.base",
    "ChatResponse": "hivemind_lab.llm.base",
    "Usage": "hivemind_lab.llm.base",
    "CachingChatModel": "hivemind_lab.llm.cache",
    "ResponseCache": "hivemind_lab.llm.cache",
    "OpenAIChatModel": "hivemind_lab.llm.openai_backend",
    "OpenAIConfig": "hivemind_lab.llm.openai_backend",
    "Structured": "hivemind_lab.llm.structured",
    "complete_structured": "hivemind_lab.llm.structured",
}

__getattr__ = lazy_exports(__name__, _HOMES)
__all__ = [
    "CachingChatModel",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "OpenAIChatModel",
    "OpenAIConfig",
    "ResponseCache",
    "Structured",
    "Usage",
    "complete_structured",
]
