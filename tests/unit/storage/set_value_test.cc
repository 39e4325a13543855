// Unit tests for SetValue and StringSet: encodings and the one conversion, cache-mode
// Full without side effects, snapshot form and its corruption cases, digests, scans
// across growth and conversion, set algebra over mixed encodings, memory accounting.
#include "storage/set_value.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "storage/object_codec.h"

namespace feedkv {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr int kScale = 8;
#else
constexpr int kScale = 1;
#endif

std::vector<std::string> Texts(const SetValue& s) {
  std::vector<std::string> out;
  char buf[24];
  s.ForEach([&](const SetMember& m) { out.emplace_back(m.Text(buf)); });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

size_t AddAll(SetValue* s, const std::vector<std::string_view>& members,
              const LongSetOptions& o = {}) {
  size_t added = 0;
  EXPECT_TRUE(s->AddMembers(members, o, &added).ok());
  return added;
}

std::unique_ptr<SetValue> RoundTrip(const SetValue& s) {
  std::string bytes;
  s.SerializeTo(&bytes);
  std::unique_ptr<SetValue> out;
  Status st = SetValue::Decode(bytes, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(StringSet, MatchesUnorderedSetUnderRandomOps) {
  std::mt19937_64 rng(7);
  StringSet s;
  std::unordered_set<std::string> ref;
  const size_t baseline = s.MemoryUsage();
  for (int i = 0; i < 200000 / kScale; ++i) {
    std::string k = "m" + std::to_string(rng() % 5000);
    if (rng() % 7 == 0) k += std::string(300, 'x');  // long length prefix
    switch (rng() % 3) {
      case 0:
        EXPECT_EQ(s.Add(k), ref.insert(k).second);
        break;
      case 1:
        EXPECT_EQ(s.Remove(k), ref.erase(k) == 1);
        break;
      default:
        EXPECT_EQ(s.Contains(k), ref.count(k) == 1);
    }
    ASSERT_EQ(s.size(), ref.size());
  }
  size_t seen = 0;
  s.ForEach([&](std::string_view m) {
    EXPECT_EQ(ref.count(std::string(m)), 1u);
    ++seen;
  });
  EXPECT_EQ(seen, ref.size());
  for (const auto& k : ref) EXPECT_TRUE(s.Remove(k));
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.MemoryUsage(), baseline);  // shrank back and released every block
}

TEST(StringSet, EmptyAndBinaryMembers) {
  StringSet s;
  EXPECT_TRUE(s.Add(""));
  EXPECT_TRUE(s.Add(std::string_view("a\0b", 3)));
  EXPECT_FALSE(s.Add(""));
  EXPECT_TRUE(s.Contains(std::string_view("a\0b", 3)));
  EXPECT_FALSE(s.Contains("a"));
  StringSet copy(s);
  EXPECT_TRUE(s.Remove(""));
  EXPECT_TRUE(copy.Contains(""));
  EXPECT_EQ(copy.size(), 2u);
}

TEST(SetValue, StartsAsLongSetAndStaysWhileMembersAreIntegers) {
  SetValue s;
  EXPECT_EQ(s.encoding(), "longset");
  EXPECT_EQ(s.type(), ValueType::kSet);
  EXPECT_EQ(AddAll(&s, {"1", "-2", "9223372036854775807", "0", "-9223372036854775808", "1"}), 5u);
  EXPECT_TRUE(s.is_longset());
  EXPECT_TRUE(s.Contains("0"));
  EXPECT_TRUE(s.Contains("-9223372036854775808"));
  EXPECT_FALSE(s.Contains("007"));
  EXPECT_FALSE(s.Contains("x"));
}

TEST(SetValue, FirstNonIntegerConvertsOnceKeepingMembers) {
  SetValue s;
  AddAll(&s, {"1", "7", "0", "-9223372036854775808"});
  EXPECT_EQ(AddAll(&s, {"8", "007"}), 2u);  // "007" is not 7
  EXPECT_EQ(s.encoding(), "hashtable");
  EXPECT_EQ(Texts(s), Sorted({"-9223372036854775808", "0", "007", "1", "7", "8"}));
  // Removing the string member does not convert back (as Redis).
  EXPECT_TRUE(s.Remove("007"));
  EXPECT_EQ(s.encoding(), "hashtable");
  size_t added = 0;
  const int64_t ids[] = {7, 9};
  ASSERT_TRUE(s.AddInts(ids, {}, &added).ok());
  EXPECT_EQ(added, 1u);
  EXPECT_TRUE(s.ContainsInt(9));
  EXPECT_TRUE(s.RemoveInt(9));
}

TEST(SetValue, FromIntsShrinksAfterDuplicates) {
  std::vector<int64_t> ids(10000, 42);
  ids.push_back(43);
  std::unique_ptr<SetValue> s;
  ASSERT_TRUE(SetValue::FromInts(ids, {}, &s).ok());
  EXPECT_EQ(s->size(), 2u);
  EXPECT_LT(s->longset().capacity(), 100u);
}

TEST(SetValue, FromMembersPicksEncoding) {
  std::unique_ptr<SetValue> a, b;
  const std::string_view ints[] = {"3", "1", "3", "2"};
  ASSERT_TRUE(SetValue::FromMembers(ints, {}, &a).ok());
  EXPECT_TRUE(a->is_longset());
  EXPECT_EQ(a->size(), 3u);
  const std::string_view mixed[] = {"3", "x", "x"};
  ASSERT_TRUE(SetValue::FromMembers(mixed, {}, &b).ok());
  EXPECT_FALSE(b->is_longset());
  EXPECT_EQ(b->size(), 2u);
}

TEST(SetValue, CacheModeFullChangesNothing) {
  LongSetOptions cache;
  cache.auto_grow = false;
  std::vector<int64_t> ids;
  for (int64_t i = 1; i <= 6; ++i) ids.push_back(i * 1000);
  std::unique_ptr<SetValue> s;
  ASSERT_TRUE(SetValue::FromInts(ids, cache, &s).ok());  // capacity 7: holds 6 at 0.9
  std::string before;
  s->longset().SerializeImage(&before);
  const int64_t more[] = {1000, 1, 2};  // one old, two new: no room for both
  size_t added = 99;
  Status st = s->AddInts(more, cache, &added);
  EXPECT_TRUE(st.IsFull()) << st.ToString();
  EXPECT_EQ(st.message(), "longset is full");
  EXPECT_EQ(added, 0u);
  std::string after;
  s->longset().SerializeImage(&after);
  EXPECT_EQ(before, after);
  EXPECT_TRUE(s->WouldBeFull(SetMember::Int(5), cache));
  EXPECT_FALSE(s->WouldBeFull(SetMember::Int(1000), cache));     // already there
  EXPECT_FALSE(s->WouldBeFull(SetMember::Int(0), cache));        // sentinel: no slot
  EXPECT_FALSE(s->WouldBeFull(SetMember::Str("abc"), cache));    // converts instead
  EXPECT_FALSE(s->WouldBeFull(SetMember::Int(5), LongSetOptions{}));
  // Sentinel-valued members need no slot, so they still fit.
  const int64_t sentinels[] = {0, std::numeric_limits<int64_t>::min()};
  ASSERT_TRUE(s->AddInts(sentinels, cache, &added).ok());
  EXPECT_EQ(added, 2u);
  // Auto-grow takes the same insert.
  ASSERT_TRUE(s->AddInts(more, LongSetOptions{}, &added).ok());
  EXPECT_EQ(added, 2u);
}

TEST(SetValue, SnapshotRoundTripBothEncodings) {
  SetValue ls;
  AddAll(&ls, {"1", "2", "0", "-9223372036854775808", "123456789012"});
  auto ls2 = RoundTrip(ls);
  ASSERT_NE(ls2, nullptr);
  EXPECT_TRUE(ls2->is_longset());
  EXPECT_EQ(Texts(*ls2), Texts(ls));
  std::string a, b;
  ls.longset().SerializeImage(&a);
  ls2->longset().SerializeImage(&b);
  EXPECT_EQ(a, b);  // bit for bit

  SetValue hs;
  AddAll(&hs, {"x", "", std::string(1000, 'y'), "5"});
  auto hs2 = RoundTrip(hs);
  ASSERT_NE(hs2, nullptr);
  EXPECT_FALSE(hs2->is_longset());
  EXPECT_EQ(Texts(*hs2), Texts(hs));

  std::string bytes;
  hs.SerializeTo(&bytes);
  std::unique_ptr<Object> obj;
  ASSERT_TRUE(DecodeObject(ValueType::kSet, bytes, &obj).ok());
  EXPECT_EQ(obj->encoding(), "hashtable");
  EXPECT_EQ(obj->Digest(), hs.Digest());
}

TEST(SetValue, DecodeRejectsCorruption) {
  std::unique_ptr<SetValue> out;
  auto bad = [&](std::string bytes) {
    Status st = SetValue::Decode(bytes, &out);
    return st.IsCorruption();
  };
  EXPECT_TRUE(bad(""));
  EXPECT_TRUE(bad(std::string("\x07", 1)));                      // unknown tag
  EXPECT_TRUE(bad(std::string("\x01\x00", 2)));                  // empty hashtable
  EXPECT_TRUE(bad(std::string("\x01\x05\x01x", 4)));             // count above bytes left
  EXPECT_TRUE(bad(std::string("\x01\x02\x01x\x01x", 6)));        // duplicate
  EXPECT_TRUE(bad(std::string("\x01\x01\x01xZ", 5)));            // trailing byte
  EXPECT_TRUE(bad(std::string("\x01\x01\x05x", 4)));             // member past the end
  EXPECT_TRUE(bad(std::string("\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11)));  // varint overflow
  EXPECT_TRUE(bad(std::string("\x00", 1) + "FKLS"));             // truncated image
  LongSet empty;
  std::string image;
  empty.SerializeImage(&image);
  EXPECT_TRUE(bad(std::string("\x00", 1) + image));              // empty longset
  std::unique_ptr<Object> obj;
  EXPECT_TRUE(DecodeObject(ValueType::kSet, "", &obj).IsCorruption());
}

TEST(SetValue, DecodeSurvivesEveryTruncationAndByteFlip) {
  SetValue ls, hs;
  for (int i = 0; i < 50; ++i) AddAll(&ls, {std::to_string(i * 7919)});
  AddAll(&hs, {"alpha", "beta", "", std::string(300, 'z')});
  for (const SetValue* s : {&ls, &hs}) {
    std::string bytes;
    s->SerializeTo(&bytes);
    std::unique_ptr<SetValue> out;
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(SetValue::Decode(std::string_view(bytes).substr(0, n), &out).ok()) << n;
    }
    std::mt19937_64 rng(3);
    for (size_t i = 0; i < bytes.size(); ++i) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 + rng() % 255));
      Status st = SetValue::Decode(flipped, &out);  // OK or Corruption, never a crash
      if (st.ok()) {
        EXPECT_GT(out->size(), 0u);
      } else {
        EXPECT_TRUE(st.IsCorruption());
      }
    }
  }
}

TEST(SetValue, DigestIsEncodingAndOrderIndependent) {
  SetValue a, b;
  AddAll(&a, {"1", "2", "3"});
  AddAll(&b, {"3", "2", "1"});
  EXPECT_EQ(a.Digest(), b.Digest());
  b.ConvertToHashtable();
  EXPECT_EQ(b.encoding(), "hashtable");
  EXPECT_EQ(a.Digest(), b.Digest());
  AddAll(&b, {"4"});
  EXPECT_NE(a.Digest(), b.Digest());
  auto c = a.Clone();
  EXPECT_EQ(c->Digest(), a.Digest());
}

TEST(SetValue, CloneIsDeep) {
  SetValue a;
  AddAll(&a, {"1", "2"});
  auto c = a.Clone();
  AddAll(&a, {"3"});
  EXPECT_EQ(static_cast<SetValue*>(c.get())->size(), 2u);
  a.ConvertToHashtable();
  auto h = a.Clone();
  EXPECT_TRUE(a.Remove("3"));
  EXPECT_TRUE(static_cast<SetValue*>(h.get())->Contains("3"));
}

// Full scan with the set changing between calls: every member present throughout is
// returned exactly once.
void ScanWhileChanging(bool convert_midway) {
  SetValue s;
  std::vector<std::string> stable;
  for (int i = 0; i < 3000 / kScale; ++i) stable.push_back(std::to_string(1000000007LL * i + 3));
  std::vector<std::string_view> views(stable.begin(), stable.end());
  AddAll(&s, views);
  std::multiset<std::string> seen;
  std::vector<SetMember> batch;
  uint64_t cursor = 0;
  int calls = 0;
  int extra = 0;
  do {
    cursor = s.Scan(cursor, 20, &batch);
    char buf[24];
    for (const SetMember& m : batch) seen.insert(std::string(m.Text(buf)));
    // Grow the set between calls (forces resizes), and convert once part way.
    for (int k = 0; k < 200; ++k) AddAll(&s, {std::to_string(-1 - extra++)});
    if (convert_midway && calls == 3) s.ConvertToHashtable();
    ++calls;
  } while (cursor != 0 && calls < 100000);
  EXPECT_EQ(cursor, 0u);
  for (const auto& m : stable) EXPECT_EQ(seen.count(m), 1u) << m;
}

TEST(SetValue, ScanIsStableAcrossGrowth) { ScanWhileChanging(false); }
TEST(SetValue, ScanIsStableAcrossConversion) { ScanWhileChanging(true); }

TEST(SetValue, ScanOfHashtableReturnsEachMemberOnce) {
  SetValue s;
  std::vector<std::string> members;
  for (int i = 0; i < 1000; ++i) members.push_back("user:" + std::to_string(i));
  members.push_back("42");
  std::vector<std::string_view> views(members.begin(), members.end());
  AddAll(&s, views);
  std::multiset<std::string> seen;
  std::vector<SetMember> batch;
  uint64_t cursor = 0;
  do {
    cursor = s.Scan(cursor, 7, &batch);
    for (const SetMember& m : batch) seen.insert(std::string(m.s));
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), members.size());
  for (const auto& m : members) EXPECT_EQ(seen.count(m), 1u);
}

TEST(SetValue, RandomMemberReachesEveryMember) {
  for (bool hashtable : {false, true}) {
    SetValue s;
    AddAll(&s, {"10", "20", "30", "40"});
    if (hashtable) s.ConvertToHashtable();
    std::set<std::string> seen;
    std::mt19937_64 rng(1);
    char buf[24];
    for (int i = 0; i < 400; ++i) seen.insert(std::string(s.RandomMember(rng()).Text(buf)));
    EXPECT_EQ(seen.size(), 4u);
  }
}

TEST(SetAlgebra, MixedEncodings) {
  SetValue a, b, c;
  AddAll(&a, {"1", "2", "3", "4"});
  AddAll(&b, {"2", "3", "4", "5", "x"});
  AddAll(&c, {"3", "4", "9"});
  const SetValue* abc[] = {&a, &b, &c};
  auto inter = SetInter(abc, {});
  ASSERT_NE(inter, nullptr);
  EXPECT_EQ(Texts(*inter), Sorted({"3", "4"}));
  EXPECT_TRUE(inter->is_longset());  // all-integer results are longsets
  auto uni = SetUnion(abc, {});
  EXPECT_EQ(Texts(*uni), Sorted({"1", "2", "3", "4", "5", "9", "x"}));
  EXPECT_FALSE(uni->is_longset());
  const SetValue* ac[] = {&a, &c};
  EXPECT_TRUE(SetUnion(ac, {})->is_longset());
  const SetValue* ba[] = {&b, &a};
  auto diff = SetDiff(ba, {});
  EXPECT_EQ(Texts(*diff), Sorted({"5", "x"}));
  const SetValue* aa[] = {&a, &a};
  EXPECT_EQ(SetDiff(aa, {}), nullptr);
  size_t n = 0;
  ForEachInter(abc, 1, [&](const SetMember&) { ++n; });
  EXPECT_EQ(n, 1u);
}

TEST(SetAlgebra, InterChecksEachDistinctSetOnceSmallestFirst) {
  SetValue big, small;
  std::vector<int64_t> ids(100);
  for (int i = 0; i < 100; ++i) ids[i] = i;
  size_t added = 0;
  ASSERT_TRUE(big.AddInts(ids, {}, &added).ok());
  AddAll(&small, {"3", "4", "500"});
  std::vector<const SetValue*> sets(1000, &big);  // one key named 1,000 times
  sets.insert(sets.begin() + 500, &small);
  const std::vector<size_t> order = set_internal::BySize(sets);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(sets[order[0]], &small);
  EXPECT_EQ(sets[order[1]], &big);
  EXPECT_EQ(order[1], 0u);  // the first position a repeated set holds
  auto inter = SetInter(sets, {});
  ASSERT_NE(inter, nullptr);
  EXPECT_EQ(Texts(*inter), Sorted({"3", "4"}));
  const SetValue* only_big[] = {&big, &big, &big};
  EXPECT_EQ(SetInter(only_big, {})->size(), 100u);
}

TEST(SetValue, LongSetMemoryIsAboutEightBytesOverFill) {
  std::vector<int64_t> ids;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 100000 / kScale; ++i) ids.push_back(1000000000 + static_cast<int64_t>(rng() % 999000000000));
  SetValue grown;
  size_t added = 0;
  for (int64_t v : ids) ASSERT_TRUE(grown.AddInts(std::span<const int64_t>(&v, 1), {}, &added).ok());
  const double per_member = static_cast<double>(grown.MemoryUsage()) / grown.size();
  EXPECT_LT(per_member, 8 / 0.69 + 0.5);  // fill stays >= max_fill / growth_factor
  std::unique_ptr<SetValue> built;
  ASSERT_TRUE(SetValue::FromInts(ids, {}, &built).ok());
  EXPECT_LT(static_cast<double>(built->MemoryUsage()) / built->size(), 8 / 0.89 + 0.5);
  SetValue strings;
  AddAll(&strings, {"a"});
  EXPECT_GT(strings.MemoryUsage(), sizeof(SetValue));
}

}  // namespace
}  // namespace feedkv
