"""Server and introspection commands, with what a Prometheus redis_exporter
scrape and ordinary operators rely on: INFO (sections and field names),
CONFIG GET/SET/REWRITE/RESETSTAT, COMMAND, SLOWLOG, LATENCY, DBSIZE, FLUSHDB,
FLUSHALL, SWAPDB, TIME, MONITOR, MEMORY USAGE, OBJECT, SHUTDOWN, maxclients and
idle timeout."""

import re
import time

import pytest
import redis

from conftest import RespError, RawConn, ConnectionClosed, wait_until


def info_text(raw_conn, *sections):
    reply = raw_conn.cmd("INFO", *sections)
    assert isinstance(reply, bytes), reply
    return reply.decode()


def parse_info(text):
    """{section: {field: value}} from INFO text, sections lower-cased."""
    out, cur = {}, None
    for line in text.split("\r\n"):
        if not line:
            continue
        if line.startswith("# "):
            cur = line[2:].strip().lower()
            out[cur] = {}
            continue
        assert ":" in line, f"INFO line without ':' : {line!r}"
        k, _, v = line.partition(":")
        assert cur is not None, f"INFO field before any section: {line!r}"
        out[cur][k] = v
    return out


def strs(items):
    return {x.decode() if isinstance(x, bytes) else str(x) for x in items}


def flat(info):
    d = {}
    for sec in info.values():
        d.update(sec)
    return d


# --- INFO ----------------------------------------------------------------------

SERVER_FIELDS = ["redis_version", "redis_mode", "os", "arch_bits", "process_id", "tcp_port",
                 "uptime_in_seconds", "uptime_in_days", "executable", "config_file",
                 "run_id", "hz"]
CLIENT_FIELDS = ["connected_clients", "blocked_clients", "maxclients"]
MEMORY_FIELDS = ["used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak",
                 "maxmemory", "maxmemory_policy", "mem_fragmentation_ratio"]
PERSISTENCE_FIELDS = ["loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress",
                      "rdb_last_save_time", "rdb_last_bgsave_status", "aof_enabled",
                      "aof_rewrite_in_progress", "aof_last_bgrewrite_status"]
STATS_FIELDS = ["total_connections_received", "total_commands_processed",
                "instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes",
                "rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits",
                "keyspace_misses", "total_error_replies"]
REPLICATION_FIELDS = ["role", "connected_slaves", "master_repl_offset"]
CPU_FIELDS = ["used_cpu_sys", "used_cpu_user"]


def test_info_default_sections_and_fields(server, raw):
    c = raw()
    info = parse_info(info_text(c))
    for sec in ("server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                "keyspace"):
        assert sec in info, f"INFO lacks section {sec}: {list(info)}"
    assert "commandstats" not in info  # only with INFO ALL / commandstats
    for sec, fields in (("server", SERVER_FIELDS), ("clients", CLIENT_FIELDS),
                        ("memory", MEMORY_FIELDS), ("persistence", PERSISTENCE_FIELDS),
                        ("stats", STATS_FIELDS), ("replication", REPLICATION_FIELDS),
                        ("cpu", CPU_FIELDS)):
        for f in fields:
            assert f in info[sec], f"INFO {sec} lacks {f}"
    s = info["server"]
    assert re.fullmatch(r"7\.\d+\.\d+", s["redis_version"]), s["redis_version"]
    assert s["redis_mode"] == "standalone"
    assert int(s["process_id"]) == server.proc.pid
    assert int(s["tcp_port"]) == server.port
    assert info["persistence"]["loading"] == "0"
    assert info["replication"]["role"] == "master"
    assert int(info["clients"]["connected_clients"]) >= 1
    assert int(info["memory"]["used_memory"]) > 0
    assert float(info["cpu"]["used_cpu_user"]) >= 0


def test_info_all_for_redis_exporter(server, raw):
    r = server.client()
    r.set("a", "1")
    r.set("b", "2", ex=1000)
    r.get("a")
    r.get("a")
    r.get("missing")
    s5 = server.client(db=5)
    s5.set("x", "y")
    c = raw()
    c.cmd("INCR", "a")
    c.cmd("SET", "str", "abc")
    assert isinstance(c.cmd("INCR", "str"), RespError)  # ERR
    assert isinstance(c.cmd("NOSUCHCMD"), RespError)
    assert isinstance(c.cmd("GET"), RespError)  # rejected: arity
    text = info_text(c, "ALL")
    info = parse_info(text)
    for sec in ("server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                "commandstats", "errorstats", "keyspace"):
        assert sec in info, f"INFO ALL lacks section {sec}"
    ks = info["keyspace"]
    assert re.fullmatch(r"keys=\d+,expires=\d+,avg_ttl=\d+", ks["db0"]), ks["db0"]
    m = re.fullmatch(r"keys=(\d+),expires=(\d+),avg_ttl=(\d+)", ks["db0"])
    assert int(m.group(1)) == 3 and int(m.group(2)) == 1  # a, b (with TTL), str
    assert 0 <= int(m.group(3)) <= 1000 * 1000  # avg_ttl is an estimate; 0 = unknown yet
    assert ks["db5"].startswith("keys=1,expires=0,")
    assert "db1" not in ks  # empty databases are not listed
    cs = info["commandstats"]
    pat = r"calls=(\d+),usec=(\d+),usec_per_call=(\d+\.\d+),rejected_calls=(\d+),failed_calls=(\d+)"
    for name, v in cs.items():
        assert name.startswith("cmdstat_"), name
        assert re.fullmatch(pat, v), f"{name}:{v}"
    get = re.fullmatch(pat, cs["cmdstat_get"])
    assert int(get.group(1)) == 3            # a, a, missing
    assert int(get.group(4)) == 1            # GET without key: rejected
    assert int(get.group(5)) == 0
    incr = re.fullmatch(pat, cs["cmdstat_incr"])
    assert int(incr.group(1)) == 2 and int(incr.group(5)) == 1
    es = info["errorstats"]
    assert re.fullmatch(r"count=\d+", es["errorstat_ERR"])
    assert int(es["errorstat_ERR"].split("=")[1]) >= 3
    st = info["stats"]
    assert int(st["keyspace_hits"]) >= 2
    assert int(st["keyspace_misses"]) >= 1
    assert int(st["total_error_replies"]) >= 3
    assert flat(info)["loading"] == "0"


def test_info_wrongtype_in_errorstats_and_failed_calls(raw):
    c = raw()
    c.cmd("SADD", "set", "m")
    assert isinstance(c.cmd("GET", "set"), RespError)  # WRONGTYPE
    info = parse_info(info_text(c, "ALL"))
    assert info["errorstats"]["errorstat_WRONGTYPE"] == "count=1"
    assert re.search(r"failed_calls=1$", info["commandstats"]["cmdstat_get"])


def test_info_subcommand_stats(raw):
    c = raw()
    c.cmd("CLIENT", "ID")
    c.cmd("CONFIG", "GET", "port")
    cs = parse_info(info_text(c, "commandstats"))["commandstats"]
    assert "cmdstat_client|id" in cs
    assert "cmdstat_config|get" in cs


def test_info_section_selection(raw):
    c = raw()
    assert list(parse_info(info_text(c, "server"))) == ["server"]
    assert list(parse_info(info_text(c, "CLIENTS"))) == ["clients"]
    assert set(parse_info(info_text(c, "server", "memory"))) == {"server", "memory"}
    assert set(parse_info(info_text(c, "keyspace"))) == {"keyspace"}
    assert info_text(c, "nosuchsection") == ""
    everything = parse_info(info_text(c, "everything"))
    assert "commandstats" in everything and "server" in everything


def test_info_counts_clients_and_expired_keys(server):
    r = server.client()
    others = [server.client() for _ in range(3)]
    for o in others:
        o.ping()
    assert r.info("clients")["connected_clients"] >= 4
    for i in range(20):
        r.set(f"e{i}", 1, px=50)
    assert wait_until(lambda: r.info("stats")["expired_keys"] >= 20, timeout=10)


def test_info_with_redis_py_parses(r):
    r.set("k", "v")
    info = r.info()
    assert info["redis_mode"] == "standalone"
    assert info["db0"] == {"keys": 1, "expires": 0, "avg_ttl": 0}
    assert isinstance(info["used_memory"], int)
    all_info = r.info("all")
    assert "cmdstat_set" in all_info or "cmdstat_info" in all_info


# --- CONFIG ------------------------------------------------------------------------

def config_pairs(reply):
    if isinstance(reply, dict):
        return {k.decode(): v.decode() for k, v in reply.items()}
    assert len(reply) % 2 == 0
    return {reply[i].decode(): reply[i + 1].decode() for i in range(0, len(reply), 2)}


def test_config_get_star_and_globs(server, raw):
    c = raw()
    allc = config_pairs(c.cmd("CONFIG", "GET", "*"))
    for k in ("port", "bind", "dir", "maxmemory", "maxmemory-policy", "maxclients", "timeout",
              "databases", "save", "appendonly", "appendfsync", "requirepass", "loglevel",
              "logfile", "slowlog-log-slower-than", "slowlog-max-len", "tcp-keepalive",
              "proto-max-bulk-len", "client-query-buffer-limit", "hz"):
        assert k in allc, f"CONFIG GET * lacks {k}"
    assert allc["port"] == str(server.port)
    assert allc["databases"] == "16"
    assert allc["save"] == ""
    assert allc["appendonly"] == "no"
    assert allc["maxmemory"] == "0"
    assert allc["dir"] == str(server.dir) or allc["dir"].rstrip("/") == str(server.dir.resolve())
    mx = config_pairs(c.cmd("CONFIG", "GET", "max*"))
    assert {"maxmemory", "maxclients"} <= set(mx)
    assert all(k.startswith("max") for k in mx)
    assert {k.lower() for k in config_pairs(c.cmd("CONFIG", "GET", "MAXCLIENTS"))} == {"maxclients"}
    assert config_pairs(c.cmd("CONFIG", "GET", "port", "databases")) == {
        "port": str(server.port), "databases": "16"}
    assert config_pairs(c.cmd("CONFIG", "GET", "no-such-option")) == {}
    assert config_pairs(c.cmd("CONFIG", "GET", "slowlog-*")).keys() >= {
        "slowlog-log-slower-than", "slowlog-max-len"}


def test_config_get_with_redis_py(r):
    cfg = r.config_get("*")
    assert cfg["databases"] == "16"
    assert r.config_get("save") == {"save": ""}
    assert r.config_get("appendonly") == {"appendonly": "no"}


def test_config_set_live(server, raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "maxclients", "500") == "OK"
    assert config_pairs(c.cmd("CONFIG", "GET", "maxclients")) == {"maxclients": "500"}
    assert c.cmd("CONFIG", "SET", "maxmemory", "100mb") == "OK"
    assert config_pairs(c.cmd("CONFIG", "GET", "maxmemory")) == {"maxmemory": str(100 * 1024 * 1024)}
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "10", "hz", "20") == "OK"
    assert config_pairs(c.cmd("CONFIG", "GET", "slowlog-max-len", "hz")) == {
        "slowlog-max-len": "10", "hz": "20"}
    assert c.cmd("CONFIG", "SET", "nonexistent", "1") == RespError(
        "ERR Unknown option or number of arguments for CONFIG SET - 'nonexistent'")
    err = c.cmd("CONFIG", "SET", "maxclients", "abc")
    assert isinstance(err, RespError)
    assert str(err).startswith("ERR CONFIG SET failed (possibly related to argument 'maxclients') - ")
    assert c.cmd("CONFIG", "SET", "databases", "4") == RespError(
        "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config")
    assert config_pairs(c.cmd("CONFIG", "GET", "maxclients")) == {"maxclients": "500"}
    err = c.cmd("CONFIG", "SET", "appendfsync", "sometimes")
    assert isinstance(err, RespError) and "appendfsync" in str(err)


def test_config_set_requirepass_takes_effect(server, raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "requirepass", "newpw") == "OK"
    n = raw()
    assert n.cmd("PING") == RespError("NOAUTH Authentication required.")
    assert n.cmd("AUTH", "newpw") == "OK"
    assert n.cmd("CONFIG", "SET", "requirepass", "") == "OK"
    assert raw().cmd("PING") == "PONG"


CONF = """# feedkv test configuration
# keep this comment
maxclients 1000
timeout 0
loglevel notice
"""


@pytest.mark.server_config(CONF)
def test_config_rewrite(server, start_server, raw):
    c = raw()
    assert config_pairs(c.cmd("CONFIG", "GET", "maxclients")) == {"maxclients": "1000"}
    assert c.cmd("CONFIG", "SET", "maxclients", "777") == "OK"
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "33") == "OK"
    assert c.cmd("CONFIG", "REWRITE") == "OK"
    text = server.config_path.read_text()
    assert "# keep this comment" in text
    assert re.search(r"^maxclients 777$", text, re.M), text
    assert re.search(r"^slowlog-max-len 33$", text, re.M), text
    assert not re.search(r"^maxclients 1000$", text, re.M)
    # a server started from the rewritten file has the new values
    again = start_server(config=text)
    c2 = again.raw()
    assert config_pairs(c2.cmd("CONFIG", "GET", "maxclients", "slowlog-max-len")) == {
        "maxclients": "777", "slowlog-max-len": "33"}


def test_config_rewrite_without_file(raw):
    assert raw().cmd("CONFIG", "REWRITE") == RespError(
        "ERR The server is running without a config file")


def test_config_resetstat(raw):
    c = raw()
    c.cmd("SET", "k", "v")
    c.cmd("GET", "k")
    c.cmd("GET", "nope")
    c.cmd("NOSUCHCMD")
    before = parse_info(info_text(c, "ALL"))
    assert "cmdstat_get" in before["commandstats"]
    assert int(before["stats"]["total_error_replies"]) >= 1
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    after = parse_info(info_text(c, "ALL"))
    assert "cmdstat_get" not in after["commandstats"]
    assert "errorstat_ERR" not in after["errorstats"]
    assert after["stats"]["keyspace_hits"] == "0"
    assert after["stats"]["keyspace_misses"] == "0"
    assert after["stats"]["total_error_replies"] == "0"
    assert int(after["stats"]["total_commands_processed"]) <= 2


def test_config_errors(raw):
    c = raw()
    err = c.cmd("CONFIG", "NOPE")
    assert isinstance(err, RespError) and str(err).startswith("ERR unknown subcommand 'NOPE'")
    assert c.cmd("CONFIG", "GET") == RespError(
        "ERR wrong number of arguments for 'config|get' command")


# --- COMMAND -----------------------------------------------------------------------

def test_command_count_and_list(raw):
    c = raw()
    n = c.cmd("COMMAND", "COUNT")
    assert isinstance(n, int) and n >= 40
    every = c.cmd("COMMAND")
    assert len(every) == n
    names = {e[0].decode() for e in every}
    for cmd in ("get", "set", "ping", "info", "config", "client", "multi", "exec", "scan"):
        assert cmd in names, cmd
    listed = {x.decode() for x in c.cmd("COMMAND", "LIST")}
    assert names <= listed  # COMMAND LIST may add container|subcommand names


def test_command_info(raw):
    c = raw()
    get, sett, mset, nosuch = c.cmd("COMMAND", "INFO", "get", "SET", "mset", "nosuch")
    assert get[0] == b"get" and get[1] == 2
    assert {"readonly", "fast"} <= strs(get[2])
    assert get[3:6] == [1, 1, 1]
    assert sett[0] == b"set" and sett[1] == -3
    assert {"write", "denyoom"} <= strs(sett[2])
    assert sett[3:6] == [1, 1, 1]
    assert mset[0] == b"mset" and mset[1] == -3
    assert mset[3:6] == [1, -1, 2]
    assert nosuch is None
    assert len(get) >= 10  # name arity flags first last step acl tips key-specs subcommands
    config = c.cmd("COMMAND", "INFO", "config")[0]
    subs = {s[0].decode() for s in config[9]}
    assert {"config|get", "config|set", "config|rewrite", "config|resetstat"} <= subs


def test_command_docs(raw):
    c = raw()
    docs = c.cmd("COMMAND", "DOCS", "get", "set")
    d = {docs[i].decode(): docs[i + 1] for i in range(0, len(docs), 2)}
    assert set(d) == {"get", "set"}
    g = {d["get"][i].decode(): d["get"][i + 1] for i in range(0, len(d["get"]), 2)}
    assert g["summary"]
    assert g["group"] == b"string"
    # RESP3: a map of maps
    c.cmd("HELLO", "3")
    docs3 = c.cmd("COMMAND", "DOCS", "ping")
    assert isinstance(docs3, dict) and b"ping" in docs3
    assert docs3[b"ping"][b"group"] == b"connection"


def test_command_getkeys(raw):
    c = raw()
    assert c.cmd("COMMAND", "GETKEYS", "SET", "a", "b") == [b"a"]
    assert c.cmd("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == [b"a", b"b"]
    assert c.cmd("COMMAND", "GETKEYS", "MGET", "x", "y", "z") == [b"x", b"y", b"z"]
    assert c.cmd("COMMAND", "GETKEYS", "RENAME", "a", "b") == [b"a", b"b"]
    assert c.cmd("COMMAND", "GETKEYS", "GET", "a", "b") == RespError(
        "ERR Invalid number of arguments specified for command")
    assert c.cmd("COMMAND", "GETKEYS", "PING", "x") == RespError(
        "ERR The command has no key arguments")
    assert c.cmd("COMMAND", "GETKEYS", "NOSUCH", "x") == RespError("ERR Invalid command specified")


def test_keys_given_by_count(raw):
    """SINTERCARD numkeys key [key ...]: keys found through the count, as Redis 7 does
    (cluster clients route by COMMAND GETKEYS / the keynum key spec)."""
    c = raw()
    assert c.cmd("COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "3") == [b"a", b"b"]
    assert c.cmd("COMMAND", "GETKEYS", "SINTERCARD", "5", "a", "b") == RespError(
        "ERR Invalid arguments specified for command")
    info = c.cmd("COMMAND", "INFO", "SINTERCARD")[0]
    assert info[0] == b"sintercard" and info[1] == -3
    flags = [f.decode() if isinstance(f, bytes) else f for f in info[2]]
    assert "movablekeys" in flags and "readonly" in flags
    assert info[3:6] == [0, 0, 0]
    flat = lambda a: dict(zip(a[::2], a[1::2]))  # a RESP2 map
    spec = flat(info[8][0])
    assert flat(spec[b"begin_search"]) == {b"type": b"index", b"spec": [b"index", 1]}
    find = flat(spec[b"find_keys"])
    assert find[b"type"] == b"keynum"
    assert flat(find[b"spec"]) == {b"keynumidx": 0, b"firstkey": 1, b"keystep": 1}


# --- SLOWLOG / LATENCY --------------------------------------------------------------

def test_slowlog(server, raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    c.cmd("SET", "slowkey", "v")
    c.cmd("CLIENT", "SETNAME", "slowpoke")
    c.cmd("GET", "slowkey")
    n = c.cmd("SLOWLOG", "LEN")
    assert n >= 3
    entries = c.cmd("SLOWLOG", "GET", "2")
    assert len(entries) == 2
    newest, older = entries
    assert newest[0] > older[0]  # most recent first, ids increase
    assert abs(newest[1] - time.time()) < 60
    assert isinstance(newest[2], int) and newest[2] >= 0
    assert newest[3] == [b"GET", b"slowkey"] or newest[3] == [b"SLOWLOG", b"LEN"]
    assert re.fullmatch(rb"127\.0\.0\.1:\d+", newest[4])
    assert newest[5] == b"slowpoke"
    # SLOWLOG GET 1 is what redis_exporter asks for
    assert len(c.cmd("SLOWLOG", "GET", "1")) == 1
    everything = c.cmd("SLOWLOG", "GET", "-1")
    assert c.cmd("SLOWLOG", "LEN") == len(everything) + 1  # + the SLOWLOG GET itself
    # long arguments are shortened as Redis does
    c.cmd("SET", "big", "x" * 200)
    c.cmd("DEL", *[f"k{i}" for i in range(40)])
    e = c.cmd("SLOWLOG", "GET", "2")
    dele, sete = e[0][3], e[1][3]
    assert len(dele) == 32 and dele[-1] == b"... (10 more arguments)"
    assert sete[2] == b"x" * 128 + b"... (72 more bytes)"
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "5") == "OK"
    for i in range(10):
        c.cmd("PING")
    assert c.cmd("SLOWLOG", "LEN") == 5
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    assert c.cmd("SLOWLOG", "LEN") <= 1


def test_slowlog_with_redis_py(r):
    r.config_set("slowlog-log-slower-than", 0)
    r.slowlog_reset()
    r.set("a", "b")
    log = r.slowlog_get(1)
    assert len(log) == 1 and "id" in log[0] and "duration" in log[0]
    assert r.slowlog_len() >= 1


def test_latency_latest_and_histogram(server, raw):
    c = raw()
    latest = c.cmd("LATENCY", "LATEST")
    assert isinstance(latest, list)
    for i in range(10):
        c.cmd("SET", f"k{i}", "v")
    h = c.cmd("LATENCY", "HISTOGRAM", "set")
    assert isinstance(h, list) and h[0] == b"set"
    body = {h[1][i].decode(): h[1][i + 1] for i in range(0, len(h[1]), 2)}
    assert body["calls"] == 10
    buckets = body["histogram_usec"]  # flat [upper_bound_usec, cumulative_count, ...]
    assert buckets, "LATENCY HISTOGRAM has no buckets"
    bounds, counts = buckets[0::2], buckets[1::2]
    assert bounds == sorted(bounds) and counts == sorted(counts)
    assert counts[-1] == 10  # cumulative: the last bucket holds every call
    allh = c.cmd("LATENCY", "HISTOGRAM")
    names = {allh[i].decode() for i in range(0, len(allh), 2)}
    assert {"set", "latency|latest"} <= names or {"set"} <= names
    c.cmd("HELLO", "3")
    h3 = c.cmd("LATENCY", "HISTOGRAM", "set")
    assert isinstance(h3, dict) and b"set" in h3
    assert isinstance(c.cmd("LATENCY", "RESET"), int)
    doc = c.cmd("LATENCY", "DOCTOR")
    assert isinstance(doc, (bytes, str))


# --- keyspace-wide -----------------------------------------------------------------

def test_dbsize_flushdb_flushall(server):
    r0 = server.client()
    r1 = server.client(db=1)
    r0.mset({"a": 1, "b": 2})
    r1.mset({"c": 3})
    assert r0.dbsize() == 2 and r1.dbsize() == 1
    assert r1.flushdb() is True
    assert r1.dbsize() == 0 and r0.dbsize() == 2
    r1.set("c", 3)
    assert r0.flushall() is True
    assert r0.dbsize() == 0 and r1.dbsize() == 0
    r0.set("x", 1)
    assert r0.execute_command("FLUSHDB", "ASYNC") == "OK" or r0.dbsize() == 0
    assert r0.dbsize() == 0
    r0.set("x", 1)
    assert r0.execute_command("FLUSHALL", "SYNC") in ("OK", True)
    assert r0.dbsize() == 0


def test_swapdb(server, raw):
    r0 = server.client()
    r1 = server.client(db=1)
    r0.set("k", "zero")
    r1.set("k", "one")
    r1.set("only1", "x")
    assert r0.swapdb(0, 1) is True
    assert r0.get("k") == "one" and r0.get("only1") == "x"
    assert r1.get("k") == "zero" and r1.dbsize() == 1
    c = raw()
    assert c.cmd("SWAPDB", "0", "99") == RespError("ERR DB index is out of range")
    assert c.cmd("SWAPDB", "a", "1") == RespError("ERR invalid first DB index")
    assert c.cmd("SWAPDB", "0", "b") == RespError("ERR invalid second DB index")


def test_time(r):
    secs, usecs = r.time()
    assert abs(secs + usecs / 1e6 - time.time()) < 5
    assert 0 <= usecs < 1000000


def test_memory_usage_and_object(r, raw):
    r.set("small", "v")
    r.set("num", "12345")
    r.set("large", "x" * 10000)
    assert isinstance(r.memory_usage("small"), int) and r.memory_usage("small") > 0
    assert r.memory_usage("large") > 10000
    assert r.memory_usage("nokey") is None
    c = raw()
    assert c.cmd("OBJECT", "ENCODING", "num") == b"int"
    assert c.cmd("OBJECT", "ENCODING", "small") in (b"embstr", b"raw")
    assert c.cmd("OBJECT", "ENCODING", "large") == b"raw"
    assert c.cmd("OBJECT", "ENCODING", "nokey") is None


# --- MONITOR ------------------------------------------------------------------------

def test_monitor_sees_other_clients(server, raw):
    mon = raw()
    assert mon.cmd("MONITOR") == "OK"
    other = server.client(db=3)
    other.set("mkey", "va lue")
    other.get("mkey")
    lines = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(b'"GET"' in x for x in lines):
        lines.append(mon.read_reply(timeout=max(0.1, deadline - time.monotonic())).encode())
    want = re.compile(rb'^\d+\.\d{6} \[3 127\.0\.0\.1:\d+\] "SET" "mkey" "va lue"$', re.I)
    assert any(want.match(x) for x in lines), lines
    assert any(re.match(rb'^\d+\.\d{6} \[3 127\.0\.0\.1:\d+\] "GET" "mkey"$', x, re.I) for x in lines)


# --- limits -------------------------------------------------------------------------

@pytest.mark.server_args("--maxclients", "5")
def test_maxclients(server):
    conns = []
    for _ in range(5):
        c = RawConn(server.port)
        conns.append(c)
        assert c.cmd("PING") == "PONG"
    extra = RawConn(server.port)
    try:
        extra.send_command("PING")
        reply = extra.read_reply()
        assert reply == RespError("ERR max number of clients reached")
        assert extra.closed_by_server(timeout=5)
    except ConnectionClosed:
        pytest.fail("connection closed without the max clients error")
    finally:
        extra.close()
    conns.pop().close()
    assert wait_until(server.ping_ok, timeout=5)
    for c in conns:
        c.close()


@pytest.mark.server_args("--timeout", "1")
def test_idle_timeout_closes_idle_clients(raw):
    c = raw()
    assert c.cmd("PING") == "PONG"
    t0 = time.monotonic()
    assert c.closed_by_server(timeout=10)
    assert time.monotonic() - t0 >= 0.9


# --- SHUTDOWN -----------------------------------------------------------------------

def test_shutdown_exits_zero(server, raw):
    c = raw()
    c.cmd("SET", "k", "v")
    server.expect_exit(0)
    c.send_command("SHUTDOWN", "NOSAVE")
    assert c.closed_by_server(timeout=10)
    assert server.wait_exit(timeout=20) == 0


def test_shutdown_plain_exits_zero(server, raw):
    c = raw()
    server.expect_exit(0)
    c.send_command("SHUTDOWN")
    assert c.closed_by_server(timeout=10)
    assert server.wait_exit(timeout=20) == 0


def test_lolwut_answers_the_version_line_as_redis(server):
    # Redis 7's LOLWUT for its own version is one verbatim line; VERSION takes an integer.
    c = server.raw()
    version = server.client().info("server")["redis_version"]
    assert c.cmd("LOLWUT") == f"Redis ver. {version}\n".encode()
    assert c.cmd("LOLWUT", "VERSION", "abc") == RespError("ERR value is not an integer or out of range")
    c.cmd("HELLO", "3")
    assert c.cmd("LOLWUT", "anything") == f"Redis ver. {version}\n".encode()
