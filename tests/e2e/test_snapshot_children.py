"""What Redis's own tests observe of background saves, and feedkv does the same:
rdb-key-save-delay keeps a BGSAVE child running, the keyspace table does not
grow while a child runs (DEBUG HTSTATS shows it), BGREWRITEAOF inside EXEC is
scheduled rather than started, and FLUSHALL with save points saves the empty
dataset (the change count starts again from 0). Each test also runs against
Redis 7 (FEEDKV_SERVER=/usr/bin/redis-server)."""

import re
import subprocess

from conftest import is_real_redis, wait_until


def table_sizes(r, db):
    stats = r.execute_command("DEBUG", "HTSTATS", db)
    if isinstance(stats, bytes):
        stats = stats.decode()
    return [int(x) for x in re.findall(r"table size: (\d+)", stats.split("[Expires HT]")[0])]


def child_pids(pid):
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def test_rdb_key_save_delay_keeps_a_bgsave_running(server):
    r = server.client()
    r.config_set("save", "")
    r.mset({f"k{i}": "v" for i in range(20)})
    r.config_set("rdb-key-save-delay", "1000000")
    assert r.bgsave() in (True, b"Background saving started", "Background saving started")
    assert wait_until(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1, timeout=5)
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1
    # Still running a second later: 20 keys take 20 s at 1 s each.
    assert not wait_until(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=1)
    for pid in child_pids(server.proc.pid):
        subprocess.run(["kill", "-9", str(pid)])
    assert wait_until(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=10)
    assert r.info("persistence")["rdb_last_bgsave_status"] == "err"


def test_the_keyspace_table_does_not_grow_while_a_child_saves(server):
    """Redis's "Don't rehash if redis has child process" (unit/other)."""
    r = server.client()
    r.config_set("save", "")
    pipe = r.pipeline(transaction=False)
    for i in range(4096):
        pipe.set(f"key:{i}", "v")
    pipe.execute()
    assert max(table_sizes(r, 0)) == 4096
    r.config_set("rdb-key-save-delay", "1000000")
    r.bgsave()
    assert wait_until(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1, timeout=5)
    r.mset({"k1": "v1", "k2": "v2"})
    assert 8192 not in table_sizes(r, 0)
    for pid in child_pids(server.proc.pid):
        subprocess.run(["kill", "-9", str(pid)])
    assert wait_until(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=10)
    r.set("k3", "v3")
    assert 8192 in table_sizes(r, 0)


def test_htstats_of_an_empty_database_and_a_bad_index(server):
    r = server.client()
    text = r.execute_command("DEBUG", "HTSTATS", 3)
    text = text.decode() if isinstance(text, bytes) else text
    assert text.startswith("[Dictionary HT]\nHash table 0 stats (main hash table):\n"
                           "No stats available for empty dictionaries\n[Expires HT]\n")
    try:
        r.execute_command("DEBUG", "HTSTATS", 99999)
        raise AssertionError("no error")
    except Exception as e:  # noqa: BLE001 - the server's error text is the point
        assert str(e) == "Out of range database"


def test_bgrewriteaof_inside_exec_is_scheduled(server, raw):
    r = server.client()
    forks = r.info("stats")["total_forks"]
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "foo", "bar") == "QUEUED"
    assert c.cmd("BGREWRITEAOF") == "QUEUED"
    assert c.cmd("EXEC") == ["OK", "Background append only file rewriting scheduled"]
    assert wait_until(lambda: r.info("stats")["total_forks"] > forks, timeout=10)
    assert wait_until(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
                      and r.info("persistence")["aof_rewrite_scheduled"] == 0, timeout=20)


def test_flushall_with_save_points_starts_the_change_count_again(server):
    r = server.client()
    r.config_set("save", "3600 1 300 100 60 10000")
    r.set("key", "value")
    assert r.info("persistence")["rdb_changes_since_last_save"] > 0
    r.flushall()
    assert r.info("persistence")["rdb_changes_since_last_save"] == 0
    # The empty dataset is what a restart would load.
    assert wait_until(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=10)
    r.config_set("save", "")
    server.stop()
    server.start()
    assert server.client().dbsize() == 0
