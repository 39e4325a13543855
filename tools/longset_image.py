#!/usr/bin/env python3
"""Build and parse feedkv LongSet images (the payload of LSSET / LSDUMP).

Standard library only. The image format is specified in docs/formats.md ("LongSet
image"); this module mirrors storage/long_set.cc so that, for the same ids, max fill and
seeds, build_image() returns exactly the bytes `feedkv-lspack` writes.

Library use:
    from longset_image import build_image, parse_image
    img = build_image([1, 2, 3], max_fill=0.9)
    assert sorted(parse_image(img)) == [1, 2, 3]

Command line:
    python3 tools/longset_image.py < ids.txt > out.img           # text ids, one per line
                                                                  # (blank and # lines skipped)
    python3 tools/longset_image.py --binary ids.bin -o out.img    # raw int64 little-endian
    python3 tools/longset_image.py --parse out.img                # print the members
    python3 tools/longset_image.py --selftest build/feedkv-lspack # compare with the C++ tool
"""

import argparse
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

MAGIC = b"FKLS"
VERSION = 3
VERSION_SPLITMIX = 2  # same layout, splitmix64-finalizer member hash; read only
VERSION_XXH64 = 1  # the first version: same layout, XXH64 member hash; read only
HEADER = struct.Struct("<4sHHQQQQ")  # magic, version, flags, capacity, count, seed1, seed2
assert HEADER.size == 40

FLAG_HAS_ZERO = 1 << 0  # 0 is a member (0 marks an empty slot)
FLAG_HAS_MIN = 1 << 1  # INT64_MIN is a member (INT64_MIN marks a tombstone)
KNOWN_FLAGS = FLAG_HAS_ZERO | FLAG_HAS_MIN

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
EMPTY = 0
TOMBSTONE = INT64_MIN

MIN_CAPACITY = 7
MAX_CAPACITY = 4294967291  # largest prime < 2^32

DEFAULT_SEED1 = 0x6665656B766C7331
DEFAULT_SEED2 = 0x9E3779B97F4A7C15
DEFAULT_MAX_FILL = 0.9

_M64 = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc, lane):
    acc = (acc + lane * _P2) & _M64
    return (_rotl(acc, 31) * _P1) & _M64


def _avalanche(h):
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    return h ^ (h >> 32)


def xxh64(data, seed=0):
    """XXH64 of a bytes-like object (the reference algorithm, any length)."""
    n = len(data)
    seed &= _M64
    pos = 0
    if n >= 32:
        v1 = (seed + _P1 + _P2) & _M64
        v2 = (seed + _P2) & _M64
        v3 = seed
        v4 = (seed - _P1) & _M64
        while pos + 32 <= n:
            a, b, c, d = struct.unpack_from("<4Q", data, pos)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            pos += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M64
        for v in (v1, v2, v3, v4):
            h = ((h ^ _round(0, v)) * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while pos + 8 <= n:
        (lane,) = struct.unpack_from("<Q", data, pos)
        h = (_rotl(h ^ _round(0, lane), 27) * _P1 + _P4) & _M64
        pos += 8
    if pos + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, pos)
        h = (_rotl(h ^ ((lane * _P1) & _M64), 23) * _P2 + _P3) & _M64
        pos += 4
    while pos < n:
        h = (_rotl(h ^ ((data[pos] * _P5) & _M64), 11) * _P1) & _M64
        pos += 1
    return _avalanche(h)


_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
BRENT_ROUNDS = 32  # LongSet::kBrentRounds
# XXH3's default secret bytes [8, 16) XOR [16, 24), little-endian, and its rrmxmx prime.
_XXH3_SECRET_MIX = 0x1CAD21F72C81017C ^ 0xDB979083E96DD4DE
_XXH3_PRIME_MX2 = 0x9FB21C651E98DF25
# (member, seed, _hash_member): XXH3_64bits_withSeed of the 8 LE bytes, folded, as
# libxxhash 0.8 computes it (LongSetHash.KnownAnswers asserts the same values, and
# LongSetHash.MatchesLibXxh3 checks the C++ hash against libxxhash itself).
HASH_KNOWN_ANSWERS = [
    (0, 0x9E3779B97F4A7C15, 0x3A6361AE),
    (1, 0, 0x4B67201B),
    (-1, 0, 0x2C6983F7),
    (INT64_MIN, DEFAULT_SEED1, 0x6D397119),
    (INT64_MAX, DEFAULT_SEED2, 0x177855B0),
    (123456789, 99, 0x9EFA9A92),
]


def _hash_member(v, seed):
    """XXH3-64 (XXH3_64bits_withSeed) of the 8-byte little-endian member, folded to 32
    bits (format v3). For 8 bytes XXH3 swaps the two 32-bit words, xors a seed-derived
    constant in and applies rrmxmx."""
    s = seed ^ (int.from_bytes((seed & 0xFFFFFFFF).to_bytes(4, "little"), "big") << 32)
    bitflip = (_XXH3_SECRET_MIX - s) & _M64
    h = _rotl(v & _M64, 32) ^ bitflip
    h ^= _rotl(h, 49) ^ _rotl(h, 24)
    h = (h * _XXH3_PRIME_MX2) & _M64
    h ^= (h >> 35) + 8
    h = (h * _XXH3_PRIME_MX2) & _M64
    h ^= h >> 28
    return (h >> 32) ^ (h & 0xFFFFFFFF)


def _hash_member_v2(v, seed):
    """splitmix64's finalizer of v XOR seed, folded to 32 bits (format v2)."""
    z = (v & _M64) ^ seed
    z = ((z ^ (z >> 30)) * _MIX1) & _M64
    z = ((z ^ (z >> 27)) * _MIX2) & _M64
    z ^= z >> 31
    return (z >> 32) ^ (z & 0xFFFFFFFF)


def _hash_member_v1(v, seed):
    """XXH64 of the 8-byte little-endian member, folded to 32 bits (format v1)."""
    h = xxh64(struct.pack("<q", v), seed)
    return (h >> 32) ^ (h & 0xFFFFFFFF)


def probe_start(v, seed1, seed2, capacity, hash_member=_hash_member):
    """(home, step) of v: slot(n) = (home + n*step) % capacity."""
    return (hash_member(v, seed1) % capacity, 1 + hash_member(v, seed2) % (capacity - 1))


def is_prime(n):
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):  # deterministic below 2^64
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def next_prime(n):
    """Smallest prime >= n, or 0 past MAX_CAPACITY (as longset_internal::NextPrime)."""
    if n <= 2:
        return 2
    if n % 2 == 0:
        n += 1
    while n <= MAX_CAPACITY and not is_prime(n):
        n += 2
    return n if n <= MAX_CAPACITY else 0


def _clamp_fill(f):
    if not f >= 0.05:
        return 0.05
    return min(f, 0.99)


def slot_limit(capacity, max_fill):
    """Most members a table of `capacity` holds at max_fill (LongSet::SlotLimit)."""
    if capacity == 0:
        return 0
    return min(int(math.floor(_clamp_fill(max_fill) * float(capacity))), capacity - 1)


def used_slot_limit(capacity, max_fill):
    """Most members plus tombstones (LongSet::UsedSlotLimit)."""
    members = slot_limit(capacity, max_fill)
    return 0 if capacity == 0 else members + (capacity - 1 - members) // 2


def capacity_for(n, max_fill):
    """Smallest allowed capacity that holds n members (LongSet::CapacityFor)."""
    want = math.ceil(float(n) / _clamp_fill(max_fill))
    if want > MAX_CAPACITY:
        return 0
    cap = next_prime(max(MIN_CAPACITY, want))
    while cap != 0 and slot_limit(cap, max_fill) < n:
        cap = next_prime(cap + 1)
    return cap


def _check_int64(v):
    if not isinstance(v, int) or not INT64_MIN <= v <= INT64_MAX:
        raise ValueError(f"not a signed 64-bit integer: {v!r}")
    return v


def _store_new(slots, v, seed1, seed2, capacity):
    """Places absent v as LongSet::PlaceNewAt/StoreNew do: at the first empty slot of its
    path, or by Brent's move (a member y at index i of v's path moves j steps along its own
    path to an empty slot and v takes its place, for the smallest i + j < that index)."""
    home, step = probe_start(v, seed1, seed2, capacity)
    path = [home]
    while slots[path[-1]] != EMPTY:
        path.append((path[-1] + step) % capacity)
    empty_n = len(path) - 1
    moved, ystep = [], []
    for t in range(1, min(empty_n, BRENT_ROUNDS)):
        y = slots[path[t - 1]]
        ystep.append(probe_start(y, seed1, seed2, capacity)[1])
        moved.append(path[t - 1])
        for k in range(t):
            moved[k] = (moved[k] + ystep[k]) % capacity
            if slots[moved[k]] == EMPTY:
                slots[moved[k]] = slots[path[k]]
                slots[path[k]] = v
                return
    slots[path[empty_n]] = v


def build_image(ids, max_fill=DEFAULT_MAX_FILL, seed1=DEFAULT_SEED1, seed2=DEFAULT_SEED2):
    """Image bytes of the set of `ids` (any iterable of int64; duplicates ignored).

    Same algorithm as LongSet::Build: capacity_for(distinct ids other than 0 and
    INT64_MIN), then ids placed in input order at the first empty slot of their probe
    sequence or one Brent move earlier (_store_new).
    """
    if not 0.05 <= max_fill <= 0.99:
        raise ValueError("longset-max-fill must be between 0.05 and 0.99")
    ids = [_check_int64(v) for v in ids]
    seed1 &= _M64
    seed2 &= _M64
    flags = 0
    ordered = []
    seen = set()
    for v in ids:
        if v == EMPTY:
            flags |= FLAG_HAS_ZERO
        elif v == TOMBSTONE:
            flags |= FLAG_HAS_MIN
        elif v not in seen:
            seen.add(v)
            ordered.append(v)
    capacity = capacity_for(len(ordered), max_fill)
    if capacity == 0:
        raise ValueError(f"too many ids for one longset: {len(ordered)}")
    slots = [EMPTY] * capacity
    for v in ordered:
        _store_new(slots, v, seed1, seed2, capacity)
    count = len(ordered) + bin(flags).count("1")
    header = HEADER.pack(MAGIC, VERSION, flags, capacity, count, seed1, seed2)
    return header + struct.pack(f"<{capacity}q", *slots)


class ImageError(ValueError):
    """An image that LongSet::FromImage would reject."""


def parse_image(image, check_probes=True):
    """Members of an image (flag members first, then slots in order).

    Validates what LongSet::FromImage validates, except the max-fill limit (a server
    setting): header, capacity, length, count and, with check_probes, that every member
    is the first slot holding it on its own probe path with no empty slot before it.
    Raises ImageError with the same wording as the server.
    """
    image = bytes(image)
    if len(image) < HEADER.size:
        raise ImageError(f"invalid longset image: truncated header ({len(image)} bytes, need 40)")
    magic, version, flags, capacity, count, seed1, seed2 = HEADER.unpack_from(image, 0)
    if magic != MAGIC:
        raise ImageError("invalid longset image: bad magic")
    if version not in (VERSION, VERSION_SPLITMIX, VERSION_XXH64):
        raise ImageError(f"invalid longset image: unsupported version {version}")
    if flags & ~KNOWN_FLAGS:
        raise ImageError(f"invalid longset image: unknown flag bits {flags & ~KNOWN_FLAGS:#x}")
    if not (MIN_CAPACITY <= capacity <= MAX_CAPACITY and is_prime(capacity)):
        raise ImageError(
            f"invalid longset image: capacity {capacity} is not allowed "
            f"(must be a prime in [{MIN_CAPACITY}, {MAX_CAPACITY}])"
        )
    expected = HEADER.size + 8 * capacity
    if len(image) != expected:
        raise ImageError(
            f"invalid longset image: length mismatch ({len(image)} bytes, expected "
            f"{expected} for capacity {capacity})"
        )
    slots = struct.unpack_from(f"<{capacity}q", image, HEADER.size)
    members = [v for v in slots if v != EMPTY and v != TOMBSTONE]
    held = len(members) + bin(flags).count("1")
    if count != held:
        raise ImageError(
            f"invalid longset image: count mismatch (header says {count}, slots and flags "
            f"hold {held})"
        )
    if check_probes:
        hash_member = {VERSION: _hash_member, VERSION_SPLITMIX: _hash_member_v2,
                       VERSION_XXH64: _hash_member_v1}[version]
        for i, v in enumerate(slots):
            if v == EMPTY or v == TOMBSTONE:
                continue
            j, step = probe_start(v, seed1, seed2, capacity, hash_member)
            while slots[j] != v:
                if slots[j] == EMPTY:
                    raise ImageError(
                        f"invalid longset image: unreachable member {v} at slot {i} "
                        f"(empty slot {j} on its path)"
                    )
                j = (j + step) % capacity
            if j != i:
                raise ImageError(
                    f"invalid longset image: duplicate member {v} at slots {j} and {i}"
                )
    head = ([0] if flags & FLAG_HAS_ZERO else []) + ([INT64_MIN] if flags & FLAG_HAS_MIN else [])
    return head + members


def read_ids(data, binary):
    """Ids from text (one per line; blank and # lines skipped) or raw int64 little-endian."""
    if binary:
        if len(data) % 8:
            raise ValueError(f"binary input is {len(data)} bytes, not a multiple of 8")
        return list(struct.unpack(f"<{len(data) // 8}q", data))
    ids = []
    for lineno, line in enumerate(data.decode("ascii", "replace").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            ids.append(_check_int64(int(text, 10)))
        except ValueError:
            raise ValueError(f"line {lineno}: not a signed 64-bit integer: {text!r}") from None
    return ids


def selftest(lspack):
    """Checks hashing against known XXH64 values and images against `feedkv-lspack`."""
    known = [
        (b"", 0, 0xEF46DB3751D8E999),
        (b"a", 0, 0xD24EC4F1A98C6E5B),
        (b"abc", 0, 0x44BC2CF5AD770999),
        (b"abc", 1, 0xBEA9CA8199328908),
        (bytes(8), 123, 0xFBE8958E0EEDB0B5),
        (bytes(range(37)), 7, 0x69E0C889396AFAF7),
        (bytes(range(100)), 0x9E3779B97F4A7C15, 0x3B97D91EBA03E785),
    ]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL: {what}", file=sys.stderr)

    for data, seed, want in known:
        check(xxh64(data, seed) == want, f"xxh64({data[:8]!r}..., {seed}) = {xxh64(data, seed):#x}")
    # Known answers pin the version 3 member hash (the same values are asserted by the
    # C++ unit test LongSetHash.KnownAnswers).
    for v, seed, want in HASH_KNOWN_ANSWERS:
        check(_hash_member(v, seed) == want, f"_hash_member({v}, {seed:#x}) = {_hash_member(v, seed):#x}")

    rng = random.Random(1234)
    cases = [
        ([], 0.9, DEFAULT_SEED1, DEFAULT_SEED2),
        ([0, INT64_MIN, -1, INT64_MAX, 1], 0.9, DEFAULT_SEED1, DEFAULT_SEED2),
        ([rng.randrange(-1000, 1000) for _ in range(3000)], 0.9, 1, 2),
        ([rng.randrange(INT64_MIN, INT64_MAX + 1) for _ in range(20000)], 0.9, 7, 8),
        (list(range(1, 5001)), 0.99, DEFAULT_SEED1, DEFAULT_SEED2),
        ([rng.randrange(1, 10**12) for _ in range(777)], 0.5, _M64, 0),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for n, (ids, fill, s1, s2) in enumerate(cases):
            want = build_image(ids, max_fill=fill, seed1=s1, seed2=s2)
            check(sorted(parse_image(want)) == sorted(set(ids)), f"case {n}: parse(build) != ids")
            for binary in (False, True):
                src = os.path.join(tmp, f"ids{n}")
                out = os.path.join(tmp, f"img{n}")
                with open(src, "wb") as f:
                    if binary:
                        f.write(struct.pack(f"<{len(ids)}q", *ids))
                    else:
                        f.write("".join(f"{v}\n" for v in ids).encode())
                cmd = [lspack, "--max-fill", repr(fill), "--seed1", str(s1), "--seed2", str(s2),
                       "-o", out, src] + (["--binary"] if binary else [])
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    check(False, f"case {n}: {' '.join(cmd)} failed: {proc.stderr.strip()}")
                    continue
                with open(out, "rb") as f:
                    got = f.read()
                check(got == want, f"case {n} (binary={binary}): feedkv-lspack and Python differ")
    print(f"selftest: {passed} passed, {failed} failed")
    return failed == 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", nargs="?", help="ids file (default: stdin)")
    ap.add_argument("-o", "--output", help="output file (default: stdout)")
    ap.add_argument("--binary", action="store_true", help="input is raw int64 little-endian")
    ap.add_argument("--max-fill", type=float, default=DEFAULT_MAX_FILL)
    ap.add_argument("--seed1", type=lambda s: int(s, 0), default=DEFAULT_SEED1)
    ap.add_argument("--seed2", type=lambda s: int(s, 0), default=DEFAULT_SEED2)
    ap.add_argument("--parse", action="store_true", help="print the members of an image")
    ap.add_argument("--selftest", metavar="LSPACK", help="compare with feedkv-lspack and exit")
    args = ap.parse_args(argv)

    if args.selftest:
        return 0 if selftest(args.selftest) else 1
    if args.input:
        with open(args.input, "rb") as f:
            data = f.read()
    else:
        data = sys.stdin.buffer.read()
    try:
        if args.parse:
            out = "".join(f"{v}\n" for v in parse_image(data)).encode()
        else:
            out = build_image(read_ids(data, args.binary), args.max_fill, args.seed1, args.seed2)
    except ValueError as e:
        print(f"longset_image: {e}", file=sys.stderr)
        return 1
    if args.output:
        with open(args.output, "wb") as f:
            f.write(out)
    else:
        sys.stdout.buffer.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
