"""Quick stdio start-up: ``initialize`` and ``tools/list`` answered at once, while the service is still importing.

``python -m coworkenv.servers.quick serve NAME --db DB [serve's other options]`` is ``coworkenv serve`` over stdio
for clients that give a server only a few seconds to list its tools (Claude Code 2.1.197 waits about 5 s for
``tools/list`` and leaves a slower server ``pending`` for the whole session; importing the MCP SDK and a service
takes about a second of CPU, several on a busy machine with a dozen servers starting at once).

How: the first start of a server runs it as ``serve`` does and records its own answers to ``initialize`` and
``tools/list`` (per protocol version) in a cache. A later start with the same service, options and code answers those
two requests from the cache within milliseconds of Python's start, while the service imports in the main thread.
Once it is up, the client's ``initialize`` is replayed to it (its answer, already given, is dropped) and every other
message goes to it in the order received; whatever came before is answered by it then. The answers are the server's
own, recorded; the cache key holds the serve options that shape them (not ``--db``, ``--seed``, ``--now``,
``--reset``), the Python, MCP SDK and coworkenv versions, and the size and time of every file of
``coworkenv.servers``, so an edited service is never answered from an old record. The cache is
``$COWORKENV_STDIO_CACHE``, else ``$XDG_CACHE_HOME/coworkenv/stdio`` (``~/.cache/...``); a cache that cannot be
read or written only costs the speed.

This module imports nothing heavy: the standard library until the hand-over.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

REPLAY_ID = "coworkenv-quick-initialize"
STATE_OPTIONS = frozenset({"--db", "--seed", "--now"})
"""Options of ``serve`` that shape the state, never the two recorded answers (left out of the cache key)."""
STATE_FLAGS = frozenset({"--reset"})
_END = object()


def cache_dir() -> Path:
    explicit = os.environ.get("COWORKENV_STDIO_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coworkenv" / "stdio"


def _code_stamp() -> list[Any]:
    """What the answers depend on besides the options: versions, and every file of this package by size and time."""
    from importlib.metadata import PackageNotFoundError, version

    stamp: list[Any] = [sys.version]
    for dist in ("mcp", "coworkenv", "pydantic"):
        try:
            stamp.append(version(dist))
        except PackageNotFoundError:
            stamp.append(None)
    root = Path(__file__).resolve().parent
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json")):
                info = os.stat(os.path.join(folder, name))
                stamp.append((os.path.relpath(os.path.join(folder, name), root), info.st_size, info.st_mtime_ns))
    return stamp


def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"  # serve refuses it; nothing is recorded for it


def shipped(name: str) -> bool:
    """Whether ``name`` is a service of this package (its code is in the stamp); a plugin's service is served
    plainly, since its code is not."""
    return (Path(__file__).resolve().parent / "examples" / f"{name}.json").is_file()


def cache_key(serve_args: Sequence[str]) -> str:
    """The record's key: the options that shape the answers (state options left out) and the code's stamp."""
    shaping: list[str] = []
    skip = False
    for arg in serve_args:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in STATE_OPTIONS:
            skip = "=" not in arg
            continue
        if name not in STATE_FLAGS:
            shaping.append(arg)
        if arg.startswith("@"):  # --declared @FILE: the file's text shapes the tools
            shaping.append(_file_digest(arg[1:]))
        elif arg.startswith("--declared=@"):
            shaping.append(_file_digest(arg.split("=@", 1)[1]))
    blob = json.dumps([shaping, _code_stamp()], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def read_record(path: Path) -> dict[str, dict[str, Any]]:
    """protocol version → {"initialize": result, "tools/list": result}; empty when absent or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_record(path: Path, version: str, answers: dict[str, Any]) -> None:
    """Add one protocol version's answers to the record, atomically (best effort: a failure only costs speed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        record = read_record(path)
        record[version] = answers
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.replace(tmp, path)
    except OSError:
        pass


class Relay:
    """Between the client's stdin/stdout and the server: answers from the record until the hand-over, then the
    server's own answers; records the server's answers to ``initialize`` and ``tools/list`` when they were not."""

    def __init__(self, record_path: Path, record: dict[str, dict[str, Any]], out: BinaryIO) -> None:
        self.record_path, self.record = record_path, record
        self.out = out
        self.lock = threading.Lock()
        self.handed_over = False
        self.held: list[bytes] = []
        self.lines: queue.Queue[object] = queue.Queue()
        self.client_init: dict[str, Any] | None = None
        self.version: str | None = None
        self.answered_from_record: set[str] = set()
        self.pending: dict[Any, str] = {}  # request id → method, for the answers to record
        self.seen: dict[str, Any] = {}

    # ------------------------------------------------------------------ client → server
    def from_client(self, line: bytes) -> None:
        message = _parse(line)
        with self.lock:
            if not self.handed_over and message is not None and self._answer_from_record(message):
                return
            if message is not None and message.get("method") in ("initialize", "tools/list") and "id" in message:
                self.pending[_key(message["id"])] = message["method"]
                if message["method"] == "initialize":
                    self.client_init = message
                    self.version = _requested_version(message)
            if self.handed_over:
                self.lines.put(line)
            else:
                self.held.append(line)

    def _answer_from_record(self, message: dict[str, Any]) -> bool:
        method, request_id = message.get("method"), message.get("id")
        if request_id is None or method not in ("initialize", "tools/list"):
            return False
        if method == "initialize":
            version = _requested_version(message)
            answers = self.record.get(version or "")
            if version is None or answers is None or "initialize" not in answers:
                return False
            self.client_init, self.version = message, version
        else:
            answers = self.record.get(self.version or "")
            params = message.get("params")
            if params and (not isinstance(params, dict) or params.get("cursor") is not None):
                return False  # a later page: the server's to answer
            if "initialize" not in self.answered_from_record or not answers or "tools/list" not in answers:
                return False
        self._write({"jsonrpc": "2.0", "id": request_id, "result": answers[method]})
        self.answered_from_record.add(method)
        return True

    def hand_over(self) -> None:
        """The server is up: replay the initialize answered from the record, then everything held, in order."""
        with self.lock:
            if "initialize" in self.answered_from_record and self.client_init is not None:
                replay = {**self.client_init, "id": REPLAY_ID}
                self.lines.put(json.dumps(replay).encode() + b"\n")
            for line in self.held:
                self.lines.put(line)
            self.held.clear()
            self.handed_over = True

    def client_closed(self) -> None:
        with self.lock:
            if not self.handed_over:
                self.held.append(b"")  # hand_over puts it in order; the pump reads it as the end
            else:
                self.lines.put(_END)

    # ------------------------------------------------------------------ server → client
    def from_server(self, line: str) -> None:
        """One line the server wrote: dropped when it answers the replay, recorded when worth recording."""
        if REPLAY_ID in line:
            message = _parse(line.encode())
            if message is not None and message.get("id") == REPLAY_ID:
                return
        if self.pending:
            message = _parse(line.encode())
            if message is not None and "id" in message and "result" in message:
                method = self.pending.pop(_key(message["id"]), None)
                if method is not None:
                    self._learn(method, message["result"])
        with self.lock:
            self.out.write(line.encode("utf-8"))
            self.out.flush()

    def _learn(self, method: str, result: Any) -> None:
        version = self.version
        if version is None or method in self.answered_from_record:
            return
        self.seen[method] = result
        known = self.record.get(version, {})
        if {"initialize", "tools/list"} <= set(self.seen) and known != self.seen:
            write_record(self.record_path, version, dict(self.seen))

    def _write(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
        self.out.flush()


class _ServerOut:
    """The text stream the server writes its answers to (through anyio's file wrapper): line by line to the relay."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.partial = ""

    def write(self, text: str) -> int:
        self.partial += text
        while "\n" in self.partial:
            line, self.partial = self.partial.split("\n", 1)
            self.relay.from_server(line + "\n")
        return len(text)

    def flush(self) -> None:
        return None


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _key(request_id: Any) -> str:
    return json.dumps(request_id)


def _requested_version(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) else None


def _read_client(relay: Relay, stdin: BinaryIO) -> None:
    for line in iter(stdin.readline, b""):
        relay.from_client(line)
    relay.client_closed()


def _pump(relay: Relay, write_fd: int) -> None:
    """Client lines, once handed over, into the pipe the server reads; closing it at the client's end."""
    try:
        while True:
            item = relay.lines.get()
            if item is _END or item == b"":
                break
            assert isinstance(item, bytes)
            os.write(write_fd, item if item.endswith(b"\n") else item + b"\n")
    except OSError:
        pass
    finally:
        os.close(write_fd)


def _state_plausible(args: Sequence[str]) -> bool:
    """Whether the state options look usable (the database's folder there, the seed a file): when they do not, the
    plain server starts, so the client sees its one-line error rather than tools answered from a record."""
    for db in _values(args, "--db"):
        path = Path(db).expanduser()
        if path.is_dir() or any(p.exists() and not p.is_dir() for p in path.parents):
            return False  # serve makes a missing folder, but cannot put a database in a folder's place
    return all(Path(seed).expanduser().is_file() for seed in _values(args, "--seed"))


def _values(args: Sequence[str], option: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == option]


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    plain = any(a in ("--transport=http", "--help", "-h") for a in args) or "http" in _values(args, "--transport")
    if len(args) < 2 or args[0] != "serve" or plain or not shipped(args[1]) or not _state_plausible(args):
        from coworkenv.servers.cli import main as cli_main  # not a stdio serve: the plain command line

        cli_main(args)
        return
    # The wire is ours alone: stdout's descriptor is kept privately and fd 1 points at stderr, so a stray print
    # (from any import or handler) cannot tear a frame.
    wire = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    record_path = cache_dir() / f"{cache_key(args[1:])}.json"
    relay = Relay(record_path, read_record(record_path), wire)
    stdin = os.fdopen(os.dup(0), "rb")
    threading.Thread(target=_read_client, args=(relay, stdin), daemon=True, name="quick-stdin").start()

    import anyio  # the heavy part: the SDK and the service, while the reader answers from the record

    from coworkenv.servers import cli
    from coworkenv.servers.kit import stdio

    read_fd, write_fd = os.pipe()
    stdio.use_streams(
        anyio.wrap_file(os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")),
        anyio.wrap_file(cast("IO[str]", _ServerOut(relay))),
    )
    relay.hand_over()
    threading.Thread(target=_pump, args=(relay, write_fd), daemon=True, name="quick-pump").start()
    cli.main(args)


if __name__ == "__main__":
    main()
