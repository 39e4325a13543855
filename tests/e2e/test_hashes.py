"""Hashes end to end, side by side with Redis 7.

A seeded random script of HSET/HMSET/HSETNX/HDEL/HINCRBY/HINCRBYFLOAT (errors
included: odd pairs, non-integer and non-float values, overflow, NaN), the readers
and OBJECT ENCODING as hashes cross the listpack limits runs against feedkv and
Redis 7 over raw RESP connections, and every reply must be the same (whole-hash
readers compared as sets where Redis's own order is a hashtable's). Then: the
listpack's insertion order, RESP3 shapes, HRANDFIELD/HSCAN, WATCH, the log form of
HINCRBYFLOAT, persistence across restarts with DEBUG DIGEST.
"""

import random

import pytest
import redis

from conftest import aof_log_bytes, RespError, assert_same_replies, is_real_redis, watch_outcomes

feedkv_only = pytest.mark.skipif(is_real_redis(), reason="feedkv extension")

FIELDS = [f"f{i}" for i in range(200)] + ["", "a", "é", "x" * 70, "0", "-1"]
VALUES = ["1", "0", "-5", "10", "9223372036854775807", "-9223372036854775808", "1.5",
          "abc", "", "y" * 80, "007", " 1", "1e3", "inf", "3.0"]
INCRS = ["1", "-1", "0", "100", "9223372036854775807", "-9223372036854775808", "x", "1.5",
         "", "99999999999999999999"]
FINCRS = ["1", "-1.5", "0.1", "1e3", "abc", "inf", "-inf", "nan", "", "1e400", "5.0e-3"]


def norm(v):
    if isinstance(v, RespError):
        return ("error", str(v))
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def random_op(rng):
    key = rng.choice(["h1", "h1", "h2", "h3"])
    p = rng.random()
    if p < 0.25:
        pairs = []
        for _ in range(rng.choice([1, 1, 2, 5, 40])):
            pairs += [rng.choice(FIELDS), rng.choice(VALUES)]
        if rng.random() < 0.03:
            pairs = pairs[:-1]
        return [rng.choice(["HSET", "HMSET"]), key, *pairs]
    if p < 0.30:
        return ["HSETNX", key, rng.choice(FIELDS), rng.choice(VALUES)]
    if p < 0.40:
        return ["HDEL", key, *rng.sample(FIELDS, rng.choice([1, 2, 10]))]
    if p < 0.50:
        return ["HINCRBY", key, rng.choice(FIELDS[:20] + ["a"]), rng.choice(INCRS)]
    if p < 0.57:
        return ["HINCRBYFLOAT", key, rng.choice(FIELDS[:20] + ["a"]), rng.choice(FINCRS)]
    if p < 0.65:
        return ["HGET", key, rng.choice(FIELDS)]
    if p < 0.69:
        return ["HMGET", key, *rng.sample(FIELDS, 4)]
    if p < 0.72:
        return ["HLEN", key]
    if p < 0.75:
        return ["HSTRLEN", key, rng.choice(FIELDS)]
    if p < 0.78:
        return ["HEXISTS", key, rng.choice(FIELDS)]
    if p < 0.84:
        return [rng.choice(["HKEYS", "HVALS", "HGETALL"]), key]
    if p < 0.87:
        return ["OBJECT", "ENCODING", key]
    if p < 0.90:
        return ["TYPE", rng.choice([key, "str", "nokey"])]
    if p < 0.95:
        cmd = rng.choice([["HSET", "str", "a", "1"], ["HGET", "str", "a"], ["HLEN", "str"],
                          ["HGETALL", "str"], ["HINCRBY", "str", "a", "1"], ["HDEL", "str", "a"],
                          ["HRANDFIELD", "str"], ["HSCAN", "str", "0"], ["GET", key],
                          ["SADD", key, "m"]])
        return cmd
    return rng.choice([["HSET", key], ["HSET", key, "a"], ["HGET", key], ["HSETNX", key, "a"],
                       ["HINCRBY", key, "a"], ["HRANDFIELD", key, "1", "WITHVALUES", "x"],
                       ["HRANDFIELD", key, "x"], ["HSCAN", key, "x"], ["HSCAN", key, "0", "COUNT", "0"],
                       ["HSCAN", key, "0", "MATCH"]])


def canonical(cmd, reply, encoding):
    # A hashtable's iteration order is its own in each server; compare as sets there.
    if cmd[0] in ("HKEYS", "HVALS") and isinstance(reply, list) and encoding == b"hashtable":
        return sorted(reply)
    if cmd[0] == "HGETALL" and isinstance(reply, list) and encoding == b"hashtable":
        return sorted(zip(reply[::2], reply[1::2]))
    return reply


def run_script(srv, seed, n):
    rng = random.Random(seed)
    c = srv.raw()
    c.cmd("SET", "str", "x")
    out = []
    for _ in range(n):
        cmd = random_op(rng)
        reply = norm(c.cmd(*cmd))
        enc = c.cmd("OBJECT", "ENCODING", cmd[1]) if len(cmd) > 1 and cmd[0].startswith("H") else None
        out.append((cmd, canonical(cmd, reply, enc)))
    for key in ("h1", "h2", "h3"):
        out.append((key, sorted(norm(c.cmd("HGETALL", key)))))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_script_replies_match_redis(server, redis7_server, seed):
    assert_same_replies(run_script(server, seed, 3000), run_script(redis7_server, seed, 3000))


def test_listpack_keeps_insertion_order_and_limits_as_redis(server, redis7_server):
    def script(srv):
        c = srv.raw()
        c.cmd("HSET", "h", "b", "1", "a", "2", "c", "3")
        c.cmd("HSET", "h", "a", "longer value now", "d", "4")
        c.cmd("HDEL", "h", "b")
        out = [c.cmd("HGETALL", "h"), c.cmd("HKEYS", "h"), c.cmd("HVALS", "h")]
        c.cmd("HSET", "small", *sum([[f"f{i}", "v"] for i in range(512)], []))
        c.cmd("HSET", "big", *sum([[f"f{i}", "v"] for i in range(513)], []))
        c.cmd("HSET", "long", "f", "x" * 64)
        c.cmd("HSET", "longer", "f", "x" * 65)
        c.cmd("HSET", "longfield", "y" * 65, "1")
        c.cmd("HSET", "grown", "a", "1")
        c.cmd("HINCRBYFLOAT", "grown", "a", "0.12345678901234567890123456789012345678901234567890123456789012345")
        c.cmd("CONFIG", "SET", "hash-max-ziplist-entries", "4")
        c.cmd("HSET", "cfg", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
        c.cmd("CONFIG", "SET", "hash-max-listpack-entries", "512")
        out += [c.cmd("OBJECT", "ENCODING", k) for k in
                ("h", "small", "big", "long", "longer", "longfield", "grown", "cfg")]
        pairs = c.cmd("CONFIG", "GET", "hash-max-*")
        # Redis answers CONFIG GET in dict order; compare as a mapping.
        out.append(sorted(zip(pairs[::2], pairs[1::2])))
        return out
    ours, theirs = script(server), script(redis7_server)
    assert ours == theirs
    assert ours[0] == [b"a", b"longer value now", b"c", b"3", b"d", b"4"]
    assert ours[3:11] == [b"listpack", b"listpack", b"hashtable", b"listpack", b"hashtable",
                          b"hashtable", b"listpack", b"hashtable"]


def test_resp3_replies_match_redis(server, redis7_server):
    def script(srv):
        c = srv.raw()
        c.cmd("HELLO", "3")
        out = [c.cmd("HSET", "h", "a", "1", "b", "2")]
        for cmd in (["HGETALL", "h"], ["HGETALL", "nokey"], ["HGET", "h", "x"], ["HMGET", "h", "a", "x"],
                    ["HRANDFIELD", "h", "5", "WITHVALUES"], ["HRANDFIELD", "nokey"],
                    ["HRANDFIELD", "nokey", "3"], ["HINCRBYFLOAT", "h", "a", "1.5"],
                    ["HSCAN", "h", "0"]):
            out.append(norm(c.cmd(*cmd)))
        return out
    assert script(server) == script(redis7_server)


def test_hrandfield_and_hscan(server, redis7_server):
    for srv in (server, redis7_server):
        c = srv.client()
        small = {f"f{i}": str(i) for i in range(50)}
        c.hset("h", mapping=small)
        assert c.hrandfield("nokey") is None
        assert c.hrandfield("h") in small
        assert len(set(c.hrandfield("h", 20))) == 20
        assert c.hrandfield("h", 60) == list(small)  # all of a listpack, in its order
        assert len(c.hrandfield("h", -80)) == 80
        pairs = c.hrandfield("h", 5, withvalues=True)
        assert len(pairs) == 10 and all(small[f] == v for f, v in zip(pairs[::2], pairs[1::2]))
        with pytest.raises(redis.ResponseError, match="syntax error"):
            c.execute_command("HRANDFIELD", "h", "5", "WITHVALUEZ")
        with pytest.raises(redis.ResponseError, match="value is out of range"):
            c.execute_command("HRANDFIELD", "h", str(2**62), "WITHVALUES")
        big = {f"g{i}": str(i) for i in range(3000)}
        c.hset("big", mapping=big)
        assert set(c.hrandfield("big", 100)) <= set(big) and len(set(c.hrandfield("big", 100))) == 100
        assert c.hscan("h") == (0, small)
        seen = []
        cursor = 0
        while True:
            cursor, batch = c.hscan("big", cursor, count=100)
            seen += list(batch.items())
            c.hset("big", f"new{cursor}", 1)  # changes between calls lose nothing present
            c.hdel("big", f"new{cursor}")
            if cursor == 0:
                break
        assert dict(seen) == big and len(seen) == len(big)
        assert sorted(f for f, _ in c.hscan_iter("big", match="g1??")) == \
            sorted(f for f in big if len(f) == 4 and f.startswith("g1"))


def test_watch_sees_real_changes_only(server, redis7_server):
    changes = (["HSET", "w", "f", "1"], ["HSET", "w", "f", "1"], ["HDEL", "w", "nope"],
               ["HSETNX", "w", "f", "2"], ["HINCRBY", "w", "f", "0"],
               ["HINCRBY", "w", "f", "x"], ["HGET", "w", "f"], ["HDEL", "w", "f"])
    assert watch_outcomes(server, "w", changes, ["HLEN", "w"]) == \
        watch_outcomes(redis7_server, "w", changes, ["HLEN", "w"])


def test_big_hash_agrees_with_a_model(r):
    rng = random.Random(3)
    model = {}
    for _ in range(30):
        batch = {f"p{rng.randrange(20000)}": str(rng.randrange(10**9)) * rng.choice([1, 3, 30])
                 for _ in range(1000)}
        r.hset("big", mapping=batch)
        model.update(batch)
        gone = rng.sample(sorted(model), 300)
        assert r.hdel("big", *gone, "never") == 300
        for f in gone:
            del model[f]
    assert r.object("encoding", "big") == "hashtable"
    assert r.hlen("big") == len(model)
    assert r.hgetall("big") == model
    for f in rng.sample(sorted(model), 100):
        assert r.hget("big", f) == model[f]
        assert r.hstrlen("big", f) == len(model[f])
    for f in list(model):
        r.hdel("big", f)
    assert r.exists("big") == 0


@feedkv_only
@pytest.mark.parametrize("mode", ["rdb", "aof"])
def test_hashes_survive_restart_with_equal_digest(start_server, mode):
    args = ["--appendonly", "yes"] if mode == "aof" else ["--appendonly", "no"]
    srv = start_server(*args)
    c = srv.client()
    rng = random.Random(11)
    for i in range(20):
        c.hset(f"k{i}", mapping={f"f{rng.randrange(10**6)}": str(rng.random())
                                 for _ in range(rng.choice([3, 100, 2000]))})
        c.hincrby(f"k{i}", "n", 5)
        c.hincrbyfloat(f"k{i}", "x", 0.1)
        c.hincrbyfloat(f"k{i}", "x", 0.2)
    encodings = {c.object("encoding", f"k{i}") for i in range(20)}
    assert encodings == {"listpack", "hashtable"}
    before = c.execute_command("DEBUG", "DIGEST")
    contents = [c.hgetall(f"k{i}") for i in range(20)]
    if mode == "rdb":
        assert c.save()
    assert srv.stop() == []
    srv.start()
    c = srv.client()
    assert c.execute_command("DEBUG", "DIGEST") == before
    assert [c.hgetall(f"k{i}") for i in range(20)] == contents
    assert {c.object("encoding", f"k{i}") for i in range(20)} == encodings
    assert c.type("k0") == "hash"
    assert c.hget("k0", "x") == "0.3"


@feedkv_only
def test_hincrbyfloat_is_logged_as_the_value_it_set(start_server, tmp_path):
    srv = start_server("--appendonly", "yes")
    c = srv.client()
    c.hincrbyfloat("h", "f", 0.1)
    c.hincrbyfloat("h", "f", "1e-3")
    log = aof_log_bytes(srv)
    assert b"HINCRBYFLOAT" not in log.upper()
    assert b"0.101" in log


def test_memory_usage_counts_hashes(r):
    r.hset("small", mapping={f"f{i}": "v" * 10 for i in range(10)})
    r.hset("big", mapping={f"f{i}": "v" * 10 for i in range(5000)})
    small, big = r.memory_usage("small"), r.memory_usage("big")
    assert 100 < small < 1000
    assert 5000 * 20 < big < 5000 * 100
