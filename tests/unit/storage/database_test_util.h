// Helpers shared by the Database unit tests.
#pragma once

#include <gtest/gtest.h>

#include "storage/database.h"

namespace feedkv {

// Runs resizes to completion, including ones that become due afterwards (a finished
// shrink may leave the table due for another).
inline void SettleResizes(Database& db) {
  size_t before;
  do {
    before = db.bucket_count();
    while (db.IncrementalRehash(1000000)) {
    }
  } while (db.bucket_count() != before);
  ASSERT_FALSE(db.rehashing());
}

}  // namespace feedkv
