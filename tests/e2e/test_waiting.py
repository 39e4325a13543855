"""Waiting clients (issue 24, landing 2): a command parks its client until a
condition holds or its timeout passes, while everyone else is served; the
client's later commands wait behind it and reply in order; nothing parks
inside MULTI; a disconnect while parked frees it. WAIT is the first user.
Every case also runs against Redis 7 (no replicas there either)."""

import time

import pytest

from conftest import RawConn, RespError, is_real_redis, wait_until


def blocked(c):
    return int(c.info("clients")["blocked_clients"])


def test_wait_for_no_replicas_answers_at_once(raw):
    c = raw()
    assert c.cmd("SET", "k", "v") == "OK"
    t0 = time.monotonic()
    assert c.cmd("WAIT", "0", "0") == 0
    assert c.cmd("WAIT", "0", "5000") == 0
    assert time.monotonic() - t0 < 1.0


def test_wait_times_out_while_other_clients_are_served(r, raw):
    c = raw()
    t0 = time.monotonic()
    c.send_command("WAIT", "1", "700")
    assert wait_until(lambda: blocked(r) == 1, timeout=5)
    # The command thread is free: another client is answered at once.
    p0 = time.monotonic()
    assert r.ping()
    assert r.set("x", "1")
    assert time.monotonic() - p0 < 0.5
    assert c.read_reply(timeout=10) == 0
    took = time.monotonic() - t0
    assert 0.6 <= took < 5.0, took
    assert wait_until(lambda: blocked(r) == 0, timeout=5)


def test_a_pipeline_behind_a_parked_command_waits_and_keeps_its_order(raw):
    c = raw()
    c.send(b"WAIT 1 300\r\nSET after 1\r\nGET after\r\nPING\r\n")
    t0 = time.monotonic()
    assert c.read_replies(4, timeout=10) == [0, "OK", b"1", "PONG"]
    assert time.monotonic() - t0 >= 0.25


def test_nothing_parks_inside_multi(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("WAIT", "1", "0") == "QUEUED"
    t0 = time.monotonic()
    assert c.cmd("EXEC") == [0]
    assert time.monotonic() - t0 < 1.0


def test_a_disconnect_while_parked_frees_the_client(r, server):
    c = RawConn(server.port)
    c.send_command("WAIT", "1", "0")  # forever
    assert wait_until(lambda: blocked(r) == 1, timeout=5)
    c.close()
    assert wait_until(lambda: blocked(r) == 0, timeout=5)
    assert wait_until(lambda: int(r.info("clients")["connected_clients"]) == 1, timeout=5)


def test_a_thousand_parked_clients(r, server):
    conns = []
    try:
        for _ in range(1000):
            c = RawConn(server.port)
            c.send_command("WAIT", "1", "1500")
            conns.append(c)
        assert wait_until(lambda: blocked(r) == 1000, timeout=10)
        assert r.ping()
        for c in conns:
            assert c.read_reply(timeout=20) == 0
        assert wait_until(lambda: blocked(r) == 0, timeout=5)
    finally:
        for c in conns:
            c.close()


# WAITAOF is Redis 7.2's (Debian's Redis 7.0 does not have it): replies and
# errors as Redis 7.2 documents them.
feedkv_only = pytest.mark.skipif(is_real_redis(), reason="Redis 7.0 has no WAITAOF")


@feedkv_only
def test_waitaof_needs_the_aof_for_numlocal(raw):
    c = raw()
    assert c.cmd("WAITAOF", "1", "0", "0") == RespError(
        "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
    assert c.cmd("WAITAOF", "0", "0", "0") == [0, 0]
    assert c.cmd("WAITAOF", "0", "0", "-1") == RespError("ERR timeout is negative")
    assert c.cmd("WAITAOF", "x", "0", "0") == RespError("ERR value is not an integer or out of range")


@feedkv_only
@pytest.mark.server_args("--appendonly", "yes", "--appendfsync", "everysec")
def test_waitaof_waits_for_the_local_fsync(raw):
    c = raw()
    assert c.cmd("SET", "k", "v") == "OK"
    t0 = time.monotonic()
    assert c.cmd("WAITAOF", "1", "0", "0") == [1, 0]  # everysec: within about a second
    assert time.monotonic() - t0 < 3.0
    # No replica will acknowledge: the timeout answers with what holds.
    t0 = time.monotonic()
    assert c.cmd("WAITAOF", "1", "1", "300") == [1, 0]
    assert time.monotonic() - t0 >= 0.25
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("WAITAOF", "1", "1", "0") == "QUEUED"
    assert c.cmd("EXEC") == [[1, 0]]


# CLIENT PAUSE / UNPAUSE (Redis 7.0): paused commands park and run when the
# pause ends, in order; the command thread serves the others meanwhile.

def test_client_pause_write_holds_writes_not_reads(r, raw):
    writer = raw()
    assert r.execute_command("CLIENT", "PAUSE", "400", "WRITE") in (True, "OK", b"OK")
    t0 = time.monotonic()
    writer.send(b"SET k v\r\nGET k\r\n")
    assert wait_until(lambda: blocked(r) == 1, timeout=5)
    assert r.get("k") is None  # reads go on; the SET has not run
    assert writer.read_replies(2, timeout=10) == ["OK", b"v"]
    assert time.monotonic() - t0 >= 0.3


def test_client_unpause_releases_paused_clients_at_once(r, raw):
    writer = raw()
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    writer.send_command("INCR", "n")
    assert wait_until(lambda: blocked(r) == 1, timeout=5)
    t0 = time.monotonic()
    r.execute_command("CLIENT", "UNPAUSE")
    assert writer.read_reply(timeout=10) == 1
    assert time.monotonic() - t0 < 2.0


def test_client_pause_write_holds_an_exec_with_writes_only(r, raw):
    c = raw()
    r.set("x", "1")
    r.execute_command("CLIENT", "PAUSE", "300", "WRITE")
    t0 = time.monotonic()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("GET", "x") == "QUEUED"
    assert c.cmd("EXEC") == [b"1"]  # read-only: not held
    assert time.monotonic() - t0 < 0.25
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("INCR", "x") == "QUEUED"
    assert c.cmd("EXEC") == [2]
    assert time.monotonic() - t0 >= 0.25


def test_client_pause_all_holds_every_command(server, raw):
    a, b = raw(), raw()
    assert a.cmd("CLIENT", "PAUSE", "300") == "OK"
    t0 = time.monotonic()
    assert b.cmd("PING") == "PONG"
    assert time.monotonic() - t0 >= 0.25


def test_client_pause_stops_active_expiry_until_it_ends(r):
    """Redis 7 pauses the expire cycle with the clients, so a failover sees a
    dataset that does not change; keys expire once the pause ends."""
    r.execute_command("CONFIG", "SET", "hz", "100")
    base = r.info("stats")["expired_keys"]
    for i in range(20):
        r.set(f"short:{i}", "v", px=50)
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    try:
        time.sleep(0.6)  # several expire cycles at hz 100
        assert r.info("stats")["expired_keys"] == base, "keys expired during the pause"
        assert r.dbsize() == 20
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert wait_until(lambda: r.info("stats")["expired_keys"] == base + 20, timeout=10)
    r.execute_command("CONFIG", "SET", "hz", "10")


def test_client_pause_arguments_as_redis(raw):
    c = raw()
    assert c.cmd("CLIENT", "PAUSE", "abc") == RespError("ERR timeout is not an integer or out of range")
    assert c.cmd("CLIENT", "PAUSE", "-1") == RespError("ERR timeout is negative")
    assert c.cmd("CLIENT", "PAUSE", "10", "FOO") == RespError("ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert c.cmd("CLIENT", "UNPAUSE") == "OK"
