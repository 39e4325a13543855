"""Lazy free, as Redis 7.0: UNLINK (and DEL under lazyfree-lazy-user-del)
hands a big value to a background thread, FLUSHALL / FLUSHDB ASYNC (or under
lazyfree-lazy-user-flush) the whole database; INFO memory counts
lazyfree_pending_objects and lazyfreed_objects. Each test also runs against
Redis 7 (FEEDKV_SERVER=/usr/bin/redis-server)."""

from conftest import wait_until


def lazy(r):
    m = r.info("memory")
    return m["lazyfree_pending_objects"], m["lazyfreed_objects"]


def settled(r):
    return wait_until(lambda: lazy(r)[0] == 0, timeout=10)


def test_unlink_frees_a_big_value_in_the_background(server):
    r = server.client()
    orig = r.info("memory")["used_memory"]
    r.sadd("big", *[f"member:{i}" for i in range(100000)])
    peak = r.info("memory")["used_memory"]
    assert peak > orig + 1_000_000
    r.config_resetstat()
    assert r.unlink("big") == 1
    assert settled(r)
    assert lazy(r) == (0, 1)
    assert wait_until(lambda: r.info("memory")["used_memory"] < orig + (peak - orig) // 4, timeout=10)
    assert r.exists("big") == 0


def test_small_values_are_freed_at_once(server):
    r = server.client()
    r.config_resetstat()
    r.sadd("small", "a", "b")
    r.set("str", "x" * 100)
    assert r.unlink("small", "str", "missing") == 2
    assert settled(r)
    assert lazy(r) == (0, 0)


def test_del_is_lazy_under_lazyfree_lazy_user_del(server):
    r = server.client()
    r.rpush("list", *[f"v{i}" * 4 for i in range(50000)])
    r.hset("hash", mapping={f"f{i}": i for i in range(20000)})
    r.config_resetstat()
    assert r.delete("list") == 1
    assert settled(r) and lazy(r) == (0, 0)
    r.config_set("lazyfree-lazy-user-del", "yes")
    assert r.config_get("lazyfree-lazy-user-del") == {"lazyfree-lazy-user-del": "yes"}
    assert r.delete("hash") == 1
    assert settled(r) and lazy(r) == (0, 1)


def test_flush_async_counts_every_key(server):
    r = server.client()
    r.mset({f"k{i}": "v" for i in range(100)})
    r.config_resetstat()
    r.flushall(asynchronous=True)
    assert r.dbsize() == 0
    assert settled(r) and lazy(r) == (0, 100)
    # lazyfree-lazy-user-flush makes a plain FLUSHDB asynchronous; SYNC overrides it.
    r.config_set("lazyfree-lazy-user-flush", "yes")
    r.mset({f"k{i}": "v" for i in range(10)})
    r.flushdb()
    assert settled(r) and lazy(r) == (0, 110)
    r.mset({f"k{i}": "v" for i in range(10)})
    r.execute_command("FLUSHDB", "SYNC")
    assert settled(r) and lazy(r) == (0, 110)
    assert r.dbsize() == 0
    assert r.set("after", "1") and r.get("after") == "1"


def test_a_huge_commands_argument_arrays_are_given_back(server):
    """100,000 arguments: Redis frees each command's argv after it runs; feedkv
    kept the parser's arrays (3.2 MB here) on the connection until it closed."""
    r = server.client()
    r.ping()
    orig = r.info("memory")["used_memory"]
    r.sadd("s", *range(100000))
    r.delete("s")
    assert settled(r)
    assert r.info("memory")["used_memory"] < orig + 300_000
