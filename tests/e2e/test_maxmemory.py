"""A memory limit that holds (issue 25, landing 2): maxmemory under every Redis 7.0
policy, -OOM on deny-oom commands (and in MULTI), eviction counts and times in INFO,
LRU and LFU choosing their victims, evictions logged as DELs. The shapes follow
Redis's own tests/unit/maxmemory.tcl. Runs against Redis 7 too; the longset and
counter cases are feedkv's."""

import random
import time

import pytest
import redis

from conftest import is_real_redis, wait_until

POLICIES = ["allkeys-random", "allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu",
            "volatile-random", "volatile-ttl"]
OOM = "OOM command not allowed when used memory > 'maxmemory'."


def used(r):
    return r.info("memory")["used_memory"]


def set_limit(r, extra, policy):
    """A limit `extra` bytes above what the server uses now."""
    r.config_set("maxmemory", 0)
    r.config_set("maxmemory-policy", policy)
    limit = used(r) + extra
    r.config_set("maxmemory", limit)
    return limit


def random_key():
    return "key:%d" % random.randrange(10**12)


def fill_until_near(r, limit, write):
    """Writes keys until used memory is within 4 KB of the limit; returns how many."""
    n = 0
    while True:
        write()
        n += 1
        if used(r) + 4096 > limit:
            assert n > 10
            return n


@pytest.mark.parametrize("policy", POLICIES)
def test_the_limit_holds_under_every_policy(r, policy):
    limit = set_limit(r, 100 * 1024, policy)
    n = fill_until_near(r, limit, lambda: r.setex(random_key(), 10000, "x"))
    # As many keys again: still under the limit (plus one command's worth).
    for _ in range(n):
        r.setex(random_key(), 10000, "x")
    assert used(r) < limit + 4096
    assert r.info("stats")["evicted_keys"] > 0


@pytest.mark.parametrize("policy", POLICIES)
def test_only_allkeys_policies_evict_keys_without_a_ttl(r, policy):
    limit = set_limit(r, 100 * 1024, policy)
    n = fill_until_near(r, limit, lambda: r.set(random_key(), "x"))
    errors = []
    for _ in range(n):
        try:
            r.set(random_key(), "x")
        except redis.ResponseError as e:
            errors.append(str(e))
    if policy.startswith("allkeys-"):
        assert errors == []
        assert used(r) < limit + 4096
    else:
        assert errors and errors[0] == OOM


@pytest.mark.parametrize("policy", [p for p in POLICIES if p.startswith("volatile-")])
def test_volatile_policies_remove_only_keys_with_a_ttl(r, policy):
    limit = set_limit(r, 100 * 1024, policy)
    plain = []

    def write():
        k = random_key()
        if random.random() < 0.5:
            r.set(k, "x")
            plain.append(k)
        else:
            r.setex(k, 10000, "x")
    n = fill_until_near(r, limit, write)
    for _ in range(n):
        r.setex(random_key(), 10000, "x")
    assert used(r) < limit + 4096
    assert r.info("stats")["evicted_keys"] > 0
    # Every key without a TTL is still there.
    assert sum(r.exists(k) for k in plain) == len(plain)


def test_noeviction_refuses_writes_but_serves_reads_and_deletes(r):
    limit = set_limit(r, 200 * 1024, "noeviction")
    keys = []
    with pytest.raises(redis.ResponseError) as err:
        for i in range(100000):
            r.set("k%d" % i, "v" * 100)
            keys.append("k%d" % i)
    assert str(err.value) == OOM
    assert used(r) < limit + 4096
    assert r.info("stats")["evicted_keys"] == 0
    # Reads and non-deny-oom writes still run.
    assert r.get(keys[0]) == "v" * 100
    assert r.dbsize() == len(keys)
    assert r.delete(*keys[:len(keys) // 2]) == len(keys) // 2
    r.flushall()
    assert r.set("again", "v") is True
    # The time spent over the limit is counted while it lasts.
    r.config_set("maxmemory", 1)
    time.sleep(0.05)
    stats = r.info("stats")
    assert stats["current_eviction_exceeded_time"] >= 40
    assert stats["total_eviction_exceeded_time"] >= stats["current_eviction_exceeded_time"]
    r.config_set("maxmemory", 10**10)
    r.ping()  # the stretch ends at the next command under the limit
    assert r.info("stats")["current_eviction_exceeded_time"] == 0


def test_a_transaction_over_the_limit_is_refused_and_aborted(r):
    set_limit(r, 100 * 1024, "noeviction")
    r.config_set("maxmemory", 1)
    # Out of memory: even a read is not queued, and EXEC aborts.
    c = r.connection_pool.get_connection("MULTI")
    try:
        c.send_command("MULTI")
        assert c.read_response() in (b"OK", "OK")
        c.send_command("GET", "x")
        with pytest.raises(redis.ResponseError, match="OOM"):
            c.read_response()
        c.send_command("EXEC")
        with pytest.raises(redis.exceptions.ExecAbortError):
            c.read_response()
        # DISCARD and EXEC of a read-only queue still run over the limit.
        r.config_set("maxmemory", 0)
        c.send_command("MULTI")
        c.read_response()
        c.send_command("GET", "x")
        assert c.read_response() in (b"QUEUED", "QUEUED")
        r.config_set("maxmemory", 1)
        c.send_command("EXEC")
        assert c.read_response() == [None]
        # A queued deny-oom command makes EXEC itself refused.
        r.config_set("maxmemory", 0)
        c.send_command("MULTI")
        c.read_response()
        c.send_command("SET", "x", "1")
        c.read_response()
        r.config_set("maxmemory", 1)
        c.send_command("EXEC")
        with pytest.raises(redis.exceptions.ExecAbortError) as err:
            c.read_response()
        assert str(err.value).endswith("Transaction discarded because of: " + OOM)
        # ... and the transaction is over.
        c.send_command("GET", "x")
        assert c.read_response() is None
        assert r.exists("x") == 0
    finally:
        r.connection_pool.release(c)
        r.config_set("maxmemory", 0)


def test_lru_evicts_the_keys_not_used_lately(r):
    r.config_set("maxmemory", 0)
    old = ["old:%d" % i for i in range(400)]
    for k in old:
        r.set(k, "v" * 1000)
    time.sleep(2.2)  # the LRU clock ticks in seconds
    touched = old[:200]
    for k in touched:
        r.get(k)
    limit = set_limit(r, 10 * 1024, "allkeys-lru")
    # About 100 KB more than the limit allows: some hundred victims, fewer than
    # the 200 keys left idle.
    for i in range(100):
        r.set("new:%d" % i, "v" * 1000)
    assert used(r) < limit + 4096
    evicted = r.info("stats")["evicted_keys"]
    assert 50 < evicted < 200
    # Sampled LRU with a pool: nearly every victim comes from the idle half.
    kept_touched = sum(r.exists(k) for k in touched)
    assert kept_touched >= 190, (kept_touched, evicted)


def test_lfu_keeps_the_keys_used_most(r):
    r.config_set("maxmemory", 0)
    r.config_set("maxmemory-policy", "allkeys-lfu")
    keys = ["k:%d" % i for i in range(400)]
    for k in keys:
        r.set(k, "v" * 1000)
    hot = keys[:100]
    p = r.pipeline(transaction=False)
    for _ in range(60):
        for k in hot:
            p.get(k)
    p.execute()
    assert min(r.object("freq", k) for k in hot) > max(r.object("freq", k) for k in keys[300:])
    set_limit(r, 10 * 1024, "allkeys-lfu")
    for i in range(100):
        r.set("new:%d" % i, "v" * 1000)
    evicted = r.info("stats")["evicted_keys"]
    assert 50 < evicted < 300
    assert sum(r.exists(k) for k in hot) >= 95, evicted


def test_evictions_are_logged_as_deletes(start_server):
    srv = start_server("--appendonly", "yes", "--appendfsync", "always", name="aof")
    r = srv.client()
    limit = set_limit(r, 300 * 1024, "allkeys-random")
    for i in range(3000):
        r.set("k%d" % i, "v" * 100)
    assert r.info("stats")["evicted_keys"] > 0
    assert used(r) < limit + 4096
    survivors = set(r.keys("*"))
    srv.stop()
    srv.start()
    r = srv.client()
    assert wait_until(lambda: r.info("persistence")["loading"] == 0)
    assert set(r.keys("*")) == survivors


@pytest.mark.skipif(is_real_redis(), reason="longsets are feedkv's")
def test_longsets_are_evicted_like_any_key(r):
    limit = set_limit(r, 200 * 1024, "allkeys-lru")
    for i in range(400):
        r.execute_command("LSADD", "follows:%d" % i, *range(i * 100, i * 100 + 100))
    assert used(r) < limit + 4096
    assert r.info("stats")["evicted_keys"] > 0
    assert r.dbsize() < 400


@pytest.mark.skipif(is_real_redis(), reason="counter spaces are feedkv's")
def test_counter_spaces_count_against_the_limit_and_are_never_evicted(r):
    r.execute_command("COUNTER.CREATE", "likes", "likes:32")
    r.set("plain", "x")
    before = used(r)
    for start in range(1, 200001, 1000):
        p = r.pipeline(transaction=False)
        for i in range(start, start + 1000):
            p.execute_command("COUNTER.INCRBY", "likes", i, "likes", 1)
        p.execute()
    assert used(r) > before + 1_000_000  # the touched table pages count
    r.config_set("maxmemory-policy", "allkeys-lru")
    r.config_set("maxmemory", used(r) - 100 * 1024)
    # The only key goes; the counters stay, and a new key is refused.
    with pytest.raises(redis.ResponseError) as err:
        r.set("more", "x")
    assert str(err.value) == OOM
    assert r.exists("plain") == 0
    assert r.execute_command("COUNTER.GET", "likes", 123456, "likes") == [1]
    r.config_set("maxmemory", 0)


def test_info_memory_carries_the_allocator_figures(r):
    for i in range(2000):
        r.set("k%d" % i, "v" * 300)
    m = r.info("memory")
    for field in ("allocator_allocated", "allocator_active", "allocator_resident",
                  "allocator_frag_ratio", "allocator_frag_bytes", "allocator_rss_ratio",
                  "rss_overhead_ratio", "mem_fragmentation_ratio", "mem_fragmentation_bytes",
                  "mem_not_counted_for_evict", "mem_clients_normal", "used_memory_dataset_perc"):
        assert field in m, field
    assert m["allocator_allocated"] > 600_000  # the 2,000 values at least
    assert m["allocator_active"] >= m["allocator_allocated"]
    assert m["mem_fragmentation_ratio"] > 0
    if not is_real_redis():  # Redis's figures come from its cron, a moment old
        assert m["mem_fragmentation_ratio"] == pytest.approx(m["used_memory_rss"] / m["used_memory"],
                                                             abs=0.02)
    assert m["mem_allocator"] == "libc" or m["mem_allocator"].startswith("jemalloc-")
    report = r.memory_malloc_stats()
    if m["mem_allocator"] == "libc":
        assert report == "Stats not supported for the current allocator"
    else:
        assert "jemalloc statistics" in report
    assert r.memory_purge() is True
