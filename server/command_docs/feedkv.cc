// COMMAND DOCS facts of the commands only feedkv has (longsets, counters,
// feeds), of RedisBloom's BF.* (since-versions as RedisBloom's docs) and of
// Redis 7.2's WAITAOF, CLIENT SETINFO and CLIENT NO-TOUCH. Written by hand in
// the notation of server/command_docs.h.
#include "server/command_docs/doc_entries.h"

namespace feedkv::server::command_docs {

namespace {

const CommandDocEntry kEntries[] = {
    // RedisBloom.
    {"bf.add", "1.0.0", "O(k), where k is the number of hash functions used by the last sub-filter",
     "key:key#0 item:string"},
    {"bf.card", "2.4.4", "O(1)", "key:key#0"},
    {"bf.exists", "1.0.0", "O(k), where k is the number of hash functions used by the last sub-filter",
     "key:key#0 item:string"},
    {"bf.info", "1.0.0", "O(1)",
     "key:key#0 single_value:oneof?(=CAPACITY =SIZE =FILTERS =ITEMS =EXPANSION)"},
    {"bf.insert", "1.0.0",
     "O(k * n), where k is the number of hash functions and n is the number of items",
     "key:key#0 capacity:integer=CAPACITY? error:double=ERROR? expansion:integer=EXPANSION? "
     "=NOCREATE? =NONSCALING? =ITEMS item:string*"},
    {"bf.loadchunk", "1.0.0", "O(n), where n is the capacity",
     "key:key#0 iterator:integer data:string"},
    {"bf.madd", "1.0.0", "O(k * n), where k is the number of hash functions and n is the number of items",
     "key:key#0 item:string*"},
    {"bf.mexists", "1.0.0",
     "O(k * n), where k is the number of hash functions and n is the number of items",
     "key:key#0 item:string*"},
    {"bf.reserve", "1.0.0", "O(1)",
     "key:key#0 error_rate:double capacity:integer expansion:integer=EXPANSION? =NONSCALING?"},
    {"bf.scandump", "1.0.0", "O(n), where n is the capacity", "key:key#0 iterator:integer"},
    // Redis 7.2.
    {"client|no-touch", "7.2.0", "O(1)", "enabled:oneof(=ON =OFF)"},
    {"client|setinfo", "7.2.0", "O(1)",
     "attr:oneof(libname:string=LIB-NAME libver:string=LIB-VER)"},
    {"waitaof", "7.2.0", "O(1)", "numlocal:integer numreplicas:integer timeout:integer"},
    // Counters (docs/counters.md). An id is routed as a key (a not_key key spec).
    {"counter.create", "0.1.0", "O(F) where F is the number of fields in the schema.",
     "space:string field_bits:string*"},
    {"counter.del", "0.1.0", "O(1)", "space:string id:key#0"},
    {"counter.drop", "0.1.0", "O(N) where N is the number of tables of the space.", "space:string"},
    {"counter.get", "0.1.0",
     "O(F) where F is the number of fields replied; a cold id is read from disk without blocking "
     "the server.",
     "space:string id:key#0 field:string?*"},
    {"counter.incrby", "0.1.0", "O(1)", "space:string id:key#0 field:string delta:integer"},
    {"counter.info", "0.1.0", "O(T) where T is the number of tables of the space.", "space:string"},
    {"counter.mget", "0.1.0", "O(N*F) where N is the number of ids and F the number of fields.",
     "space:string id:key#0* field:string=FIELDS?*"},
    {"counter.set", "0.1.0", "O(1)", "space:string id:key#0 field:string value:integer"},
    {"counter.spaces", "0.1.0", "O(N) where N is the number of counter spaces.", ""},
    {"counter.spill", "0.1.0", "O(N) where N is the number of ids in the table, written by a background thread.",
     "space:string table:integer?"},
    // Feeds (docs/feeds.md).
    {"feed.activate", "0.1.0",
     "O(F*P) where F is the number of followed authors and P the posts taken from each.",
     "uid:key#0"},
    {"feed.delete", "0.1.0", "O(log(N)) where N is the length of the author's outbox.",
     "author:key#0 post_id:integer"},
    {"feed.follow", "0.1.0",
     "O(1), and O(P) to backfill P posts from an author in push mode.", "uid:key#0 target:string"},
    {"feed.info", "0.1.0", "O(1)", "uid:key#0"},
    {"feed.markread", "0.1.0", "O(1)", "uid:key#0 id:string"},
    {"feed.mode", "0.1.0", "O(1)", "author:key#0 mode:oneof(=PUSH =PULL =AUTO)"},
    {"feed.publish", "0.1.0",
     "O(1) for an author in pull mode, O(F) for one in push mode with F followers.",
     "author:key#0 post_id:integer ts_ms:integer"},
    {"feed.timeline", "0.1.0",
     "O(P + F*log(N)): P entries replied, F followed pull-mode authors merged.",
     "uid:key#0 cursor:oneof?(before:string=BEFORE after:string=AFTER) count:integer=COUNT?"},
    {"feed.unfollow", "0.1.0", "O(1)", "uid:key#0 target:string"},
    {"feed.unread", "0.1.0", "O(U) where U is at most feed-unread-cap.", "uid:key#0"},
    // Longsets (docs/longset.md).
    {"lsadd", "0.1.0", "O(1) for each member added, so O(N) to add N members.",
     "key:key#0 member:integer*"},
    {"lscard", "0.1.0", "O(1)", "key:key#0"},
    {"lsdiff", "0.1.0", "O(N) where N is the total number of members in all given sets.",
     "key:key#0*"},
    {"lsdump", "0.1.0", "O(N) where N is the capacity of the set's table.", "key:key#0"},
    {"lsinfo", "0.1.0", "O(N) where N is the capacity of the set's table.", "key:key#0"},
    {"lsinter", "0.1.0",
     "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
     "sets.",
     "key:key#0*"},
    {"lsintercard", "0.1.0",
     "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
     "sets.",
     "numkeys:integer key:key#0* limit:integer=LIMIT?"},
    {"lsismember", "0.1.0", "O(1)", "key:key#0 member:integer"},
    {"lsmembers", "0.1.0", "O(N) where N is the set cardinality.", "key:key#0"},
    {"lsmismember", "0.1.0", "O(N) where N is the number of members being checked.",
     "key:key#0 member:integer*"},
    {"lsrem", "0.1.0", "O(N) where N is the number of members to be removed.",
     "key:key#0 member:integer*"},
    {"lsscan", "0.1.0",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
     "cursor to return back to 0. N is the capacity of the set's table.",
     "key:key#0 cursor:integer count:integer=COUNT?"},
    {"lsset", "0.1.0", "O(N) where N is the capacity of the image's table.", "key:key#0 image:string"},
};

}  // namespace

std::span<const CommandDocEntry> FeedkvDocs() { return kEntries; }

}  // namespace feedkv::server::command_docs
