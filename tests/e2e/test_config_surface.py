"""The Redis 7.0 surface a new user hits first (issue 25, landing 3): every
CONFIG name Redis 7.0 lists is accepted with its validation, aliases and hidden
test configs; duplicates refused; port at runtime; CLIENT REPLY sequences;
MONITOR around MULTI/EXEC; CLIENT KILL USER. Runs against Redis 7 too."""

import re
import socket
import subprocess
import time

from conftest import RawConn, RespError, free_port, is_real_redis, server_binary

# Names Redis 7.0.15 lists in CONFIG GET * that are immutable at runtime.
IMMUTABLE = {"aclfile", "always-show-logo", "appenddirname", "appendfilename", "aof_rewrite_cpulist",
             "bgsave_cpulist", "bio_cpulist", "cluster-config-file", "cluster-enabled", "cluster-port",
             "daemonize", "databases", "disable-thp", "enable-debug-command", "enable-module-command",
             "enable-protected-configs", "io-threads", "io-threads-do-reads", "logfile", "pidfile",
             "rdbchecksum", "replicaof", "server_cpulist", "set-proc-title", "slaveof", "socket-mark-id",
             "supervised",
             "syslog-enabled", "syslog-facility", "syslog-ident", "tcp-backlog", "unixsocket",
             "unixsocketperm",
             # feedkv's cold tier: fixed at start (docs/counters.md)
             "cold-dir", "cold-read-threads", "cold-block-cache-size", "cold-bloom-bits-per-key"}
SAMPLE = ["hash-max-listpack-entries", "hash-max-ziplist-value", "list-max-listpack-size",
          "zset-max-listpack-entries", "set-max-intset-entries", "lua-time-limit",
          "busy-reply-threshold", "repl-backlog-size", "maxmemory-clients", "maxmemory-samples",
          "notify-keyspace-events", "slave-read-only", "activerehashing", "oom-score-adj-values"]


def pairs(reply):
    if not isinstance(reply, list):
        reply = [x for kv in reply.items() for x in kv]
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in zip(reply[::2], reply[1::2])}


def test_every_listed_setting_reads_back_and_sets_to_its_own_value(raw):
    c = raw()
    listed = pairs(c.cmd("CONFIG", "GET", "*"))
    assert len(listed) >= 190, len(listed)
    for name in SAMPLE + ["slaveof", "replicaof"]:
        assert name in listed, name
    for name, value in listed.items():
        if name in ("port", "bind", "dir", "dbfilename", "save", "requirepass"):
            continue
        got = c.cmd("CONFIG", "SET", name, value.decode() if isinstance(value, bytes) else value)
        if name in IMMUTABLE and not name.startswith("cold-"):  # feedkv's own take their value back
            assert got == RespError(f"ERR CONFIG SET failed (possibly related to argument '{name}')"
                                    " - can't set immutable config"), (name, got)
        else:
            assert got == "OK", (name, value, got)


def test_validation_texts_and_aliases_as_redis(raw):
    c = raw()
    err = "ERR CONFIG SET failed (possibly related to argument '{}') - {}"
    cases = [("activerehashing", "maybe", "argument must be 'yes' or 'no'"),
             ("maxmemory-samples", "0", "argument must be between 1 and 2147483647 inclusive"),
             ("hash-max-ziplist-entries", "abc", "argument couldn't be parsed into an integer"),
             ("repl-backlog-size", "abc", "argument must be a memory value"),
             ("repl-diskless-load", "bad",
              "argument(s) must be one of the following: disabled, on-empty-db, swapdb"),
             ("maxmemory-clients", "200%", "percentage argument must be less or equal to 100"),
             ("notify-keyspace-events", "q", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")]
    for name, value, why in cases:
        assert c.cmd("CONFIG", "SET", name, value) == RespError(err.format(name, why)), name
    assert c.cmd("CONFIG", "SET", "hash-max-ziplist-entries", "100") == "OK"
    assert pairs(c.cmd("CONFIG", "GET", "hash-max-listpack-entries")) == {"hash-max-listpack-entries": b"100"}
    assert c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA") == "OK"
    assert pairs(c.cmd("CONFIG", "GET", "notify-keyspace-events"))["notify-keyspace-events"] == b"AKE"
    assert c.cmd("CONFIG", "SET", "notify-keyspace-events", "") == "OK"
    assert c.cmd("CONFIG", "SET", "maxmemory-clients", "10%") == "OK"
    assert pairs(c.cmd("CONFIG", "GET", "maxmemory-clients"))["maxmemory-clients"] == b"10%"
    assert set(pairs(c.cmd("CONFIG", "GET", "*of"))) >= {"slaveof", "replicaof"}
    # Hidden test configs: exact names only.
    assert pairs(c.cmd("CONFIG", "GET", "key-load-delay")) == {"key-load-delay": b"0"}
    assert "key-load-delay" not in pairs(c.cmd("CONFIG", "GET", "*delay*"))
    assert c.cmd("CONFIG", "SET", "key-load-delay", "0") == "OK"


def test_duplicate_names_in_one_config_set_are_refused(raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "maxmemory", "1", "MAXMEMORY", "2") == RespError(
        "ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter")
    assert c.cmd("CONFIG", "SET", "lua-time-limit", "100", "busy-reply-threshold", "200") == "OK"
    assert c.cmd("CONFIG", "SET", "busy-reply-threshold", "5000") == "OK"


def test_port_changes_at_runtime_and_a_busy_port_is_refused(server, raw):
    c = raw()
    old = server.port
    new = free_port()
    assert c.cmd("CONFIG", "SET", "port", str(new)) == "OK"
    assert RawConn(new).cmd("PING") == "PONG"
    assert c.cmd("PING") == "PONG"  # existing clients stay
    try:
        socket.create_connection(("127.0.0.1", old), timeout=1).close()
        still_open = True
    except OSError:
        still_open = False
    assert not still_open, "the old port still accepts"
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        got = c.cmd("CONFIG", "SET", "port", str(busy.getsockname()[1]))
        assert got == RespError("ERR CONFIG SET failed (possibly related to argument 'port') - "
                                "Unable to listen on this port. Check server logs."), got
        assert RawConn(new).cmd("PING") == "PONG"
        assert pairs(c.cmd("CONFIG", "GET", "port"))["port"] == str(new).encode()
    finally:
        busy.close()
    assert c.cmd("CONFIG", "SET", "port", str(old)) == "OK"


def test_client_reply_sequences(raw):
    c = raw()
    c.send(b"CLIENT REPLY SKIP\r\nCLIENT REPLY ON\r\nPING\r\n")
    assert c.read_replies(2) == ["OK", "PONG"]
    c.send(b"CLIENT REPLY OFF\r\nPING\r\nCLIENT REPLY SKIP\r\nPING\r\nCLIENT REPLY ON\r\nECHO x\r\n")
    assert c.read_replies(2) == ["OK", b"x"]
    c.send(b"CLIENT REPLY SKIP\r\nCLIENT REPLY SKIP\r\nECHO hidden\r\nECHO shown\r\n")
    assert c.read_reply() == b"shown"


def test_monitor_shows_exec_after_the_commands_it_ran(server, raw):
    mon = raw()
    assert mon.cmd("MONITOR") == "OK"
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("EXEC") == ["OK"]
    assert c.cmd("MULTI") == "OK"
    assert isinstance(c.cmd("SET", "a"), RespError)
    assert str(c.cmd("EXEC")).startswith("EXECABORT")
    assert c.cmd("CONFIG", "GET", "port") is not None  # admin: never shown
    assert c.cmd("PING") == "PONG"
    lines = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (lines and lines[-1].endswith('"PING"')):
        lines.append(mon.read_reply(timeout=max(0.1, deadline - time.monotonic())))
    cmds = [re.sub(r"^\S+ \[\d+ \S+\] ", "", str(x)) for x in lines]
    assert cmds == ['"MULTI"', '"SET" "a" "1"', '"EXEC"', '"MULTI"', '"EXEC"', '"PING"'], cmds


def test_client_kill_user(raw):
    c = raw()
    assert c.cmd("CLIENT", "KILL", "USER", "nosuch") == RespError("ERR No such user 'nosuch'")
    victim = raw()
    assert victim.cmd("PING") == "PONG"
    assert c.cmd("CLIENT", "KILL", "USER", "default", "SKIPME", "yes") >= 1
    assert victim.closed_by_server(timeout=5)


def test_config_set_save_is_validated_as_redis(raw):
    c = raw()
    for bad in ("abc", "10", "10 -1", "0 1", "10 x", "  ", "10  5", " 10 5", "10 0x5"):
        reply = c.cmd("CONFIG", "SET", "save", bad)
        assert isinstance(reply, RespError) and "Invalid save parameters" in str(reply), (bad, reply)
    assert c.cmd("CONFIG", "SET", "save", "3600 1 300 100") == "OK"
    assert c.cmd("CONFIG", "GET", "save") == [b"save", b"3600 1 300 100"]
    # Parsed when set, shown as numbers.
    assert c.cmd("CONFIG", "SET", "save", "+10 007 20 ") == "OK"  # an empty word is 0
    assert c.cmd("CONFIG", "GET", "save") == [b"save", b"10 7 20 0"]
    assert c.cmd("CONFIG", "SET", "save", "") == "OK"
    assert c.cmd("CONFIG", "GET", "save") == [b"save", b""]


def test_aof_settings_take_effect_by_the_next_command(raw):
    c = raw()
    assert c.cmd("SET", "k", "v") == "OK"
    assert c.cmd("CONFIG", "SET", "appendonly", "yes") == "OK"
    assert b"aof_enabled:1" in c.cmd("INFO", "persistence")
    assert c.cmd("CONFIG", "SET", "appendfsync", "ALWAYS") == "OK"  # parsed once, any case
    assert c.cmd("CONFIG", "GET", "appendfsync") == [b"appendfsync", b"always"]
    reply = c.cmd("CONFIG", "SET", "appendfsync", "sometimes")
    assert isinstance(reply, RespError) and "argument(s) must be one of the following: " \
        "everysec, always, no" in str(reply), reply
    assert c.cmd("CONFIG", "SET", "loglevel", "Warning") == "OK"
    assert c.cmd("CONFIG", "GET", "loglevel") == [b"loglevel", b"warning"]
    assert c.cmd("SET", "k2", "v2") == "OK"
    assert c.cmd("CONFIG", "SET", "appendonly", "no") == "OK"
    assert b"aof_enabled:0" in c.cmd("INFO", "persistence")
    assert c.cmd("GET", "k2") == b"v2"


def test_save_lines_at_start_up_add_points_as_redis(start_server):
    # The fixture passes --save "" first; each later --save adds its points.
    srv = start_server("--save", "900", "1", "--save", "300", "10", name="saves")
    c = srv.raw()
    assert c.cmd("CONFIG", "GET", "save") == [b"save", b"900 1 300 10"]


def test_start_banner_and_working_directory_as_redis(tmp_path):
    """Tools that start a server, Redis's own test harness among them, wait for
    " PID: <pid>" in its standard output (always-show-logo yes). As Redis, the
    server moves into `dir`: CONFIG GET dir is absolute, a relative aclfile is
    read there, and CONFIG REWRITE still finds a config file named relatively."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "users.acl").write_text("user default on nopass ~* &* +@all\nuser alice on >pw ~* +@all\n")
    (tmp_path / "server.conf").write_text(
        f"always-show-logo yes\ndir {data}\naclfile users.acl\nsave ''\nenable-protected-configs yes\n")
    port = free_port()
    proc = subprocess.Popen([server_binary(), "server.conf", "--port", str(port)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = b""
        deadline = time.monotonic() + 20
        while f" PID: {proc.pid}".encode() not in seen and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen += line
        assert f" PID: {proc.pid}".encode() in seen, seen
        assert f"Port: {port}".encode() in seen, seen
        c = None
        for _ in range(100):
            try:
                c = RawConn(port)
                break
            except OSError:
                time.sleep(0.05)
        assert c.cmd("CONFIG", "GET", "dir") == [b"dir", str(data.resolve()).encode()]
        assert c.cmd("AUTH", "alice", "pw") == "OK"
        assert c.cmd("CONFIG", "SET", "maxmemory-samples", "7") == "OK"
        assert c.cmd("CONFIG", "REWRITE") == "OK"
        assert "maxmemory-samples 7" in (tmp_path / "server.conf").read_text()
        missing = str(tmp_path / "missing")
        assert c.cmd("CONFIG", "SET", "dir", missing) == RespError(
            "ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory")
        c.send_command("SHUTDOWN", "NOSAVE")
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def test_every_setting_sets_back_to_its_value_and_a_full_rewrite_restarts(start_server):
    """Redis's "CONFIG sanity": each setting CONFIG GET * lists (but Redis's fixed
    ones) takes its own value back; DEBUG CONFIG-REWRITE-FORCE-ALL writes every
    setting and the server starts from that file with the same values."""
    srv = start_server(config="appendonly no\n")
    c = srv.raw()
    fixed = IMMUTABLE - {"cold-dir", "cold-read-threads", "cold-block-cache-size", "cold-bloom-bits-per-key"}
    got = pairs(c.cmd("CONFIG", "GET", "*"))
    for name, value in got.items():
        if name in fixed or name.startswith("tls-") or name in ("dir", "dbfilename", "requirepass"):
            continue
        assert c.cmd("CONFIG", "SET", name, value) == "OK", name
    if not is_real_redis():
        threads = pairs(c.cmd("CONFIG", "GET", "cold-read-threads"))["cold-read-threads"]
        other = str(int(threads) + 1)
        assert c.cmd("CONFIG", "SET", "cold-read-threads", other) == RespError(
            "ERR CONFIG SET failed (possibly related to argument 'cold-read-threads') - can't set immutable config")
    assert c.cmd("DEBUG", "CONFIG-REWRITE-FORCE-ALL") == "OK"
    text = srv.config_path.read_text()
    assert "\nhz 10\n" in "\n" + text and "maxmemory-policy noeviction" in text
    assert srv.stop() == []
    srv.start()
    again = pairs(srv.raw().cmd("CONFIG", "GET", "*"))
    assert {k: v for k, v in again.items() if k != "port"} == {k: v for k, v in got.items() if k != "port"}


BAD_COMMAND_LINES = [
    ["--port"], ["--port", "6380", "--loglevel"], ["--port", "6379", "6380"],
    ["--port", "--loglevel", "verbose"], ["--port", "--bla", "--loglevel", "verbose"],
    ["--logfile", "--my--log--file", "--loglevel", "--bla"], ["--shutdown-on-sigint"],
    ["--bogus", "1"], ["--maxmemory", "12", "34"],
]


def fatal_lines(binary, args):
    out = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    assert out.returncode != 0, (args, out.stdout)
    lines = out.stderr.strip().splitlines()
    # The version in the header differs; the line, its number and the reason must not.
    return [line for line in lines if not line.startswith("*** FATAL CONFIG FILE ERROR")]


def test_command_line_errors_name_the_line_as_redis():
    """As Redis's main(): the arguments become config lines ("--name" starts one,
    the arguments after it are its quoted values) and an error names the line."""
    from conftest import redis_binary
    import os
    for args in BAD_COMMAND_LINES:
        ours = fatal_lines(server_binary(), args)
        assert ours[0].startswith("Reading the configuration file, at line "), ours
        if os.access(redis_binary(), os.X_OK) and not is_real_redis():
            theirs = fatal_lines(redis_binary(), args)
            # Redis 7.0 lists four log levels; feedkv also has 7.2's "nothing".
            assert [l.replace(", nothing", "") for l in ours] == theirs, args


def test_command_line_values_as_redis_reads_them(start_server):
    srv = start_server("--maxmemory 700mb", "--maxmemory-policy volatile-lru", "--proc-title-template",
                       "--my--title--template", "--loglevel", "verbose", "--save")
    c = srv.raw()
    assert c.cmd("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"734003200"]
    assert c.cmd("CONFIG", "GET", "maxmemory-policy") == [b"maxmemory-policy", b"volatile-lru"]
    assert c.cmd("CONFIG", "GET", "proc-title-template") == [b"proc-title-template", b"--my--title--template"]
    assert c.cmd("CONFIG", "GET", "loglevel") == [b"loglevel", b"verbose"]
    assert c.cmd("CONFIG", "GET", "save") == [b"save", b""]
