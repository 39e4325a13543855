"""CONFIG SET appendonly yes at runtime, as Redis 7's startAppendOnly: the new
log's base is a snapshot written by a child in the background (the command
thread keeps serving), INFO shows the rewrite, and a crash before that base is
durable restarts from dump.rdb with the new log dropped, as Redis ignores an
AOF whose first rewrite never finished. feedkv-only where files are read."""

import os
import time

from persist_util import Server, kill_all, wait_until


def rewrite_done(c):
    i = c.info("persistence")
    return i["aof_rewrite_in_progress"] == 0 and i["aof_rewrite_scheduled"] == 0


def teardown_function(_):
    assert not kill_all()


def test_turning_the_aof_on_writes_its_base_in_the_background(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    c.mset({f"k{i}": str(i) for i in range(40)})
    forks = c.info("stats")["total_forks"]
    # 25 ms per key: the base takes about a second to write.
    c.config_set("rdb-key-save-delay", "25000")
    t0 = time.monotonic()
    assert c.config_set("appendonly", "yes")
    assert c.ping()
    info = c.info("persistence")
    assert time.monotonic() - t0 < 0.5, "CONFIG SET appendonly yes waited for the snapshot"
    assert info["aof_enabled"] == 1
    assert info["aof_rewrite_in_progress"] == 1
    assert c.info("stats")["total_forks"] == forks + 1
    c.set("during", "1")
    wait_until(lambda: rewrite_done(c), timeout=30, what="the base snapshot")
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    c.set("after", "2")
    manifest = open(os.path.join(srv.aof_dir, "appendonly.aof.manifest")).read()
    assert "base pending" not in manifest
    srv.kill9()
    srv.start("--appendonly", "yes")
    c = srv.client()
    assert c.dbsize() == 42
    assert c.get("k39") == "39" and c.get("during") == "1" and c.get("after") == "2"


def test_a_crash_before_the_base_is_durable_restarts_from_the_snapshot(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    c.mset({f"saved{i}": "v" for i in range(10)})
    assert c.save()
    c.set("unsaved", "v")
    c.config_set("rdb-key-save-delay", "1000000")  # the base never finishes
    assert c.config_set("appendonly", "yes")
    wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 1, what="the base rewrite")
    c.set("logged-without-base", "v")
    manifest = open(os.path.join(srv.aof_dir, "appendonly.aof.manifest")).read()
    assert "base pending" in manifest
    srv.kill9()
    srv.start("--appendonly", "yes")
    c = srv.client()
    assert "its base snapshot never finished" in srv.log_text()
    assert sorted(c.keys()) == sorted(f"saved{i}" for i in range(10))
    # The new log started at this start-up is whole: it survives a crash.
    c.set("new", "1")
    srv.kill9()
    srv.start("--appendonly", "yes")
    assert srv.client().get("new") == "1"


def test_turning_the_aof_off_stops_its_rewrite(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    c.mset({f"k{i}": "v" for i in range(20)})
    c.config_set("rdb-key-save-delay", "1000000")
    assert c.config_set("appendonly", "yes")
    wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 1, what="the base rewrite")
    assert c.config_set("appendonly", "no")
    wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0, what="the rewrite to stop")
    assert c.info("persistence")["aof_enabled"] == 0
    assert "Killing running AOF rewrite child" in srv.log_text()
    assert c.dbsize() == 20


def test_a_save_begun_under_an_earlier_log_is_not_the_new_logs_base(tmp_path):
    """BGSAVE runs while the AOF is turned off and on again: its snapshot names
    the old log, so when it finishes the new log is still waiting for its own
    base (the manifest stays marked), and a crash then loads that snapshot."""
    srv = Server(tmp_path / "data", appendonly=True)
    srv.start()
    c = srv.client()
    c.mset({f"k{i}": "v" for i in range(20)})
    c.config_set("rdb-key-save-delay", "50000")  # about a second per snapshot
    assert c.bgsave()
    wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 1, what="the BGSAVE")
    assert c.config_set("appendonly", "no")
    assert c.config_set("appendonly", "yes")
    c.set("after-toggle", "1")
    # The BGSAVE ends; the new log's base rewrite (scheduled behind it) starts.
    wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 1, timeout=30,
               what="the new log's base rewrite")
    manifest = open(os.path.join(srv.aof_dir, "appendonly.aof.manifest")).read()
    assert "base pending" in manifest, "the old log's snapshot was taken for the new log's base"
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.dbsize() == 20 and c.get("after-toggle") is None
