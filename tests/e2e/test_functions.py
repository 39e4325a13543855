"""Functions (FUNCTION LOAD, FCALL), side by side with Redis 7.

The transcript runs on feedkv and on Redis 7 and both must reply the same:
library metadata and its errors, redis.register_function in both forms and its
errors, the load-time API (no redis.call while loading, read-only globals),
FCALL / FCALL_RO with keys and arguments, function flags, errors with their
"script: <function>, on @user_function:<line>." suffix, FUNCTION LIST /
DELETE / FLUSH / STATS / DUMP / RESTORE. Then: libraries survive a restart
(AOF and snapshot), reach a replica, SCRIPT FLUSH keeps them, and a busy
function answers others -BUSY until FUNCTION KILL.
"""

import threading
import time

import pytest
import redis

from conftest import RawConn, RespError, is_real_redis
from persist_util import Server, wait_until


def lib(name, body):
    return f"#!lua name={name}\n{body}"


TRANSCRIPT = [
    ("FUNCTION", "LOAD", "return 1"),
    ("FUNCTION", "LOAD", "#!lua\nreturn 1"),
    ("FUNCTION", "LOAD", "#!lua name=x-y\nreturn 1"),
    ("FUNCTION", "LOAD", "#!lua name=lib1 foo=bar\nreturn 1"),
    ("FUNCTION", "LOAD", "#!lua name=a name=b\nreturn 1"),
    ("FUNCTION", "LOAD", "#!js name=lib1\nreturn 1"),
    ("FUNCTION", "LOAD", "#!lua name=lib1"),
    ("FUNCTION", "LOAD", lib("lib1", "return 1")),
    ("FUNCTION", "LOAD", lib("lib1", "redis.register_function('f1', function(keys, args) return args[1] end)")),
    ("FUNCTION", "LOAD", lib("lib1", "redis.register_function('f1', function(keys, args) return 1 end)")),
    ("FUNCTION", "LOAD", lib("lib2", "redis.register_function('f1', function(keys, args) return 1 end)")),
    ("FUNCTION", "LOAD", lib("lib2", "redis.call('set','x','y')")),
    ("FUNCTION", "LOAD", lib("lib2", "redis.register_function{function_name='f2', callback=function(keys, args) "
                                     "return redis.call('set', keys[1], args[1]) end, flags={'no-writes'}, "
                                     "description='desc'}")),
    ("FCALL", "f2", "1", "k", "v"),
    ("FCALL_RO", "f1", "0", "a"),
    ("FCALL", "f1", "0", "hello"),
    ("FCALL", "nosuch", "0"),
    ("FCALL", "f1", "2", "k"),
    ("FCALL", "f1", "-1"),
    ("FCALL", "f1", "x"),
    ("FUNCTION", "LIST"),
    ("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "lib1"),
    ("FUNCTION", "LIST", "LIBRARYNAME", "lib*"),
    ("FUNCTION", "LIST", "LIBRARYNAME", "nomatch"),
    ("FUNCTION", "LIST", "bogus"),
    ("FUNCTION", "LIST", "LIBRARYNAME"),
    ("FUNCTION", "LIST", "WITHCODE", "WITHCODE"),
    ("FUNCTION", "STATS"),
    ("FUNCTION", "DELETE", "nosuch"),
    ("FUNCTION", "DELETE"),
    ("FUNCTION", "LOAD", lib("lib3", "x = 1")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function('bad-name', function() end)")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function('f3', function() end, 'x')")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function{function_name='f3', callback=function() end, "
                                     "flags={'bogus'}}")),
    ("FUNCTION", "LOAD", lib("lib3", "syntax error here")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function('g', function() return 1 end)\n"
                                     "redis.register_function('g', function() return 1 end)")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function('g', 5)")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function{function_name='g', callback=function() end, bogus=1}")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function{callback=function() end}")),
    ("FUNCTION", "LOAD", lib("lib3", "redis.register_function{function_name='g', callback=5}")),
    ("FUNCTION", "LOAD", lib("lib3", "return redis.sha1hex('x')")),
    ("FUNCTION", "LOAD", lib("lib3", "while true do end")),
    ("FUNCTION", "LOAD", lib("lib6", "redis.register_function('h', function(keys, args) "
                                     "return redis.call('get', keys[1]) end)")),
    ("SET", "k", "value"),
    ("FCALL", "h", "1", "k"),
    ("FCALL_RO", "h", "1", "k"),
    ("FUNCTION", "LOAD", lib("lib7", "redis.register_function{function_name='ro', callback=function(keys, args) "
                                     "return redis.call('get', keys[1]) end, flags={'no-writes', 'allow-oom'}}")),
    ("FCALL_RO", "ro", "1", "k"),
    ("FUNCTION", "LOAD", lib("lib8", "redis.register_function('e', function(keys, args) error('boom') end)\n"
                                     "redis.register_function('v', function(keys, args) return {KEYS, ARGV} end)\n"
                                     "redis.register_function('w', function(keys, args) "
                                     "return redis.call('incr', keys[1]) end)\n"
                                     "redis.register_function('p', function(keys, args) "
                                     "return redis.pcall('incr', 'k') end)")),
    ("FCALL", "e", "0"),
    ("FCALL", "v", "0"),
    ("FCALL", "w", "1", "counter"),
    ("FCALL", "p", "0"),
    ("FUNCTION", "LOAD", lib("lib9", "local x = redis.log(redis.LOG_WARNING, 'loading')\n"
                                     "redis.register_function('l', function() return redis.REDIS_VERSION_NUM ~= nil end)")),
    ("FCALL", "l", "0"),
    ("FUNCTION", "LOAD", "REPLACE", lib("lib9", "redis.register_function('l2', function() return 2 end)")),
    ("FCALL", "l", "0"),
    ("FCALL", "l2", "0"),
    ("FUNCTION", "LOAD", "REPLACE", lib("lib9", "redis.register_function('h', function() return 2 end)")),
    ("FUNCTION", "LOAD", "BOGUS", lib("lib9", "redis.register_function('h', function() return 2 end)")),
    ("FUNCTION", "LOAD", "REPLACE"),
    ("FUNCTION", "DELETE", "lib9"),
    ("FCALL", "l2", "0"),
    ("FUNCTION", "RESTORE", "bad"),
    ("FUNCTION", "RESTORE", "bad", "BOGUS"),
    ("FUNCTION", "FLUSH", "BOGUS"),
    ("FUNCTION", "STATS"),
    ("FUNCTION", "KILL"),
    ("FUNCTION", "HELP"),
    ("FUNCTION", "NOSUCH"),
    ("FUNCTION", "FLUSH"),
    ("FUNCTION", "LIST"),
    ("FCALL", "h", "1", "k"),
]


def run_transcript(srv):
    c = RawConn(srv.port)
    out = []
    for cmd in TRANSCRIPT:
        reply = c.cmd(*cmd)
        if cmd[:2] == ("FUNCTION", "LIST") and isinstance(reply, list):
            reply = sorted(reply, key=lambda lib: lib[1])  # Redis lists in its dict's order
        out.append((cmd, reply))
    c.close()
    return out


def test_transcript_matches_redis(server, redis7_server):
    ours, theirs = run_transcript(server), run_transcript(redis7_server)
    for (cmd, a), (_, b) in zip(ours, theirs):
        assert a == b, f"{cmd!r}: feedkv {a!r} != redis {b!r}"


def test_dump_and_restore_move_libraries_between_redis_and_feedkv(server, redis7_server):
    theirs, ours = RawConn(redis7_server.port), RawConn(server.port)
    code = lib("moved", "redis.register_function('m', function(keys, args) return 'moved ' .. args[1] end)\n"
                        + "-- padding so that Redis compresses the string " * 4)
    assert theirs.cmd("FUNCTION", "LOAD", code) == b"moved"
    payload = theirs.cmd("FUNCTION", "DUMP")
    assert ours.cmd("FUNCTION", "RESTORE", payload) == "OK"
    assert ours.cmd("FCALL", "m", "0", "x") == b"moved x"
    assert ours.cmd("FUNCTION", "RESTORE", payload) == RespError("ERR Library moved already exists")  # RESTORE's text (Redis's libraryJoin), unlike LOAD's
    assert ours.cmd("FUNCTION", "RESTORE", payload, "REPLACE") == "OK"
    assert ours.cmd("FUNCTION", "LOAD", lib("other", "redis.register_function('o', function() return 1 end)")) == b"other"
    assert ours.cmd("FUNCTION", "RESTORE", payload, "FLUSH") == "OK"
    assert ours.cmd("FCALL", "o", "0") == RespError("ERR Function not found")
    # And back: feedkv's dump restores on Redis.
    assert theirs.cmd("FUNCTION", "FLUSH") == "OK"
    assert theirs.cmd("FUNCTION", "RESTORE", ours.cmd("FUNCTION", "DUMP")) == "OK"
    assert theirs.cmd("FCALL", "m", "0", "y") == b"moved y"


@pytest.mark.skipif(is_real_redis(), reason="feedkv's persistence paths")
def test_libraries_survive_restarts_and_reach_replicas(tmp_path):
    master = Server(tmp_path / "master").start()
    replica = None
    try:
        mc = master.client()
        mc.execute_command("FUNCTION", "LOAD", lib("pers", "redis.register_function('inc', function(keys, args) "
                                                           "return redis.call('incrby', keys[1], args[1]) end)"))
        assert mc.execute_command("FCALL", "inc", "1", "n", "5") == 5
        # The AOF replays FUNCTION LOAD, then the FCALL's effect.
        master.stop()
        master.start()
        mc = master.client()
        assert mc.execute_command("FCALL", "inc", "1", "n", "1") == 7 - 1
        # A snapshot carries the library (DEBUG RELOAD loads only the snapshot).
        assert mc.execute_command("DEBUG", "RELOAD")
        assert mc.execute_command("FCALL", "inc", "1", "n", "1") == 7
        # SCRIPT FLUSH starts a new interpreter; the libraries come back into it.
        assert mc.execute_command("SCRIPT", "FLUSH")
        assert mc.execute_command("FCALL", "inc", "1", "n", "1") == 8
        replica = Server(tmp_path / "replica").start("--replicaof", "127.0.0.1", str(master.port))
        rc = replica.client()
        wait_until(lambda: rc.info("replication")["master_link_status"] == "up", what="the link")
        mc.execute_command("FUNCTION", "LOAD", lib("later", "redis.register_function{function_name='get2', "
                                                            "callback=function(keys) return redis.call('get', keys[1]) end, "
                                                            "flags={'no-writes'}}"))
        wait_until(lambda: len(rc.execute_command("FUNCTION", "LIST")) == 2, what="the libraries on the replica")
        wait_until(lambda: rc.get("n") == "8", what="n on the replica")
        assert rc.execute_command("FCALL_RO", "get2", "1", "n") == "8"
    finally:
        master.stop()
        if replica is not None:
            replica.stop()


def test_a_busy_function_answers_busy_until_function_kill(server):
    c = server.client()
    c.config_set("busy-reply-threshold", "100")
    c.execute_command("FUNCTION", "LOAD", lib("slow", "redis.register_function{function_name='spin', "
                                                       "callback=function() while true do end end, flags={'no-writes'}}"))
    result = {}

    def run():
        try:
            server.client().execute_command("FCALL", "spin", "0")
        except redis.exceptions.ResponseError as e:
            result["error"] = str(e)

    t = threading.Thread(target=run)
    t.start()
    other = RawConn(server.port)
    deadline = time.monotonic() + 10
    while True:
        reply = other.cmd("PING")
        if isinstance(reply, RespError):
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert reply == RespError("BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
    assert other.cmd("SCRIPT", "KILL") == reply
    stats = other.cmd("FUNCTION", "STATS")
    assert stats[1][1] == b"spin" and stats[1][3] == [b"FCALL", b"spin", b"0"]
    assert other.cmd("FUNCTION", "KILL") == "OK"
    t.join(10)
    assert "killed by user" in result["error"]
    assert other.cmd("PING") == "PONG"


def test_info_counts_libraries_and_functions(server):
    c = server.client()
    c.execute_command("FUNCTION", "LOAD", lib("counted", "redis.register_function('a', function() return 1 end)\n"
                                                         "redis.register_function('b', function() return 2 end)"))
    mem = c.info("memory")
    assert mem["number_of_libraries"] == 1 and mem["number_of_functions"] == 2
    assert mem["used_memory_functions"] > 0
    c.execute_command("FUNCTION", "FLUSH")
    assert c.info("memory")["number_of_functions"] == 0


# ---------------------------------------------------------------------------
# Declared flags gate a script before it runs (Redis's getCommandFlags)
# ---------------------------------------------------------------------------

FLAGGED_LIB = lib("flagged", """
redis.register_function('writer', function() return redis.call('set', 'x', '1') end)
redis.register_function{function_name='reader', callback=function() return 'hello' end, flags={'no-writes'}}
redis.register_function{function_name='stale_ok', callback=function() return 'hello' end,
                        flags={'allow-stale', 'no-writes'}}
redis.register_function{function_name='stale_get', callback=function() return redis.call('get', 'x') end,
                        flags={'allow-stale', 'no-writes'}}
redis.register_function{function_name='stale_info', callback=function() return redis.call('info', 'server') end,
                        flags={'allow-stale', 'no-writes'}}
""")


def error_text(fn):
    try:
        fn()
    except redis.ResponseError as e:
        return str(e)
    raise AssertionError("no error")


def test_a_read_only_replica_refuses_scripts_that_declare_writes(server, start_server):
    master = server.client()
    master.function_load(FLAGGED_LIB)
    replica_srv = start_server("--replicaof", "127.0.0.1", str(server.port), name="replica")
    replica = replica_srv.client()
    wait_until(lambda: replica.info("replication")["master_link_status"] == "up", timeout=20,
               what="the replica link")
    wait_until(lambda: len(replica.function_list()) == 1, timeout=20, what="the library on the replica")
    readonly = "You can't write against a read only replica."
    assert error_text(lambda: replica.fcall("writer", 0)) == readonly
    assert error_text(lambda: replica.eval("#!lua\nreturn redis.call('set','y','1')", 0)) == readonly
    # Without a shebang the script runs and its write fails inside it.
    assert error_text(lambda: replica.eval("return redis.call('set','y','1')", 0)).startswith(readonly)
    assert replica.fcall("reader", 0) in ("hello", b"hello")
    assert replica.eval("#!lua flags=no-writes\nreturn 7", 0) == 7


def test_a_stale_replica_runs_only_scripts_that_allow_it(server):
    r = server.client()
    r.function_load(FLAGGED_LIB)
    r.config_set("replica-serve-stale-data", "no")
    r.replicaof("127.0.0.1", "1")
    try:
        assert error_text(lambda: r.fcall("reader", 0)).startswith("MASTERDOWN ")
        assert r.fcall("stale_ok", 0) in ("hello", b"hello")
        assert "Can not execute the command on a stale replica" in error_text(lambda: r.fcall("stale_get", 0))
        info = r.fcall("stale_info", 0)
        assert b"redis_version" in (info if isinstance(info, bytes) else info.encode())
    finally:
        r.replicaof("no", "one")
        r.config_set("replica-serve-stale-data", "yes")
