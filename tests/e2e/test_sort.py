"""SORT and SORT_RO end to end, side by side with Redis 7.

Seeded scripts of SORT/SORT_RO over lists, sets (int and string members) and sorted
sets — numeric and ALPHA, ASC/DESC, LIMIT (negative, huge, past the end), BY patterns
on string keys and hash fields ('->'), constant BY, GET '#' and patterns, STORE
(including empty results that delete the destination) — run against feedkv and Redis 7
in one run and every reply must agree. Orders that Redis leaves to its set iteration
(BY a constant over a set without STORE, ALPHA BY ties over sets and sorted sets) are
not compared. ALPHA BY ties under LIMIT are: feedkv sorts a BY window with Redis's
partial quicksort, as Redis does.
"""

import random

import pytest

from conftest import RespError, aof_log_bytes, assert_same_replies, is_real_redis, run_seeded_script

feedkv_only = pytest.mark.skipif(is_real_redis(), reason="feedkv's log form")

SETUP = [
    ["RPUSH", "list", "3", "1", "2", "10", "-5", "2.5", "1e2", "7", "3"],
    ["RPUSH", "words", "pear", "apple", "fig", "Banana", "apple", "kiwi", ""],
    ["RPUSH", "mixed", "1", "two", "3"],
    ["SADD", "ints", "5", "-3", "100", "42", "0", "7"],
    ["SADD", "strs", "delta", "alpha", "charlie", "bravo", "echo"],
    ["ZADD", "zs", "3", "c", "1", "a", "2", "b", "5", "e", "4", "d"],
    ["ZADD", "znum", "1", "30", "2", "10", "3", "20"],
    ["MSET", "w_3", "9", "w_1", "5", "w_2", "3", "w_10", "1", "w_-5", "2", "w_7", "x",
     "name_a", "zed", "name_b", "amy", "name_c", "bob", "name_d", "amy"],
    ["HSET", "h_5", "f", "50", "g", "five"], ["HSET", "h_42", "f", "-1", "g", "fortytwo"],
    ["HSET", "h_0", "f", "7"], ["HSET", "h_100", "f", "1"],
    ["SET", "str", "not a list"],
    ["SET", "dst_old", "will be replaced"],
]

SOURCES = ["list", "words", "mixed", "ints", "strs", "zs", "znum", "missing", "str"]


def random_op(rng):
    key = rng.choice(SOURCES)
    cmd = [rng.choice(["SORT", "SORT", "SORT_RO", "sort"]), key]
    opts = []
    if rng.random() < 0.3:
        opts.append(["LIMIT", str(rng.choice([0, 1, 2, -1, 5, 100])), str(rng.choice([0, 1, 3, -1, 10, 2**40]))])
    if rng.random() < 0.35:
        opts.append(["BY", rng.choice(["w_*", "h_*->f", "name_*", "nosort", "h_*->", "*", "h_*->missing"])])
    for _ in range(rng.choice([0, 0, 1, 2])):
        opts.append(["GET", rng.choice(["#", "w_*", "h_*->f", "h_*->g", "name_*", "constant"])])
    if rng.random() < 0.4:
        opts.append([rng.choice(["ASC", "DESC", "desc"])])
    if rng.random() < 0.45:
        opts.append(["ALPHA"])
    if cmd[0] != "SORT_RO" and rng.random() < 0.25:
        opts.append(["STORE", rng.choice(["dst", "dst_old", "list2"])])
    if rng.random() < 0.03:
        opts.append(["BOGUS"])
    rng.shuffle(opts)
    for o in opts:
        cmd += o
    # Redis leaves these orders to its own set iteration: not comparable.
    by = cmd[cmd.index("BY") + 1] if "BY" in cmd else None
    alpha_by = by is not None and "*" in by and "ALPHA" in cmd
    if key in ("ints", "strs") and ((by is not None and "*" not in by and "STORE" not in cmd) or alpha_by):
        return ["SORT", key, "ALPHA"]
    if alpha_by and key in ("zs", "znum"):
        # Ties under ALPHA BY keep the order Redis gathers a sorted set's members in:
        # its dict's iteration order.
        return ["SORT", key]
    return cmd


FINALS = [["LRANGE", "dst", "0", "-1"], ["LRANGE", "dst_old", "0", "-1"], ["LRANGE", "list2", "0", "-1"],
          ["TYPE", "dst_old"], ["EXISTS", "dst"]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_sort_scripts_match_redis(server, redis7_server, seed):
    def run(srv):
        return run_seeded_script(srv, seed, 600, random_op, setup=SETUP, finals=FINALS)
    assert_same_replies(run(server), run(redis7_server))


def test_edge_cases_match_redis(server, redis7_server):
    script = SETUP + [
        ["SORT", "mixed"], ["SORT", "list", "LIMIT", "1"], ["SORT", "list", "LIMIT", "x", "1"],
        ["SORT_RO", "list", "STORE", "dst"], ["SORT", "list", "BY"], ["SORT", "str"],
        ["SORT", "missing", "STORE", "dst_old"], ["EXISTS", "dst_old"],
        ["SORT", "list", "LIMIT", "2", "3", "STORE", "dst"], ["LRANGE", "dst", "0", "-1"],
        ["SORT", "ints", "BY", "nosort", "STORE", "dst"], ["LRANGE", "dst", "0", "-1"],
        ["SORT", "zs", "BY", "nosort", "DESC", "LIMIT", "1", "2"],
        ["SORT", "list", "BY", "nosort", "DESC", "LIMIT", "1", "3", "GET", "#", "GET", "w_*"],
        ["SORT", "ints", "BY", "h_*->f", "GET", "#", "GET", "h_*->g"],
        ["SORT", "words", "ALPHA", "DESC"], ["SORT", "words", "ALPHA", "STORE", "dst"],
        ["LRANGE", "dst", "0", "-1"],
        ["SET", "k", "v"], ["EXPIRE", "dst", "100"], ["SORT", "list", "STORE", "dst"], ["TTL", "dst"],
        ["SORT", "list", "GET", "w_*", "STORE", "dst"], ["LRANGE", "dst", "0", "-1"],
        ["COMMAND", "GETKEYS", "SORT", "list", "GET", "store", "STORE", "a", "LIMIT", "0", "1", "STORE", "b"],
        ["COMMAND", "GETKEYS", "SORT", "list", "BY", "x"],
    ]

    def run(srv):
        c = srv.raw()
        return [(cmd, c.cmd(*cmd)) for cmd in script]
    ours, theirs = run(server), run(redis7_server)
    for (cmd, a), (_, b) in zip(ours, theirs):
        assert a == b, f"{cmd}: feedkv {a!r} != redis {b!r}"


def test_command_info_of_sort(server, redis7_server):
    def info(srv):
        reply = srv.raw().cmd("COMMAND", "INFO", "sort", "sort_ro")
        return [entry[:6] for entry in reply]
    assert info(server) == info(redis7_server)


def test_sort_turns_a_listpack_sorted_set_into_a_skiplist_as_redis(server):
    # Redis 7.0 converts the sorted set it sorts, SORT_RO too (sort.c: "Destructively
    # convert encoded sorted sets for SORT"); OBJECT ENCODING shows it after.
    c = server.raw()
    c.cmd("ZADD", "z1", "1", "a", "2", "b")
    c.cmd("ZADD", "z2", "1", "3", "2", "1")
    assert c.cmd("OBJECT", "ENCODING", "z1") == b"listpack"
    assert c.cmd("SORT_RO", "z1", "ALPHA") == [b"a", b"b"]
    assert c.cmd("SORT", "z2", "DESC") == [b"3", b"1"]
    assert c.cmd("OBJECT", "ENCODING", "z1") == b"skiplist"
    assert c.cmd("OBJECT", "ENCODING", "z2") == b"skiplist"
    assert c.cmd("ZRANGE", "z1", "0", "-1", "WITHSCORES") == [b"a", b"1", b"b", b"2"]


def test_watch_sees_a_sort_store(server):
    c = server.client()
    c.rpush("src", 3, 1, 2)
    p = c.pipeline()
    p.watch("dst")
    server.client().sort("src", store="dst")
    p.multi()
    p.get("x")
    with pytest.raises(Exception):
        p.execute()


@feedkv_only
def test_sort_store_is_logged_as_the_list_it_made(start_server):
    srv = start_server("--appendonly", "yes")
    c = srv.client()
    c.rpush("src", 3, 1, 2)
    c.mset({"w_1": 3, "w_2": 2, "w_3": 1})
    assert c.sort("src", by="w_*", store="dst") == 3
    log = aof_log_bytes(srv)
    assert b"SORT" not in log.upper().replace(b"SORT_", b"")
    assert b"*5\r\n$5\r\nRPUSH\r\n$3\r\ndst\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n" in log
    before = c.execute_command("DEBUG", "DIGEST")
    assert srv.stop() == []
    srv.start()
    assert srv.client().execute_command("DEBUG", "DIGEST") == before
