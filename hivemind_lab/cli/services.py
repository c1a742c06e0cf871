"""The long-running services of ``hivemind-lab``: the MCP server, its tokens and the local
language-model server. Registered on the CLI's sub-commands in `hivemind_lab.cli.app`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hivemind_lab.cli.common import console, err_console
from hivemind_lab.cli.common import fail as _fail
from hivemind_lab.errors import HivemindError


def llm_serve(
    model_file: Annotated[
        Path | None,
        typer.Option(
            help="GGUF model file (or HIVEMIND_MODEL_FILE).",
            show_default="the bundled SmolLM2-135M (plumbing, not strategy)",
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 0,
    slots: Annotated[int, typer.Option(help="Requests decoded in parallel (-np).")] = 2,
    context_size: Annotated[int, typer.Option(help="Tokens of context per slot.")] = 8192,
) -> None:
    """Run the local backend's llama.cpp server in the foreground (Ctrl-C stops it), for
    notebooks and sweeps that point the openai backend at it."""
    from hivemind_lab.agents.backends import BackendChoice, local_server

    try:
        choice = BackendChoice(backend="local", model_file=model_file, context_size=context_size)
        server = local_server(choice, slots=slots, port=port)
        with server:
            info = server.endpoint.info
            console.print(
                f"llama-server {info.server_version} serving {info.model_file} "
                f"(sha256 {info.model_sha256[:12]}…, {info.slots} slots × {info.context_size} "
                f"tokens, {info.threads} threads) at [bold]{server.base_url}[/] (pid {server.pid})",
                soft_wrap=True,
            )
            console.print(
                f"use it: hivemind-lab deliberate --backend openai --base-url {server.base_url} "
                f"--model {info.model_file} --concurrency {info.slots} …",
                soft_wrap=True,
            )
            code = server.wait()
            raise HivemindError(f"llama-server exited with code {code}:\n{server.log_tail()}")
    except HivemindError as exc:
        raise _fail(exc) from None
    except KeyboardInterrupt:
        err_console.print("stopped")


def mcp_serve_help() -> str:
    """``mcp serve``'s help, counting what the server serves from its catalog (a module that
    imports nothing, so ``--help`` does not load the SDK)."""
    from hivemind_lab.mcp_server.catalog import summary

    return (
        f"Serve the shared knowledge graph to AI clients: {summary()}, over stdio, streamable "
        "HTTP or SSE. Configured by SOURCE_MODEL, HIVEMIND_STORE, HIVEMIND_DB_PATH, "
        "NEO4J_URI/USER/PASSWORD, CONFLICT_THRESHOLD, CONSENSUS_PHI, CONSENSUS_QUORUM, "
        "VOTING_WINDOW_HOURS, MAX_CONTEXT_TOKENS, HIVEMIND_TOKEN_FILE, HIVEMIND_WEBHOOK_URLS / "
        "HIVEMIND_WEBHOOK_SECRET, HIVEMIND_ALLOWED_HOSTS / HIVEMIND_ALLOWED_ORIGINS, "
        "HIVEMIND_PUBLIC_URL, HIVEMIND_MAX_REQUEST_BYTES (per HTTP body or stdio message), "
        "HIVEMIND_READ_TIMEOUT_S (per request) and HIVEMIND_IDLE_TIMEOUT_S. SIGTERM stops it "
        "within a second."
    )


def mcp_serve(
    transport: Annotated[
        str, typer.Option(help="stdio (one client), http (streamable HTTP at /mcp) or sse.")
    ] = "stdio",
    host: Annotated[
        str, typer.Option(help="Bind address for http/sse (loopback unless a token file is set).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for http/sse (0 picks a free one).")] = 8765,
    token_file: Annotated[
        Path | None, typer.Option(help="Bearer-token hashes → models (HIVEMIND_TOKEN_FILE).")
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Extra Host header accepted, e.g. hive.lan or hive.lan:8765; repeatable "
            "(HIVEMIND_ALLOWED_HOSTS)."
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(help="Extra Origin accepted; repeatable (HIVEMIND_ALLOWED_ORIGINS)."),
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(
            help="Base URL clients use, e.g. https://hive.example.org, advertised as the "
            "OAuth resource (HIVEMIND_PUBLIC_URL)."
        ),
    ] = None,
    conformance_fixtures: Annotated[
        bool, typer.Option(hidden=True, help="Serve the conformance suite's fixture tools.")
    ] = False,
) -> None:
    """Serve the shared graph over MCP (the help text is `mcp_serve_help`'s)."""
    from hivemind_lab.graph.config import GraphConfig
    from hivemind_lab.mcp_server.serve import free_port, serve
    from hivemind_lab.mcp_server.settings import ServerSettings

    if transport not in ("stdio", "http", "sse"):
        raise _fail(HivemindError(f"transport: unknown {transport!r} (allowed: stdio, http, sse)"))
    try:
        settings = ServerSettings.from_env(
            transport=transport,
            host=host,
            port=free_port(host) if port == 0 else port,
            token_file=token_file,
            allowed_hosts=tuple(allowed_host) if allowed_host else None,
            allowed_origins=tuple(allowed_origin) if allowed_origin else None,
            public_url=public_url,
            conformance_fixtures=conformance_fixtures or None,
        )
        serve(settings, GraphConfig.from_env())
    except HivemindError as exc:
        raise _fail(exc) from None


def mcp_token_add(
    model: Annotated[str, typer.Argument(help="The model name the token will act as.")],
    file: Annotated[Path, typer.Option(help="Token file to create or extend.")] = Path(
        "hivemind-tokens.json"
    ),
) -> None:
    """Create a bearer token for MODEL; only its hash is stored. The token is printed once."""
    from hivemind_lab.mcp_server.tokens import add_token

    try:
        token = add_token(file, model)
    except HivemindError as exc:
        raise _fail(exc) from None
    typer.echo(token)
    err_console.print(f"token for {model!r} added to {file} (store it now: it is not kept)")


def mcp_token_list(
    file: Annotated[Path, typer.Option(help="Token file to read.")] = Path("hivemind-tokens.json"),
) -> None:
    """List the tokens of a token file: model and id (a prefix of the token's hash)."""
    from hivemind_lab.mcp_server.tokens import list_tokens

    try:
        for model, token_id in list_tokens(file):
            typer.echo(f"{model}\t{token_id}")
    except HivemindError as exc:
        raise _fail(exc) from None


def mcp_token_remove(
    model: Annotated[str, typer.Argument(help="The model whose token(s) to remove.")],
    token_id: Annotated[
        str | None, typer.Option("--id", help="Only the token with this id (see `token list`).")
    ] = None,
    file: Annotated[Path, typer.Option(help="Token file to change.")] = Path(
        "hivemind-tokens.json"
    ),
) -> None:
    """Remove MODEL's tokens (or one of them); a running server refuses them at its next request."""
    from hivemind_lab.mcp_server.tokens import remove_tokens

    try:
        removed = remove_tokens(file, model, token_id=token_id)
    except HivemindError as exc:
        raise _fail(exc) from None
    if not removed:
        raise _fail(HivemindError(f"model: no token of {model!r} in {file}"))
    err_console.print(f"removed {removed} token(s) of {model!r} from {file}")
