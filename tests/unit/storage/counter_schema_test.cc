#include "storage/counter_schema.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace feedkv {
namespace {

CounterSchema MustParse(std::string_view text) {
  CounterSchema s;
  Status st = CounterSchema::ParseString(text, &s);
  EXPECT_TRUE(st.ok()) << text << ": " << st.ToString();
  return s;
}

uint64_t Max(unsigned bits) { return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

TEST(CounterSchema, ParsesExampleAndComputesSlotSize) {
  CounterSchema s = MustParse("repost:20 comment:20 like:24 read:32");
  ASSERT_EQ(s.num_fields(), 4u);
  EXPECT_EQ(s.packed_bits(), 96u);
  EXPECT_EQ(s.slot_bytes(), 20u);
  EXPECT_EQ(s.FieldIndex("like"), 2);
  EXPECT_EQ(s.FieldIndex("nope"), -1);
  EXPECT_EQ(s.field_name(3), "read");
  EXPECT_EQ(s.field_bits(1), 20u);
  EXPECT_EQ(s.field_max(0), (1u << 20) - 1);
  EXPECT_EQ(s.ToString(), "repost:20 comment:20 like:24 read:32");
}

TEST(CounterSchema, SlotRoundsUpToWholeBytes) {
  EXPECT_EQ(MustParse("a:1").slot_bytes(), 9u);
  EXPECT_EQ(MustParse("a:8").slot_bytes(), 9u);
  EXPECT_EQ(MustParse("a:9").slot_bytes(), 10u);
  EXPECT_EQ(MustParse("a:64 b:64").slot_bytes(), 24u);
  EXPECT_EQ(MustParse("a:3 b:3 c:3").slot_bytes(), 10u);
}

TEST(CounterSchema, ToStringRoundTripsAndEquality) {
  CounterSchema a = MustParse("  x_1:7\ty-2:64  ");
  CounterSchema b = MustParse(a.ToString());
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == MustParse("x_1:7 y-2:63"));
  EXPECT_FALSE(a == MustParse("x_1:7 y-3:64"));
  EXPECT_FALSE(a == MustParse("x_1:7"));
}

TEST(CounterSchema, RejectsBadWidths) {
  CounterSchema s;
  for (const char* spec : {"a:0", "a:65", "a:-1", "a:+5", "a:", "a:1x", "a: 5", "a:99999999999"}) {
    EXPECT_TRUE(CounterSchema::Parse({spec}, &s).IsInvalidArgument()) << spec;
  }
}

TEST(CounterSchema, RejectsBadSyntaxAndNames) {
  CounterSchema s;
  for (const char* spec : {"a", ":5", "a:5:6", "a b:5", "é:5", "a.b:5", "a/b:5", ""}) {
    EXPECT_TRUE(CounterSchema::Parse({spec}, &s).IsInvalidArgument()) << spec;
  }
  std::string long_name(65, 'n');
  EXPECT_TRUE(CounterSchema::Parse({long_name + ":5"}, &s).IsInvalidArgument());
  std::string max_name(64, 'n');
  EXPECT_TRUE(CounterSchema::Parse({max_name + ":5"}, &s).ok());
}

TEST(CounterSchema, RejectsDuplicateNames) {
  CounterSchema s;
  EXPECT_TRUE(CounterSchema::ParseString("like:8 read:8 like:9", &s).IsInvalidArgument());
}

TEST(CounterSchema, RejectsEmptyAndTooManyFields) {
  CounterSchema s;
  EXPECT_TRUE(CounterSchema::Parse({}, &s).IsInvalidArgument());
  EXPECT_TRUE(CounterSchema::ParseString("   ", &s).IsInvalidArgument());
  std::vector<std::string> specs;
  for (int i = 0; i < 65; ++i) specs.push_back("f" + std::to_string(i) + ":64");
  std::vector<std::string_view> views(specs.begin(), specs.end());
  EXPECT_TRUE(CounterSchema::Parse(views, &s).IsInvalidArgument());
  views.pop_back();
  ASSERT_TRUE(CounterSchema::Parse(views, &s).ok());
  EXPECT_EQ(s.slot_bytes(), 8u + 64u * 8u);
}

TEST(CounterSchema, FailedParseLeavesOutputUnchanged) {
  CounterSchema s = MustParse("a:5");
  EXPECT_FALSE(CounterSchema::ParseString("b:0", &s).ok());
  EXPECT_EQ(s.ToString(), "a:5");
}

// Every width 1..64 at every bit offset 0..63 (a padding field in front sets the
// offset), each with a field behind it: boundary values must round-trip and never touch
// the neighbours or the id.
TEST(CounterSchema, PacksEveryWidthAtEveryOffset) {
  for (unsigned offset = 0; offset < 64; ++offset) {
    for (unsigned w = 1; w <= 64; ++w) {
      std::string spec = offset ? "pad:" + std::to_string(offset) + " " : "";
      spec += "f:" + std::to_string(w) + " tail:13";
      CounterSchema s = MustParse(spec);
      const size_t f = s.FieldIndex("f");
      const size_t tail = s.FieldIndex("tail");
      std::vector<char> slot(s.slot_bytes(), 0);
      const uint64_t id = 0x0123456789abcdefULL;
      counter_coding::StoreLE64(slot.data(), id);
      for (uint64_t v : {uint64_t{0}, uint64_t{1}, Max(w), Max(w) >> 1, Max(w) ^ 1}) {
        for (bool neighbours_set : {false, true}) {
          if (offset) s.Store(slot.data(), 0, neighbours_set ? Max(offset) : 0);
          s.Store(slot.data(), tail, neighbours_set ? Max(13) : 0);
          s.Store(slot.data(), f, v);
          ASSERT_EQ(s.Load(slot.data(), f), v) << "w=" << w << " offset=" << offset;
          if (offset) {
            ASSERT_EQ(s.Load(slot.data(), 0), neighbours_set ? Max(offset) : 0);
          }
          ASSERT_EQ(s.Load(slot.data(), tail), neighbours_set ? Max(13) : 0)
              << "w=" << w << " offset=" << offset;
          ASSERT_EQ(counter_coding::LoadLE64(slot.data()), id);
          ASSERT_TRUE(s.PaddingIsZero(slot.data()));
        }
      }
    }
  }
}

TEST(CounterSchema, RandomValuesRoundTripInDenseSchema) {
  CounterSchema s = MustParse("a:1 b:63 c:64 d:7 e:58 f:33 g:2 h:64 i:5");
  std::mt19937_64 rng(7);
  std::vector<char> slot(s.slot_bytes(), 0);
  std::vector<uint64_t> want(s.num_fields(), 0);
  for (int iter = 0; iter < 20000; ++iter) {
    const size_t f = rng() % s.num_fields();
    want[f] = rng() & s.field_max(f);
    s.Store(slot.data(), f, want[f]);
    std::vector<uint64_t> got(s.num_fields());
    s.LoadAll(slot.data(), got.data());
    ASSERT_EQ(got, want);
  }
  EXPECT_TRUE(s.PaddingIsZero(slot.data()));
}

TEST(CounterSchema, PaddingBitsDetected) {
  CounterSchema s = MustParse("a:3");
  std::vector<char> slot(s.slot_bytes(), 0);
  EXPECT_TRUE(s.PaddingIsZero(slot.data()));
  slot.back() = static_cast<char>(0x08);
  EXPECT_FALSE(s.PaddingIsZero(slot.data()));
  EXPECT_EQ(s.Load(slot.data(), 0), 0u);
}

}  // namespace
}  // namespace feedkv
