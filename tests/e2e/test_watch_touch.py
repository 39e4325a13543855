"""Which commands invalidate a WATCH: exactly those that really changed the
watched key, as Redis 7.0 signals them (signalModifiedKey only on a change;
FLUSHDB/FLUSHALL/SWAPDB only for watched keys that exist in a database they
empty or fill).

Each case: set up data, WATCH one key from one client, run a command from
another client, then MULTI / PING / EXEC: nil means the watch was invalidated.
The expectations were checked against redis-server 7.0.15
(FEEDKV_SERVER=/usr/bin/redis-server).
"""

import time

import pytest

from conftest import is_real_redis

# (id, setup commands (db 0), watched key, watcher's db, command(s) run by the
#  other client in db 0, whether EXEC is aborted)
CASES = [
    # strings
    ("set-existing", [("SET", "k", "v")], "k", 0, [("SET", "k", "v")], True),
    ("set-nx-existing", [("SET", "k", "v")], "k", 0, [("SET", "k", "w", "NX")], False),
    ("set-xx-missing", [], "k", 0, [("SET", "k", "w", "XX")], False),
    ("setnx-existing", [("SET", "k", "v")], "k", 0, [("SETNX", "k", "w")], False),
    ("msetnx-one-exists", [("SET", "k", "v")], "o", 0, [("MSETNX", "o", "1", "k", "2")], False),
    ("mset-watched-second", [], "b", 0, [("MSET", "a", "1", "b", "2")], True),
    ("getdel-missing", [], "k", 0, [("GETDEL", "k")], False),
    ("getdel-existing", [("SET", "k", "v")], "k", 0, [("GETDEL", "k")], True),
    ("getex-no-option", [("SET", "k", "v")], "k", 0, [("GETEX", "k")], False),
    ("getex-persist-no-ttl", [("SET", "k", "v")], "k", 0, [("GETEX", "k", "PERSIST")], False),
    ("getex-ex", [("SET", "k", "v")], "k", 0, [("GETEX", "k", "EX", "100")], True),
    ("append-empty", [("SET", "k", "v")], "k", 0, [("APPEND", "k", "")], True),
    ("setrange-empty-existing", [("SET", "k", "v")], "k", 0, [("SETRANGE", "k", "0", "")], False),
    ("setrange-empty-missing", [], "k", 0, [("SETRANGE", "k", "0", "")], False),
    ("incrby-zero", [("SET", "k", "1")], "k", 0, [("INCRBY", "k", "0")], True),
    ("get", [("SET", "k", "v")], "k", 0, [("GET", "k")], False),
    # keyspace
    ("del-missing", [], "k", 0, [("DEL", "k")], False),
    ("del-missing-among-existing", [("SET", "o", "v")], "k", 0, [("DEL", "o", "k")], False),
    ("del-existing-among-missing", [("SET", "k", "v")], "k", 0, [("DEL", "o", "k")], True),
    ("unlink-missing", [("SET", "o", "v")], "k", 0, [("UNLINK", "k", "o")], False),
    ("expire-missing", [], "k", 0, [("EXPIRE", "k", "100")], False),
    ("expire-nx-has-ttl", [("SET", "k", "v", "EX", "50")], "k", 0,
     [("EXPIRE", "k", "100", "NX")], False),
    ("expire-existing", [("SET", "k", "v")], "k", 0, [("EXPIRE", "k", "100")], True),
    ("expire-past", [("SET", "k", "v")], "k", 0, [("PEXPIRE", "k", "-1")], True),
    ("persist-no-ttl", [("SET", "k", "v")], "k", 0, [("PERSIST", "k")], False),
    ("persist-ttl", [("SET", "k", "v", "EX", "50")], "k", 0, [("PERSIST", "k")], True),
    ("rename-same", [("SET", "k", "v")], "k", 0, [("RENAME", "k", "k")], False),
    ("rename-watch-src", [("SET", "k", "v")], "k", 0, [("RENAME", "k", "d")], True),
    ("rename-watch-dst", [("SET", "k", "v")], "d", 0, [("RENAME", "k", "d")], True),
    ("renamenx-dst-exists-src", [("SET", "k", "v"), ("SET", "d", "v")], "k", 0,
     [("RENAMENX", "k", "d")], False),
    ("renamenx-dst-exists-dst", [("SET", "k", "v"), ("SET", "d", "v")], "d", 0,
     [("RENAMENX", "k", "d")], False),
    ("copy-watch-src", [("SET", "k", "v")], "k", 0, [("COPY", "k", "d")], False),
    ("copy-watch-dst", [("SET", "k", "v")], "d", 0, [("COPY", "k", "d")], True),
    ("copy-dst-exists", [("SET", "k", "v"), ("SET", "d", "v")], "d", 0, [("COPY", "k", "d")],
     False),
    ("copy-other-db", [("SET", "k", "v")], "k", 1, [("COPY", "k", "k", "DB", "1")], True),
    ("move-dst-exists", [("SET", "k", "v"), ("MOVE", "k", "1"), ("SET", "k", "w")], "k", 0,
     [("MOVE", "k", "1")], False),
    ("move-watch-dst-db", [("SET", "k", "v")], "k", 1, [("MOVE", "k", "1")], True),
    ("touch", [("SET", "k", "v")], "k", 0, [("TOUCH", "k")], False),
    # sets
    ("sadd-existing-member", [("SADD", "s", "m")], "s", 0, [("SADD", "s", "m")], False),
    ("sadd-new-member", [("SADD", "s", "m")], "s", 0, [("SADD", "s", "n")], True),
    ("srem-missing-member", [("SADD", "s", "m")], "s", 0, [("SREM", "s", "x")], False),
    ("srem-missing-key", [], "s", 0, [("SREM", "s", "x")], False),
    ("spop-missing", [], "s", 0, [("SPOP", "s")], False),
    ("spop-zero", [("SADD", "s", "m")], "s", 0, [("SPOP", "s", "0")], False),
    ("smove-same-key", [("SADD", "s", "m")], "s", 0, [("SMOVE", "s", "s", "m")], False),
    ("smove-not-member-src", [("SADD", "s", "m"), ("SADD", "d", "x")], "s", 0,
     [("SMOVE", "s", "d", "zz")], False),
    ("smove-not-member-dst", [("SADD", "s", "m"), ("SADD", "d", "x")], "d", 0,
     [("SMOVE", "s", "d", "zz")], False),
    ("smove-in-dst-src", [("SADD", "s", "m", "n"), ("SADD", "d", "m")], "s", 0,
     [("SMOVE", "s", "d", "m")], True),
    ("smove-in-dst-dst", [("SADD", "s", "m", "n"), ("SADD", "d", "m")], "d", 0,
     [("SMOVE", "s", "d", "m")], False),
    ("smove-new-dst", [("SADD", "s", "m", "n"), ("SADD", "d", "x")], "d", 0,
     [("SMOVE", "s", "d", "m")], True),
    ("sinterstore-watch-src", [("SADD", "a", "m"), ("SADD", "b", "m")], "a", 0,
     [("SINTERSTORE", "d", "a", "b")], False),
    ("sinterstore-watch-dst", [("SADD", "a", "m"), ("SADD", "b", "m")], "d", 0,
     [("SINTERSTORE", "d", "a", "b")], True),
    ("sinterstore-empty-dst-missing", [("SADD", "a", "m")], "d", 0,
     [("SINTERSTORE", "d", "a", "b")], False),
    ("sinterstore-empty-dst-exists", [("SADD", "a", "m"), ("SET", "d", "v")], "d", 0,
     [("SINTERSTORE", "d", "a", "b")], True),
    ("sunionstore-watch-src", [("SADD", "a", "m")], "a", 0, [("SUNIONSTORE", "d", "a", "b")],
     False),
    ("sdiffstore-watch-src", [("SADD", "a", "m")], "a", 0, [("SDIFFSTORE", "d", "a", "b")],
     False),
    ("sdiffstore-empty-dst-missing", [("SADD", "a", "m")], "d", 0,
     [("SDIFFSTORE", "d", "a", "a")], False),
    # whole databases
    ("flushdb-watched-missing", [("SET", "o", "v")], "k", 0, [("FLUSHDB",)], False),
    ("flushdb-watched-existing", [("SET", "k", "v")], "k", 0, [("FLUSHDB",)], True),
    ("flushdb-other-db", [("SET", "k", "v")], "k", 1, [("FLUSHDB",)], False),
    ("flushall-watched-missing", [("SET", "o", "v")], "k", 0, [("FLUSHALL",)], False),
    ("flushall-existing-db1", [("SET", "k", "v"), ("MOVE", "k", "1")], "k", 1, [("FLUSHALL",)],
     True),
    ("flushall-existing", [("SET", "k", "v")], "k", 0, [("FLUSHALL",)], True),
    ("swapdb-in-neither", [("SET", "o", "v")], "k", 0, [("SWAPDB", "0", "1")], False),
    ("swapdb-in-other", [("SET", "k", "v"), ("MOVE", "k", "1")], "k", 0, [("SWAPDB", "0", "1")],
     True),
    ("swapdb-in-this", [("SET", "k", "v")], "k", 0, [("SWAPDB", "0", "1")], True),
    ("swapdb-same-db", [("SET", "k", "v")], "k", 0, [("SWAPDB", "0", "0")], False),
    ("swapdb-unrelated-db", [("SET", "k", "v")], "k", 0, [("SWAPDB", "1", "2")], False),
]


@pytest.mark.parametrize("setup,key,db,action,aborted",
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_watch_invalidated_only_by_real_change(server, raw, setup, key, db, action, aborted):
    other = server.client()
    for cmd in setup:
        other.execute_command(*cmd)
    c = raw()
    if db:
        assert c.cmd("SELECT", str(db)) == "OK"
    assert c.cmd("WATCH", key) == "OK"
    for cmd in action:
        other.execute_command(*cmd)
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    reply = c.cmd("EXEC")
    assert (reply is None) == aborted, reply


def watch_then(server, raw, key, action):
    c = raw()
    assert c.cmd("WATCH", key) == "OK"
    action()
    c.cmd("MULTI")
    c.cmd("PING")
    return c.cmd("EXEC")


def test_watch_key_expiring_before_exec_aborts(server, raw):
    other = server.client()
    other.set("k", "v", px=150)
    # Nothing touches the key: it expires logically between WATCH and EXEC.
    assert watch_then(server, raw, "k", lambda: time.sleep(0.3)) is None


def test_watch_key_already_expired_is_like_missing(server, raw):
    other = server.client()
    other.set("k", "v", px=1)
    time.sleep(0.05)
    # Dropping an expired key (reading it, the active expiry, FLUSHDB) is no
    # logical change.
    assert watch_then(server, raw, "k", lambda: other.get("k")) == ["PONG"]
    other.set("k", "v", px=1)
    time.sleep(0.05)
    assert watch_then(server, raw, "k", lambda: other.flushdb()) == ["PONG"]
    other.set("k", "v", px=1)
    time.sleep(0.05)
    assert watch_then(server, raw, "k", lambda: other.set("k", "w")) is None
