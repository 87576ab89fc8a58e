"""``serq sweep --dask tcp://HOST:PORT`` at a port that takes the connection and never answers as a Dask
scheduler: an HTTP server (the dashboard's port, 8787, given for the scheduler's, 8786) or any silent
listener. ``distributed.Client``'s timeout bounds the connection, not its handshake, so the sweep waited for
ever, saying nothing. The address is now given ``Dask.CONNECT_WAIT`` seconds (10), its handshake included,
and is then one error before any run, nothing written."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import distributed  # noqa: F401 - the extra these tests are of
import pytest
from serq_sweep import engines

pytestmark = pytest.mark.timeout(60)

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; seed 1; }\n"


@pytest.fixture
def silent():
    """A listener that takes every connection and says nothing: its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def take() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    for c in held:
        c.close()
    server.close()


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # (its log is no output of the sweep's)
        pass


@pytest.fixture
def web():
    """An HTTP server (as a dashboard is): its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("listener", ["silent", "web"])
def test_an_address_that_never_answers_as_a_scheduler_is_refused(listener, request, tmp_path, monkeypatch,
                                                                   serq_in_process):
    port = request.getfixturevalue(listener)
    monkeypatch.setattr(engines.Dask, "CONNECT_WAIT", 0.5)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    address = f"tcp://127.0.0.1:{port}"
    start = time.monotonic()
    got = serq_in_process("sweep", "p.sq", "--seeds", "1,2", "--dask", address, "--no-progress", "-o", "t.csv")
    took = time.monotonic() - start
    assert got.returncode == 1, got.stderr
    # 0.5 s for the connection and 0.5 s more for its handshake
    assert got.stderr == (f"error: --dask {address}: cannot reach the scheduler: nothing answered as a Dask "
                          f"scheduler at {address} in 1 s (a scheduler listens on port 8786 by default; 8787 is "
                          "its dashboard's)\n")
    assert took < 8, took
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]  # no table, no journal


def test_an_address_that_refuses_connections_is_said_as_before(tmp_path, monkeypatch, serq_in_process):
    with socket.socket() as s:  # a port nothing listens on (taken and given back)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(engines.Dask, "CONNECT_WAIT", 0.5)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    address = f"tcp://127.0.0.1:{port}"
    got = serq_in_process("sweep", "p.sq", "--dask", address, "--no-progress", "-o", "t.csv")
    assert got.returncode == 1
    assert got.stderr.startswith(f"error: --dask {address}: cannot reach the scheduler: Timed out trying to "
                                 f"connect to {address} after 0.5 s")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
