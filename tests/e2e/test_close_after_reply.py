"""A client that asks to be closed (QUIT, a protocol error, CLIENT KILL of
itself) right behind a write, in the same packet, with appendonly on.

Under appendonly the write's reply waits for the log; the close must wait for
it too: the client gets every reply it is owed, in order, then the server
closes, and only then does the connection leave the client table. Each case
compares the exact bytes with Redis 7, which sends them all.

Regression for issue 23 part 1: the connection used to be destroyed while it
was still in the client table (heap-use-after-free under ASan, connected_clients
climbing to maxclients, duplicate ids in CLIENT LIST)."""

import random
import socket
import threading
import time

import pytest
import redis

from conftest import encode_command, is_real_redis
from persist_util import Server, kill_all, wait_until

POLICIES = ["always", "everysec", "no"]


@pytest.fixture(autouse=True)
def _no_leftover_servers():
    yield
    reports = kill_all()
    assert not reports, f"sanitizer or crash report in the server log: {reports}"


def send_and_read_to_close(port, payload, timeout=10.0):
    """Sends `payload` in one write and returns every byte until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(payload)
        return read_to_close(s, timeout)


def read_to_close(s, timeout):
    got = b""
    deadline = time.monotonic() + timeout
    while True:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            raise AssertionError(f"the server did not close; got {got!r}")
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk


def client_id_and_addr(port):
    """Opens a connection and returns (socket, id, addr as the server sees it)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(encode_command("CLIENT", "ID"))
    buf = b""
    while not buf.endswith(b"\r\n"):
        buf += s.recv(100)
    cid = int(buf[1:-2])
    host, port_ = s.getsockname()
    return s, cid, f"{host}:{port_}"


def started(tmp_path, fsync):
    srv = Server(tmp_path / "data", fsync=fsync)
    srv.start()
    return srv


@pytest.mark.parametrize("fsync", POLICIES)
def test_write_then_quit_gets_both_replies(tmp_path, fsync):
    srv = started(tmp_path, fsync)
    got = send_and_read_to_close(srv.port, encode_command("SET", "k", "v") + encode_command("QUIT"))
    assert got == b"+OK\r\n+OK\r\n"
    c = srv.client()
    assert c.get("k") == "v"
    srv.kill9()
    srv.start()
    assert srv.client().get("k") == "v", "the acknowledged write did not survive kill -9"


@pytest.mark.parametrize("fsync", POLICIES)
def test_write_then_protocol_error_gets_both_replies(tmp_path, fsync):
    srv = started(tmp_path, fsync)
    got = send_and_read_to_close(srv.port, encode_command("SET", "k", "v") + b"*1\r\n$abc\r\n")
    assert got == b"+OK\r\n-ERR Protocol error: invalid bulk length\r\n"
    assert srv.client().get("k") == "v"


@pytest.mark.parametrize("fsync", POLICIES)
@pytest.mark.parametrize("form", ["id", "addr"])
def test_write_then_killing_itself_gets_every_reply(tmp_path, fsync, form):
    srv = started(tmp_path, fsync)
    s, cid, addr = client_id_and_addr(srv.port)
    with s:
        if form == "id":
            kill, kill_reply = encode_command("CLIENT", "KILL", "ID", cid, "SKIPME", "no"), b":1\r\n"
        else:
            kill, kill_reply = encode_command("CLIENT", "KILL", addr), b"+OK\r\n"
        s.sendall(encode_command("SET", "k", "v") + kill + encode_command("PING"))
        assert read_to_close(s, 10) == b"+OK\r\n" + kill_reply
    assert srv.client().get("k") == "v"


@pytest.mark.parametrize("fsync", POLICIES)
def test_write_then_killing_itself_inside_multi_gets_the_exec_reply(tmp_path, fsync):
    srv = started(tmp_path, fsync)
    s, cid, _ = client_id_and_addr(srv.port)
    with s:
        s.sendall(encode_command("MULTI") + encode_command("SET", "k", "v") +
                  encode_command("CLIENT", "KILL", "ID", cid, "SKIPME", "no") +
                  encode_command("EXEC") + encode_command("PING"))
        assert read_to_close(s, 10) == b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n:1\r\n"
    assert srv.client().get("k") == "v"


def test_many_write_then_quit_connections_leave_no_client_behind(tmp_path):
    srv = started(tmp_path, "everysec")
    c = srv.client()
    baseline = c.info("clients")["connected_clients"]
    n = 20000
    payload = encode_command("SET", "k", "v") + encode_command("QUIT")
    bad = 0
    for _ in range(n):
        if send_and_read_to_close(srv.port, payload) != b"+OK\r\n+OK\r\n":
            bad += 1
    assert bad == 0, f"{bad} of {n} connections did not get +OK +OK"
    # The last closes may still be in flight on the server's side.
    wait_until(lambda: c.info("clients")["connected_clients"] == baseline, timeout=10,
               what=f"connected_clients back at {baseline}")
    ids = [line.split()[0] for line in c.execute_command("CLIENT", "LIST").splitlines()]
    assert len(ids) == len(set(ids)), f"CLIENT LIST repeats an id: {ids}"


class ReconnectingWriter(threading.Thread):
    """SETs unique keys until stopped, reconnecting whenever it is killed;
    `acked` holds the keys whose +OK arrived."""

    def __init__(self, name, port):
        super().__init__(daemon=True)
        self.name_, self.port = name, port
        self.acked = []
        self.stop_flag = False
        self.error = None

    def run(self):
        seq = 0
        while not self.stop_flag:
            try:
                c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=30,
                                client_name=self.name_)
                while not self.stop_flag:
                    p = c.pipeline(transaction=seq % 2 == 0)
                    keys = [f"{self.name_}:{seq + i}" for i in range(10)]
                    seq += 10
                    for k in keys:
                        p.set(k, k)
                    p.execute()
                    self.acked.extend(keys)
            except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError, OSError):
                if self.stop_flag:
                    return
                time.sleep(0.001)
            except Exception as e:  # noqa: BLE001 - reported by the test
                self.error = e
                return


@pytest.mark.parametrize("fsync", POLICIES)
def test_client_kill_storm_with_client_list_then_kill9_loses_nothing(tmp_path, fsync):
    srv = started(tmp_path, fsync)
    writers = [ReconnectingWriter(f"w{i}", srv.port) for i in range(4)]
    for w in writers:
        w.start()
    admin = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=30)
    rng = random.Random(23)
    kills = 0
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        listing = admin.execute_command("CLIENT", "LIST").decode().splitlines()
        ids = [int(line.split()[0][3:]) for line in listing if "name=w" in line]
        if ids:
            victim = rng.choice(ids)
            kills += admin.execute_command("CLIENT", "KILL", "ID", victim)
        # Self-kills after a write, racing the writers' traffic.
        send_and_read_to_close(srv.port, encode_command("SET", "self", "x") +
                               encode_command("CLIENT", "KILL", "SKIPME", "no", "ID", "999999999") +
                               encode_command("QUIT"))
    assert srv.proc.poll() is None, "the server died during the kill storm"
    srv.kill9()
    for w in writers:
        w.stop_flag = True
        w.join(timeout=60)
        assert w.error is None, f"{w.name_}: {w.error!r}"
    acked = [k for w in writers for k in w.acked]
    assert kills > 10 and len(acked) > 1000, f"the storm barely ran ({kills} kills, {len(acked)} writes)"
    srv.start()
    c = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=60)
    lost = []
    for i in range(0, len(acked), 1000):
        chunk = acked[i:i + 1000]
        lost += [k for k, v in zip(chunk, c.mget(chunk)) if v != k.encode()]
    assert not lost, f"{len(lost)} of {len(acked)} acknowledged writes lost, e.g. {lost[:5]}"
    c.close()
    srv.stop()
