// GlobMatch against a word-for-word copy of Redis 7.0's recursive
// stringmatchlen (exponential, so only fit for small inputs), on every small
// pattern/string and many random ones; plus the pathological patterns that
// the recursive matcher never finishes.
#include "server/glob.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>

namespace feedkv::server {
namespace {

// Redis util.c stringmatchlen, minus the skipLongerMatches shortcut (which
// only prunes). Pointers run past the length onto the NUL that ends an sds,
// as in Redis, so callers pass NUL-terminated buffers. tolower() is the C
// library's, on a signed char, as Redis calls it.
int RedisStringMatchLen(const char* pattern, int patternLen, const char* string, int stringLen, int nocase) {
  while (patternLen && stringLen) {
    switch (pattern[0]) {
      case '*':
        while (patternLen && pattern[1] == '*') {
          pattern++;
          patternLen--;
        }
        if (patternLen == 1) return 1;
        while (stringLen) {
          if (RedisStringMatchLen(pattern + 1, patternLen - 1, string, stringLen, nocase)) return 1;
          string++;
          stringLen--;
        }
        return 0;
      case '?':
        string++;
        stringLen--;
        break;
      case '[': {
        int nott, match;
        pattern++;
        patternLen--;
        nott = pattern[0] == '^';
        if (nott) {
          pattern++;
          patternLen--;
        }
        match = 0;
        while (1) {
          if (pattern[0] == '\\' && patternLen >= 2) {
            pattern++;
            patternLen--;
            if (pattern[0] == string[0]) match = 1;
          } else if (pattern[0] == ']') {
            break;
          } else if (patternLen == 0) {
            pattern--;
            patternLen++;
            break;
          } else if (patternLen >= 3 && pattern[1] == '-') {
            int start = pattern[0];
            int end = pattern[2];
            int c = string[0];
            if (start > end) {
              int t = start;
              start = end;
              end = t;
            }
            if (nocase) {
              start = tolower(start);
              end = tolower(end);
              c = tolower(c);
            }
            pattern += 2;
            patternLen -= 2;
            if (c >= start && c <= end) match = 1;
          } else {
            if (!nocase) {
              if (pattern[0] == string[0]) match = 1;
            } else {
              if (tolower((int)pattern[0]) == tolower((int)string[0])) match = 1;
            }
          }
          pattern++;
          patternLen--;
        }
        if (nott) match = !match;
        if (!match) return 0;
        string++;
        stringLen--;
        break;
      }
      case '\\':
        if (patternLen >= 2) {
          pattern++;
          patternLen--;
        }
        [[fallthrough]];
      default:
        if (!nocase) {
          if (pattern[0] != string[0]) return 0;
        } else {
          if (tolower((int)pattern[0]) != tolower((int)string[0])) return 0;
        }
        string++;
        stringLen--;
        break;
    }
    pattern++;
    patternLen--;
    if (stringLen == 0) {
      while (*pattern == '*') {
        pattern++;
        patternLen--;
      }
      break;
    }
  }
  return patternLen == 0 && stringLen == 0;
}

bool Reference(const std::string& p, const std::string& s, bool nocase) {
  static_assert(static_cast<char>(-1) < 0, "the reference mirrors Redis on a signed-char platform");
  return RedisStringMatchLen(p.c_str(), static_cast<int>(p.size()), s.c_str(), static_cast<int>(s.size()), nocase);
}

// Bytes that exercise every branch: the metacharacters, both cases, a byte
// that is negative as a char, 0xff (EOF as an int) and NUL.
const std::string kPatternBytes = std::string("ab*?[]^-\\AZ") + '\xf0' + '\xff';
const std::string kStringBytes = std::string("abAB]^-\\Z*") + '\xf0' + '\xff' + '\0';

void ExpectSame(const std::string& p, const std::string& s) {
  for (bool nocase : {false, true}) {
    ASSERT_EQ(GlobMatch(p, s, nocase), Reference(p, s, nocase))
        << "pattern '" << p << "' string '" << s << "' nocase " << nocase;
  }
}

// Every string of length <= max_len over `bytes`.
std::vector<std::string> AllStrings(const std::string& bytes, size_t max_len) {
  std::vector<std::string> out = {""};
  for (size_t begin = 0, len = 1; len <= max_len; len++) {
    const size_t end = out.size();
    for (size_t i = begin; i < end; i++) {
      for (char c : bytes) out.push_back(out[i] + c);
    }
    begin = end;
  }
  return out;
}

TEST(GlobMatch, AgreesWithRedisOnEverySmallPatternAndString) {
  const auto patterns = AllStrings(kPatternBytes, 3);
  const auto strings = AllStrings(kStringBytes, 2);
  for (const auto& p : patterns) {
    for (const auto& s : strings) ExpectSame(p, s);
  }
}

TEST(GlobMatch, AgreesWithRedisOnRandomPatternsAndStrings) {
  std::mt19937 rng(11);
  auto random_string = [&rng](const std::string& bytes, size_t max_len) {
    std::string out(rng() % (max_len + 1), ' ');
    for (char& c : out) c = bytes[rng() % bytes.size()];
    return out;
  };
  for (int i = 0; i < 200000; i++) {
    const std::string p = random_string(kPatternBytes, 10);
    // Half the strings are drawn from the pattern's own literals, so matches are common.
    const std::string s = random_string(i % 2 ? kStringBytes : std::string("ab]-"), 7);
    ExpectSame(p, s);
  }
}

TEST(GlobMatch, RedisCornerCases) {
  EXPECT_TRUE(GlobMatch("", "", false));
  EXPECT_FALSE(GlobMatch("*", "", false));  // Redis: "" matches only ""
  EXPECT_FALSE(GlobMatch("**", "", false));
  EXPECT_TRUE(GlobMatch("a***", "a", false));
  EXPECT_TRUE(GlobMatch("[abc", "b", false));  // unterminated set runs to the end
  EXPECT_FALSE(GlobMatch("[", "[", false));
  EXPECT_TRUE(GlobMatch("[^", "x", false));
  EXPECT_TRUE(GlobMatch("[a-]", "]", false));  // the range a..']'
  EXPECT_TRUE(GlobMatch("[a-]", "_", false));
  EXPECT_FALSE(GlobMatch("[a-]", "-", false));
  EXPECT_TRUE(GlobMatch("[z-a]", "m", false));  // reversed range
  EXPECT_TRUE(GlobMatch("[\\]]", "]", false));
  EXPECT_TRUE(GlobMatch("a\\", "a\\", false));  // trailing backslash is literal
  EXPECT_TRUE(GlobMatch("\\*", "*", false));
  EXPECT_FALSE(GlobMatch("\\*", "a", false));
  EXPECT_TRUE(GlobMatch("[A]", "a", true));
  EXPECT_FALSE(GlobMatch("[\\A]", "a", true));  // an escaped byte in a set ignores nocase
  EXPECT_TRUE(GlobMatch("\\A", "a", true));     // outside a set it does not
  EXPECT_FALSE(GlobMatch("[]]", "]", false));   // "[]" is an empty set: it never matches
  EXPECT_FALSE(GlobMatch("[]]", "]]", false));
  EXPECT_TRUE(GlobMatch("[^]", "]", false));    // and "[^]" matches any byte
}

TEST(GlobMatch, PathologicalPatternsFinish) {
  // The recursive matcher takes ~C(40,20) steps here; Redis answers in < 1 ms.
  std::string p;
  for (int i = 0; i < 20; i++) p += "a*";
  EXPECT_FALSE(GlobMatch(p + "b", std::string(40, 'a'), false));
  EXPECT_TRUE(GlobMatch(p + "b", std::string(40, 'a') + "b", false));
  // Far beyond anything exponential: 1000 stars over 20000 bytes.
  std::string big;
  for (int i = 0; i < 1000; i++) big += "*[a-c]";
  EXPECT_FALSE(GlobMatch(big + "d", std::string(20000, 'a'), false));
  EXPECT_TRUE(GlobMatch(big + "d", std::string(20000, 'a') + "d", true));
}

}  // namespace
}  // namespace feedkv::server
