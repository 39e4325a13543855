"""What introspection tools read: COMMAND GETKEYSANDFLAGS, COMMAND LIST
FILTERBY, ACL categories and key-spec flags in COMMAND INFO, CLUSTER without
cluster support, qbuf/qbuf-free in CLIENT LIST/INFO, OBJECT IDLETIME/FREQ
(and redis-cli --hotkeys, which reads them).

Tests that mirror Redis were checked against redis-server 7.0.15
(FEEDKV_SERVER=/usr/bin/redis-server).
"""

import shutil
import subprocess
import time

import pytest
import redis

from conftest import RespError, is_real_redis, wait_until

# full command -> [(key, [flags])], as Redis 7.0 answers COMMAND GETKEYSANDFLAGS.
KEYS_AND_FLAGS = {
    "SET k v": [("k", ["OW", "update"])],
    "SET k v GET": [("k", ["RW", "access", "update"])],
    "SET k v NX get": [("k", ["RW", "access", "update"])],
    "GET k": [("k", ["RO", "access"])],
    "DEL a b": [("a", ["RM", "delete"]), ("b", ["RM", "delete"])],
    "UNLINK a": [("a", ["RM", "delete"])],
    "EXISTS a b": [("a", ["RO"]), ("b", ["RO"])],
    "EXPIRE k 1": [("k", ["RW", "update"])],
    "PERSIST k": [("k", ["RW", "update"])],
    "TTL k": [("k", ["RO", "access"])],
    "TYPE k": [("k", ["RO"])],
    "TOUCH a": [("a", ["RO"])],
    "RENAME a b": [("a", ["RW", "access", "delete"]), ("b", ["OW", "update"])],
    "RENAMENX a b": [("a", ["RW", "access", "delete"]), ("b", ["OW", "insert"])],
    "COPY a b": [("a", ["RO", "access"]), ("b", ["OW", "update"])],
    "MOVE k 1": [("k", ["RW", "access", "update"])],
    "OBJECT FREQ k": [("k", ["RO"])],
    "MEMORY USAGE k": [("k", ["RO"])],
    "SADD s m": [("s", ["RW", "insert"])],
    "SCARD s": [("s", ["RO"])],
    "SISMEMBER s m": [("s", ["RO"])],
    "SMEMBERS s": [("s", ["RO", "access"])],
    "SINTER a b": [("a", ["RO", "access"]), ("b", ["RO", "access"])],
    "SINTERCARD 2 a b": [("a", ["RO", "access"]), ("b", ["RO", "access"])],
    "SINTERSTORE d a b": [("d", ["RW", "update"]), ("a", ["RO", "access"]),
                          ("b", ["RO", "access"])],
    "SUNIONSTORE d a": [("d", ["OW", "update"]), ("a", ["RO", "access"])],
    "SDIFFSTORE d a": [("d", ["OW", "update"]), ("a", ["RO", "access"])],
    "SMOVE a b m": [("a", ["RW", "access", "delete"]), ("b", ["RW", "insert"])],
    "SPOP s": [("s", ["RW", "access", "delete"])],
    "SREM s m": [("s", ["RW", "delete"])],
    "APPEND k v": [("k", ["RW", "insert"])],
    "INCR k": [("k", ["RW", "access", "update"])],
    "GETDEL k": [("k", ["RW", "access", "delete"])],
    "GETEX k": [("k", ["RW", "access", "update"])],
    "MGET a b": [("a", ["RO", "access"]), ("b", ["RO", "access"])],
    "MSET a 1 b 2": [("a", ["OW", "update"]), ("b", ["OW", "update"])],
    "MSETNX a 1": [("a", ["OW", "insert"])],
    "SETNX k v": [("k", ["OW", "insert"])],
    "SETEX k 1 v": [("k", ["OW", "update"])],
    "SETRANGE k 0 v": [("k", ["RW", "update"])],
    "STRLEN k": [("k", ["RO"])],
    "WATCH a b": [("a", ["RO"]), ("b", ["RO"])],
}


def s(x):
    return x.decode() if isinstance(x, bytes) else x


@pytest.mark.parametrize("command", list(KEYS_AND_FLAGS))
def test_getkeysandflags(raw, command):
    got = raw().cmd("COMMAND", "GETKEYSANDFLAGS", *command.split())
    assert [(s(k), [s(f) for f in flags]) for k, flags in got] == KEYS_AND_FLAGS[command]


def test_getkeysandflags_errors(raw):
    c = raw()
    assert c.cmd("COMMAND", "GETKEYSANDFLAGS", "PING") == RespError(
        "ERR wrong number of arguments for 'command|getkeysandflags' command")
    assert c.cmd("COMMAND", "GETKEYSANDFLAGS", "NOSUCH", "a") == RespError(
        "ERR Invalid command specified")
    assert c.cmd("COMMAND", "GETKEYSANDFLAGS", "SET", "k") == RespError(
        "ERR Invalid number of arguments specified for command")
    assert c.cmd("COMMAND", "GETKEYSANDFLAGS", "SINTERCARD", "5", "a") == RespError(
        "ERR Invalid arguments specified for command")
    assert c.cmd("COMMAND", "GETKEYSANDFLAGS", "CLIENT", "LIST") == RespError(
        "ERR The command has no key arguments")


def listed(c, *args):
    return {s(x) for x in c.cmd("COMMAND", "LIST", *args)}


def test_command_list_filterby(raw):
    c = raw()
    assert listed(c, "FILTERBY", "PATTERN", "s*store") == {"sinterstore", "sdiffstore",
                                                           "sunionstore"}
    # Case-insensitive, over fullnames: subcommands match too.
    config = listed(c, "filterby", "pattern", "CONFIG*")
    assert {"config", "config|get", "config|set", "config|rewrite"} <= config
    assert all(n.startswith("config") for n in config)
    assert {"config|get", "config|set"} <= listed(c, "FILTERBY", "PATTERN", "config|?et")
    assert listed(c, "FILTERBY", "MODULE", "nosuch") == set()
    assert listed(c, "FILTERBY", "ACLCAT", "nosuch") == set()
    sets = listed(c, "FILTERBY", "ACLCAT", "SET")
    assert {"sadd", "sinter", "smove", "sscan"} <= sets and "get" not in sets
    dangerous = listed(c, "FILTERBY", "ACLCAT", "dangerous")
    assert {"keys", "flushall", "flushdb", "swapdb", "info", "config|set", "debug"} <= dangerous
    assert "get" not in dangerous and "config|help" not in dangerous
    for bad in (["FILTERBY"], ["FILTERBY", "PATTERN"], ["FILTERBY", "FOO", "x"], ["FOO"],
                ["FILTERBY", "PATTERN", "a", "b"]):
        assert c.cmd("COMMAND", "LIST", *bad) == RespError("ERR syntax error"), bad


# command -> Redis 7.0's ACL categories (COMMAND INFO field 7)
ACL_CATEGORIES = {
    "get": {"@read", "@string", "@fast"},
    "set": {"@write", "@string", "@slow"},
    "del": {"@keyspace", "@write", "@slow"},
    "keys": {"@keyspace", "@read", "@slow", "@dangerous"},
    "sadd": {"@write", "@set", "@fast"},
    "flushall": {"@keyspace", "@write", "@slow", "@dangerous"},
    "dbsize": {"@keyspace", "@read", "@fast"},
    "swapdb": {"@keyspace", "@write", "@fast", "@dangerous"},
    "info": {"@slow", "@dangerous"},
    "lastsave": {"@admin", "@fast", "@dangerous"},
    "role": {"@admin", "@fast", "@dangerous"},
    "time": {"@fast"},
    "ping": {"@fast", "@connection"},
    "readonly": {"@fast", "@connection"},
    "wait": {"@slow", "@connection"},
    "multi": {"@fast", "@transaction"},
    "exec": {"@slow", "@transaction"},
    "client": {"@slow"},
    "client|list": {"@admin", "@slow", "@dangerous", "@connection"},
    "config|get": {"@admin", "@slow", "@dangerous"},
    "config|help": {"@slow"},
    "command": {"@slow", "@connection"},
    "command|getkeysandflags": {"@slow", "@connection"},
    "object|freq": {"@keyspace", "@read", "@slow"},
    "object|help": {"@keyspace", "@slow"},
    "memory|usage": {"@read", "@slow"},
    "cluster": {"@slow"},
    "cluster|info": {"@slow"},
    "cluster|reset": {"@admin", "@slow", "@dangerous"},
}


def test_acl_categories_in_command_info(raw):
    c = raw()
    names = list(ACL_CATEGORIES)
    infos = c.cmd("COMMAND", "INFO", *names)
    for name, info in zip(names, infos):
        assert info is not None, name
        assert {s(x) for x in info[6]} == ACL_CATEGORIES[name], name


def test_key_spec_flags_in_command_info(raw):
    c = raw()
    flat = lambda a: dict(zip(a[::2], a[1::2]))  # a RESP2 map
    for name, flags in (("get", {"RO", "access"}), ("del", {"RM", "delete"}),
                        ("sadd", {"RW", "insert"}), ("exists", {"RO"})):
        info = c.cmd("COMMAND", "INFO", name)[0]
        spec = flat(info[8][0])
        assert {s(f) for f in spec[b"flags"]} == flags, name


# --- CLUSTER without cluster support ------------------------------------------------

CLUSTER_CALLS = [
    ["INFO"], ["NODES"], ["SLOTS"], ["SHARDS"], ["MYID"], ["KEYSLOT", "foo"],
    ["COUNTKEYSINSLOT", "1"], ["GETKEYSINSLOT", "1", "1"], ["HELP"], ["LINKS"], ["RESET"],
    ["MEET", "127.0.0.1", "7000"], ["REPLICAS", "x"], ["COUNT-FAILURE-REPORTS", "x"],
    ["ADDSLOTS", "1"], ["SETSLOT", "1", "STABLE"], ["FAILOVER"], ["keyslot", "x"],
]


def test_cluster_support_disabled(raw):
    c = raw()
    for args in CLUSTER_CALLS:
        assert c.cmd("CLUSTER", *args) == RespError(
            "ERR This instance has cluster support disabled"), args
    assert c.cmd("CLUSTER", "FOO") == RespError("ERR unknown subcommand 'FOO'. Try CLUSTER HELP.")
    assert c.cmd("CLUSTER", "MYSHARDID") == RespError(
        "ERR unknown subcommand 'MYSHARDID'. Try CLUSTER HELP.")
    assert c.cmd("CLUSTER") == RespError("ERR wrong number of arguments for 'cluster' command")
    assert c.cmd("CLUSTER", "KEYSLOT") == RespError(
        "ERR wrong number of arguments for 'cluster|keyslot' command")
    assert c.cmd("CLUSTER", "INFO", "x") == RespError(
        "ERR wrong number of arguments for 'cluster|info' command")
    assert c.cmd("PING") == "PONG"


def test_cluster_in_command_info(raw):
    c = raw()
    info = c.cmd("COMMAND", "INFO", "cluster")[0]
    assert s(info[0]) == "cluster" and info[1] == -2
    subs = {s(x[0]): x for x in info[9]}
    assert {"cluster|info", "cluster|nodes", "cluster|slots", "cluster|shards", "cluster|myid",
            "cluster|keyslot", "cluster|countkeysinslot", "cluster|getkeysinslot"} <= set(subs)
    assert subs["cluster|keyslot"][1] == 3
    assert subs["cluster|getkeysinslot"][1] == 4
    assert {s(f) for f in subs["cluster|reset"][2]} >= {"admin", "stale"}


def test_redis_py_cluster_probe_sees_plain_server(server):
    """A client that probes with CLUSTER INFO gets Redis's error text, by which
    cluster-aware clients tell a standalone server."""
    import redis
    r = server.client()
    with pytest.raises(redis.ResponseError, match="cluster support disabled"):
        r.execute_command("CLUSTER", "INFO")


# --- qbuf / qbuf-free -----------------------------------------------------------------

def fields(line):
    return dict(kv.split("=", 1) for kv in line.split())


def test_qbuf_counts_the_running_batch(server):
    from conftest import RawConn, encode_command
    c = RawConn(server.port)
    info = fields(s(c.cmd("CLIENT", "INFO")))
    assert int(info["qbuf"]) == len(encode_command("CLIENT", "INFO")) == 26
    assert int(info["qbuf-free"]) > 0
    # Two commands read together: CLIENT INFO sees both in the buffer.
    c.send(encode_command("PING") + encode_command("CLIENT", "INFO"))
    assert c.read_reply() == "PONG"
    info = fields(s(c.read_reply()))
    assert int(info["qbuf"]) == 14 + 26
    assert int(info["qbuf-free"]) > 0
    c.close()


def test_qbuf_of_other_client_with_partial_command(server):
    from conftest import RawConn, encode_command
    waiting = RawConn(server.port)
    assert waiting.cmd("CLIENT", "SETNAME", "waiting") == "OK"
    partial = encode_command("SET", "k", "abcde")[:-5]  # the value not all there yet
    waiting.send(partial)
    c = RawConn(server.port)

    def waiting_line():
        for line in s(c.cmd("CLIENT", "LIST")).splitlines():
            if "name=waiting" in line:
                return fields(line)
        return {}

    assert wait_until(lambda: int(waiting_line().get("qbuf", 0)) > 0)
    line = waiting_line()
    if not is_real_redis():  # Redis has already moved the complete arguments out
        assert int(line["qbuf"]) == len(partial)
    assert int(line["qbuf-free"]) > 0
    waiting.send(b"cde\r\n")
    assert waiting.read_reply() == "OK"
    assert wait_until(lambda: waiting_line().get("qbuf") == "0")
    waiting.close()
    c.close()


# --- OBJECT IDLETIME / FREQ -------------------------------------------------------------

LFU_OFF = ("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
           "note that when switching between policies at runtime LRU and LFU data will take "
           "some time to adjust.")
LFU_ON = ("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
          "when switching between policies at runtime LRU and LFU data will take some time to "
          "adjust.")


def test_object_idletime_counts_since_last_access(r):
    r.set("k", "v")
    r.set("other", "v")
    assert r.object("idletime", "k") == 0
    time.sleep(2.2)
    # Looking at the key without reading its value does not count as an access.
    assert r.type("k") == "string" and r.exists("k") == 1 and r.ttl("k") == -1
    assert r.object("encoding", "k") == "embstr"
    assert r.object("idletime", "k") >= 2
    assert r.get("k") == "v"
    assert r.object("idletime", "k") == 0
    assert r.object("idletime", "other") >= 2
    assert r.touch("other") == 1
    assert r.object("idletime", "other") == 0
    with pytest.raises(Exception, match="An LFU maxmemory policy is not selected"):
        r.object("freq", "k")


def test_object_freq_under_lfu_policy(raw):
    c = raw()
    assert c.cmd("OBJECT", "FREQ", "nokey") is None
    assert c.cmd("SET", "k", "v") == "OK"
    assert c.cmd("OBJECT", "FREQ", "k") == RespError(LFU_OFF)
    assert c.cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu") == "OK"
    assert c.cmd("SET", "hot", "v") == "OK"
    assert c.cmd("SET", "cold", "v") == "OK"
    assert c.cmd("OBJECT", "FREQ", "hot") == 5  # a new key's counter (LFU_INIT_VAL)
    for _ in range(50):
        c.cmd("GET", "hot")
    hot = c.cmd("OBJECT", "FREQ", "hot")
    assert 5 < hot <= 255
    assert c.cmd("OBJECT", "FREQ", "hot") == hot  # OBJECT itself is no access
    assert c.cmd("OBJECT", "FREQ", "cold") == 5
    assert c.cmd("OBJECT", "IDLETIME", "hot") == RespError(LFU_ON)
    assert c.cmd("CONFIG", "GET", "lfu-log-factor") == [b"lfu-log-factor", b"10"]
    assert c.cmd("CONFIG", "GET", "lfu-decay-time") == [b"lfu-decay-time", b"1"]
    assert c.cmd("CONFIG", "SET", "maxmemory-policy", "volatile-lru") == "OK"
    assert c.cmd("OBJECT", "FREQ", "hot") == RespError(LFU_OFF)


def test_lfu_log_factor_zero_counts_every_access(raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu") == "OK"
    assert c.cmd("CONFIG", "SET", "lfu-log-factor", "0") == "OK"
    c.cmd("SET", "k", "v")
    for _ in range(20):
        c.cmd("GET", "k")
    assert c.cmd("OBJECT", "FREQ", "k") == 25


def test_redis_cli_hotkeys(server):
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli not installed")
    r = server.client()
    r.config_set("maxmemory-policy", "allkeys-lfu")
    for i in range(3):
        r.set(f"cold{i}", "v")
    r.set("hot", "v")
    pipe = r.pipeline(transaction=False)
    for _ in range(200):
        pipe.get("hot")
    pipe.execute()
    out = subprocess.run([cli, "-h", "127.0.0.1", "-p", str(server.port), "--hotkeys"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    summary = [l for l in out.stdout.splitlines() if l.startswith("hot key found with counter")]
    assert len(summary) == 4
    counter, name = summary[0].split(": ", 1)[1].split("\tkeyname: ")
    assert name == '"hot"' and int(counter) > 5
    assert all(l.startswith("hot key found with counter: 5\t") for l in summary[1:])
    # Without an LFU policy the tool stops with Redis's error.
    r.config_set("maxmemory-policy", "noeviction")
    out = subprocess.run([cli, "-h", "127.0.0.1", "-p", str(server.port), "--hotkeys"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "An LFU maxmemory policy is not selected" in out.stderr


def test_debug_populate_creates_string_keys_and_leaves_existing_ones(r):
    r.set("key:1", "mine")
    assert r.execute_command("DEBUG", "POPULATE", "3") in (True, "OK")
    assert r.dbsize() == 3
    assert r.get("key:0") == "value:0" and r.get("key:2") == "value:2"
    assert r.get("key:1") == "mine"
    assert r.execute_command("DEBUG", "POPULATE", "2", "p", "12") in (True, "OK")
    assert r.strlen("p:0") == 12 and r.getrange("p:1", 0, 6) == "value:1"
    assert r.execute_command("DEBUG", "POPULATE", "1", "q", "3") in (True, "OK")
    assert r.get("q:0") == "val"
    for bad in (("-1",), ("x",), ("1", "key", "-5"), ("1", "key", "big")):
        with pytest.raises(redis.ResponseError, match="value is out of range, must be positive"):
            r.execute_command("DEBUG", "POPULATE", *bad)


def test_exec_is_not_in_the_slowlog_but_what_it_ran_is(server, raw):
    """Redis's skip_slowlog flag, which only EXEC carries."""
    c = raw()
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "100000") == "OK"
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("DEBUG", "SLEEP", "0.2") == "QUEUED"
    assert c.cmd("EXEC") == ["OK"]
    assert c.cmd("SLOWLOG", "LEN") == 1
    assert c.cmd("SLOWLOG", "GET")[0][3] == [b"DEBUG", b"SLEEP", b"0.2"]
    info = c.cmd("COMMAND", "INFO", "EXEC")[0]
    assert info[2] == ["noscript", "loading", "stale", "skip_slowlog"]


def test_an_unblocked_blocking_command_counts_as_failed(server, raw):
    """CLIENT UNBLOCK ... ERROR: the error and the blocked command's failed call
    are counted, as Redis's errorstats test checks."""
    r = server.client()
    r.config_resetstat()
    blocked = raw()
    cid = blocked.cmd("CLIENT", "ID")
    blocked.send_command("BLPOP", "list1", "0")
    assert wait_until(lambda: r.info("clients")["blocked_clients"] == 1, timeout=5)
    assert r.client_unblock(cid, error=True)
    reply = blocked.read_reply()
    assert isinstance(reply, RespError) and str(reply).startswith("UNBLOCKED")
    assert r.info("errorstats")["errorstat_UNBLOCKED"] in ({"count": 1}, "count=1")
    stat = r.info("commandstats")["cmdstat_blpop"]
    assert (stat["calls"], stat["rejected_calls"], stat["failed_calls"]) == (1, 0, 1)
    assert r.info("stats")["total_error_replies"] == 1
