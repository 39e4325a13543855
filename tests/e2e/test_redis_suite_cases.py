"""Behaviours that Redis 7.0's own test suite (tests/unit/*.tcl, run against
feedkv as an external server) found feedkv getting wrong, each as Redis has it.
Every case runs against Redis 7 as well (FEEDKV_SERVER=redis-server); the
DEBUG PROTOCOL case compares the bytes of both servers side by side.
"""

import time

import pytest

from conftest import RawConn, RespError, wait_blocked, wait_until


def raw_reply(conn, *args):
    """The bytes of one reply."""
    conn.send_command(*args)
    start = conn.pos
    conn.read_reply()
    return bytes(conn.buf[start:conn.pos])


PROTOCOL_TYPES = ["string", "integer", "double", "bignum", "null", "array", "set", "map",
                  "attrib", "push", "verbatim", "true", "false", "nosuchtype"]


def test_debug_protocol_replies_byte_for_byte_as_redis(server, redis7_server):
    for proto in ("2", "3"):
        ours, theirs = RawConn(server.port), RawConn(redis7_server.port)
        for c in (ours, theirs):
            c.cmd("HELLO", proto)
        for t in PROTOCOL_TYPES:
            got = raw_reply(ours, "DEBUG", "PROTOCOL", t)
            if t == "push" and proto == "3":  # a push, then the real reply
                got += raw_reply(ours, "PING")
                want = raw_reply(theirs, "DEBUG", "PROTOCOL", t) + raw_reply(theirs, "PING")
            else:
                want = raw_reply(theirs, "DEBUG", "PROTOCOL", t)
            assert got == want, (proto, t)


def test_debug_protocol_types(server):
    c = RawConn(server.port)
    assert c.cmd("DEBUG", "PROTOCOL", "string") == b"Hello World"
    assert c.cmd("DEBUG", "PROTOCOL", "array") == [0, 1, 2]
    assert isinstance(c.cmd("DEBUG", "PROTOCOL", "push"), RespError)  # RESP2
    c.cmd("HELLO", "3")
    assert c.cmd("DEBUG", "PROTOCOL", "map") == {0: False, 1: True, 2: False}
    assert c.cmd("DEBUG", "PROTOCOL", "bignum") == 1234567999999999999999999999999999999


def test_client_kill_skipme_takes_only_yes_or_no(server):
    c = RawConn(server.port)
    reply = c.cmd("CLIENT", "KILL", "SKIPME", "yes_or_no")
    assert isinstance(reply, RespError) and str(reply).startswith("ERR syntax error")
    assert c.cmd("PING") == "PONG"  # nobody was killed, this client least of all


def test_zrandmember_and_hrandfield_refuse_the_lowest_count(server):
    c = RawConn(server.port)
    c.cmd("ZADD", "z", "0", "a")
    c.cmd("HSET", "h", "f", "v")
    for args in (("ZRANDMEMBER", "z", "-9223372036854775808"),
                 ("ZRANDMEMBER", "z", "-9223372036854775808", "WITHSCORES"),
                 ("HRANDFIELD", "h", "-9223372036854775808")):
        reply = c.cmd(*args)
        assert isinstance(reply, RespError) and "value is out of range" in str(reply), args
    reply = c.cmd("ZRANDMEMBER", "z", "-9223372036854770000", "WITHSCORES")
    assert str(reply) == "ERR value is out of range"


def test_digest_value_depends_on_the_value_not_the_key(server):
    c = RawConn(server.port)
    c.cmd("RPUSH", "l", "a", "b", "c")
    c.cmd("HSET", "h", "f", "17179869184")
    for key in ("l", "h"):
        assert c.cmd("COPY", key, key + ":copy") == 1
        digest = c.cmd("DEBUG", "DIGEST-VALUE", key)
        assert c.cmd("DEBUG", "DIGEST-VALUE", key + ":copy") == digest
        c.cmd("DEL", key)
        assert c.cmd("DEBUG", "DIGEST-VALUE", key + ":copy") == digest
    assert c.cmd("DEBUG", "DIGEST-VALUE", "nokey") == ["0" * 40]


def watch_swap_exec(c, key):
    """WATCH key in db 1, SWAPDB 0 1, then EXEC a PING: the EXEC reply."""
    c.cmd("SELECT", "1")
    c.cmd("WATCH", key)
    c.cmd("SWAPDB", "0", "1")
    c.cmd("MULTI")
    c.cmd("PING")
    return c.cmd("EXEC")


def test_swapdb_bringing_in_a_stale_key_does_not_fail_a_watcher(server):
    c = RawConn(server.port)
    c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        # Nothing replaced with a stale key: no change.
        c.cmd("SELECT", "0")
        c.cmd("SET", "x", "foo", "PX", "1")
        time.sleep(0.01)
        assert watch_swap_exec(c, "x") == ["PONG"]
        # A stale key replaced with another stale key: no change either.
        c.cmd("FLUSHALL")
        c.cmd("SELECT", "1")
        c.cmd("SET", "x", "foo", "PX", "1")
        c.cmd("SELECT", "0")
        c.cmd("SET", "x", "bar", "PX", "1")
        time.sleep(0.01)
        assert watch_swap_exec(c, "x") == ["PONG"]
        # A live key brought in is a change.
        c.cmd("SELECT", "0")
        c.cmd("SET", "y", "live")
        assert watch_swap_exec(c, "y") is None
    finally:
        c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_exec_of_a_queued_write_is_refused_without_enough_replicas(server):
    c, other = RawConn(server.port), RawConn(server.port)
    c.cmd("SET", "xx", "1")
    c.cmd("MULTI")
    c.cmd("INCR", "xx")
    other.cmd("CONFIG", "SET", "min-replicas-to-write", "2")
    try:
        reply = c.cmd("EXEC")
        assert isinstance(reply, RespError)
        assert str(reply).startswith("EXECABORT") and "NOREPLICAS" in str(reply)
        assert c.cmd("GET", "xx") == b"1"
        c.cmd("MULTI")  # a read-only transaction still runs
        c.cmd("GET", "xx")
        assert c.cmd("EXEC") == [b"1"]
    finally:
        other.cmd("CONFIG", "SET", "min-replicas-to-write", "0")


def test_resp3_subscribe_confirmations_arrive_under_client_reply_off(server):
    sub, pub = RawConn(server.port), RawConn(server.port)
    sub.cmd("HELLO", "3")
    sub.send_command("CLIENT", "REPLY", "OFF")
    sub.send_command("SUBSCRIBE", "channel")
    assert sub.read_reply() == [b"subscribe", b"channel", 1]
    assert pub.cmd("PUBLISH", "channel", "hello") == 1
    assert sub.read_reply() == [b"message", b"channel", b"hello"]
    sub.send_command("UNSUBSCRIBE", "channel")
    assert sub.read_reply() == [b"unsubscribe", b"channel", 0]


def test_expired_keys_stay_while_clients_are_paused(server):
    c = RawConn(server.port)

    def expired_keys():
        info = c.cmd("INFO", "stats").decode()
        return int(info.split("expired_keys:")[1].split("\r\n")[0])

    before = expired_keys()
    c.cmd("MULTI")
    c.cmd("SET", "foo", "bar", "PX", "10")
    c.cmd("SET", "bar", "foo", "PX", "10")
    c.cmd("CLIENT", "PAUSE", "50000", "WRITE")
    c.cmd("EXEC")
    try:
        assert wait_until(lambda: c.cmd("GET", "foo") is None and c.cmd("GET", "bar") is None, 2)
        time.sleep(0.3)  # active expiry would have run by now
        assert expired_keys() == before
    finally:
        c.cmd("CLIENT", "UNPAUSE")
    c.cmd("GET", "foo")
    c.cmd("GET", "bar")
    assert expired_keys() == before + 2


def test_a_lazy_expiry_reaches_a_noloop_bcast_tracker(server):
    c, redir = RawConn(server.port), RawConn(server.port)
    redir_id = redir.cmd("CLIENT", "ID")
    redir.cmd("SUBSCRIBE", "__redis__:invalidate")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(redir_id), "NOLOOP")
    c.cmd("MULTI")
    c.cmd("SET", "mykey", "myval", "PX", "1")
    c.cmd("SET", "mykeyotherkey", "myval")
    c.cmd("DEBUG", "SLEEP", "0.1")
    c.cmd("GET", "mykey")
    c.cmd("EXEC")
    # The client's own SETs are hidden (NOLOOP); the expiry is the server's.
    assert redir.read_reply(timeout=5) == [b"message", b"__redis__:invalidate", [b"mykey"]]


def test_function_load_takes_the_engine_name_in_any_case(server):
    c = RawConn(server.port)
    assert c.cmd("FUNCTION", "LOAD", "#!LUA name=test\nredis.register_function('test', function() return 'hello' end)") == b"test"
    assert c.cmd("FCALL", "test", "0") == b"hello"
    c.cmd("FUNCTION", "FLUSH")


@pytest.mark.server_args("--appendonly", "yes")
def test_debug_loadaof_loads_what_a_restart_would(server):
    c = RawConn(server.port)
    for i in range(200):
        c.cmd("SET", f"k{i}", i)
    c.cmd("RPUSH", "l", "a", "b")
    c.cmd("EXPIRE", "l", "1000")
    digest = c.cmd("DEBUG", "DIGEST")
    assert c.cmd("DEBUG", "LOADAOF") == "OK"
    assert c.cmd("DEBUG", "DIGEST") == digest
    assert c.cmd("DBSIZE") == 201
    assert 900 < c.cmd("TTL", "l") <= 1000
    assert c.cmd("BGREWRITEAOF") is not None
    wait_until(lambda: b"aof_rewrite_in_progress:0" in c.cmd("INFO", "persistence"), 10)
    c.cmd("SET", "after", "rewrite")
    assert c.cmd("DEBUG", "LOADAOF") == "OK"
    assert c.cmd("GET", "after") == b"rewrite"
    assert c.cmd("DBSIZE") == 202


def test_debug_quicklist_help_lists_the_new_subcommands(server):
    c = RawConn(server.port)
    help_lines = "\n".join(c.cmd("DEBUG", "HELP"))
    for sub in ("LOADAOF", "PROTOCOL <type>", "QUICKLIST-PACKED-THRESHOLD <size>"):
        assert sub in help_lines


def test_debug_reload_noflush_keeps_the_dataset_and_merge_replaces(server):
    c = RawConn(server.port)
    c.cmd("SET", "x", "1")
    c.cmd("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 'one' end)")
    assert c.cmd("SAVE") == "OK"
    c.cmd("SET", "y", "only-in-memory")
    c.cmd("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f2', function() return 'two' end)")
    # NOFLUSH alone: the snapshot's library is already here, so the load fails.
    reply = c.cmd("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH")
    assert isinstance(reply, RespError) and "Error trying to load the RDB" in str(reply)
    c.cmd("SET", "x", "changed")
    assert c.cmd("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == "OK"
    assert c.cmd("GET", "x") == b"1"  # the snapshot's value wins
    assert c.cmd("GET", "y") == b"only-in-memory"  # kept
    assert c.cmd("FCALL", "f1", "0") == b"one" and c.cmd("FCALL", "f2", "0") == b"two"
    reply = c.cmd("DEBUG", "RELOAD", "BOGUS")
    assert str(reply) == "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
    c.cmd("FUNCTION", "FLUSH")


def test_latency_monitor_records_slow_commands_above_the_threshold(server):
    c = RawConn(server.port)
    assert c.cmd("LATENCY", "LATEST") == []  # threshold 0: nothing is recorded
    c.cmd("DEBUG", "SLEEP", "0.05")
    assert c.cmd("LATENCY", "LATEST") == []
    c.cmd("CONFIG", "SET", "latency-monitor-threshold", "20")
    try:
        c.cmd("DEBUG", "SLEEP", "0.05")
        latest = c.cmd("LATENCY", "LATEST")
        assert len(latest) == 1 and latest[0][0] == b"command"
        event, when, latency, worst = latest[0]
        assert 40 <= latency <= 1000 and worst == latency and abs(when - time.time()) < 5
        history = c.cmd("LATENCY", "HISTORY", "command")
        assert history == [[when, latency]]
        assert c.cmd("LATENCY", "HISTORY", "nosuchevent") == []
        assert b"command" in bytes(c.cmd("LATENCY", "DOCTOR"))
        assert c.cmd("LATENCY", "RESET", "nosuchevent") == 0
        assert c.cmd("LATENCY", "RESET") == 1
        assert c.cmd("LATENCY", "LATEST") == []
    finally:
        c.cmd("CONFIG", "SET", "latency-monitor-threshold", "0")


def test_eval_shows_in_monitor_before_the_commands_its_script_runs(server):
    c, mon = RawConn(server.port), RawConn(server.port)
    assert mon.cmd("MONITOR") == "OK"
    c.cmd("EVAL", "redis.call('set', KEYS[1], ARGV[1])", "1", "foo", "bar")
    first, second = str(mon.read_reply()), str(mon.read_reply())
    assert '"EVAL"' in first or '"eval"' in first
    assert "lua]" in second and '"set" "foo" "bar"' in second


def test_pause_write_holds_publish_and_scripts_that_may_write(server):
    c, pub, script, ro = (RawConn(server.port) for _ in range(4))
    c.cmd("CLIENT", "PAUSE", "100000", "WRITE")
    try:
        pub.send_command("PUBLISH", "ch", "msg")
        script.send_command("EVAL", "return 1", "0")
        wait_blocked(server, 2)
        # A script declaring no-writes is not held; a read-only script cannot publish.
        assert ro.cmd("EVAL", "#!lua flags=no-writes\nreturn 2", "0") == 2
        reply = ro.cmd("EVAL_RO", "return redis.call('publish', 'ch', 'msg')", "0")
        assert isinstance(reply, RespError) and "not allowed from read-only scripts" in str(reply)
    finally:
        c.cmd("CLIENT", "UNPAUSE")
    assert pub.read_reply() == 0
    assert script.read_reply() == 1


def test_function_library_metadata_and_registration_errors(server):
    c = RawConn(server.port)
    # The shebang is split as Redis's sdssplitargs: name="foo" names foo.
    assert c.cmd("FUNCTION", "LOAD", "REPLACE", "#!lua name=\"foo\"\nredis.register_function('foo', function() return 1 end)") == b"foo"
    assert c.cmd("FCALL", "FOO", "0") == 1  # function names match in any case
    cases = [
        ("redis.register_function('f1')", "only applicable to Lua table"),
        ("redis.register_function('test\\0test', function() return 1 end)", "Library names can only contain"),
        ("redis.register_function{function_name='f1', callback=function() return 1 end, flags='no-writes'}",
         "flags argument to redis.register_function must be a table"),
        ("return math.random()", "attempted to access nonexistent global variable 'math'"),
    ]
    for body, want in cases:
        reply = c.cmd("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib2\n" + body)
        assert isinstance(reply, RespError) and want in str(reply), (body, reply)
    reply = c.cmd("FUNCTION", "restore", "a", "b", "c")  # echoed as sent
    assert str(reply) == "ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP."
    c.cmd("FUNCTION", "FLUSH")


def scripting_case_replies(srv):
    """The replies of Redis 7.0's scripting.tcl cases that feedkv used to fail."""
    c = RawConn(srv.port)
    out = []
    # A call with as many arguments as Lua's C stack holds still has room for its reply.
    out.append(c.cmd("EVAL", "local a = {} for i=1,7999 do a[i] = 1 end "
                             "return redis.call('lpush', 'l', unpack(a))", "0"))
    # Precompiled bytecode does not load.
    try:
        out.append(c.cmd("EVAL", "return loadstring(string.dump(function() return 1 end))()", "0"))
    except RespError as e:
        out.append("attempt to call a nil value" in str(e))
    # A big number's CR/LF become spaces in RESP2 too.
    out.append(raw_reply(c, "EVAL", "return {big_number='123\\r\\n123'}", "0"))
    # With deny-script lifted (a DEBUG switch for tests), a script's RESP3 replies
    # keep their types: attributes skipped, verbatim strings kept.
    c.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    c.cmd("HELLO", "3")
    for t in ("attrib", "verbatim", "bignum"):
        out.append(raw_reply(c, "EVAL", f"redis.setresp(3);return redis.call('debug', 'protocol', '{t}')", "0"))
    # The clock stands still inside a script: a key set with PX 1 outlives a sleep.
    out.append(c.cmd("EVAL", "redis.call('SET', 'k', 'v', 'PX', '1') redis.call('DEBUG', 'SLEEP', '0.01') "
                             "return redis.call('EXISTS', 'k')", "0"))
    c.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
    # DEBUG OBJECT sees an expired key without deleting it.
    c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    c.cmd("SET", "gone", "v", "PX", "1")
    time.sleep(0.01)
    out.append(c.cmd("DEBUG", "OBJECT", "gone") is not None)
    out.append(c.cmd("EXISTS", "gone"))
    c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    return out


def test_scripting_cases_match_redis(server, redis7_server):
    assert scripting_case_replies(server) == scripting_case_replies(redis7_server)
