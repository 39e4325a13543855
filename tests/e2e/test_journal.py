"""The journal's offset (issue 24, landing 1): INFO replication's
master_repl_offset counts every byte ever logged, whether or not the AOF is
on, and is never reset by a rewrite, a restart, or turning appendonly off and
on. A read never moves it.

feedkv-only: Redis keeps master_repl_offset at 0 until a replica creates its
backlog; feedkv's offset is the journal's from the first write."""

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
