#include <gtest/gtest.h>

#include "command_test_util.h"

namespace feedkv::server {
namespace {

class CounterCommandsTest : public CommandTest {
 protected:
  CounterCommandsTest() {
    Config c;
    EXPECT_TRUE(c.Set("counter-table-size", "4kb", false).ok());
    Reset(c);
    EXPECT_EQ(Run({"counter.create", "post", "repost:20", "comment:20", "like:24", "read:32"}),
              "+OK\r\n");
  }
};

TEST_F(CounterCommandsTest, CreateIsIdempotentForTheSameSchemaOnly) {
  EXPECT_EQ(Run({"counter.create", "post", "repost:20", "comment:20", "like:24", "read:32"}),
            "+OK\r\n");
  EXPECT_EQ(Run({"counter.create", "post", "like:8"}).substr(0, 44),
            "-ERR counter space 'post' exists with a diff");
  EXPECT_EQ(Run({"counter.create", "bad", "like:65"}).substr(0, 28), "-ERR invalid counter schema:");
  EXPECT_EQ(Run({"counter.spaces"}), "*1\r\n" + Bulk("post"));
}

TEST_F(CounterCommandsTest, IncrByReturnsNewValueAndClampsAtZero) {
  EXPECT_EQ(Run({"counter.incrby", "post", "7", "like", "5"}), Int(5));
  EXPECT_EQ(Run({"counter.incrby", "post", "7", "like", "-9"}), Int(0));
  EXPECT_EQ(Run({"counter.incrby", "post", "7", "read", "3"}), Int(3));
  EXPECT_EQ(Run({"counter.get", "post", "7", "read", "like"}), "*2\r\n" + Int(3) + Int(0));
}

TEST_F(CounterCommandsTest, GetAllFieldsIsAMapInResp3AndFlatInResp2) {
  Run({"counter.incrby", "post", "1", "comment", "2"});
  std::string flat = Run({"counter.get", "post", "1"});
  EXPECT_EQ(flat, "*8\r\n" + Bulk("repost") + Int(0) + Bulk("comment") + Int(2) + Bulk("like") +
                      Int(0) + Bulk("read") + Int(0));
  Run({"hello", "3"});
  EXPECT_EQ(Run({"counter.get", "post", "1"}).substr(0, 4), "%4\r\n");
}

TEST_F(CounterCommandsTest, OverflowingTheFieldWidthKeepsTheValue) {
  EXPECT_EQ(Run({"counter.set", "post", "9", "like", "16777215"}), "+OK\r\n");  // 2^24-1
  EXPECT_EQ(Run({"counter.incrby", "post", "9", "like", "1"}), Int(16777216));
  EXPECT_EQ(Run({"counter.get", "post", "9", "like"}), "*1\r\n" + Int(16777216));
}

TEST_F(CounterCommandsTest, BeyondUint64IsAnErrorAndChangesNothing) {
  EXPECT_EQ(Run({"counter.set", "post", "9", "read", "18446744073709551615"}), "+OK\r\n");
  EXPECT_EQ(Run({"counter.incrby", "post", "9", "read", "1"}),
            Err("ERR increment or decrement would overflow"));
  EXPECT_EQ(Run({"counter.get", "post", "9", "read"}), "*1\r\n" + Bulk("18446744073709551615"));
  EXPECT_EQ(Run({"counter.set", "post", "9", "read", "18446744073709551616"}),
            Err("ERR value is not an integer or out of range"));
}

TEST_F(CounterCommandsTest, ErrorsNameTheProblem) {
  EXPECT_EQ(Run({"counter.incrby", "nope", "1", "like", "1"}), Err("ERR no such counter space 'nope'"));
  EXPECT_EQ(Run({"counter.incrby", "post", "1", "nope", "1"}),
            Err("ERR no such field 'nope' in counter space 'post'"));
  EXPECT_EQ(Run({"counter.incrby", "post", "x", "like", "1"}),
            Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"counter.mget", "post", "1", "FIELDS"}), Err("ERR syntax error"));
}

TEST_F(CounterCommandsTest, MGetReturnsOneEntryPerId) {
  Run({"counter.incrby", "post", "1", "like", "1"});
  Run({"counter.incrby", "post", "2", "like", "2"});
  EXPECT_EQ(Run({"counter.mget", "post", "1", "2", "3", "FIELDS", "like"}),
            "*3\r\n*1\r\n" + Int(1) + "*1\r\n" + Int(2) + "*1\r\n" + Int(0));
}

TEST_F(CounterCommandsTest, DelAndDropRemoveData) {
  Run({"counter.incrby", "post", "1", "like", "1"});
  EXPECT_EQ(Run({"counter.del", "post", "1"}), Int(1));
  EXPECT_EQ(Run({"counter.del", "post", "1"}), Int(0));
  EXPECT_EQ(Run({"counter.drop", "post"}), Int(1));
  EXPECT_EQ(Run({"counter.drop", "post"}), Int(0));
  EXPECT_EQ(Run({"counter.spaces"}), "*0\r\n");
}

TEST_F(CounterCommandsTest, ManyIdsRollTablesAndStayReadable) {
  for (int id = 0; id < 5000; id++) {
    Run({"counter.incrby", "post", std::to_string(id), "read", std::to_string(id % 97 + 1)});
  }
  for (int id = 0; id < 5000; id += 37) {
    EXPECT_EQ(Run({"counter.get", "post", std::to_string(id), "read"}), "*1\r\n" + Int(id % 97 + 1));
  }
  EXPECT_GT(server_->counter_spaces().at("post")->num_tables(), 1u);
}

}  // namespace
}  // namespace feedkv::server

namespace feedkv::server {
namespace {

TEST_F(CounterCommandsTest, ZeroPaddedIdsAreTheSameId) {
  // redis-benchmark's __rand_int__ yields "000000000042".
  EXPECT_EQ(Run({"counter.incrby", "post", "000000000042", "like", "2"}), Int(2));
  EXPECT_EQ(Run({"counter.get", "post", "42", "like"}), "*1\r\n" + Int(2));
  EXPECT_EQ(Run({"counter.incrby", "post", "-007", "like", "1"}), Int(1));
  EXPECT_EQ(Run({"counter.get", "post", "-7", "like"}), "*1\r\n" + Int(1));
  EXPECT_EQ(Run({"counter.get", "post", "0x10"}), Err("ERR value is not an integer or out of range"));
}

}  // namespace
}  // namespace feedkv::server
