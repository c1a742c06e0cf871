"""The local backend: a llama.cpp server started and stopped by the workbench.

Fast tests check the errors (missing binary, missing or non-GGUF model file, a server that
dies or never gets ready — and is stopped by its PID) and the error messages of unreachable or
invalid endpoints. The slow test builds (or reuses) the real ``llama-server`` and runs a tiny
deliberation on the bundled 135M model through propose → critique → revise → score. It asserts
only on structure, never on what the model says: a 135M model gives no real strategy.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hivemind_lab.agents.backends import BackendChoice, backend_choice, make_model, open_model
from hivemind_lab.agents.budget import fit_task
from hivemind_lab.agents.prompts import render
from hivemind_lab.agents.schemas import Evidence, ProposeTask
from hivemind_lab.agents.testing import TEST_MODEL_ID
from hivemind_lab.cli import app
from hivemind_lab.errors import InputError
from hivemind_lab.llm.base import ChatMessage, ChatRequest, ChatResponse
from hivemind_lab.llm.bundled import GEMMA3, SMOLLM2, assemble, locate
from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
from hivemind_lab.llm.local import (
    LocalChatModel,
    LocalEndpoint,
    LocalServer,
    LocalServerConfig,
    LocalServerError,
    LocalServerInfo,
    LocalServerPool,
    check_model_file,
    find_binary,
    free_port,
    resolve_model_file,
    with_parent,
)
from hivemind_lab.llm.openai_backend import LLMError, OpenAIChatModel, OpenAIConfig
from hivemind_lab.llm.structured import StructuredOutputError, complete_structured
from hivemind_lab.runs.results import Status
from hivemind_lab.tokens import default_counter
from tests.support import REPO, child_env

SCRIPT = REPO / "scripts" / "llama-server"


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie — exited, not yet reaped — counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _fake_gguf(path: Path) -> Path:
    path.write_bytes(b"GGUF" + bytes(60))
    return path


def _fake_server(tmp_path: Path, body: str) -> Path:
    """An executable that answers --version like llama-server and otherwise runs ``body``."""
    script = tmp_path / "llama-server"
    script.write_text(
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "version: 0 (test)"; exit 0; fi\n'
        + body
        + "\n"
    )
    script.chmod(0o755)
    return script


def _fake_http_server(tmp_path: Path, port: int) -> Path:
    """A stand-in llama-server that answers every GET (/health included) on ``port``."""
    return _fake_server(
        tmp_path,
        f'exec {sys.executable} -c "import http.server as h\n'
        "class H(h.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        self.send_response(200); self.end_headers(); self.wfile.write(b'{}')\n"
        "    def log_message(self, *a): pass\n"
        f"h.HTTPServer(('127.0.0.1', {port}), H).serve_forever()\"",
    )


# -- errors, fast ---------------------------------------------------------------------------------


def test_missing_binary_is_named(tmp_path):
    missing = tmp_path / "bin" / "llama-server"
    with pytest.raises(InputError, match="no executable at") as caught:
        find_binary({"HIVEMIND_LLAMA_SERVER": str(missing)})
    assert str(missing) in str(caught.value)
    assert "make llama" in str(caught.value)


def test_missing_model_file_is_named(tmp_path):
    missing = tmp_path / "model.gguf"
    with pytest.raises(InputError, match="does not exist") as caught:
        resolve_model_file(missing, env={})
    assert caught.value.field == "model_file"
    assert str(missing) in str(caught.value)


def test_model_file_from_the_environment(tmp_path):
    model = _fake_gguf(tmp_path / "m.gguf")
    assert resolve_model_file(None, env={"HIVEMIND_MODEL_FILE": str(model)}) == model.resolve()


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    text = tmp_path / "notes.gguf"
    text.write_text("hello, not weights")
    with pytest.raises(InputError, match="is not a GGUF file") as caught:
        check_model_file(text)
    assert str(text) in str(caught.value)


def test_server_that_exits_at_start_reports_its_log_and_leaves_nothing(tmp_path):
    binary = _fake_server(tmp_path, 'echo "error: failed to load model" >&2\nexit 7')
    server = LocalServer(LocalServerConfig(binary=binary, model_file=_fake_gguf(tmp_path / "m")))
    with pytest.raises(LocalServerError, match="exited with code 7") as caught:
        server.start()
    assert "failed to load model" in str(caught.value)
    assert server.pid is None


def test_server_that_never_gets_ready_is_stopped_by_its_pid(tmp_path):
    pid_file = tmp_path / "pid"
    binary = _fake_server(tmp_path, f'echo $$ > "{pid_file}"\nexec sleep 60')
    config = LocalServerConfig(
        binary=binary, model_file=_fake_gguf(tmp_path / "m"), start_timeout_s=1.0
    )
    with pytest.raises(LocalServerError, match="was not ready after"):
        LocalServer(config).start()
    pid = int(pid_file.read_text())
    assert not _alive(pid)


def test_server_is_stopped_when_the_block_fails(tmp_path):
    """A stand-in server that answers /health: the context manager stops it on an exception."""
    port = free_port()
    binary = _fake_http_server(tmp_path, port)
    config = LocalServerConfig(binary=binary, model_file=_fake_gguf(tmp_path / "m"), port=port)
    server = LocalServer(config)
    seen: list[int] = []

    def interrupted_block() -> None:
        with server:
            seen.append(server.endpoint.pid)
            assert _alive(seen[0])
            assert server.endpoint.base_url == f"http://127.0.0.1:{port}/v1"
            assert server.endpoint.info.model_sha256 == check_sha(tmp_path / "m")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted_block()
    assert seen
    assert not _alive(seen[0])


_CHILD = """
import sys, time
from pathlib import Path
from hivemind_lab.llm.local import LocalServer, LocalServerConfig
binary, model, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
server = LocalServer(LocalServerConfig(binary=binary, model_file=model, port=port))
server.start()
print(server.endpoint.pid, flush=True)
time.sleep(120)
"""


def test_a_server_dies_with_a_client_killed_by_sigkill(tmp_path):
    """The client cannot run its stop when killed -9; the kernel stops its server for it."""
    port = free_port()
    binary = _fake_http_server(tmp_path, port)
    model = _fake_gguf(tmp_path / "m")
    client = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(binary), str(model), str(port)],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(tmp_path),
        cwd=REPO,
    )
    try:
        assert client.stdout is not None
        pid = int(client.stdout.readline())
        assert _alive(pid)
        client.kill()
        client.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "the server outlived its killed client"
    finally:
        client.kill()
        with contextlib.suppress(ProcessLookupError, NameError):
            os.kill(pid, signal.SIGKILL)


# -- two servers at once (#34.6) -----------------------------------------------------------------


def _fake_pool_server(tmp_path: Path, refuse: str = "") -> Path:
    """A stand-in llama-server that serves GET on the ``--port`` it is given and prints its
    ``-m`` model; it exits 3 at start for a model path containing ``refuse`` (when set)."""
    script = tmp_path / "pool-server.py"
    script.write_text(
        "import http.server as h, sys\n"
        "args = sys.argv[1:]\n"
        "port, model = int(args[args.index('--port') + 1]), args[args.index('-m') + 1]\n"
        f"if {refuse!r} and {refuse!r} in model:\n"
        "    print('error: failed to load model', model, flush=True); sys.exit(3)\n"
        "class H(h.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        self.send_response(200); self.end_headers(); self.wfile.write(b'{}')\n"
        "    def log_message(self, *a): pass\n"
        "h.HTTPServer(('127.0.0.1', port), H).serve_forever()\n"
    )
    return _fake_server(tmp_path, f'exec {sys.executable} "{script}" "$@"')


def test_a_pool_runs_one_server_per_model_file_and_stops_them_all(tmp_path):
    binary = _fake_pool_server(tmp_path)
    smol, gemma = _fake_gguf(tmp_path / "smol.gguf"), _fake_gguf(tmp_path / "gemma.gguf")
    with LocalServerPool(binary=binary, slots=2) as pool:
        a, b = pool.endpoint(smol), pool.endpoint(gemma)
        assert pool.endpoint(smol) is a  # the same file: the same server
        assert a.base_url != b.base_url and a.pid != b.pid
        assert _alive(a.pid) and _alive(b.pid)
        assert (a.info.model_file, b.info.model_file) == ("smol.gguf", "gemma.gguf")
        assert list(pool.servers) == [smol.resolve(), gemma.resolve()]
        model = pool.model(gemma, concurrency=1)
        assert model.server == b and model.limits.context_window == b.info.context_size
        with pytest.raises(InputError, match="already served") as caught:
            pool.endpoint(smol, context_size=4096)
        assert str(smol.resolve()) in str(caught.value)
    assert not _alive(a.pid) and not _alive(b.pid)
    assert pool.servers == {}


def test_a_pool_names_the_model_that_failed_and_stops_the_others(tmp_path):
    binary = _fake_pool_server(tmp_path, refuse="broken")
    good, bad = _fake_gguf(tmp_path / "good.gguf"), _fake_gguf(tmp_path / "broken.gguf")
    started: list[int] = []

    def run() -> None:
        with LocalServerPool(binary=binary) as pool:
            started.append(pool.endpoint(good).pid)
            pool.endpoint(bad)

    with pytest.raises(LocalServerError, match="exited with code 3") as caught:
        run()
    assert str(bad.resolve()) in str(caught.value)
    assert "failed to load model" in str(caught.value)
    assert started and not _alive(started[0]), "the first server outlived the failed start"


_POOL_CHILD = """
import sys, time
from pathlib import Path
from hivemind_lab.llm.local import LocalServerPool
binary, models = Path(sys.argv[1]), sys.argv[2:]
with LocalServerPool(binary=binary) as pool:
    print(*(pool.endpoint(Path(m)).pid for m in models), flush=True)
    time.sleep(120)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_pools_servers_die_with_a_client_killed_by_a_signal(tmp_path, signum):
    """Neither signal lets the client run its stop; the kernel stops both servers for it."""
    binary = _fake_pool_server(tmp_path)
    models = [str(_fake_gguf(tmp_path / f"{name}.gguf")) for name in ("smol", "gemma")]
    client = subprocess.Popen(
        [sys.executable, "-c", _POOL_CHILD, str(binary), *models],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(tmp_path),
        cwd=REPO,
    )
    pids: list[int] = []
    try:
        assert client.stdout is not None
        pids = [int(p) for p in client.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        client.send_signal(signum)
        client.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in pids), "a server outlived its killed client"
    finally:
        client.kill()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_only_a_server_started_from_the_main_thread_is_tied_to_it():
    command = ["llama-server", "--port", "1"]
    tied = with_parent(command)
    assert tied[-3:] == command
    assert tied[:3] == [shutil.which("setpriv"), "--pdeathsig", "TERM"], "util-linux setpriv"
    seen: list[list[str]] = []
    worker = threading.Thread(target=lambda: seen.append(with_parent(command)))
    worker.start()
    worker.join()
    assert seen == [command], "a worker thread's server must outlive that thread"


def check_sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_unknown_backend_names_the_allowed_ones():
    with pytest.raises(InputError, match="offline, openai, local"):
        backend_choice("llamafile")


def test_local_backend_needs_a_running_server():
    with pytest.raises(InputError, match="running server"):
        make_model(BackendChoice(backend="local"))


def test_a_local_request_outwaits_the_hosted_timeout_unless_told_otherwise():
    # A local request waits behind its slot's queue and shares the cores with every slot:
    # cancelled at the hosted 120 s, a default run's every proposal was sent again.
    info = LocalServerInfo(
        server_version="version: 0 (test)",
        model_file="m.gguf",
        model_path="/m.gguf",
        model_sha256="0" * 64,
        model_bytes=1,
        context_size=4096,
        slots=16,
        threads=1,
        sampling={},
    )
    endpoint = LocalEndpoint(base_url="http://127.0.0.1:9/v1", pid=1, info=info)
    hosted = OpenAIConfig(model="m").timeout_s
    assert LocalChatModel(endpoint).config.timeout_s >= 30 * 60 > hosted
    assert LocalChatModel(endpoint, timeout_s=5.0).config.timeout_s == 5.0
    assert LocalChatModel(endpoint).config.server_slots == 16


def test_open_model_checks_the_model_file_before_starting(tmp_path):
    binary = _fake_server(tmp_path, "exit 1")
    choice = BackendChoice(backend="local", model_file=tmp_path / "absent.gguf")
    with (
        pytest.raises(InputError, match=r"absent\.gguf"),
        open_model(choice, concurrency=2, env={"HIVEMIND_LLAMA_SERVER": str(binary)}),
    ):
        pass


def _request() -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="user", content="hi"),))


async def test_unreachable_endpoint_names_the_url_and_the_model():
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = OpenAIChatModel(OpenAIConfig(model="tiny-model", base_url=url, max_retries=0))
    with pytest.raises(LLMError) as caught:
        await model.complete(_request())
    message = str(caught.value)
    assert f"tiny-model at {url}" in message
    assert "unreachable" in message
    await model.aclose()


class _Garbage:
    backend = "openai"
    model = "tiny-model"
    endpoint = "http://127.0.0.1:9/v1"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(content="not json at all", model=self.model)


async def test_invalid_reply_after_repair_names_the_endpoint_and_the_model(tmp_path):
    from pydantic import BaseModel

    class Verdict(BaseModel):
        ok: bool

    cache = ResponseCache(tmp_path / "c.sqlite")
    wrapped = CachingChatModel(_Garbage(), cache)  # the endpoint is found through wrappers
    with pytest.raises(StructuredOutputError) as caught:
        await complete_structured(wrapped, _request(), Verdict, max_repairs=1)
    assert "openai/tiny-model at http://127.0.0.1:9/v1 gave no valid Verdict" in str(caught.value)
    cache.close()


class _Cut(_Garbage):
    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(content='{"ok": tr', model=self.model, finish_reason="length")


async def test_a_reply_cut_at_the_token_limit_says_so():
    from pydantic import BaseModel

    class Verdict(BaseModel):
        ok: bool

    request = _request().model_copy(update={"max_tokens": 50})
    with pytest.raises(StructuredOutputError, match="cut at max_tokens=50"):
        await complete_structured(_Cut(), request, Verdict, max_repairs=0)


class _CutUntil(_Garbage):
    """Cuts every reply whose limit is under ``needed`` tokens; records the limits asked."""

    def __init__(self, needed: int) -> None:
        self.needed, self.limits = needed, []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.limits.append(request.max_tokens)
        if (request.max_tokens or 0) < self.needed:
            return ChatResponse(content='{"ok": tr', model=self.model, finish_reason="length")
        return ChatResponse(content='{"ok": true}', model=self.model, finish_reason="stop")


async def test_a_cut_reply_is_asked_again_with_a_larger_limit_as_the_same_request():
    from pydantic import BaseModel

    class Verdict(BaseModel):
        ok: bool

    model = _CutUntil(needed=180)
    request = _request().model_copy(update={"max_tokens": 50})
    result = await complete_structured(model, request, Verdict, max_repairs=3)
    assert result.value.ok is True
    assert model.limits == [50, 100, 200]
    # Never beyond four times the request's own limit: then the cut is reported.
    model = _CutUntil(needed=10_000)
    with pytest.raises(StructuredOutputError, match="cut at max_tokens=200"):
        await complete_structured(model, request, Verdict, max_repairs=4)
    assert model.limits == [50, 100, 200, 200, 200]


def test_cli_refuses_a_non_gguf_model_file_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fake = tmp_path / "weights.bin"
    fake.write_text("not a model")
    result = CliRunner().invoke(
        app,
        [
            "deliberate",
            "--problem",
            "Should a small bakery open a second shop?",
            "--backend",
            "local",
            "--model-file",
            str(fake),
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "is not a GGUF file" in result.output
    assert str(fake) in result.output
    assert not (tmp_path / "run").exists()


_INVENTING_SERVER = """#!{python}
import http.server, json, os, sys
if sys.argv[1:] == ["--version"]:
    print("version: 0 (test)")
    sys.exit(0)
open({pid_file!r}, "w").write(str(os.getpid()))
port = int(sys.argv[sys.argv.index("--port") + 1])
# Every chat reply: an intake reading whose quote is not in the client's text.
READING = {{"options": [{{"label": "Buy a rival", "quote": "buy the rival bakery"}}]}}
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.answer({{"status": "ok"}})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        message = {{"role": "assistant", "content": json.dumps(READING)}}
        self.answer({{
            "id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{{"index": 0, "message": message, "finish_reason": "stop"}}],
            "usage": {{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}},
        }})
    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def test_a_refused_intake_on_the_local_backend_exits_2_and_writes_nothing(tmp_path, monkeypatch):
    """A text problem without options is read by the model intake; a reading whose quotes are
    not in the text is refused: exit 2, no run folder, and the server stopped."""
    monkeypatch.chdir(tmp_path)
    pid_file = tmp_path / "server.pid"
    binary = _executable(
        tmp_path / "llama-server",
        _INVENTING_SERVER.format(python=sys.executable, pid_file=str(pid_file)),
    )
    monkeypatch.setenv("HIVEMIND_LLAMA_SERVER", str(binary))
    result = CliRunner().invoke(
        app,
        [
            "deliberate",
            "--problem",
            "Should a small bakery open a second shop?",
            "--backend",
            "local",
            "--model-file",
            str(_fake_gguf(tmp_path / "m.gguf")),
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "the reader refused" in result.output
    assert "Buy a rival" in result.output  # what was dropped, named
    assert not (tmp_path / "run").exists()
    assert not (tmp_path / "runs").exists()
    assert not _alive(int(pid_file.read_text())), "the intake's server outlived the refusal"


# -- the build script, with a stand-in toolchain (no compiling) -----------------------------------

_CRASHING_SERVER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "version: 0 (test)"; exit 0; fi
kill -SEGV $$
"""

_ANSWERING_SERVER = """#!{python}
import http.server, json, sys
if sys.argv[1:] == ["--version"]:
    print("version: 0 (test)")
    sys.exit(0)
port = int(sys.argv[sys.argv.index("--port") + 1])
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.answer({{"status": "ok"}})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.answer({{"content": " Paris", "tokens_predicted": 2}})
    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _stand_in_checkout(tmp_path: Path, server: str) -> tuple[Path, dict[str, str]]:
    """A copy of the build script in an empty checkout, with a toolchain whose ``cmake``
    "builds" ``server`` and whose ``pip download`` returns an empty llama.cpp tree."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(SCRIPT, root / "scripts" / "llama-server")
    tools = tmp_path / "tools"
    tools.mkdir()
    built = _executable(tmp_path / "built-llama-server", server)
    _executable(
        tools / "cmake",
        '#!/bin/sh\ncase "$1" in --version) echo "cmake version 0-test"; exit 0;; '
        "--build) exit 0;; esac\n"
        'while [ $# -gt 0 ]; do [ "$1" = -B ] && out=$2; shift; done\n'
        f'mkdir -p "$out/bin" && cp "{built}" "$out/bin/llama-server"\n',
    )
    _executable(tools / "ninja", "#!/bin/sh\nexit 0\n")
    _executable(tools / "c++", '#!/bin/sh\necho "c++ 0-test"\n')
    python = _executable(
        tools / "python",
        '#!/bin/sh\nif [ "$1 $2 $3" = "-m pip download" ]; then\n'
        '  while [ $# -gt 0 ]; do [ "$1" = --dest ] && dest=$2; shift; done\n'
        '  tree=$(mktemp -d) && mkdir -p "$tree/llama_cpp_python-0.3.36/vendor/llama.cpp"\n'
        '  mkdir -p "$dest" && tar -czf "$dest/llama_cpp_python-0.3.36.tar.gz" '
        '-C "$tree" llama_cpp_python-0.3.36\n  exit\nfi\n'
        f'exec {sys.executable} "$@"\n',
    )
    env = child_env(
        tmp_path,
        PATH=os.pathsep.join([str(tools), os.defpath]),
        PYTHON=str(python),
        LLAMA_SMOKE_MODEL=str(_fake_gguf(tmp_path / "model.gguf")),
    )
    return root, env


def _script(root: Path, env: dict[str, str], command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(root / "scripts" / "llama-server"), command],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_a_server_that_fails_the_smoke_test_fails_the_build(tmp_path):
    root, env = _stand_in_checkout(tmp_path, _CRASHING_SERVER)
    done = _script(root, env, "build")
    assert done.returncode != 0
    assert "SIGSEGV" in done.stderr
    assert "nothing cached" in done.stderr
    cache = root / ".cache" / "llama.cpp"
    assert list(cache.glob("*/bin/llama-server")) == []
    assert list(cache.glob("build.*")) == []  # the temporary tree is gone
    assert _script(root, env, "path").returncode == 3


def test_a_server_that_answers_is_cached_under_its_key(tmp_path):
    root, env = _stand_in_checkout(tmp_path, _ANSWERING_SERVER.format(python=sys.executable))
    done = _script(root, env, "build")
    assert done.returncode == 0, done.stderr
    key = _script(root, env, "key").stdout.strip()
    path = _script(root, env, "path").stdout.strip()
    assert path == str(root / ".cache" / "llama.cpp" / key / "bin" / "llama-server")
    assert Path(path).is_file()
    assert "cached" in _script(root, env, "build").stderr  # a second build reuses it


def test_the_cache_key_names_the_instruction_set_and_follows_the_compiler(tmp_path):
    root, env = _stand_in_checkout(tmp_path, _CRASHING_SERVER)
    portable = _script(root, {**env, "LLAMA_BUILD_CPU": "portable"}, "key").stdout.strip()
    native = _script(root, {**env, "LLAMA_BUILD_CPU": "native"}, "key").stdout.strip()
    assert portable.startswith("0.3.36-portable-") and native.startswith("0.3.36-native-")
    _executable(root.parent / "tools" / "c++", '#!/bin/sh\necho "c++ 1-test"\n')
    newer = _script(root, {**env, "LLAMA_BUILD_CPU": "portable"}, "key").stdout.strip()
    assert newer.startswith("0.3.36-portable-") and newer != portable


# -- the real server, slow ------------------------------------------------------------------------

DOCS = {
    "kb-t-01-focus": (
        "Focus on a niche",
        "A small firm should focus on one customer niche and serve it better than larger "
        "rivals. Firms that focused on a single niche grew margins faster in our sample. "
        "Managers should avoid matching a discounter on price.",
    ),
    "kb-t-02-scale": (
        "Scale economies",
        "A firm should invest in scale when unit costs fall steeply with volume. Larger "
        "plants lowered unit costs by a fifth. Managers should build capacity ahead of "
        "demand only when financing is secure.",
    ),
}
CONSTRAINT_DOC = """---
id: pr-t-legal-01
title: "Pricing law"
authors: ["Test Desk"]
year: 2024
peer_reviewed: false
topics: [pricing]
constraint: legal
red_flags: ["price coordination", "below-cost pricing"]
mitigations: ["competition counsel review"]
---

Setting prices independently carries little legal risk. Coordinating prices with rivals or
pricing below cost to exclude a rival is risky.
"""


def _tiny_knowledge(root: Path) -> tuple[Path, Path]:
    kb = root / "kb"
    kb.mkdir()
    for doc_id, (title, text) in DOCS.items():
        (kb / f"{doc_id}.md").write_text(
            f'---\nid: {doc_id}\ntitle: "{title}"\nauthors: ["A. Author"]\nyear: 2001\n'
            f"peer_reviewed: true\ntopics: [strategy]\n---\n\n{text}\n"
        )
    pkb = root / "pkb"
    (pkb / "legal").mkdir(parents=True)
    (pkb / "legal" / "pr-t-legal-01.md").write_text(CONSTRAINT_DOC)
    return kb, pkb


@pytest.fixture(scope="module")
def llama_binary() -> Path:
    """Build the server (about 10 minutes cold on 2 cores) or reuse the cached build."""
    done = subprocess.run([str(SCRIPT), "build"], capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    path = subprocess.run(
        [str(SCRIPT), "path"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return Path(path)


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hivemind_lab", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=1800,
    )


BAKERY_OPTIONS = ("--option", "Focus on a niche", "--option", "Open a second shop")
"""Explicit options: a text problem without them is read by the model intake on a language-model
backend, which the bundled 135M model cannot do (it invents its quotes, so it refuses)."""


def _server_pid(stderr: str) -> int:
    marker = "(pid "
    assert marker in stderr, stderr[-2000:]
    return int(stderr.split(marker, 1)[1].split(")", 1)[0])


@pytest.mark.slow
def test_real_deliberation_on_the_bundled_model(llama_binary, tmp_path):
    kb, pkb = _tiny_knowledge(tmp_path)
    problem = tmp_path / "problem.txt"
    problem.write_text("A small bakery faces a discounter. Should it focus on a niche or grow?")
    env = child_env(tmp_path, HIVEMIND_LLAMA_SERVER=str(llama_binary))
    run_dir = tmp_path / "run"
    done = _cli(
        [
            "deliberate",
            "--problem",
            str(problem),
            # Options given: this test is about the local backend's mechanics, not the model
            # intake (which the 135M model fails: see the refusal test below).
            *BAKERY_OPTIONS,
            "--backend",
            "local",
            "--kb",
            str(kb),
            "--practicality-kb",
            str(pkb),
            "--profile",
            "legal",
            # Two agents (one short document each) whose proposals count as distinct unless
            # identical, so the round of critique and revision always runs.
            "--density",
            "40",
            "--sufficiency",
            "1",
            "--similarity",
            "0.99",
            "--feasibility",
            "1",
            "--max-rounds",
            "1",
            "--max-regenerations",
            "0",
            "--concurrency",
            "2",
            # Pairwise, not the local backend's batched default: the assertions below count
            # one critique call per ordered pair.
            "--critique-mode",
            "pairwise",
            # Per solution, not the model backends' batched default: the 135M model scores one
            # solution id twice and the other never (seen: three attempts refused).
            "--score-mode",
            "per_solution",
            "--out",
            str(run_dir),
        ],
        env,
        tmp_path,
    )
    pid = _server_pid(done.stderr)
    assert not _alive(pid), "the server outlived the run"
    assert done.returncode == 0, done.stderr[-3000:]

    manifest = json.loads((run_dir / "manifest.json").read_text())
    result = json.loads((run_dir / "result.json").read_text())
    assert manifest["backend"] == "local"
    info = manifest["model_info"]
    assert info["model_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf" == manifest["model"]
    assert len(info["model_sha256"]) == 64
    assert info["slots"] == 2
    assert info["context_size"] > 0
    assert info["server_version"].startswith("version")
    assert "temperature" in info["sampling"]
    assert manifest["slicing"]["n_agents"] == 2

    assert result["status"] in Status.__args__
    tasks = _audited_tasks(run_dir)
    n = manifest["slicing"]["n_agents"]
    # Round 0 proposals, then one round of pairwise critique and revision; scoring follows.
    assert tasks.count("llm.propose") == n
    assert tasks.count("llm.critique") == n * (n - 1)
    assert tasks.count("llm.revise") == n
    assert tasks.count("llm.score") >= 1
    assert result["usage"]["calls"] >= len(tasks)
    assert result["usage"]["cache_hits"] == 0
    assert result["usage"]["completion_tokens"] > 0

    # Each theory agent's calls go to its own slot and extend one cached prefix: every call
    # after its first reads part of its prompt from the server's cache (the count comes from
    # llama-server's timings, summed in the result). Its first call, on an empty slot, reuses
    # nothing: a request cancelled at a timeout and sent again would show its whole prompt.
    for agent, calls in _prompt_usage_by_actor(run_dir).items():
        if agent.startswith("theory"):
            assert len(calls) >= 2, (agent, calls)
            assert all(0 <= cached <= prompt for prompt, cached in calls), (agent, calls)
            assert calls[0][1] == 0, (agent, calls)
            assert all(cached > 0 for _, cached in calls[1:]), (agent, calls)
    assert 0 < result["usage"]["cached_prompt_tokens"] < result["usage"]["prompt_tokens"]

    verify = _cli(["audit", "verify", str(run_dir)], env, tmp_path)
    assert verify.returncode == 0, verify.stderr
    assert "intact" in verify.stdout

    # Replay needs no server at all: every reply comes from the run's own cache.
    replay = _cli(["replay", str(run_dir)], env, tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "identical" in replay.stdout
    assert "0 network calls" in replay.stdout


@pytest.mark.local_llm
@pytest.mark.slow
def test_a_mixed_run_on_two_local_models_at_once_and_its_replay(llama_binary, tmp_path):
    """#34.6: theory agents alternate SmolLM2-135M and Gemma 3 270M (two llama-server
    processes the run starts and stops), the constraint agent runs on the content-free test
    model and the monitor on the offline stand-in; then replay makes no call. The smallest
    deliberation: two agents, one round, pairwise critique."""
    started = time.monotonic()
    smol, gemma = locate(SMOLLM2), assemble(GEMMA3)  # the joined copy is kept: no join again
    kb, pkb = _tiny_knowledge(tmp_path)
    problem = tmp_path / "problem.txt"
    problem.write_text("A small bakery faces a discounter. Should it focus on a niche or grow?")
    env = child_env(tmp_path, HIVEMIND_LLAMA_SERVER=str(llama_binary))
    run_dir = tmp_path / "run"
    done = _cli(
        [
            "deliberate",
            "--problem",
            str(problem),
            *BAKERY_OPTIONS,
            "--backend",
            "offline",
            "--agent-model",
            f"theory=local:{smol}",
            "--agent-model",
            f"theory=local:{gemma}",
            "--agent-model",
            "practicality=test",
            "--kb",
            str(kb),
            "--practicality-kb",
            str(pkb),
            "--profile",
            "legal",
            "--density",
            "40",
            "--sufficiency",
            "1",
            "--similarity",
            "0.99",
            "--feasibility",
            "1",
            "--max-rounds",
            "1",
            "--max-regenerations",
            "0",
            "--concurrency",
            "2",
            # Pairwise: the 135M model loops in the batched critique's larger schema until the
            # token limit cuts it (seen: three attempts cut at 4,096 tokens).
            "--critique-mode",
            "pairwise",
            "--out",
            str(run_dir),
        ],
        env,
        tmp_path,
    )
    pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", done.stderr)]
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(set(pids)) == 2, done.stderr[-2000:]  # one server per model file
    assert not any(_alive(pid) for pid in pids), "a server outlived the run"

    manifest = json.loads((run_dir / "manifest.json").read_text())
    agents = manifest["agent_models"]
    served = {a: (m["backend"], m["model"]) for a, m in agents.items()}
    assert served == {
        "theory-00": ("local", SMOLLM2.file_name),
        "theory-01": ("local", GEMMA3.file_name),
        "constraint-legal": ("test", TEST_MODEL_ID),
        "monitor": ("offline", manifest["model"]),
    }
    for agent, bundled_model in (("theory-00", SMOLLM2), ("theory-01", GEMMA3)):
        info, limits = agents[agent]["model_info"], agents[agent]["limits"]
        assert info["model_sha256"] == bundled_model.sha256, agent  # the pinned weights
        assert info["context_size"] == limits["context_window"] == 8192
        assert limits["output_limit"] == bundled_model.limits.output_limit
    assert agents["constraint-legal"]["limits"] is None

    # Both servers answered: each local model's usage line has calls and generated tokens.
    result = json.loads((run_dir / "result.json").read_text())
    lines = {line["model"]: line for line in result["models"]}
    for name in (SMOLLM2.file_name, GEMMA3.file_name):
        usage = lines[f"local:{name}"]["usage"]
        assert usage["model_calls"] >= 3, (name, usage)  # propose, critique, revise
        assert usage["completion_tokens"] > 0, (name, usage)
    assert lines[f"test:{TEST_MODEL_ID}"]["agents"] == ["constraint-legal"]
    assert sum(line["usage"]["calls"] for line in lines.values()) == result["usage"]["calls"]
    # ... and the audit names the model of every call.
    by_actor: dict[str, set[str]] = {}
    for line in (run_dir / "audit.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["kind"].startswith("llm."):
            payload = record["payload"]
            by_actor.setdefault(record["actor"], set()).add(
                f"{payload['backend']}:{payload['model']}"
            )
    assert by_actor["theory-00"] == {f"local:{SMOLLM2.file_name}"}
    assert by_actor["theory-01"] == {f"local:{GEMMA3.file_name}"}

    replay = _cli(["replay", str(run_dir)], env, tmp_path)  # no server: every reply cached
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "identical" in replay.stdout
    assert "0 network calls" in replay.stdout
    print(f"mixed local run and replay: {time.monotonic() - started:.0f} s")


@pytest.mark.local_llm
async def test_a_packed_request_fits_a_small_real_window_that_the_whole_one_overflows(
    llama_binary,
):
    """#34.2 on the real servers: at 2,048 tokens a slot, a proposal with twelve passages is
    refused by both models (HTTP 400, the request exceeds the context); packed to the window it
    is served, and the server's own prompt count plus the reply's budget stays inside it."""
    passages = tuple(
        Evidence(
            id=f"doc-{i:02d}.p1",
            document_id=f"doc-{i:02d}",
            text=" ".join(
                f"Retailer{i} margin fell {n} points after the discounter." for n in range(12)
            ),
            score=(i * 7 % 10) / 10,
        )
        for i in range(12)
    )
    task = ProposeTask(
        agent_id="theory-00",
        problem="A regional grocer faces a discounter. Should it match prices or differentiate?",
        options=("Match the discounter on price", "Differentiate on fresh food"),
        evidence=passages,
    )
    with LocalServerPool(binary=llama_binary, context_size=2048) as pool:
        for model_file in (locate(SMOLLM2), assemble(GEMMA3)):
            chat = pool.model(model_file)
            fitted = fit_task(task, chat.limits, counter=default_counter())
            assert 0 < fitted.kept < len(passages)
            # Only a few reply tokens: what is checked is that the server takes the prompt.
            packed = render(fitted.task).model_copy(update={"max_tokens": 8})
            reply = await chat.complete(packed)
            assert reply.usage.prompt_tokens + fitted.max_tokens <= 2048, model_file.name
            with pytest.raises(LLMError, match="exceeds"):
                await chat.complete(render(task).model_copy(update={"max_tokens": 8}))
            await chat.aclose()


def _prompt_usage_by_actor(run_dir: Path) -> dict[str, list[tuple[int, int]]]:
    """(prompt tokens, of which reused from the cache) of each model call's first reply, per
    actor in the order the audit recorded them."""
    from hivemind_lab.runs.audit import read_records
    from hivemind_lab.runs.events import ModelCall, parse

    seen: dict[str, list[tuple[int, int]]] = {}
    for record in read_records(run_dir / "audit.jsonl"):
        event = parse(record.kind, record.payload)
        if isinstance(event, ModelCall) and event.responses:
            usage = event.responses[0]["usage"]
            seen.setdefault(record.actor, []).append(
                (usage["prompt_tokens"], usage["cached_prompt_tokens"])
            )
    return seen


def _audited_tasks(run_dir: Path) -> list[str]:
    kinds = []
    for line in (run_dir / "audit.jsonl").read_text().splitlines():
        kind = json.loads(line).get("kind", "")
        if kind.startswith("llm."):
            kinds.append(kind)
    return kinds


SHARED_TEXT = " ".join(text for _, text in DOCS.values())


def _agent_request(agent: str, task: str) -> ChatRequest:
    """What one agent sends: shared instructions and facts first, then its own task."""
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content=f"You advise a small firm. Facts: {SHARED_TEXT}"),
            ChatMessage(role="user", content=f"You are {agent}. {task}"),
        ),
        max_tokens=8,
        affinity=agent,
    )


@pytest.mark.slow
async def test_an_agents_later_calls_reuse_its_cached_prompt_prefix(llama_binary):
    config = LocalServerConfig(
        binary=llama_binary, model_file=resolve_model_file(env={}), slots=2, context_size=2048
    )
    with LocalServer(config) as server:
        model = LocalChatModel(server.endpoint)
        tasks = ("Propose a course of action.", "Critique the rival proposal.", "Revise it.")
        usage: dict[str, list[tuple[int, int]]] = {"agent-a": [], "agent-b": []}
        for task in tasks:  # the two agents' calls interleave
            for agent, seen in usage.items():
                reply = (await model.complete(_agent_request(agent, task))).usage
                seen.append((reply.prompt_tokens, reply.cached_prompt_tokens))
        await model.aclose()
    assert {model.slot("agent-a"), model.slot("agent-b")} == {0, 1}
    for seen in usage.values():
        for prompt, cached in seen:
            assert 0 <= cached <= prompt
        assert all(cached > 0 for _, cached in seen[1:])


BEYOND_X86_64_V3 = r"%zmm|%k[0-7]\b|ldtilecfg|tileloadd|tilestored|tdpb|vpdpb|vpdpw"
"""AVX-512 registers and opmasks, AMX tile instructions, VNNI dot products (AVX-512 or AVX):
none of them runs on every x86-64-v3 machine (an extended regular expression)."""


@pytest.mark.slow
def test_the_portable_server_holds_no_instruction_beyond_x86_64_v3(llama_binary):
    # The binary must run the same on AVX2-only and AVX-512 hosts: a native build on an AMX
    # Xeon crashed in its AMX kernels (docs/design/local-llm-backend.md). About 5-10 s.
    key = llama_binary.parent.parent.name
    flags = set(Path("/proc/cpuinfo").read_text().split())
    v3 = platform.machine() == "x86_64" and {"avx2", "fma", "f16c", "bmi2"} <= flags
    assert ("-portable-" in key) == v3, key
    if not v3:
        return  # built natively for this CPU, with its flags in the cache key
    dump = subprocess.Popen(
        ["objdump", "-d", "--no-show-raw-insn", str(llama_binary)], stdout=subprocess.PIPE
    )
    grep = subprocess.run(
        ["grep", "-E", BEYOND_X86_64_V3], stdin=dump.stdout, capture_output=True, text=True
    )
    assert dump.stdout is not None
    dump.stdout.close()
    assert dump.wait() == 0
    found = grep.stdout.splitlines()
    assert grep.returncode == 1 and found == [], f"{len(found)} instructions, e.g. {found[:5]}"


@pytest.mark.slow
def test_interrupted_run_stops_the_server_and_can_resume(llama_binary, tmp_path):
    kb, pkb = _tiny_knowledge(tmp_path)
    env = child_env(tmp_path, HIVEMIND_LLAMA_SERVER=str(llama_binary))
    run_dir = tmp_path / "run"
    args = [
        "deliberate",
        "--problem",
        "Should a small bakery open a second shop?",
        *BAKERY_OPTIONS,  # not the model intake's reading: the server's mechanics
        "--backend",
        "local",
        "--kb",
        str(kb),
        "--practicality-kb",
        str(pkb),
        "--profile",
        "legal",
        # One agent (both documents in one slice): propose and score only, to keep CI short.
        "--density",
        "200",
        "--max-rounds",
        "1",
        "--max-regenerations",
        "0",
        "--concurrency",
        "2",
        "--out",
        str(run_dir),
    ]
    child = subprocess.Popen(
        [sys.executable, "-m", "hivemind_lab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        pid = _wait_for_server(run_dir, child)
        child.send_signal(signal.SIGINT)
        child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode != 0
    assert not _alive(pid), "the server outlived the interrupted run"
    # The run directory holds a resumable run (the manifest is written first) ...
    assert (run_dir / "manifest.json").exists()
    assert not (run_dir / "result.json").exists()
    # ... which --resume finishes on a new server for the same model file.
    resumed = _cli(["deliberate", "--resume", str(run_dir)], env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert not _alive(_server_pid(resumed.stderr))
    assert json.loads((run_dir / "result.json").read_text())["status"] in Status.__args__


def _wait_for_server(run_dir: Path, child: subprocess.Popen[str]) -> int:
    """The server's PID (the CLI prints it), once the run has started (its manifest exists)."""
    assert child.stderr is not None
    pid = None
    for line in child.stderr:
        if "(pid " in line:
            pid = _server_pid(line)
            break
    assert pid is not None, "the CLI never reported its server"
    deadline = time.monotonic() + 300
    while not (run_dir / "manifest.json").exists():
        assert child.poll() is None and time.monotonic() < deadline, "the run never started"
        time.sleep(0.1)
    return pid


def test_a_sweep_spec_can_name_the_local_backend(tmp_path):
    from hivemind_lab.experiments import load_spec
    from hivemind_lab.experiments.points import expand

    path = tmp_path / "local.toml"
    path.write_text(
        'problems = ["p.toml"]\nbackend = "local"\nmodel_file = "models/m.gguf"\n'
        "[inputs]\nsufficiency = 1\nfeasibility = 50\ndensity = 100\n"
    )
    spec = load_spec(path)
    assert spec.backend == "local"
    assert spec.model_file == "models/m.gguf"
    # Another model file is another run: a resumed sweep never mistakes one for the other.
    other = spec.model_copy(update={"model_file": "models/other.gguf"})
    assert expand(spec)[0].run_id(spec) != expand(other)[0].run_id(other)


def test_a_local_sweep_refuses_a_remote_ray_cluster(tmp_path):
    from hivemind_lab.experiments.spec import ExperimentSpec
    from hivemind_lab.experiments.sweep import local_endpoint

    spec = ExperimentSpec.model_validate(
        {
            "name": "t",
            "problems": ["p.toml"],
            "backend": "local",
            "inputs": {"sufficiency": 1, "feasibility": 50, "density": 100},
        }
    )
    with (
        pytest.raises(InputError, match=r"127\.0\.0\.1"),
        local_endpoint(spec, tmp_path, slots=2, ray_address="ray://cluster:10001"),
    ):
        pass


@pytest.mark.slow
def test_llm_serve_prints_its_url_and_stops_on_ctrl_c(llama_binary, tmp_path):
    import httpx

    env = child_env(tmp_path, HIVEMIND_LLAMA_SERVER=str(llama_binary))
    child = subprocess.Popen(
        [sys.executable, "-m", "hivemind_lab", "llm", "serve", "--slots", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        hint = child.stdout.readline()
        assert " at http://127.0.0.1:" in first, first + child.stderr.read()
        url = first.split(" at ", 1)[1].split()[0]
        pid = _server_pid(first)
        assert f"--backend openai --base-url {url}" in hint
        assert httpx.get(url.removesuffix("/v1") + "/health", timeout=10).status_code == 200
        child.send_signal(signal.SIGINT)
        child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert not _alive(pid)


@pytest.mark.slow
def test_a_sweep_on_the_local_backend(llama_binary, tmp_path, monkeypatch):
    from hivemind_lab.experiments import load_spec
    from hivemind_lab.experiments import run as run_sweep

    kb, pkb = _tiny_knowledge(tmp_path)
    (tmp_path / "bakery.toml").write_text(
        'id = "bakery"\ntitle = "Bakery"\nprofile = "legal"\n'
        'question = "Should a small bakery open a second shop?"\n'
    )
    spec_path = tmp_path / "local.toml"
    spec_path.write_text(
        'problems = ["bakery.toml"]\nbackend = "local"\n'
        f'knowledge_base = "{kb.name}"\npracticality_kb = "{pkb.name}"\n'
        "[inputs]\nsufficiency = 2\nfeasibility = 1\ndensity = 200\n"
        "[limits]\nmax_rounds = 1\nmax_regenerations = 0\nconcurrency = 1\n"
    )
    monkeypatch.setenv("HIVEMIND_LLAMA_SERVER", str(llama_binary))
    report = run_sweep(load_spec(spec_path), project=tmp_path, root=tmp_path / "runs")
    (summary,) = report.runs
    assert summary.status in Status.__args__
    assert summary.calls >= 2  # a proposal and a score, at least
    manifest = json.loads((tmp_path / "runs" / summary.run_id / "manifest.json").read_text())
    assert manifest["backend"] == "local"
    assert manifest["model_info"]["slots"] == 1
    assert _child_servers() == []  # the sweep's server is stopped (and reaped)


def _child_servers() -> list[int]:
    """llama-server processes whose parent is this test process."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        if name.endswith("(llama-server") and int(rest.split()[1]) == os.getpid():
            found.append(int(stat.parent.name))
    return found
