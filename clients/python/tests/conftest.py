"""Fixtures that run a real `stem serve` for the client's tests.

The binary is $STEM_BINARY (the Go test that runs this suite builds it),
or is built with `go build` when go is on PATH. Each server listens on a
free loopback port (--listen 127.0.0.1:0; the port is read from its log),
serves the embedded demo KG with the tiny test vectors of cmd/stem, keeps
its entity index in a temporary cache directory, and is stopped by its pid
with SIGTERM (it must exit 0, having answered every request in flight).
"""

from __future__ import annotations

import os
import pathlib
import queue
import re
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import Iterator, List, Optional

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTORS = os.environ.get("STEM_TEST_VECTORS", str(REPO / "cmd" / "stem" / "testdata" / "tiny.glove"))
TOKEN = "s3cret-test-token"


@dataclass
class Server:
    url: str
    proc: subprocess.Popen
    log: List[str]
    binary: str


@pytest.fixture(scope="session")
def stem_binary(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = os.environ.get("STEM_BINARY")
    if path:
        return path
    go = shutil.which("go")
    if go is None:
        pytest.skip("no stem binary: set STEM_BINARY, or put go on PATH to build one")
    out = tmp_path_factory.mktemp("bin") / "stem"
    subprocess.run([go, "build", "-o", str(out), "./cmd/stem"], cwd=REPO, check=True)
    return str(out)


def start(binary: str, cache: pathlib.Path, token: Optional[str] = None) -> Server:
    env = dict(os.environ, STEM_CACHE_DIR=str(cache))
    args = [binary, "serve", "--listen", "127.0.0.1:0", "--vectors", VECTORS]
    if token:
        env["STEM_TEST_TOKEN"] = token
        args += ["--token-env", "STEM_TEST_TOKEN"]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    lines: "queue.Queue[Optional[str]]" = queue.Queue()

    def drain() -> None:
        # The log is read to its end, so the server never blocks on a
        # full pipe.
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    log: List[str] = []
    url = None
    while True:
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            stop(Server("", proc, log, binary), check=False)
            pytest.fail("stem serve printed nothing for 60 s:\n" + "".join(log))
        if line is None:
            proc.wait()
            pytest.fail(f"stem serve exited {proc.returncode} before it was ready:\n" + "".join(log))
        log.append(line)
        m = re.search(r"listening on (http://\S+?)/;", line)
        if m:
            url = m.group(1)
        if "ready in" in line:
            break
    assert url, "no 'listening on' line in the log:\n" + "".join(log)
    return Server(url, proc, log, binary)


def stop(server: Server, check: bool = True) -> None:
    server.proc.send_signal(signal.SIGTERM)
    try:
        code = server.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()
        pytest.fail(f"stem serve (pid {server.proc.pid}) did not stop within 20 s of SIGTERM")
    if check and code != 0:
        pytest.fail(f"stem serve exited {code} on SIGTERM")


@pytest.fixture(scope="session")
def server(stem_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start(stem_binary, tmp_path_factory.mktemp("cache"))
    yield s
    stop(s)


@pytest.fixture(scope="session")
def token_server(stem_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start(stem_binary, tmp_path_factory.mktemp("cache"), token=TOKEN)
    yield s
    stop(s)
