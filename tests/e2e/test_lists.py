"""Lists end to end, side by side with Redis 7.

A seeded random script of every list command (pushes, pops with counts, LINSERT,
LSET, LREM, LTRIM, LPOS with RANK/COUNT/MAXLEN, LMOVE/RPOPLPUSH/LMPOP, errors
included: huge and negative indexes and counts, wrong types, wrong arity) runs
against feedkv and Redis 7 over raw RESP connections, and every reply must be the
same. Then: the blocking commands (arrival order, timeouts, a push inside MULTI, a
key of another type, BLMOVE chains, CLIENT UNBLOCK), RESP3 shapes, WATCH, the log
form of served blocking commands, persistence across restarts with DEBUG DIGEST,
and a big list against a Python model.
"""

import random
import time

import pytest

from conftest import (aof_log_bytes, assert_same_replies, is_real_redis, norm_reply, run_seeded_script,
                      wait_blocked, watch_outcomes)

feedkv_only = pytest.mark.skipif(is_real_redis(), reason="feedkv extension")

VALUES = ["a", "b", "c", "", "1", "-1", "x" * 70, "y" * 300, "é", "a"]
INDEXES = ["0", "1", "-1", "2", "-2", "5", "-100", "100", "9223372036854775807",
           "-9223372036854775808", "x", "1.5", ""]
COUNTS = ["0", "1", "2", "3", "-1", "-2", "10", "9223372036854775807", "-9223372036854775808", "x"]


def random_op(rng):
    key = rng.choice(["l1", "l1", "l2", "l3"])
    other = rng.choice(["l1", "l2", "l3", "new"])
    p = rng.random()
    if p < 0.22:
        return [rng.choice(["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]), key,
                *rng.choices(VALUES, k=rng.choice([1, 1, 3, 20, 200]))]
    if p < 0.32:
        cmd = [rng.choice(["LPOP", "RPOP"]), key]
        if rng.random() < 0.5:
            cmd.append(rng.choice(COUNTS))
        return cmd
    if p < 0.37:
        return ["LINDEX", key, rng.choice(INDEXES)]
    if p < 0.41:
        return ["LINSERT", key, rng.choice(["BEFORE", "AFTER", "after", "middle"]),
                rng.choice(VALUES), rng.choice(VALUES)]
    if p < 0.45:
        return ["LSET", key, rng.choice(INDEXES), rng.choice(VALUES)]
    if p < 0.52:
        return ["LRANGE", key, rng.choice(INDEXES), rng.choice(INDEXES)]
    if p < 0.55:
        return ["LTRIM", key, rng.choice(INDEXES[:8]), rng.choice(INDEXES[:8])]
    if p < 0.60:
        return ["LREM", key, rng.choice(COUNTS), rng.choice(VALUES)]
    if p < 0.67:
        cmd = ["LPOS", key, rng.choice(VALUES)]
        for _ in range(rng.choice([0, 1, 2, 3])):
            opt = rng.choice(["RANK", "COUNT", "MAXLEN", "rank", "BOGUS"])
            cmd += [opt, rng.choice(COUNTS + ["-3", "-9223372036854775807"])]
        if rng.random() < 0.03:
            cmd.append("RANK")
        return cmd
    if p < 0.73:
        return ["LMOVE", key, other, rng.choice(["LEFT", "RIGHT", "left"]),
                rng.choice(["LEFT", "RIGHT", "up"])]
    if p < 0.76:
        return ["RPOPLPUSH", key, other]
    if p < 0.80:
        keys = rng.sample(["l1", "l2", "l3", "none"], rng.choice([1, 2, 3]))
        cmd = ["LMPOP", rng.choice([str(len(keys)), str(len(keys)), "0", "9", "-1"]), *keys,
               rng.choice(["LEFT", "RIGHT", "MIDDLE"])]
        if rng.random() < 0.5:
            cmd += ["COUNT", rng.choice(COUNTS)]
        return cmd
    if p < 0.84:
        return ["LLEN", key]
    if p < 0.86:
        return ["OBJECT", "ENCODING", key]
    if p < 0.88:
        return ["TYPE", rng.choice([key, "str", "nokey"])]
    if p < 0.93:
        return rng.choice([["LPUSH", "str", "a"], ["LRANGE", "str", "0", "-1"], ["LLEN", "str"],
                           ["LPOP", "str"], ["LINDEX", "str", "0"], ["LSET", "str", "0", "a"],
                           ["LMOVE", key, "str", "LEFT", "LEFT"], ["RPOPLPUSH", "str", key],
                           ["LPOS", "str", "a"], ["GET", key], ["SADD", key, "m"],
                           ["LMPOP", "2", "l1", "str", "LEFT"], ["LMPOP", "2", "str", "l1", "LEFT"],
                           ["BLPOP", "str", "0.01"], ["LSET", "nokey", "0", "a"]])
    return rng.choice([["LPUSH", key], ["LPOP", key, "1", "2"], ["LINDEX", key],
                       ["LINSERT", key, "BEFORE", "a"], ["LRANGE", key, "0"],
                       ["LMOVE", key, other, "LEFT"], ["LMPOP", "1"], ["LMPOP", "1", key],
                       ["LMPOP", "1", key, "LEFT", "COUNT"], ["LMPOP", "1", key, "LEFT", "COUNT", "1", "COUNT", "1"],
                       ["BLPOP", key, "-1"], ["BLPOP", key, "abc"], ["BLMPOP", "0.01", "1", key, "LEFT", "COUNT", "0"]])


def run_script(srv, seed, n):
    return run_seeded_script(srv, seed, n, random_op, setup=[["SET", "str", "x"]],
                             finals=[["LRANGE", k, "0", "-1"] for k in ("l1", "l2", "l3", "new")])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_script_replies_match_redis(server, redis7_server, seed):
    assert_same_replies(run_script(server, seed, 3000), run_script(redis7_server, seed, 3000))


def test_resp3_and_config_match_redis(server, redis7_server):
    def script(srv):
        c = srv.raw()
        c.cmd("HELLO", "3")
        out = []
        c.cmd("RPUSH", "l", "a", "b", "c")
        for cmd in (["LPOP", "l", "2"], ["LPOP", "nokey", "2"], ["LPOP", "nokey"],
                    ["LMPOP", "1", "nokey", "LEFT"], ["BLPOP", "nokey", "0.01"],
                    ["BLMOVE", "nokey", "x", "LEFT", "LEFT", "0.01"], ["LPOS", "l", "c", "COUNT", "0"],
                    ["LPOS", "nokey", "c"], ["LPOS", "nokey", "c", "COUNT", "1"],
                    ["CONFIG", "SET", "list-max-ziplist-size", "5"], ["CONFIG", "GET", "list-max-listpack-size"],
                    ["CONFIG", "SET", "list-max-listpack-size", "-2"]):
            out.append(norm_reply(c.cmd(*cmd)))
        return out
    assert script(server) == script(redis7_server)


def blocking_script(srv):
    """Waiters served in arrival order by one RPUSH, a timeout, a key of another type
    (the waiter stays blocked), a push inside MULTI, BLMOVE chains, CLIENT UNBLOCK."""
    out = []
    w1, w2, w3 = srv.raw(), srv.raw(), srv.raw()
    c = srv.raw()
    w1.send_command("BLPOP", "q", "q2", "5")
    wait_blocked(srv, 1)
    w2.send_command("BRPOP", "q2", "q", "5")
    wait_blocked(srv, 2)
    out.append(c.cmd("RPUSH", "q", "a", "b", "c"))
    out.append(w1.read_reply())
    out.append(w2.read_reply())
    out.append(c.cmd("LRANGE", "q", "0", "-1"))
    out.append(c.cmd("BLPOP", "empty", "0.05"))
    # One element for two waiters: the first arrival gets it, the second waits on.
    w1.send_command("BLPOP", "one", "5")
    wait_blocked(srv, 1)
    w2.send_command("BLPOP", "one", "0.3")
    wait_blocked(srv, 2)
    out.append(c.cmd("LPUSH", "one", "x"))
    out.append(w1.read_reply())
    out.append(w2.read_reply())
    # A string at the key does not serve the waiter; a list there later does.
    w3.send_command("BLMPOP", "5", "2", "s", "t", "RIGHT", "COUNT", "5")
    wait_blocked(srv, 1)
    out.append(c.cmd("SET", "s", "x"))
    out.append(c.cmd("RPUSH", "t", "1", "2"))
    out.append(w3.read_reply())
    out.append(c.cmd("EXISTS", "t"))
    # A push and a pop inside MULTI: the waiter sees the state after EXEC.
    w1.send_command("BLPOP", "m", "0.5")
    wait_blocked(srv, 1)
    out.append([c.cmd("MULTI"), c.cmd("LPUSH", "m", "v"), c.cmd("LPOP", "m"), c.cmd("EXEC")])
    out.append(w1.read_reply())
    w1.send_command("BLPOP", "m", "5")
    wait_blocked(srv, 1)
    out.append([c.cmd("MULTI"), c.cmd("LPUSH", "m", "v1", "v2"), c.cmd("EXEC")])
    out.append(w1.read_reply())
    out.append([c.cmd("MULTI"), c.cmd("BLPOP", "none", "0"), c.cmd("BRPOPLPUSH", "none", "x", "0"),
                c.cmd("EXEC")])
    # A chain: BLMOVE a->b wakes on a push to a, and its push to b serves BLPOP b.
    w1.send_command("BLPOP", "b", "5")
    wait_blocked(srv, 1)
    w2.send_command("BLMOVE", "a", "b", "LEFT", "RIGHT", "5")
    wait_blocked(srv, 2)
    out.append(c.cmd("RPUSH", "a", "z"))
    out.append(w2.read_reply())
    out.append(w1.read_reply())
    out.append(c.cmd("EXISTS", "a", "b"))
    w2.send_command("BRPOPLPUSH", "a2", "b2", "0.05")
    out.append(w2.read_reply())
    # CLIENT UNBLOCK as a timeout and as an error.
    w3.send_command("BLPOP", "u", "0")
    wait_blocked(srv, 1)
    w3_id = max(int(line.split("id=")[1].split()[0]) for line in
                c.cmd("CLIENT", "LIST").decode().splitlines() if "cmd=blpop" in line)
    out.append(c.cmd("CLIENT", "UNBLOCK", str(w3_id)))
    out.append(w3.read_reply())
    w3.send_command("BLMOVE", "u", "v", "LEFT", "LEFT", "0")
    wait_blocked(srv, 1)
    out.append(c.cmd("CLIENT", "UNBLOCK", str(w3_id), "ERROR"))
    out.append(w3.read_reply())
    out.append(c.cmd("BLPOP", "s", "0"))
    out.append(c.cmd("BLMOVE", "q", "s", "LEFT", "LEFT", "0"))
    out.append(c.cmd("BLPOP", "q", "-1"))
    return [norm_reply(x) for x in out]


def test_blocking_commands_match_redis(server, redis7_server):
    assert blocking_script(server) == blocking_script(redis7_server)


def test_a_timeout_answers_after_its_time(server):
    c = server.raw()
    t0 = time.monotonic()
    assert c.cmd("BLPOP", "nothing", "0.2") is None
    assert time.monotonic() - t0 >= 0.19


def test_watch_sees_real_changes_only(server, redis7_server):
    changes = (["RPUSH", "w", "4"], ["LPUSHX", "nokey", "x"], ["LREM", "w", "0", "nope"],
               ["LTRIM", "w", "0", "-1"], ["LINSERT", "w", "BEFORE", "nope", "x"],
               ["LSET", "w", "0", "z"], ["LPOS", "w", "z"], ["LMOVE", "w", "w", "LEFT", "RIGHT"],
               ["LPOP", "w", "0"], ["RPOP", "w"])

    def script(srv):
        srv.client().rpush("w", "1", "2", "3")
        return watch_outcomes(srv, "w", changes, ["LLEN", "w"])
    assert script(server) == script(redis7_server)


def test_big_list_agrees_with_a_model(r):
    rng = random.Random(5)
    model = []
    for step in range(30000):
        op = rng.random()
        v = str(rng.randrange(1000)) * rng.choice([1, 1, 30])
        if op < 0.4:
            r.rpush("big", v)
            model.append(v)
        elif op < 0.6:
            r.lpush("big", v)
            model.insert(0, v)
        elif op < 0.7 and model:
            assert r.lpop("big") == model.pop(0)
        elif op < 0.8 and model:
            assert r.rpop("big") == model.pop()
        elif op < 0.9 and model:
            i = rng.randrange(-len(model), len(model))
            assert r.lindex("big", i) == model[i]
        elif model:
            i = rng.randrange(len(model))
            r.lset("big", i, v)
            model[i] = v
    assert r.lrange("big", 0, -1) == model
    assert r.lrange("big", 1000, 1010) == model[1000:1011]
    assert r.llen("big") == len(model)


@feedkv_only
@pytest.mark.parametrize("mode", ["rdb", "aof"])
def test_lists_survive_restart_with_equal_digest(start_server, mode):
    args = ["--appendonly", "yes"] if mode == "aof" else ["--appendonly", "no"]
    srv = start_server(*args)
    c = srv.client()
    rng = random.Random(11)
    for i in range(20):
        c.rpush(f"k{i}", *[str(rng.random()) * rng.choice([1, 40]) for _ in range(rng.choice([1, 100, 3000]))])
        c.lpush(f"k{i}", "head")
        c.linsert(f"k{i}", "AFTER", "head", "second")
        c.lmove(f"k{i}", f"k{(i + 1) % 20}", "RIGHT", "LEFT")
    before = c.execute_command("DEBUG", "DIGEST")
    contents = [c.lrange(f"k{i}", 0, -1) for i in range(20)]
    if mode == "rdb":
        assert c.save()
    assert srv.stop() == []
    srv.start()
    c = srv.client()
    assert c.execute_command("DEBUG", "DIGEST") == before
    assert [c.lrange(f"k{i}", 0, -1) for i in range(20)] == contents
    assert c.type("k0") == "list"
    assert c.object("encoding", "k0") == "quicklist"


@feedkv_only
def test_served_blocking_commands_are_logged_as_plain_ones(start_server):
    srv = start_server("--appendonly", "yes")
    w, c = srv.raw(), srv.client()
    w.send_command("BLPOP", "q", "0")
    wait_blocked(srv, 1)
    c.rpush("q", "a", "b")
    assert w.read_reply() == [b"q", b"a"]
    w.send_command("BLMOVE", "q2", "dst", "RIGHT", "LEFT", "0")
    wait_blocked(srv, 1)
    c.rpush("q2", "x")
    assert w.read_reply() == b"x"
    c.execute_command("BLMPOP", "0", "1", "q", "RIGHT", "COUNT", "5")
    aof = aof_log_bytes(srv)
    assert b"BLPOP" not in aof.upper() and b"BLMOVE" not in aof.upper() and b"BLMPOP" not in aof.upper()
    assert b"LMOVE" in aof and b"RPOP" in aof
    assert srv.stop() == []
    srv.start()
    c = srv.client()
    assert c.exists("q", "q2") == 0
    assert c.lrange("dst", 0, -1) == ["x"]


def test_memory_usage_counts_lists(r):
    r.rpush("small", "a")
    small = r.memory_usage("small")
    r.rpush("large", *(["v" * 100] * 10000))
    assert r.memory_usage("large", samples=0) > 10000 * 100 > small


def test_waiters_on_one_key_are_served_in_arrival_order_one_push_at_a_time(server, redis7_server):
    def script(srv):
        ws = [srv.raw() for _ in range(4)]
        c = srv.raw()
        for i, w in enumerate(ws):
            w.send_command("BLPOP", "fair", "5")
            wait_blocked(srv, i + 1)
        out = []
        for i, v in enumerate(("a", "b", "c")):
            out.append(c.cmd("LPUSH", "fair", v))
            out.append(ws[i].read_reply())
            wait_blocked(srv, 3 - i)  # the ones behind stay blocked, in their places
        out.append(c.cmd("RPUSH", "fair", "d", "e"))
        out.append(ws[3].read_reply())
        out.append(c.cmd("LRANGE", "fair", "0", "-1"))
        return out
    assert script(server) == script(redis7_server)
