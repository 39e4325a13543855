"""Sorted sets end to end, side by side with Redis 7.

A seeded random script of ZADD (every flag mix, errors included), ZINCRBY, ZREM,
the counting, rank and range readers (by rank, score and lex, forward and
reverse, LIMIT, WITHSCORES), ZRANGESTORE and the ZREMRANGEBY* commands runs
against feedkv and against Redis 7 over raw RESP connections, and every reply
must be byte-for-byte the same (scores as Redis 7.0 formats them, error texts,
OBJECT ENCODING as sets cross the listpack limits). Then: RESP3 reply shapes,
WATCH, persistence across restarts (RDB and AOF) with DEBUG DIGEST, memory.

Redis is Debian's /usr/bin/redis-server (or $REDIS_SERVER) on a private port with
--save ''; the side-by-side tests skip when it is missing.
"""

import random

import pytest
import redis

from conftest import aof_log_bytes, RespError, assert_same_replies, is_real_redis, wait_blocked

feedkv_only = pytest.mark.skipif(is_real_redis(), reason="feedkv extension")


def norm(v):
    if isinstance(v, RespError):
        return ("error", str(v))
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


MEMBERS = [f"m{i}" for i in range(300)] + ["", "a", "b", "ab", "x" * 70, "é", "0", "-1"]
SCORES = ["0", "1", "-1", "1.5", "2", "3", "0.1", "1e-7", "123456789012345678", "1e20",
          "inf", "-inf", "+inf", "-0", "7", "(1", "abc", "nan", "0x10", "  1", "1e400"]
BOUNDS = ["-inf", "+inf", "inf", "0", "1", "(1", "1.5", "(1.5", "3", "(3", "7", "abc", "(",
          "", "(inf", "-1", "1e20"]
LEX = ["-", "+", "[a", "(a", "[m1", "(m1", "[m2", "(m20", "[", "(", "a", "[x", "+x", "[m5"]


def random_zadd(rng, key):
    opts = [o for o in ("NX", "XX", "GT", "LT", "CH", "INCR") if rng.random() < 0.12]
    rng.shuffle(opts)
    pairs = []
    for _ in range(rng.choice([1, 1, 2, 3, 8, 40])):
        pairs += [rng.choice(SCORES[:15]) if rng.random() < 0.97 else rng.choice(SCORES),
                  rng.choice(MEMBERS)]
    if rng.random() < 0.02:
        pairs = pairs[:-1]  # odd count: syntax error
    return ["ZADD", key, *opts, *pairs]


def random_range(rng, key):
    kind = rng.random()
    if kind < 0.25:
        cmd = ["ZRANGE", key, str(rng.randint(-20, 20)), str(rng.randint(-20, 200))]
        extra = [o for o in ("REV", "WITHSCORES") if rng.random() < 0.4]
        if rng.random() < 0.05:
            extra += ["LIMIT", "0", rng.choice(["-1", "2"])]
    elif kind < 0.55:
        cmd = ["ZRANGE", key, rng.choice(BOUNDS), rng.choice(BOUNDS), "BYSCORE"]
        extra = [o for o in ("REV", "WITHSCORES") if rng.random() < 0.4]
    elif kind < 0.65:
        cmd = [rng.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]), key, rng.choice(BOUNDS),
               rng.choice(BOUNDS)]
        extra = ["WITHSCORES"] if rng.random() < 0.5 else []
    elif kind < 0.75:
        cmd = ["ZREVRANGE", key, str(rng.randint(-20, 20)), str(rng.randint(-20, 200))]
        extra = ["WITHSCORES"] if rng.random() < 0.5 else []
    else:
        # Lex ranges only where every score is equal: Redis leaves them undefined otherwise.
        key = "zl"
        if rng.random() < 0.5:
            cmd = ["ZRANGE", key, rng.choice(LEX), rng.choice(LEX), "BYLEX"]
            extra = ["REV"] if rng.random() < 0.4 else []
            if rng.random() < 0.03:
                extra.append("WITHSCORES")
        else:
            cmd = [rng.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"]), key, rng.choice(LEX),
                   rng.choice(LEX)]
            extra = []
    by_rank = cmd[0] in ("ZRANGE", "ZREVRANGE") and "BYSCORE" not in cmd and "BYLEX" not in cmd
    if rng.random() < (0.03 if by_rank else 0.3):
        extra += ["LIMIT", str(rng.randint(-2, 30)), str(rng.randint(-2, 30))]
    return cmd + extra


def random_pop(rng, key):
    kind = rng.random()
    if kind < 0.4:
        return [rng.choice(["ZPOPMIN", "ZPOPMAX"]), key] + (
            [rng.choice(["1", "3", "0", "-1", "x", "500"])] if rng.random() < 0.6 else [])
    if kind < 0.8:
        keys = rng.sample(["z1", "z2", "z3", "nokey", "str"], rng.choice([1, 2, 3]))
        cmd = ["ZMPOP", str(len(keys)), *keys, rng.choice(["MIN", "MAX", "max", "MID"])]
        if rng.random() < 0.5:
            cmd += ["COUNT", rng.choice(["1", "2", "10", "0", "-3"])]
        if rng.random() < 0.03:
            cmd[1] = rng.choice(["0", "-1", "9", "x"])
        return cmd
    return [rng.choice(["BZPOPMIN", "BZPOPMAX"]), key, "nokey", "0.01"]


def random_algebra(rng):
    op = rng.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE",
                     "ZINTERCARD"])
    keys = rng.sample(["z1", "z2", "z3", "s1", "nokey", "zl"], rng.choice([1, 2, 3]))
    if rng.random() < 0.02:
        keys.append("str")
    cmd = [op] + (["dst"] if op.endswith("STORE") else []) + [str(len(keys)), *keys]
    if op in ("ZUNION", "ZINTER", "ZUNIONSTORE", "ZINTERSTORE"):
        if rng.random() < 0.4:
            cmd += ["WEIGHTS"] + [rng.choice(["1", "2", "-1", "0.5", "inf", "0", "x"])
                                  for _ in keys]
        if rng.random() < 0.4:
            cmd += ["AGGREGATE", rng.choice(["SUM", "MIN", "MAX", "avg"])]
    if op in ("ZUNION", "ZINTER", "ZDIFF") and rng.random() < 0.5:
        cmd.append("WITHSCORES")
    if op == "ZINTERCARD" and rng.random() < 0.5:
        cmd += ["LIMIT", rng.choice(["0", "1", "3", "-1"])]
    if rng.random() < 0.02:
        cmd[2 if op.endswith("STORE") else 1] = rng.choice(["0", "-2", "99"])
    return cmd


def random_op(rng):
    key = rng.choice(["z1", "z1", "z2", "z3"])
    p = rng.random()
    if p < 0.30:
        return random_zadd(rng, key)
    if p < 0.33:
        return ["ZADD", "zl", "0", rng.choice(MEMBERS)]
    if p < 0.38:
        return ["ZINCRBY", key, rng.choice(SCORES), rng.choice(MEMBERS)]
    if p < 0.45:
        return ["ZREM", key, *rng.sample(MEMBERS, rng.choice([1, 2, 5]))]
    if p < 0.48:
        return ["ZCARD", key]
    if p < 0.52:
        return ["ZSCORE", key, rng.choice(MEMBERS)]
    if p < 0.54:
        return ["ZMSCORE", key, *rng.sample(MEMBERS, 4)]
    if p < 0.58:
        return [rng.choice(["ZRANK", "ZREVRANK"]), key, rng.choice(MEMBERS)]
    if p < 0.62:
        return ["ZCOUNT", key, rng.choice(BOUNDS), rng.choice(BOUNDS)]
    if p < 0.64:
        return ["ZLEXCOUNT", "zl", rng.choice(LEX), rng.choice(LEX)]
    if p < 0.85:
        return random_range(rng, key)
    if p < 0.88:
        src = random_range(rng, key)
        if src[0] != "ZRANGE" or "WITHSCORES" in src:
            return ["ZRANGESTORE", "dst", key, "0", "-1"]
        return ["ZRANGESTORE", rng.choice(["dst", key]), *src[1:]]
    if p < 0.90:
        return ["ZREMRANGEBYRANK", key, str(rng.randint(-5, 3)), str(rng.randint(-5, 3))]
    if p < 0.92:
        return ["ZREMRANGEBYSCORE", key, rng.choice(BOUNDS), rng.choice(BOUNDS)]
    if p < 0.93:
        return ["ZREMRANGEBYLEX", "zl", rng.choice(LEX), rng.choice(LEX)]
    if p < 0.94:
        return ["OBJECT", "ENCODING", rng.choice([key, "zl", "dst"])]
    if p < 0.955:
        return random_pop(rng, key)
    if p < 0.965:
        return random_algebra(rng)
    if p < 0.98:
        return [rng.choice(["ZADD", "ZRANGE", "ZSCORE", "ZCARD"]), "str", *(
            ["1", "a"] if rng.random() < 0.5 else ["0", "1"])]
    return ["TYPE", rng.choice([key, "dst", "str"])]


def run_script(srv, seed, n):
    rng = random.Random(seed)
    c = srv.raw()
    c.cmd("SET", "str", "x")
    c.cmd("SADD", "s1", *rng.sample(MEMBERS, 40), "1", "77")
    out = []
    for _ in range(n):
        cmd = random_op(rng)
        out.append((cmd, norm(c.cmd(*cmd))))
    for key in ("z1", "z2", "z3", "zl", "dst"):
        out.append((key, norm(c.cmd("ZRANGE", key, "0", "-1", "WITHSCORES"))))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_script_replies_match_redis(server, redis7_server, seed):
    assert_same_replies(run_script(server, seed, 3000), run_script(redis7_server, seed, 3000))


def test_encoding_follows_listpack_limits_as_redis(server, redis7_server):
    for srv in (server, redis7_server):
        c = srv.raw()
        c.cmd("ZADD", "small", *sum([[str(i), f"m{i}"] for i in range(128)], []))
        c.cmd("ZADD", "big", *sum([[str(i), f"m{i}"] for i in range(129)], []))
        c.cmd("ZADD", "long", "1", "x" * 64)
        c.cmd("ZADD", "longer", "1", "x" * 65)
        c.cmd("ZADD", "grown", "1", "a")
        c.cmd("ZADD", "grown", "2", "y" * 100)
        c.cmd("CONFIG", "SET", "zset-max-ziplist-entries", "4")
        c.cmd("ZADD", "cfg", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
        c.cmd("CONFIG", "SET", "zset-max-listpack-entries", "128")
    got = [[srv.raw().cmd("OBJECT", "ENCODING", k) for k in
            ("small", "big", "long", "longer", "grown", "cfg")] for srv in (server, redis7_server)]
    assert got[0] == got[1] == [b"listpack", b"skiplist", b"listpack", b"skiplist",
                                b"skiplist", b"skiplist"]
    aliases = [srv.client().config_get("zset-max-ziplist-*") for srv in (server, redis7_server)]
    assert aliases[0] == aliases[1] == {"zset-max-ziplist-entries": "128",
                                        "zset-max-ziplist-value": "64"}


def test_resp3_replies_match_redis(server, redis7_server):
    def script(srv):
        c = srv.raw()
        c.cmd("HELLO", "3")
        out = [c.cmd("ZADD", "z", "1.5", "a", "2", "b", "inf", "c")]
        for cmd in (["ZSCORE", "z", "a"], ["ZSCORE", "z", "nope"], ["ZMSCORE", "z", "a", "x", "c"],
                    ["ZRANGE", "z", "0", "-1", "WITHSCORES"], ["ZRANGE", "z", "0", "-1"],
                    ["ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES", "LIMIT", "1", "5"],
                    ["ZINCRBY", "z", "1", "a"], ["ZADD", "z", "INCR", "1", "b"],
                    ["ZADD", "z", "NX", "INCR", "1", "b"], ["ZRANK", "z", "nope"]):
            out.append(norm(c.cmd(*cmd)))
        return out
    assert script(server) == script(redis7_server)


def test_watch_sees_real_changes_only(server, redis7_server):
    def script(srv):
        a, b = srv.client(), srv.client()
        out = []
        for change in (["ZADD", "w", "1", "m"], ["ZADD", "w", "XX", "1", "nope"],
                       ["ZADD", "w", "1", "m"], ["ZREM", "w", "nope"],
                       ["ZINCRBY", "w", "1", "m"], ["ZREMRANGEBYSCORE", "w", "100", "200"],
                       ["ZRANGESTORE", "w2", "w", "0", "-1"], ["ZRANGESTORE", "w", "nokey", "0", "-1"]):
            with a.pipeline(transaction=True) as p:
                p.watch("w")
                b.execute_command(*change)
                p.multi()
                p.zcard("w")
                try:
                    out.append((change, p.execute()))
                except redis.WatchError:
                    out.append((change, "aborted"))
        return out
    assert script(server) == script(redis7_server)


@feedkv_only
@pytest.mark.parametrize("mode", ["rdb", "aof"])
def test_sorted_sets_survive_restart_with_equal_digest(start_server, mode):
    args = ["--appendonly", "yes"] if mode == "aof" else ["--appendonly", "no"]
    srv = start_server(*args)
    c = srv.client()
    rng = random.Random(7)
    for i in range(20):
        members = {f"u{rng.randrange(10**6)}": rng.choice([rng.random() * 100, rng.randrange(50)])
                   for _ in range(rng.choice([3, 100, 2000]))}
        c.zadd(f"k{i}", members)
        c.zincrby(f"k{i}", 2.5, "extra")
        c.zremrangebyrank(f"k{i}", 0, 1)
    encodings = {c.object("encoding", f"k{i}") for i in range(20)}
    assert encodings == {"listpack", "skiplist"}
    before = c.execute_command("DEBUG", "DIGEST")
    ranges = [c.zrange(f"k{i}", 0, -1, withscores=True) for i in range(20)]
    if mode == "rdb":
        assert c.save()
    assert srv.stop() == []
    srv.start()
    c = srv.client()
    assert c.execute_command("DEBUG", "DIGEST") == before
    assert [c.zrange(f"k{i}", 0, -1, withscores=True) for i in range(20)] == ranges
    assert {c.object("encoding", f"k{i}") for i in range(20)} == encodings
    assert c.type("k0") == "zset"


def test_big_set_ranks_and_ranges_agree_with_a_model(r):
    rng = random.Random(5)
    model = {}
    for _ in range(20):
        batch = {f"p{rng.randrange(30000)}": float(rng.randrange(1000)) for _ in range(1000)}
        r.zadd("big", batch)
        model.update(batch)
        gone = rng.sample(sorted(model), 200)
        r.zrem("big", *gone)
        for m in gone:
            del model[m]
    order = sorted(model.items(), key=lambda kv: (kv[1], kv[0]))
    assert r.zcard("big") == len(order)
    assert r.zrange("big", 0, -1, withscores=True) == order
    for i in rng.sample(range(len(order)), 50):
        assert r.zrank("big", order[i][0]) == i
        assert r.zrevrank("big", order[i][0]) == len(order) - 1 - i
        assert r.zrange("big", i, i + 9) == [m for m, _ in order[i:i + 10]]
    assert r.zcount("big", 100, "(200") == sum(1 for _, s in order if 100 <= s < 200)
    assert r.zremrangebyscore("big", 0, 499) == sum(1 for _, s in order if s <= 499)
    assert r.zrange("big", 0, -1) == [m for m, s in order if s > 499]


def test_wrong_type_and_arity_errors(r):
    r.set("s", "x")
    for cmd in (["ZADD", "s", "1", "a"], ["ZSCORE", "s", "a"], ["ZRANGE", "s", "0", "1"],
                ["ZREM", "s", "a"], ["ZRANGESTORE", "d", "s", "0", "1"], ["ZCARD", "s"]):
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            r.execute_command(*cmd)
    r.zadd("z", {"a": 1})
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.get("z")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("ZADD", "z", "1")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("ZRANGESTORE", "d", "z", "0")


# ---------------------------------------------------------------------------
# Blocking pops, scans, random members.
# ---------------------------------------------------------------------------

def client_id(srv):
    """The CLIENT ID of the newest client whose last command is BZPOPMIN (blocked)."""
    ids = [int(line.split("id=")[1].split()[0])
           for line in srv.client().execute_command("CLIENT", "LIST").splitlines()
           if "cmd=bzpopmin" in line]
    return max(ids)


def blocking_script(srv):
    """Waiters served in arrival order by one ZADD, a timeout, a wake-up by a key of
    another type (Redis 7.0 keeps the client blocked), BZMPOP with a count, and a
    blocking pop inside MULTI; returns every reply."""
    out = []
    w1, w2, w3 = srv.raw(), srv.raw(), srv.raw()
    c = srv.raw()
    w1.send_command("BZPOPMIN", "q", "q2", "5")
    wait_blocked(srv, 1)
    w2.send_command("BZPOPMAX", "q2", "q", "5")
    wait_blocked(srv, 2)
    out.append(c.cmd("ZADD", "q", "1", "a", "2", "b", "3", "c"))
    out.append(w1.read_reply())
    out.append(w2.read_reply())
    out.append(c.cmd("ZRANGE", "q", "0", "-1", "WITHSCORES"))
    out.append(c.cmd("BZPOPMIN", "empty", "0.05"))
    # A string at the key does not serve the waiter; a sorted set there later does.
    w3.send_command("BZMPOP", "5", "2", "s", "t", "MAX", "COUNT", "5")
    wait_blocked(srv, 1)
    out.append(c.cmd("SET", "s", "x"))
    out.append(c.cmd("ZADD", "t", "1", "x", "2", "y"))
    out.append(w3.read_reply())
    out.append(c.cmd("EXISTS", "t"))
    out.append([c.cmd("MULTI"), c.cmd("BZPOPMIN", "none", "0"), c.cmd("EXEC")])
    # CLIENT UNBLOCK: as a timeout, or with -UNBLOCKED; a client not blocked: 0.
    w1.send_command("BZPOPMIN", "u", "0")
    wait_blocked(srv, 1)
    w1_id = client_id(srv)
    out.append(c.cmd("CLIENT", "UNBLOCK", str(w1_id)))
    out.append(w1.read_reply())
    w1.send_command("BZPOPMIN", "u", "0")
    wait_blocked(srv, 1)
    out.append(c.cmd("CLIENT", "UNBLOCK", str(w1_id), "ERROR"))
    out.append(w1.read_reply())
    out.append(c.cmd("CLIENT", "UNBLOCK", str(w1_id)))
    out.append(c.cmd("CLIENT", "UNBLOCK", str(w1_id), "MAYBE"))
    out.append(c.cmd("CLIENT", "UNBLOCK", "abc"))
    out.append(c.cmd("BZPOPMIN", "s", "0"))
    out.append(c.cmd("BZPOPMIN", "q", "-1"))
    out.append(c.cmd("BZPOPMIN", "q", "abc"))
    return [norm(x) for x in out]


def test_blocking_pops_match_redis(server, redis7_server):
    assert blocking_script(server) == blocking_script(redis7_server)


@feedkv_only
def test_served_blocking_pop_is_logged_as_a_plain_pop(start_server):
    srv = start_server("--appendonly", "yes")
    w, c = srv.raw(), srv.client()
    w.send_command("BZPOPMIN", "q", "0")
    wait_blocked(srv, 1)
    c.zadd("q", {"a": 1, "b": 2})
    assert w.read_reply() == [b"q", b"a", b"1"]
    c.execute_command("ZMPOP", 1, "q", "MAX", "COUNT", 5)
    aof = aof_log_bytes(srv)
    assert b"BZPOPMIN" not in aof and b"ZMPOP" not in aof
    assert b"ZPOPMIN" in aof and b"ZPOPMAX" in aof
    assert srv.stop() == []
    srv.start()
    assert srv.client().exists("q") == 0


def test_zscan_returns_every_member_once(r):
    members = {f"m{i}": float(i % 7) for i in range(3000)}
    r.zadd("big", members)
    r.zadd("small", {"a": 1.5, "b": 2})
    assert r.zscan("small") == (0, [("a", 1.5), ("b", 2.0)])
    seen = []
    cursor = 0
    while True:
        cursor, batch = r.zscan("big", cursor, count=100)
        seen += batch
        # Changes between calls do not make a member present all along go missing.
        r.zadd("big", {f"new{cursor}": 1})
        r.zrem("big", f"new{cursor}")
        if cursor == 0:
            break
    assert dict(seen) == members and len(seen) == len(members)
    assert sorted(m for m, _ in r.zscan_iter("big", match="m1??")) == \
        sorted(m for m in members if len(m) == 4 and m.startswith("m1"))


def test_zrandmember_shapes(server, redis7_server):
    for srv in (server, redis7_server):
        c = srv.client()
        c.zadd("z", {f"m{i}": i for i in range(50)})
        assert c.zrandmember("nokey") is None
        assert c.zrandmember("z") in {f"m{i}" for i in range(50)}
        picks = c.zrandmember("z", 20)
        assert len(set(picks)) == 20
        assert c.zrandmember("z", 60) == [f"m{i}" for i in reversed(range(50))]
        assert len(c.zrandmember("z", -80)) == 80
        pairs = c.execute_command("ZRANDMEMBER", "z", "5", "WITHSCORES")
        assert len(pairs) == 10 and all(float(s) == int(m[1:]) for m, s in zip(pairs[::2], pairs[1::2]))
        with pytest.raises(redis.ResponseError, match="syntax error"):
            c.execute_command("ZRANDMEMBER", "z", "5", "WITHSCOREZ")
        with pytest.raises(redis.ResponseError, match="value is out of range"):
            c.execute_command("ZRANDMEMBER", "z", str(2**62), "WITHSCORES")
