"""Keyspace notifications (notify-keyspace-events), side by side with Redis 7.

One subscriber listens on __keyspace@*__:* and __keyevent@*__:*; a script of write
commands runs on another connection, each followed by a PUBLISH on a marker channel,
so the events of each command are exactly the messages before its marker. feedkv and
Redis 7 must deliver the same messages in the same order for every command. feedkv's
own families (LS*, COUNTER.*, FEED.*, BF.*) are checked against docs/pubsub.md.
"""

import time

import pytest

from conftest import is_real_redis
from persist_util import Server, kill_all, wait_until

SCRIPT = [
    ("SET", "a", "1", "EX", "100"),
    ("SET", "a", "2", "KEEPTTL"),
    ("SET", "a", "3", "GET"),
    ("SETNX", "a", "4"),
    ("SET", "a", "5", "XX", "PX", "100000"),
    ("SET", "nope", "1", "XX"),
    ("SETEX", "b", "10", "x"),
    ("PSETEX", "b2", "10000", "x"),
    ("GETEX", "b", "PERSIST"),
    ("GETEX", "b", "EX", "100"),
    ("GETEX", "b"),
    ("GETDEL", "b"),
    ("GETDEL", "b"),
    ("GETSET", "b", "y"),
    ("INCR", "n"),
    ("DECRBY", "n", "5"),
    ("INCRBYFLOAT", "n", "1.5"),
    ("APPEND", "a", "x"),
    ("SETRANGE", "a", "0", "z"),
    ("MSET", "c", "1", "d", "2"),
    ("MSETNX", "c", "1", "e", "2"),
    ("MSETNX", "f", "1", "g", "2"),
    ("SETBIT", "bm", "3", "1"),
    ("SETBIT", "bm", "3", "1"),
    ("BITFIELD", "bm2", "SET", "u8", "0", "1", "GET", "u8", "0"),
    ("BITFIELD", "bm2", "GET", "u8", "0"),
    ("BITOP", "AND", "bm3", "bm", "bm2"),
    ("BITOP", "AND", "bm3", "nothere", "none"),
    ("PFADD", "h", "a", "b"),
    ("PFADD", "h", "a"),
    ("PFMERGE", "h2", "h"),
    ("RENAME", "h2", "h3"),
    ("RENAMENX", "h3", "h"),
    ("RENAMENX", "h3", "h4"),
    ("MOVE", "h4", "1"),
    ("COPY", "h", "h5"),
    ("COPY", "h", "h6", "DB", "2"),
    ("EXPIRE", "h5", "100"),
    ("PEXPIRE", "h5", "100000", "NX"),
    ("PERSIST", "h5"),
    ("PERSIST", "h5"),
    ("EXPIRE", "h5", "0"),
    ("EXPIREAT", "h", "1"),
    ("DEL", "c", "d", "nope"),
    ("UNLINK", "e", "f"),
    ("RPUSH", "l", "a", "b", "c", "d"),
    ("LPUSH", "l", "z"),
    ("LPUSHX", "nolist", "z"),
    ("RPUSHX", "l", "y"),
    ("LMOVE", "l", "l2", "LEFT", "RIGHT"),
    ("LMOVE", "l", "l", "LEFT", "RIGHT"),
    ("RPOPLPUSH", "l", "l2"),
    ("LPOP", "l"),
    ("RPOP", "l", "2"),
    ("LINSERT", "l2", "BEFORE", "a", "z"),
    ("LINSERT", "l2", "BEFORE", "nothere", "z"),
    ("LSET", "l2", "0", "y"),
    ("LTRIM", "l2", "0", "1"),
    ("LREM", "l2", "0", "y"),
    ("LREM", "l2", "0", "nothere"),
    ("RPUSH", "q", "1", "2", "3"),
    ("BLPOP", "q", "0"),
    ("LMPOP", "1", "q", "RIGHT", "COUNT", "5"),
    ("RPUSH", "q2", "9", "3", "5"),
    ("SORT", "q2", "STORE", "so"),
    ("SORT", "nothere", "STORE", "so"),
    ("SADD", "s", "a", "b", "c", "1"),
    ("SADD", "s", "a"),
    ("SREM", "s", "c", "zz"),
    ("SMOVE", "s", "s2", "a"),
    ("SADD", "s2", "b"),
    ("SMOVE", "s", "s2", "b"),
    ("SPOP", "s"),
    ("SINTERSTORE", "s3", "s2", "s2"),
    ("SUNIONSTORE", "s4", "s2", "s3"),
    ("SDIFFSTORE", "s4", "s2", "s3"),
    ("HSET", "hh", "f", "v", "g", "1"),
    ("HSETNX", "hh", "f", "v"),
    ("HSETNX", "hh", "k", "v"),
    ("HMSET", "hh", "m", "1"),
    ("HINCRBY", "hh", "g", "1"),
    ("HINCRBYFLOAT", "hh", "g", "1"),
    ("HDEL", "hh", "f", "zz"),
    ("HDEL", "hh", "g", "k", "m"),
    ("ZADD", "z", "1", "a", "2", "b"),
    ("ZADD", "z", "1", "a"),
    ("ZADD", "z", "INCR", "1", "a"),
    ("ZADD", "z", "NX", "5", "a"),
    ("ZINCRBY", "z", "1", "a"),
    ("ZPOPMIN", "z"),
    ("ZPOPMAX", "z", "5"),
    ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"),
    ("ZREMRANGEBYRANK", "z", "0", "0"),
    ("ZREMRANGEBYLEX", "z", "[z", "[zz"),
    ("ZRANGESTORE", "z2", "z", "0", "-1"),
    ("ZUNIONSTORE", "z3", "1", "z"),
    ("ZINTERSTORE", "z3", "2", "z", "nothere"),
    ("ZDIFFSTORE", "z4", "1", "z"),
    ("ZREM", "z", "b"),
    ("BZPOPMIN", "z", "0"),
    ("ZMPOP", "1", "z", "MAX"),
    ("ZREMRANGEBYSCORE", "z2", "0", "10"),
    ("SELECT", "3"),
    ("SET", "in3", "v"),
    ("FLUSHDB",),
    ("SELECT", "0"),
    ("SWAPDB", "0", "1"),
    ("GET", "missing"),
    ("HGET", "missing", "f"),
]


def events_of(srv, flags, script, resp3=False):
    """For each command of `script`: the keyspace messages it caused, in order."""
    cmd, sub = srv.raw(), srv.raw()
    assert cmd.cmd("CONFIG", "SET", "notify-keyspace-events", flags) == "OK"
    if resp3:
        sub.cmd("HELLO", "3")
    sub.send_command("PSUBSCRIBE", "__keyspace@*__:*", "__keyevent@*__:*")
    sub.read_replies(2)
    sub.send_command("SUBSCRIBE", "marker")
    sub.read_replies(1)
    out = []
    for i, c in enumerate(script):
        reply = cmd.cmd(*c)
        cmd.cmd("PUBLISH", "marker", str(i))
        got = []
        while True:
            m = sub.read_reply()
            if m[0] == b"message":
                assert m[1:] == [b"marker", str(i).encode()]
                break
            got.append((bytes(m[0]), bytes(m[2]), bytes(m[3])))
        out.append((c, reply, got))
    assert cmd.cmd("CONFIG", "SET", "notify-keyspace-events", "") == "OK"
    return out


def compare(ours, theirs):
    assert len(ours) == len(theirs)
    for (c, r1, a), (_, r2, b) in zip(ours, theirs):
        assert r1 == r2, f"{c}: reply feedkv {r1!r} != redis {r2!r}"
        assert a == b, f"{c}: events feedkv {a!r} != redis {b!r}"


@pytest.mark.parametrize("flags", ["KEA", "E$lshzg", "Kl", "KEAn", "Em"])
def test_every_write_command_sends_redis_events(server, redis7_server, flags):
    c = redis7_server.raw()
    c.cmd("RPUSH", "tmp", "a", "b")
    payload = c.cmd("DUMP", "tmp")
    script = SCRIPT + [("RESTORE", "r1", "0", payload), ("RESTORE", "r1", "0", payload, "REPLACE"),
                       ("RESTORE", "r1", "0", payload)]
    for srv in (server, redis7_server):
        srv.raw().cmd("FLUSHALL")
        srv.raw().cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    compare(events_of(server, flags, script), events_of(redis7_server, flags, script))


def test_resp3_subscribers_get_pushes(server, redis7_server):
    script = [("SET", "k", "v"), ("DEL", "k"), ("LPUSH", "l", "x"), ("LPOP", "l")]
    compare(events_of(server, "KEA", script, resp3=True),
            events_of(redis7_server, "KEA", script, resp3=True))


def test_expired_and_new_events(server, redis7_server):
    script = [("SET", "e", "1", "PX", "1"), ("DEBUG", "SLEEP", "0.01"), ("GET", "e"),
              ("SET", "k", "v"), ("SET", "k", "w"), ("RENAME", "k", "k2")]
    for srv in (server, redis7_server):
        srv.raw().cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    compare(events_of(server, "KEAnxm", script), events_of(redis7_server, "KEAnxm", script))


@pytest.mark.parametrize("value", ["KEA", "An", "Anm", "Km", "g$lshzxetdn", "g$lshzxetd", "Em",
                                   "nKE", "mn", "", "AKE", "x", "AZ", "Kq"])
def test_config_forms_match_redis(server, redis7_server, value):
    def run(srv):
        c = srv.raw()
        r = c.cmd("CONFIG", "SET", "notify-keyspace-events", value)
        return r, c.cmd("CONFIG", "GET", "notify-keyspace-events")
    assert run(server) == run(redis7_server)


def test_evicted_events_under_maxmemory(server):
    r = server.client()
    for i in range(200):
        r.set(f"k{i}", "x" * 1000)
    r.config_set("notify-keyspace-events", "Ee")
    p = r.pubsub()
    p.psubscribe("__keyevent@*__:evicted")
    assert p.get_message(timeout=5)["type"] == "psubscribe"
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory-policy", "allkeys-random")
    r.config_set("maxmemory", used - 50_000)
    r.set("trigger", "1")
    r.config_set("maxmemory", 0)  # no eviction after this point
    evicted = 201 - r.dbsize()
    assert evicted >= 10
    got = []
    while len(got) < evicted:  # one message per evicted key, each within 5 s
        m = p.get_message(timeout=5)
        assert m is not None, f"{len(got)} of {evicted} evictions notified"
        got.append(m["data"])
    # allkeys-random may pick "trigger" too: eviction that ran out of its time box
    # goes on from the event loop after the SET (as Redis's evictionTimeProc).
    assert all(k.startswith("k") or k == "trigger" for k in got)
    assert len(set(got)) == evicted
    assert p.get_message(timeout=0.2) is None


@pytest.mark.skipif(is_real_redis(), reason="feedkv's own families")
def test_feedkv_families_send_documented_events(server):
    script = [
        ("LSADD", "ls", "1", "2", "3"), ("LSADD", "ls", "1"), ("LSREM", "ls", "1"),
        ("LSREM", "ls", "2", "3"),
        ("COUNTER.CREATE", "likes", "n:16"), ("COUNTER.INCRBY", "likes", "42", "n", "3"),
        ("COUNTER.SET", "likes", "42", "n", "7"), ("COUNTER.DEL", "likes", "42"),
        ("COUNTER.DROP", "likes"),
        ("FEED.FOLLOW", "1", "2"), ("FEED.PUBLISH", "2", "100", "1700000000000"),
        ("FEED.UNFOLLOW", "1", "2"),
        ("BF.ADD", "bf", "x"), ("BF.ADD", "bf", "y"), ("BF.ADD", "bf", "x"), ("BF.RESERVE", "bf2", "0.01", "100"),
    ]
    got = events_of(server, "Ed", script) + events_of(server, "Es", script[:4])
    events = {c: [(ch.split(b":", 1)[1], key) for _, ch, key in ev] for c, _, ev in got}
    assert events[("LSADD", "ls", "1", "2", "3")] == [(b"lsadd", b"ls")]
    assert events[("LSADD", "ls", "1")] == []
    assert events[("LSREM", "ls", "2", "3")] == [(b"lsrem", b"ls"), (b"del", b"ls")] or \
        events[("LSREM", "ls", "2", "3")] == [(b"lsrem", b"ls")]
    assert events[("COUNTER.CREATE", "likes", "n:16")] == [(b"counter.create", b"likes")]
    assert events[("COUNTER.INCRBY", "likes", "42", "n", "3")] == [(b"counter.incrby", b"likes:42")]
    assert events[("COUNTER.SET", "likes", "42", "n", "7")] == [(b"counter.set", b"likes:42")]
    assert events[("COUNTER.DEL", "likes", "42")] == [(b"counter.del", b"likes:42")]
    assert events[("COUNTER.DROP", "likes")] == [(b"counter.drop", b"likes")]
    assert events[("FEED.FOLLOW", "1", "2")] == [(b"feed.follow", b"1")]
    assert events[("FEED.PUBLISH", "2", "100", "1700000000000")] == [(b"feed.publish", b"2")]
    assert events[("FEED.UNFOLLOW", "1", "2")] == [(b"feed.unfollow", b"1")]
    bf = [ev for c, _, ev in got if c[0] == "BF.ADD"]
    assert [[(ch.split(b":", 1)[1], key) for _, ch, key in ev] for ev in bf] == [
        [(b"bf.reserve", b"bf"), (b"bf.add", b"bf")], [(b"bf.add", b"bf")], []]
    assert events[("BF.RESERVE", "bf2", "0.01", "100")] == [(b"bf.reserve", b"bf2")]


def test_a_replica_notifies_for_what_its_master_writes(tmp_path):
    master = Server(tmp_path / "master").start()
    replica = Server(tmp_path / "replica", "--notify-keyspace-events", "KEA")
    try:
        replica.start("--replicaof", "127.0.0.1", str(master.port))
        wait_until(lambda: replica.client().info("replication").get("master_link_status") == "up",
                   timeout=30, what="the replica's link")
        p = replica.client().pubsub()
        p.psubscribe("__keyevent@*__:*")
        assert p.get_message(timeout=5)["type"] == "psubscribe"
        mc = master.client()
        mc.set("k", "v")
        mc.lpush("l", "x")
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 2 and time.monotonic() < deadline:
            m = p.get_message(timeout=1)
            if m is not None:
                got.append((m["channel"], m["data"]))
        assert got == [("__keyevent@0__:set", "k"), ("__keyevent@0__:lpush", "l")]
        p.close()
    finally:
        assert not kill_all()
