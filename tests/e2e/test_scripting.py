"""Lua scripting (EVAL, EVALSHA, EVAL_RO, SCRIPT), side by side with Redis 7.

The transcript below runs on feedkv and on Redis 7 and both must reply the same
to every command: conversions both ways, the sandbox (read-only globals, no
os/io/print), error texts with their "script: <sha>, on @user_script:<line>."
suffix, redis.pcall and pcall, redis.error_reply/status_reply/sha1hex/setresp,
SELECT inside a script, EVAL_RO, SCRIPT LOAD/EXISTS/FLUSH and bad arguments.
Then: redis-py's Lock (its release is a script), a script's writes logged as the
commands it ran inside MULTI/EXEC (the AOF, a restart and a replica agree), WATCH
seeing a script's write, and INFO's script fields.
"""

import os
import time

import pytest
import redis

from conftest import RawConn, RespError, is_real_redis
from persist_util import Server, kill_all, wait_until

# Each entry is one command; the transcript starts on an empty server.
TRANSCRIPT = [
    ("EVAL", "return redis.call('incr','s')", "0"),
    ("SET", "s", "abc"),
    ("EVAL", "return redis.call('incr','s')", "0"),
    ("EVAL", "return redis.pcall('incr','s')", "0"),
    ("EVAL", "return x", "0"),
    ("EVAL", "x = 1", "0"),
    ("EVAL", "return {1,2,3.7,'a',nil,4}", "0"),
    ("EVAL", "return {ok='fine'}", "0"),
    ("EVAL", "return {err='My Error'}", "0"),
    ("EVAL", "return redis.error_reply('boom')", "0"),
    ("EVAL", "return redis.error_reply('MY boom')", "0"),
    ("EVAL", "return redis.error_reply('-X y')", "0"),
    ("EVAL", "return {err='a\\nb'}", "0"),
    ("EVAL", "return redis.status_reply('yo')", "0"),
    ("EVAL", "return redis.status_reply('a\\nb')", "0"),
    ("EVAL", "return redis.call('nosuch')", "0"),
    ("EVAL", "return redis.call('eval','return 1','0')", "0"),
    ("EVAL", "return redis.call('get')", "0"),
    ("EVAL", "return redis.call('get', 'a', 'b')", "0"),
    ("EVAL", "return 1 +", "0"),
    ("EVAL", "error('custom')", "0"),
    ("EVAL", "error({err='TBL thing'})", "0"),
    ("EVAL", "error({err='ERR x\\ny'})", "0"),
    ("EVAL", "error(5)", "0"),
    ("EVAL", "error('-MY x')", "0"),
    ("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"),
    ("EVAL", "return 1", "-1"),
    ("EVAL", "return 1", "2", "a"),
    ("EVAL", "return 1", "abc"),
    ("EVAL", "return redis.call()", "0"),
    ("EVAL", "return redis.call(1)", "0"),
    ("EVAL", "return redis.call('set','k',{})", "0"),
    ("EVAL", "return redis.call('set', 'k', true)", "0"),
    ("EVAL", "return true", "0"),
    ("EVAL", "return false", "0"),
    ("EVAL", "return nil", "0"),
    ("EVAL", "", "0"),
    ("EVAL", "return 'x', 'y'", "0"),
    ("EVAL", "return 3.99", "0"),
    ("EVAL", "return -3.99", "0"),
    ("EVAL", "return 1/0", "0"),
    ("EVAL", "return {1,{2,{3}}}", "0"),
    ("EVAL", "return {1, 'a', {ok='x'}, {err='y'}, true, false}", "0"),
    ("EVAL", "return {1, 2, nil, 3}", "0"),
    ("EVAL", "return {double=1.5}", "0"),
    ("EVAL", "return {map={a=1}}", "0"),
    ("EVAL", "return redis.sha1hex('')", "0"),
    ("EVAL", "return redis.sha1hex('abc')", "0"),
    ("EVAL", "return redis.sha1hex(string.rep('x', 1000))", "0"),
    ("EVAL", "return redis.sha1hex()", "0"),
    ("EVAL", "return redis.status_reply()", "0"),
    ("EVAL", "return redis.error_reply(5)", "0"),
    ("EVAL", "return redis.call('get','nokey')", "0"),
    ("EVAL", "return type(redis.call('get','nokey'))", "0"),
    ("EVAL", "local t = {} t.x = 1 return t.x", "0"),
    ("EVAL", "return type(loadstring)", "0"),
    ("EVAL", "return type(os)", "0"),
    ("EVAL", "return type(io)", "0"),
    ("EVAL", "return type(print)", "0"),
    ("EVAL", "return type(require)", "0"),
    ("EVAL", "return type(dofile)", "0"),
    ("EVAL", "return type(debug)", "0"),
    ("EVAL", "return type(newproxy)", "0"),
    ("EVAL", "return type(cjson)..type(bit)..type(redis)..type(string)..type(_G)..type(coroutine)", "0"),
    ("EVAL", "return _VERSION", "0"),
    ("EVAL", "redis.call = nil return 1", "0"),
    ("EVAL", "string.sub = nil return 1", "0"),
    ("EVAL", "rawset(_G, 'zz', 1) return zz", "0"),
    ("EVAL", "function f() end", "0"),
    ("EVAL", "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "1", "k", "a"),
    ("EVAL", "return #KEYS", "0"),
    ("EVAL", "return redis.call('select', '1')", "0"),
    ("EVAL", "redis.call('select', '1') return redis.call('set','dbk','1')", "0"),
    ("EXISTS", "dbk"),
    ("EVAL", "return redis.call('select', '99')", "0"),
    ("SCRIPT", "LOAD", "return 1"),
    ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "ffffffffffffffffffffffffffffffffffffffff"),
    ("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"),
    ("EVALSHA", "e0e1f9fabfc9", "0"),
    ("EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"),
    ("EVAL_RO", "return redis.call('set','x','1')", "0"),
    ("EVAL_RO", "return redis.call('get','x')", "0"),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('set','x','1')", "0"),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "0"),
    ("EVAL", "#!lua flags=bogus\nreturn 1", "0"),
    ("EVAL", "#!python\nreturn 1", "0"),
    ("EVAL", "#!lua\nreturn redis.call('incr', 'lua-counter')", "0"),
    ("EVAL", "#!lua\n\nerror('line three')", "0"),
    ("EVAL", "return redis.setresp(3)", "0"),
    ("EVAL", "return redis.setresp(4)", "0"),
    ("EVAL", "return redis.setresp()", "0"),
    ("HSET", "h", "a", "1"),
    ("EVAL", "redis.setresp(3) return redis.call('hgetall','h')", "0"),
    ("EVAL", "redis.setresp(3) return {redis.call('hgetall','h')['map']['a']}", "0"),
    ("EVAL", "redis.setresp(3) return type(redis.call('get','nokey'))", "0"),
    ("EVAL", "redis.setresp(3) return false", "0"),
    ("EVAL", "redis.setresp(3) return true", "0"),
    ("EVAL", "return redis.call('get','h')", "0"),
    ("EVAL", "return redis.pcall('get','h')", "0"),
    ("EVAL", "return redis.pcall('get','h')['err']", "0"),
    ("EVAL", "local ok, e = pcall(redis.call, 'get', 'h') return {tostring(ok), e}", "0"),
    ("EVAL", "local ok, e = pcall(redis.call, 'get', 'h') error(e)", "0"),
    ("EVAL", "local ok, e = pcall(redis.call, 'nosuch') return e", "0"),
    ("EVAL", "local ok, e = pcall(error, {err='x'}) return type(e)", "0"),
    ("EVAL", "local function f()\n return redis.call('get','h')\nend\n\nreturn f()", "0"),
    ("EVAL", "return redis.call('ping')", "0"),
    ("EVAL", "return redis.call('ping')['ok']", "0"),
    ("EVAL", "return redis.call('blpop', 'nolist', '0')", "0"),
    ("EVAL", "return redis.call('multi')", "0"),
    ("EVAL", "return redis.call('subscribe', 'c')", "0"),
    ("EVAL", "return redis.call('script', 'load', 'return 1')", "0"),
    ("EVAL", "return redis.call('set', 'z', 0.1)", "0"),
    ("GET", "z"),
    ("EVAL", "return redis.call('set', 'z', -0.0)", "0"),
    ("GET", "z"),
    ("EVAL", "return redis.call('set', 'z', 1/0)", "0"),
    ("GET", "z"),
    ("EVAL", "return redis.call('set', 'z', 10000000000000000)", "0"),
    ("GET", "z"),
    ("EVAL", "return redis.call('incrbyfloat', 'fl', '1.5')", "0"),
    ("EVAL", "return cjson.encode({1,2,{a=1}})", "0"),
    ("EVAL", "return cjson.decode('[1,2,{\"a\":3}]')[3].a", "0"),
    ("EVAL", "return bit.band(7, 3)", "0"),
    ("EVAL", "return bit.tohex(255)", "0"),
    ("EVAL", "return tonumber('0x10')", "0"),
    ("EVAL", "return redis.log(redis.LOG_WARNING, 'hello', 'there')", "0"),
    ("EVAL", "return redis.log(9, 'x')", "0"),
    ("EVAL", "return redis.log(1)", "0"),
    ("EVAL", "return redis.breakpoint()", "0"),
    ("EVAL", "return redis.debug('x')", "0"),
    ("EVAL", "return redis.set_repl(redis.REPL_ALL)", "0"),
    ("EVAL", "return redis.set_repl(9)", "0"),
    ("EVAL", "return redis.replicate_commands()", "0"),
    ("EVAL", "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}", "0"),
    ("EVAL", "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}", "0"),
    ("EVAL", "return redis.acl_check_cmd('get','x')", "0"),
    ("EVAL", "return redis.acl_check_cmd('nosuch')", "0"),
    ("EVAL", "return redis.call('object', 'help')[1]", "0"),
    ("EVAL", "return redis.call('GET', KEYS[1])", "1", "h"),
    ("SCRIPT", "FLUSH"),
    ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"),
    ("SCRIPT", "FLUSH", "ASYNC"),
    ("SCRIPT", "FLUSH", "bad"),
    ("SCRIPT", "KILL"),
    ("SCRIPT", "EXISTS"),
    ("SCRIPT", "nope"),
    ("SCRIPT", "LOAD", "return +"),
    ("SCRIPT", "HELP"),
    ("EVAL",),
    ("MULTI",),
    ("EVAL", "return redis.call('incr', 'm')", "0"),
    ("EVAL", "return redis.call('incr', 'm')", "0"),
    ("EXEC",),
    # Number arguments reach the command as Redis formats them ("%.17g"),
    # integral ones below 1e17 as plain digits.
] + [("EVAL", f"redis.call('set', 'num', {v}) return redis.call('get', 'num')", "0")
     for v in ("1.5e300", "-0.0", "123456789012345678", "-99999999999999999",
               "99999999999999984", "-5", "0", "3.0", "1e16", "0.1", "1/0", "-1/0", "0/0")]

# The cmsgpack and struct libraries: encodings byte for byte, decoding, offsets
# and the libraries' own error texts.
LIB_TRANSCRIPT = [
    ("EVAL", "return cmsgpack.pack()", "0"),
    ("EVAL", "return cmsgpack.unpack('')", "0"),
    ("EVAL", "return cmsgpack.unpack(string.char(0xc1))", "0"),
    ("EVAL", "return cmsgpack.unpack(string.char(0xcd, 1))", "0"),
    ("EVAL", "return {cmsgpack.unpack(string.char(0x93, 1))}", "0"),
    ("EVAL", "return cmsgpack.pack({1,2,nil,4})", "0"),
    ("EVAL", "return cmsgpack.pack({[1]=1,[3]=3})", "0"),
    ("EVAL", "return cmsgpack.pack({a=1})", "0"),
    ("EVAL", "return cmsgpack.pack(1.5, 0.1, -1, -32, -33, -129, -40000, 127, 128, 200, 256, 70000, 5000000000, -5000000000, 1/0, -1/0)", "0"),
    ("EVAL", "return cmsgpack.pack(string.rep('x',31), string.rep('y', 32), string.rep('z', 300), string.rep('w', 70000))", "0"),
    ("EVAL", "return cmsgpack.pack({}, {{}}, true, false, nil)", "0"),
    ("EVAL", "local t = {} for i = 1, 20 do t[i] = i end return cmsgpack.pack(t)", "0"),
    ("EVAL", "local t = {} for i = 1, 70000 do t[i] = 1 end return #cmsgpack.pack(t)", "0"),
    ("EVAL", "local t = {} local c = t for i=1,20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)", "0"),
    ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3))}", "0"),
    ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 2)}", "0"),
    ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 3)}", "0"),
    ("EVAL", "return cmsgpack.unpack_one(string.char(1), 5)", "0"),
    ("EVAL", "return {cmsgpack.unpack_one('')}", "0"),
    ("EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2)}", "0"),
    ("EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0, 1)}", "0"),
    ("EVAL", "return {cmsgpack.unpack(cmsgpack.pack(1,2,3))}", "0"),
    ("EVAL", "return cmsgpack.unpack(cmsgpack.pack({a={b={c=1}}})).a.b.c", "0"),
    ("EVAL", "local v = cmsgpack.unpack(cmsgpack.pack({1, 'two', {3}, false})) return {v[1], v[2], v[3][1], tostring(v[4])}", "0"),
    ("EVAL", "local t = cmsgpack.unpack(cmsgpack.pack({x=1.5, y=-0.25})) return {tostring(t.x), tostring(t.y)}", "0"),
    ("EVAL", "return {cmsgpack.unpack(string.char(0xd0, 0x80, 0xd1, 0x80, 0x00, 0xd2, 0x80, 0, 0, 0, 0xcf, 0, 0, 0, 1, 0, 0, 0, 0))}", "0"),
    ("EVAL", "return cmsgpack.unpack(string.char(0xc4, 2) .. 'ab')", "0"),
    ("EVAL", "return cmsgpack.unpack(string.char(0xdc, 0, 2, 1, 2))[2]", "0"),
    ("EVAL", "return cmsgpack.unpack(string.char(0xdd, 0, 0, 0, 200))", "0"),
    ("EVAL", "return tostring(cmsgpack.unpack(string.char(0xca, 0x3f, 0xc0, 0, 0)))", "0"),
    ("EVAL", "return type(cmsgpack.unpack_one)..type(cmsgpack.unpack_limit)..tostring(cmsgpack._NAME)..tostring(cmsgpack._VERSION)", "0"),
    ("EVAL", "cmsgpack.pack = nil", "0"),
    ("EVAL", "return struct.pack('>i4', 5)", "0"),
    ("EVAL", "return struct.pack('<i4 >h b B', -2, 513, -1, 255)", "0"),
    ("EVAL", "return struct.size('>i4d')", "0"),
    ("EVAL", "return {struct.unpack('<h', 'ab')}", "0"),
    ("EVAL", "return struct.pack('z', 1)", "0"),
    ("EVAL", "return struct.pack('i17', 1)", "0"),
    ("EVAL", "return struct.pack('i33', 1)", "0"),
    ("EVAL", "return struct.size('s')", "0"),
    ("EVAL", "return struct.size('c0')", "0"),
    ("EVAL", "return struct.size('!4bi')", "0"),
    ("EVAL", "return struct.size('!bd')", "0"),
    ("EVAL", "return struct.pack('!4bi', 1, 2)", "0"),
    ("EVAL", "return {struct.unpack('>i4', string.char(0,0,0,5), 2)}", "0"),
    ("EVAL", "return {struct.unpack('>i4', 'abc')}", "0"),
    ("EVAL", "return {struct.unpack('bc0', string.char(3)..'abcd')}", "0"),
    ("EVAL", "return {struct.unpack('s', 'ab')}", "0"),
    ("EVAL", "return {struct.unpack('s', 'ab\\0cd')}", "0"),
    ("EVAL", "return struct.pack('c', 'abc')", "0"),
    ("EVAL", "return struct.pack('c0', 'abc')", "0"),
    ("EVAL", "return struct.pack('c5', 'abc')", "0"),
    ("EVAL", "return struct.pack('s', 'ab')", "0"),
    ("EVAL", "return struct.pack('<i17', -1)", "0"),
    ("EVAL", "return {struct.unpack('<i17', struct.pack('<i17', -1))}", "0"),
    ("EVAL", "return {struct.unpack('<d', struct.pack('<d', 1.5))}", "0"),
    ("EVAL", "return {struct.unpack('>d', struct.pack('>d', -2.5))}", "0"),
    ("EVAL", "return struct.pack('>f', 1.5)", "0"),
    ("EVAL", "return {struct.unpack('>f', struct.pack('>f', 1.5))}", "0"),
    ("EVAL", "return struct.pack('!3i', 1)", "0"),
    ("EVAL", "return struct.pack('i99999999999', 1)", "0"),
    ("EVAL", "return {struct.unpack('>I2', 'ab', 0)}", "0"),
    ("EVAL", "return {struct.unpack('>I2', 'ab', 3)}", "0"),
    ("EVAL", "return {struct.unpack('>I2', 'ab', 5)}", "0"),
    ("EVAL", "return {struct.unpack('>I2 x B', 'abcd')}", "0"),
    ("EVAL", "return struct.pack('x b', 7)", "0"),
    ("EVAL", "return struct.pack('i')", "0"),
    ("EVAL", "return struct.pack('>I8 <l', 2^40, -3)", "0"),
    ("EVAL", "return {struct.unpack('>l', struct.pack('>l', -3))}", "0"),
    ("EVAL", "return {struct.unpack('c0', 'x')}", "0"),
    # SORT BY a constant pattern inside a script sorts a set's members (Redis's CLIENT_SCRIPT rule).
    ("SADD", "sortset", "b", "aa", "c", "a", "azz"),
    ("EVAL", "return redis.call('sort', KEYS[1], 'by', '_')", "1", "sortset"),
    ("EVAL", "return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')", "1", "sortset"),
    # Redis's global protection tricks: the globals and their metatable are read-only.
    ("EVAL", "setmetatable(_G, {})", "0"),
    ("EVAL", "local g = getmetatable(_G)\ng.__index = {}", "0"),
    ("EVAL", "return type(getmetatable(_G))", "0"),
    ("EVAL", "return type(getmetatable(redis))", "0"),
    ("EVAL", "setmetatable(redis, nil)", "0"),
    ("EVAL", "local t = setmetatable({}, {__index = function() return 5 end})\nreturn t.x", "0"),
]


def run_transcript(srv, transcript):
    c = RawConn(srv.port)
    out = [(cmd[0], c.cmd(*cmd)) for cmd in transcript]
    c.close()
    return out


@pytest.mark.parametrize("transcript", [TRANSCRIPT, LIB_TRANSCRIPT], ids=["redis-lib", "cmsgpack-struct"])
def test_transcript_matches_redis(server, redis7_server, transcript):
    ours, theirs = run_transcript(server, transcript), run_transcript(redis7_server, transcript)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"{transcript[i]!r}: feedkv {a[1]!r} != redis {b[1]!r}"


def test_garbage_for_cmsgpack_and_struct_is_an_error_not_a_crash(server):
    import random
    rng = random.Random(7)
    r = server.client()
    script = ("local ok1 = pcall(cmsgpack.unpack, ARGV[1]) "
              "local ok2 = pcall(struct.unpack, ARGV[2], ARGV[1]) return 1")
    formats = ["i4", ">I8", "c0", "s", "bc0", "!8d", "xxi2", "<f", "c3s"]
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(12)))
        assert r.eval(script, 0, data, rng.choice(formats)) == 1
    assert r.ping()


def test_redis_py_lock_acquires_and_releases(server):
    r = server.client()
    lock = r.lock("resource", timeout=30)
    assert lock.acquire(blocking=False)
    assert not r.lock("resource", timeout=30).acquire(blocking=False)
    lock.extend(10)
    assert r.pttl("resource") > 30000
    lock.release()  # EVALSHA of redis-py's release script
    assert r.exists("resource") == 0
    stolen = r.lock("resource", timeout=30)
    assert stolen.acquire(blocking=False)
    r.set("resource", "someone else")
    with pytest.raises(redis.exceptions.LockNotOwnedError):
        stolen.release()  # the script compares tokens and deletes nothing
    assert r.get("resource") == "someone else"


def test_redis_py_register_script(server):
    r = server.client()
    incr_by = r.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    assert incr_by(keys=["n"], args=[5]) == 5
    r.script_flush()
    assert incr_by(keys=["n"], args=[2]) == 7  # NOSCRIPT, then EVAL again


def test_writes_are_logged_as_commands_in_one_transaction(tmp_path):
    # Effects replication: the AOF and a replica get the commands the script ran
    # (never EVAL), wrapped in MULTI/EXEC; a restart rebuilds the same data.
    if is_real_redis():
        pytest.skip("reads feedkv's AOF layout")
    master = Server(tmp_path / "master").start()
    replica = Server(tmp_path / "replica")
    try:
        replica.start("--replicaof", "127.0.0.1", str(master.port))
        wait_until(lambda: replica.client().info("replication").get("master_link_status") == "up",
                   timeout=30, what="the replica's link")
        mc = master.client()
        script = ("redis.call('set', KEYS[1], ARGV[1]) "
                  "redis.call('rpush', KEYS[2], 'a', 'b') "
                  "return redis.call('incr', KEYS[3])")
        assert mc.eval(script, 3, "k", "l", "n", "v") == 1
        assert mc.eval("return redis.call('get', 'k')", 0) == "v"  # a read logs nothing
        aof = b"".join(open(os.path.join(master.aof_dir, f), "rb").read()
                       for f in sorted(os.listdir(master.aof_dir)) if f[-1].isdigit())
        assert b"EVAL" not in aof.upper()
        multi = aof.index(b"MULTI")
        assert aof.index(b"$3\r\nset\r\n") > multi or aof.index(b"$3\r\nSET\r\n") > multi
        assert aof.count(b"MULTI") == 1 and aof.count(b"EXEC") == 1
        wait_until(lambda: replica.client().get("n") == "1", timeout=10, what="the script's writes on the replica")
        rc = replica.client()
        assert rc.get("k") == "v" and rc.lrange("l", 0, -1) == ["a", "b"]
        with pytest.raises(redis.exceptions.ReadOnlyError):
            rc.eval("return redis.call('set', 'x', '1')", 0)
        assert rc.eval("return redis.call('get', 'k')", 0) == "v"
        master.stop()
        master.start()
        mc = master.client()
        assert (mc.get("k"), mc.lrange("l", 0, -1), mc.get("n")) == ("v", ["a", "b"], "1")
    finally:
        assert not kill_all()


def test_watch_sees_a_scripts_write(server):
    a, b = server.client(), server.client()
    a.set("w", "1")
    with a.pipeline() as p:
        p.watch("w")
        b.eval("return redis.call('set', 'w', '2')", 0)
        p.multi()
        p.get("w")
        with pytest.raises(redis.exceptions.WatchError):
            p.execute()


def test_info_counts_cached_scripts(server):
    r = server.client()
    r.script_flush()
    assert r.info("memory")["number_of_cached_scripts"] == 0
    r.eval("return 1", 0)
    r.script_load("return 2")
    r.eval("return 1", 0)
    info = r.info("memory")
    assert info["number_of_cached_scripts"] == 2
    assert info["used_memory_lua"] > 0 and info["used_memory_scripts_eval"] >= len("return 1") + len("return 2")
    assert r.eval("return redis.REDIS_VERSION", 0) == r.info("server")["redis_version"]


def test_scripts_commands_show_in_monitor_and_commandstats(server):
    r = server.client()
    r.config_resetstat()
    r.eval("redis.call('set', 'a', '1') return redis.call('get', 'a')", 0)
    stats = r.info("commandstats")
    assert stats["cmdstat_eval"]["calls"] == 1
    assert stats["cmdstat_set"]["calls"] == 1 and stats["cmdstat_get"]["calls"] == 1


def test_a_script_is_atomic_against_other_clients(server):
    # Another client's command waits for the whole script: it never sees the
    # key half-way through.
    r = server.client()
    other = RawConn(server.port)
    script = "redis.call('set', 'half', 'yes') for i = 1, 3000000 do end redis.call('del', 'half') return 1"
    c = RawConn(server.port)
    c.send_command("EVAL", script, "0")
    time.sleep(0.05)
    assert other.cmd("EXISTS", "half") == 0
    assert c.read_reply(timeout=30) == 1
    assert r.exists("half") == 0


# Busy scripts: past busy-reply-threshold other clients get -BUSY (transactions
# included), SCRIPT KILL stops a script that has not written, UNKILLABLE one that
# has, and only SHUTDOWN NOSAVE ends the server meanwhile.
SPIN = "local i = 0 while true do i = i + 1 end"
BUSY_PROBES = [("PING",), ("GET", "x"), ("MULTI",), ("SET", "x", "1"), ("EXEC",),
               ("SCRIPT", "FLUSH"), ("SHUTDOWN",), ("CLIENT", "LIST")]


def busy_transcript(srv):
    setup = RawConn(srv.port)
    assert setup.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == "OK"
    a, b = RawConn(srv.port), RawConn(srv.port)
    out = [("SCRIPT KILL idle", b.cmd("SCRIPT", "KILL"))]
    a.send_command("EVAL", SPIN, "0")
    time.sleep(0.4)
    out += [(" ".join(p), b.cmd(*p)) for p in BUSY_PROBES]
    out.append(("SCRIPT KILL", b.cmd("SCRIPT", "KILL")))
    out.append(("EVAL reply", a.read_reply(timeout=10)))
    out.append(("PING after", b.cmd("PING")))
    out.append(("SCRIPT KILL after", b.cmd("SCRIPT", "KILL")))
    # A script that finishes on its own after being busy replies normally.
    a.send_command("EVAL", "local t = redis.call('time')[1] + 2 "
                           "while tonumber(redis.call('time')[1]) < t do end return 'done'", "0")
    time.sleep(0.3)
    out.append(("PING during", b.cmd("PING")))
    out.append(("EVAL reply", a.read_reply(timeout=10)))
    assert setup.cmd("CONFIG", "SET", "busy-reply-threshold", "5000") == "OK"
    return out


def test_busy_script_gets_busy_replies_and_script_kill_matches_redis(server, redis7_server):
    ours, theirs = busy_transcript(server), busy_transcript(redis7_server)
    assert ours == theirs


def new_connection_transcript(srv):
    setup = RawConn(srv.port)
    assert setup.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == "OK"
    a = RawConn(srv.port)
    a.send_command("EVAL", SPIN, "0")
    time.sleep(0.4)
    fresh = RawConn(srv.port)  # connects while the script is busy
    out = [("PING", fresh.cmd("PING")), ("SCRIPT KILL", fresh.cmd("SCRIPT", "KILL")),
           ("EVAL reply", a.read_reply(timeout=10)), ("PING after", fresh.cmd("PING"))]
    assert setup.cmd("CONFIG", "SET", "busy-reply-threshold", "5000") == "OK"
    return out


def test_a_client_connecting_while_a_script_is_busy_is_served_as_in_redis(server, redis7_server):
    # The event loop is held by the script, yet the new connection is admitted and
    # answered -BUSY (and can SCRIPT KILL), as Redis's processEventsWhileBlocked does.
    ours, theirs = new_connection_transcript(server), new_connection_transcript(redis7_server)
    assert ours == theirs
    assert str(ours[0][1]).startswith("BUSY")


def test_unkillable_script_ends_only_with_shutdown_nosave(tmp_path):
    srv = Server(tmp_path / "s").start("--busy-reply-threshold", "100")
    try:
        a, b = RawConn(srv.port), RawConn(srv.port)
        a.send_command("EVAL", "redis.call('set', 'w', '1') " + SPIN, "0")
        time.sleep(0.4)
        killed = b.cmd("SCRIPT", "KILL")
        assert isinstance(killed, RespError) and str(killed).startswith("UNKILLABLE")
        assert b.cmd("SHUTDOWN") == RespError(
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
        b.send_command("SHUTDOWN", "NOSAVE")
        assert b.closed_by_server(timeout=10)
        assert srv.wait_exit(timeout=10) == 0
        log = open(srv.log_path).read()
        assert "Slow script detected" in log and "Sanitizer" not in log
    finally:
        assert not kill_all()
