"""The journal's offset (issue 24, landing 1): INFO replication's
master_repl_offset counts every byte ever logged, whether or not the AOF is
on, and is never reset by a rewrite, a restart, or turning appendonly off and
on. A read never moves it.

feedkv-only: Redis keeps master_repl_offset at 0 until a replica creates its
backlog; feedkv's offset is the journal's from the first write."""

import os

import pytest

from conftest import is_real_redis
from persist_util import Server, kill_all, wait_until

pytestmark = pytest.mark.skipif(is_real_redis(), reason="Redis counts no offset without a replica")


@pytest.fixture(autouse=True)
def _no_leftover_servers():
    yield
    reports = kill_all()
    assert not reports, f"sanitizer or crash report in the server log: {reports}"


def offset(c):
    return c.info("replication")["master_repl_offset"]


def rewrite_done(c):
    i = c.info("persistence")
    return i["aof_rewrite_in_progress"] == 0 and i["aof_rewrite_scheduled"] == 0


def test_offset_counts_writes_not_reads_with_the_aof_off(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    assert offset(c) == 0
    c.set("k", "v")
    after_write = offset(c)
    assert after_write > len("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
    c.get("k")
    c.exists("k")
    c.execute_command("SMEMBERS", "nosuch")
    assert offset(c) == after_write, "a read moved the offset"
    c.set("k2", "v2")
    assert offset(c) > after_write


def test_offset_survives_aof_toggles_rewrites_and_restarts(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    for i in range(100):
        c.set(f"k{i}", i)
    before_on = offset(c)
    assert c.config_set("appendonly", "yes")
    wait_until(lambda: rewrite_done(c), what="the AOF rewrite that appendonly yes starts")
    assert offset(c) == before_on, "turning the AOF on moved the offset"
    c.sadd("s", 1, 2, 3)
    with_aof = offset(c)
    assert with_aof > before_on
    c.bgrewriteaof()
    wait_until(lambda: rewrite_done(c), what="BGREWRITEAOF")
    assert offset(c) == with_aof, "a rewrite reset or moved the offset"
    c.close()
    srv.stop()
    srv.start()
    c = srv.client()
    assert offset(c) == with_aof, "a restart from the AOF lost the offset"
    assert c.get("k7") == "7"
    c.incr("n")
    after_restart = offset(c)
    assert after_restart > with_aof
    assert c.config_set("appendonly", "no")
    c.incr("n")
    assert offset(c) > after_restart, "with the AOF off, writes must still move the offset"
    off_before_save = offset(c)
    c.save()
    c.close()
    srv.stop()
    srv.start("--appendonly", "no")
    c = srv.client()
    assert offset(c) == off_before_save, "a restart from the snapshot lost the offset"


def _xxh64(data):
    """XXH64 (seed 0) through the same libxxhash the server links."""
    import ctypes
    import ctypes.util
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    lib.XXH64.restype = ctypes.c_uint64
    lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    return lib.XXH64(data, len(data), 0)


def _resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def _sealed_group(*commands):
    body = b"".join(_resp(*c) for c in commands)
    return body + b"#xxh64:%016x\r\n" % _xxh64(body)


@pytest.mark.parametrize("bad, message", [
    (("NOSUCHCMD", "k", "v"), "unknown command 'NOSUCHCMD'"),
    (("SET", "k"), "wrong arity for 'SET'"),
    (("GET", "k"), "'GET'"),
])
def test_a_log_record_that_fails_the_command_table_stops_the_load_with_file_and_offset(
        tmp_path, bad, message):
    srv = Server(tmp_path / "data", fsync="always")
    srv.start()
    c = srv.client()
    c.set("before", "1")
    c.close()
    srv.stop()
    seg = srv.segments()[-1]
    size = os.path.getsize(seg)
    # A well-formed, correctly sealed group whose second record fails the
    # table's checks: the checksum passes, so only the applier can refuse it.
    lead = _resp("SET", "ok", "1")
    with open(seg, "ab") as f:
        f.write(_sealed_group(("SET", "ok", "1"), bad))
    srv.start(expect_ok=False)
    assert srv.wait_exit() != 0, "the server started from a log it cannot apply"
    log = srv.log_text()
    where = f"{os.path.basename(seg)} offset {size + len(lead)}"
    assert message in log and where in log, log[-2000:]
