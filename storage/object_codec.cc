#include "storage/object_codec.h"

#include "storage/bloom_chain.h"
#include "storage/feed_timeline.h"
#include "storage/hash_value.h"
#include "storage/list_value.h"
#include "storage/set_value.h"
#include "storage/sorted_set.h"
#include "storage/stream_value.h"

namespace feedkv {

Status DecodeObject(ValueType type, std::string_view bytes, std::unique_ptr<Object>* out) {
  out->reset();
  switch (type) {
    case ValueType::kString:
      return Status::Corruption("strings are not objects");
    case ValueType::kSet: {
      std::unique_ptr<SetValue> set;
      Status st = SetValue::Decode(bytes, &set);
      if (!st.ok()) return st;
      *out = std::move(set);
      return Status::OK();
    }
    case ValueType::kFeed: {
      std::unique_ptr<FeedTimeline> feed;
      Status st = FeedTimeline::Decode(bytes, &feed);
      if (!st.ok()) return st;
      *out = std::move(feed);
      return Status::OK();
    }
    case ValueType::kHash: {
      std::unique_ptr<HashValue> hash;
      Status st = HashValue::Decode(bytes, &hash);
      if (!st.ok()) return st;
      *out = std::move(hash);
      return Status::OK();
    }
    case ValueType::kList: {
      // A snapshot does not carry list-max-listpack-size: chunks are rebuilt at
      // the default size.
      std::unique_ptr<ListValue> list;
      Status st = ListValue::Decode(bytes, kDefaultListFill, &list);
      if (!st.ok()) return st;
      *out = std::move(list);
      return Status::OK();
    }
    case ValueType::kBloom: {
      std::unique_ptr<BloomChain> bloom;
      Status st = BloomChain::Decode(bytes, &bloom);
      if (!st.ok()) return st;
      *out = std::move(bloom);
      return Status::OK();
    }
    case ValueType::kStream: {
      std::unique_ptr<StreamValue> stream;
      Status st = StreamValue::Decode(bytes, &stream);
      if (!st.ok()) return st;
      *out = std::move(stream);
      return Status::OK();
    }
    case ValueType::kZset: {
      std::unique_ptr<SortedSetValue> zset;
      Status st = SortedSetValue::Decode(bytes, &zset);
      if (!st.ok()) return st;
      *out = std::move(zset);
      return Status::OK();
    }
  }
  return Status::Corruption("unknown value type");
}

}  // namespace feedkv
