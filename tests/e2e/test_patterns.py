"""Glob patterns (KEYS, SCAN/SSCAN MATCH, CONFIG GET): Redis 7's results on
every element and corner case, and bounded work on patterns that make a
backtracking matcher run for ever."""


# 20 stars: a recursive matcher tries ~C(40,20) splits of the 40 a's.
EVIL = b"a*" * 20 + b"b"
LONG_A = b"a" * 40

KEYS = [b"", b"a", b"b", b"A", b"ab", b"aB", b"Ab", b"abc", b"a]", b"a^", b"a_", b"a-", b"a\\", b"a*",
        b"a?", b"a[", b"]", b"-", b"^", b"\\", b"hello", b"hallo", b"hxllo", b"hllo", b"heeello",
        b"a\xf0", b"a\xff", b"x\x00y", b"aaaa"]

A_ANY = [b"a*", b"a-", b"a?", b"aB", b"a[", b"a\\", b"a]", b"a^", b"a_", b"ab", b"a\xf0", b"a\xff"]
A_PREFIX = sorted(A_ANY + [b"a", b"aaaa", b"abc"])
ONE_BYTE = [b"-", b"A", b"\\", b"]", b"^", b"a", b"b"]

# pattern -> sorted KEYS reply, as Redis 7.0 answers over the keys above.
KEYS_TABLE = [
    (b"*", sorted(KEYS)),  # KEYS * lists every key, "" too
    (b"**", sorted(k for k in KEYS if k)),  # but a pattern never matches ""
    (b"?", ONE_BYTE),
    (b"a?", A_ANY),
    (b"a*", A_PREFIX),
    (b"a**", A_PREFIX),
    (b"\\a*", A_PREFIX),
    (b"*a", [b"a", b"aaaa"]),
    (b"*b*", [b"Ab", b"ab", b"abc", b"b"]),
    (b"A?", [b"Ab"]),
    (b"[", []),
    (b"[]", []),
    (b"[]]", []),
    (b"a[]]", []),
    (b"[^]", ONE_BYTE),
    (b"a[b-]", [b"a]", b"a^", b"a_", b"ab"]),  # the range b..']'
    (b"a[b-]x", [b"a]", b"a^", b"a_", b"ab"]),  # ...and 'x', in one unterminated set
    (b"[a-]*", [b"]", b"^", b"a"]),
    (b"h[a-]llo", []),
    (b"a[", []),
    (b"a[^", A_ANY),
    (b"a[bc", [b"ab"]),
    (b"a[\\", [b"a\\"]),
    (b"a[\\]]", [b"a]"]),
    (b"a[\\\\]", [b"a\\"]),
    (b"a\\*", [b"a*"]),
    (b"a\\", [b"a\\"]),
    (b"\\\\", [b"\\"]),
    (b"*\\", [b"\\", b"a\\"]),
    (b"h?llo", [b"hallo", b"hello", b"hxllo"]),
    (b"h*llo", [b"hallo", b"heeello", b"hello", b"hllo", b"hxllo"]),
    (b"h[ae]llo", [b"hallo", b"hello"]),
    (b"h[^e]llo", [b"hallo", b"hxllo"]),
    (b"h[a-b]llo", [b"hallo"]),
    (b"h[b-a]llo", [b"hallo"]),
    (b"a[A-Z]", [b"aB"]),
    (b"a[Z-A]", [b"aB"]),
    (b"a[-]", [b"a-"]),
    (b"a[--]", [b"a-", b"a?", b"aB", b"a[", b"a\\", b"a]"]),
    (b"a[^-]", [k for k in A_ANY if k != b"a-"]),
    (b"a[^a-z]", [k for k in A_ANY if k != b"ab"]),
    (b"a[\xf0]", [b"a\xf0"]),
    (b"a[\x80-b]", A_ANY),  # bounds compare as signed chars: 0x80 is -128
    (b"x?y", [b"x\x00y"]),
    (b"x\\?y", []),
    (b"?*?", sorted(A_ANY + [b"Ab", b"aaaa", b"abc", b"hallo", b"heeello", b"hello", b"hllo",
                             b"hxllo", b"x\x00y"])),
    (b"*?*?*?*?*", [b"aaaa", b"hallo", b"heeello", b"hello", b"hllo", b"hxllo"]),
    (b"a*a*a*a", [b"aaaa"]),
]


def test_keys_patterns_match_redis(server):
    c = server.client(decode_responses=False)
    for k in KEYS:
        c.set(k, 1)
    got = [(p, sorted(c.keys(p))) for p, _ in KEYS_TABLE]
    assert got == KEYS_TABLE


def test_scan_match_agrees_with_keys(server):
    c = server.client(decode_responses=False)
    for k in KEYS:
        c.set(k, 1)
    for p, want in KEYS_TABLE:
        if p == b"*":
            continue  # SCAN MATCH * skips the matcher too, as KEYS does
        assert sorted(c.scan_iter(match=p, count=1000)) == want, p


def test_pathological_pattern_keys_and_scan(server):
    c = server.client(decode_responses=False)
    c.set(LONG_A, 1)
    c.set(LONG_A + b"b", 1)
    # A generous socket timeout, not a timing assertion: a backtracking
    # matcher never answers, and Redis answers in well under a millisecond.
    with server.raw(timeout=2.0) as conn:
        assert conn.cmd("KEYS", EVIL) == [LONG_A + b"b"]
        assert conn.cmd("SCAN", "0", "MATCH", EVIL, "COUNT", "100") == [b"0", [LONG_A + b"b"]]
        assert conn.cmd("KEYS", EVIL + b"c") == []
        assert conn.cmd("PING") == "PONG"


def test_pathological_pattern_sscan(server):
    c = server.client(decode_responses=False)
    c.sadd("s", LONG_A, b"x" * 40, LONG_A + b"b")
    with server.raw(timeout=2.0) as conn:
        assert conn.cmd("SSCAN", "s", "0", "MATCH", EVIL, "COUNT", "100") == [b"0", [LONG_A + b"b"]]
        assert conn.cmd("SSCAN", "s", "0", "MATCH", EVIL + b"c", "COUNT", "100") == [b"0", []]


# CONFIG GET matches without case; a pattern with no [ * ? is a plain name.
CONFIG_TABLE = [
    (b"APPENDONL?", [b"appendonly"]),
    (b"APPENDONLY", [b"APPENDONLY"]),  # named as asked
    (b"[A]ppendonly", [b"appendonly"]),
    (b"[\\A]ppendonly", []),  # an escaped byte in a set keeps its case
    (b"\\Appendonly", []),  # no glob byte: looked up as a name, backslash and all
    (b"[\xf0-b]ppendonly", []),  # nocase folds 0xf0 to 240: the range 240..98 is empty
    (b"ma[x]memory", [b"maxmemory"]),
]


def test_config_get_patterns_match_redis(server):
    c = server.client(decode_responses=False)
    got = [(p, c.execute_command("CONFIG", "GET", p)[::2]) for p, _ in CONFIG_TABLE]
    assert got == CONFIG_TABLE


def test_config_get_lists_a_setting_once_however_spelled(server):
    c = server.client(decode_responses=False)
    got = c.execute_command("CONFIG", "GET", "MAXMEMORY", "maxmemory", "maxmemor[y]")
    assert got[::2] == [b"MAXMEMORY"]
