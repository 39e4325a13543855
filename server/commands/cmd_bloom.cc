// Bloom filter commands, RedisBloom-compatible: BF.RESERVE, BF.ADD, BF.MADD,
// BF.INSERT, BF.EXISTS, BF.MEXISTS, BF.INFO, BF.CARD, BF.SCANDUMP and
// BF.LOADCHUNK with RedisBloom's arguments, defaults (bf-error-rate,
// bf-initial-size, bf-expansion-factor), replies in RESP2 and RESP3 and error
// texts. The handlers parse and reply; the operations are server/ops/bloom_ops,
// the filter itself is storage/bloom_chain.h. docs/bloom.md.
//
// What reaches the AOF and replicas is deterministic whatever the replica's bf-*
// settings: server/ops/bloom_ops.h says how.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/bloom_ops.h"
#include "server/server.h"
#include "storage/bloom_chain.h"

namespace feedkv::server {

namespace {

namespace err = protocol::err;

// The growth a NONSCALING filter records when no EXPANSION is given
// (RedisBloom's BF_DEFAULT_EXPANSION): fixed, so the log replays to the same
// dump header on a server with another bf-expansion-factor.
constexpr uint32_t kNonScalingGrowth = 2;

// What an add to a missing key creates: the bf-* settings.
BloomChain::Params DefaultParams(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  BloomChain::Params p;
  p.error = c.bf_error_rate;
  p.capacity = static_cast<uint64_t>(c.bf_initial_size);
  p.growth = static_cast<uint32_t>(c.bf_expansion_factor);
  p.nonscaling = p.growth == 0;
  return p;
}

// RedisBloom's RMUtil_ArgIndex: the first argument equal to `word`, any case; -1.
int ArgIndex(const CommandContext& ctx, std::string_view word) {
  for (size_t i = 0; i < ctx.argc(); i++) {
    if (EqualsIgnoreCase(ctx.arg(i), word)) return static_cast<int>(i);
  }
  return -1;
}

void WrongArity(CommandContext& ctx) { ctx.Error(fmt::format(err::kWrongArity, ctx.spec.name)); }

// Adds the items from argument `first_item` on to the filter at key (created from
// *create when missing and create is not null) and replies one answer per item: an
// array when `multi`. A NONSCALING filter that fills ends the reply with
// RedisBloom's error, as it does, and the items after it are not tried.
void AddItems(CommandContext& ctx, const BloomChain::Params* create, size_t first_item, bool multi) {
  bloom_ops::AddResults added;
  if (!ctx.Found(bloom_ops::Add(ctx, ctx.arg(1), create, ctx.args.subspan(first_item)), &added)) return;
  if (multi) ctx.reply.ArrayHeader(added.answers.size());
  for (bloom_ops::AddResults::Answer a : added.answers) {
    switch (a) {
      case bloom_ops::AddResults::kNo: ctx.reply.Bool(false); break;
      case bloom_ops::AddResults::kYes: ctx.reply.Bool(true); break;
      case bloom_ops::AddResults::kFull: ctx.Error(err::kBfFull); break;
      case bloom_ops::AddResults::kFailed: ctx.Error(err::kBfInsertFailed); break;
      case bloom_ops::AddResults::kTooBig:
        ctx.Error(fmt::format(protocol::err::kBloomTooBig, added.bytes_needed));
        break;
    }
  }
}

// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
void BfReserve(CommandContext& ctx) {
  if (ctx.argc() > 7) return WrongArity(ctx);
  BloomChain::Params p;
  if (!ParseDouble(ctx.arg(2), &p.error)) return ctx.Error(err::kBfBadErrorRate);
  if (!(p.error > 0 && p.error < 1)) return ctx.Error(err::kBfErrorRateRange);
  int64_t capacity;
  if (!ParseCanonicalInt64(ctx.arg(3), &capacity)) return ctx.Error(err::kBfBadCapacity);
  if (capacity < 1 || capacity > BloomChain::kMaxCapacity) return ctx.Error(err::kBfCapacityRange);
  p.capacity = static_cast<uint64_t>(capacity);
  p.nonscaling = ArgIndex(ctx, "NONSCALING") != -1;
  int64_t expansion = ctx.server.cfg().bf_expansion_factor;
  const int at = ArgIndex(ctx, "EXPANSION");
  if (at + 1 == static_cast<int>(ctx.argc())) return ctx.Error(err::kBfNoExpansion);
  if (at != -1) {
    if (!ParseCanonicalInt64(ctx.arg(at + 1), &expansion)) return ctx.Error(err::kBfBadExpansion);
    if (expansion == 0) {
      p.nonscaling = true;
    } else if (p.nonscaling) {
      return ctx.ErrorVerbatim(err::kBfNonscalingExpand);
    }
    if (expansion < 0 || expansion > BloomChain::kMaxExpansion) return ctx.Error(err::kBfExpansionRange);
  } else if (p.nonscaling) {
    expansion = kNonScalingGrowth;
  }
  if (expansion == 0) p.nonscaling = true;
  p.growth = static_cast<uint32_t>(expansion);
  if (Status st = bloom_ops::Reserve(ctx, ctx.arg(1), p); !st.ok()) return ctx.Error(st);
  ctx.reply.Ok();
}

// BF.ADD key item / BF.MADD key item [item ...]
void BfAdd(CommandContext& ctx) {
  const BloomChain::Params p = DefaultParams(ctx);
  AddItems(ctx, &p, 2, false);
}

void BfMAdd(CommandContext& ctx) {
  const BloomChain::Params p = DefaultParams(ctx);
  AddItems(ctx, &p, 2, true);
}

// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item [item ...]
// Keywords are told apart by their first letters, as RedisBloom's parser does.
void BfInsert(CommandContext& ctx) {
  BloomChain::Params p = DefaultParams(ctx);
  int64_t expansion = p.growth;
  bool expansion_given = false;
  bool create = true;
  bool nonscaling = false;
  int64_t capacity = static_cast<int64_t>(p.capacity);
  size_t items = 0;
  size_t pos = 2;
  auto letter = [](std::string_view s, size_t i) { return i < s.size() ? LowerAscii(s[i]) : '\0'; };
  while (pos < ctx.argc() && items == 0) {
    const std::string_view a = ctx.arg(pos);
    switch (letter(a, 0)) {
      case 'i':
        items = ++pos;
        break;
      case 'e':
        if (++pos == ctx.argc()) return WrongArity(ctx);
        if (letter(a, 1) == 'r') {
          if (!ParseDouble(ctx.arg(pos++), &p.error)) return ctx.ErrorVerbatim(err::kBfInsertBadErrorRate);
        } else {
          if (!ParseCanonicalInt64(ctx.arg(pos++), &expansion)) return ctx.ErrorVerbatim(err::kBfInsertBadExpansion);
          expansion_given = true;
        }
        break;
      case 'c':
        if (++pos == ctx.argc()) return WrongArity(ctx);
        if (!ParseCanonicalInt64(ctx.arg(pos++), &capacity)) return ctx.ErrorVerbatim(err::kBfInsertBadCapacity);
        break;
      case 'n':
        if (letter(a, 2) == 'c') {
          create = false;
        } else {
          nonscaling = true;
        }
        pos++;
        break;
      default:
        return ctx.ErrorVerbatim(err::kBfUnknownArgument);
    }
  }
  if (items == 0 || items == ctx.argc()) return WrongArity(ctx);
  if (!(p.error > 0 && p.error < 1)) return ctx.ErrorVerbatim(err::kBfInsertBadErrorRate);
  if (capacity < 1 || capacity > BloomChain::kMaxCapacity) return ctx.ErrorVerbatim(err::kBfInsertBadCapacity);
  if (expansion < 0 || expansion > BloomChain::kMaxExpansion) return ctx.ErrorVerbatim(err::kBfInsertBadExpansion);
  if (nonscaling && expansion_given && expansion != 0) return ctx.ErrorVerbatim(err::kBfNonscalingExpand);
  if (nonscaling && !expansion_given) expansion = kNonScalingGrowth;
  p.capacity = static_cast<uint64_t>(capacity);
  p.growth = static_cast<uint32_t>(expansion);
  p.nonscaling = nonscaling || expansion == 0;
  AddItems(ctx, create ? &p : nullptr, items, true);
}

// BF.EXISTS key item / BF.MEXISTS key item [item ...]. As RedisBloom, a key that
// is missing or holds another type answers 0 for every item.
void Exists(CommandContext& ctx, bool multi) {
  const BloomChain* bf = bloom_ops::FindOrNone(ctx, ctx.arg(1));
  if (multi) ctx.reply.ArrayHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); i++) ctx.reply.Bool(bf != nullptr && bf->Contains(ctx.arg(i)));
}

void BfExists(CommandContext& ctx) { Exists(ctx, false); }
void BfMExists(CommandContext& ctx) { Exists(ctx, true); }

// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]
void BfInfo(CommandContext& ctx) {
  if (ctx.argc() > 3) return WrongArity(ctx);
  const BloomChain* bf;
  if (!ctx.Found(bloom_ops::FindExisting(ctx, ctx.arg(1)), &bf)) return;
  struct Field {
    std::string_view option, name;
    int64_t value;
    bool null;
  };
  const Field fields[] = {
      {"capacity", "Capacity", static_cast<int64_t>(bf->capacity()), false},
      {"size", "Size", static_cast<int64_t>(bf->RedisBloomSize()), false},
      {"filters", "Number of filters", static_cast<int64_t>(bf->links()), false},
      {"items", "Number of items inserted", static_cast<int64_t>(bf->items()), false},
      {"expansion", "Expansion rate", bf->growth(), bf->nonscaling()},
  };
  auto value = [&](const Field& f) { f.null ? ctx.reply.Null() : ctx.reply.Integer(f.value); };
  const bool resp3 = ctx.client.resp >= 3;
  if (ctx.argc() == 3) {
    for (const Field& f : fields) {
      if (!EqualsIgnoreCase(ctx.arg(2), f.option)) continue;
      // RedisBloom's ReplyWithMapOrArray(1): the value alone in RESP2.
      if (resp3) {
        ctx.reply.MapHeader(1);
        ctx.reply.Simple(f.name);
      } else {
        ctx.reply.ArrayHeader(1);
      }
      return value(f);
    }
    return ctx.ErrorVerbatim(err::kBfInvalidInfo);
  }
  ctx.reply.MapHeader(std::size(fields));
  for (const Field& f : fields) {
    ctx.reply.Simple(f.name);
    value(f);
  }
}

// BF.CARD key: items inserted; 0 for a missing key.
void BfCard(CommandContext& ctx) {
  const BloomChain* bf;
  if (!ctx.Found(bloom_ops::Find(ctx, ctx.arg(1)), &bf)) return;
  ctx.reply.Integer(bf == nullptr ? 0 : static_cast<int64_t>(bf->items()));
}

// BF.SCANDUMP key iterator: [1, header] at 0, then [next, chunk] up to [0, ""].
void BfScanDump(CommandContext& ctx) {
  const BloomChain* bf;
  if (!ctx.Found(bloom_ops::FindExisting(ctx, ctx.arg(1)), &bf)) return;
  int64_t iter;
  if (!ParseCanonicalInt64(ctx.arg(2), &iter)) return ctx.ErrorVerbatim(err::kBfScanDumpIterator);
  ctx.reply.ArrayHeader(2);
  if (iter == 0) {
    ctx.reply.Integer(1);
    ctx.reply.Bulk(bf->EncodeHeader());
    return;
  }
  const std::string_view chunk = bf->Chunk(&iter, BloomChain::kMaxChunk);
  ctx.reply.Integer(iter);
  ctx.reply.Bulk(chunk);
}

// BF.LOADCHUNK key iterator data: iterator 1 on a missing key creates the filter
// from a SCANDUMP header; later iterators fill its bits.
void BfLoadChunk(CommandContext& ctx) {
  int64_t iter;
  if (!ParseCanonicalInt64(ctx.arg(2), &iter)) return ctx.Error(err::kBfLoadChunkIterator);
  if (Status st = bloom_ops::LoadChunk(ctx, ctx.arg(1), iter, ctx.arg(3)); !st.ok()) return ctx.Error(st);
  ctx.reply.Ok();
}

constexpr uint32_t kAdd = kWrite | kDenyOom;
constexpr uint32_t kRead = kReadOnly | kFast;

const CommandSpec kCommands[] = {
    {"bf.reserve", -4, kAdd | kFast, 1, 1, 1, BfReserve, "Creates a new Bloom Filter", "bf", {}, {kKeyRW | kKeyInsert}},
    {"bf.add", 3, kAdd, 1, 1, 1, BfAdd, "Adds an item to a Bloom Filter", "bf", {}, {kKeyRW | kKeyInsert}},
    {"bf.madd", -3, kAdd, 1, 1, 1, BfMAdd, "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", "bf", {}, {kKeyRW | kKeyInsert}},
    {"bf.insert", -4, kAdd, 1, 1, 1, BfInsert, "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", "bf", {}, {kKeyRW | kKeyInsert}},
    {"bf.exists", 3, kRead, 1, 1, 1, BfExists, "Checks whether an item exists in a Bloom Filter", "bf", {}, {kKeyRO | kKeyAccess}},
    {"bf.mexists", -3, kRead, 1, 1, 1, BfMExists, "Checks whether one or more items exist in a Bloom Filter", "bf", {}, {kKeyRO | kKeyAccess}},
    {"bf.info", -2, kRead, 1, 1, 1, BfInfo, "Returns information about a Bloom Filter", "bf", {}, {kKeyRO}},
    {"bf.card", 2, kRead, 1, 1, 1, BfCard, "Returns the cardinality of a Bloom filter", "bf", {}, {kKeyRO}},
    {"bf.scandump", 3, kReadOnly, 1, 1, 1, BfScanDump, "Begins an incremental save of the bloom filter", "bf", {}, {kKeyRO | kKeyAccess}},
    {"bf.loadchunk", 4, kAdd, 1, 1, 1, BfLoadChunk, "Restores a filter previously saved using SCANDUMP", "bf", {}, {kKeyRW | kKeyUpdate}},
};

}  // namespace

std::span<const CommandSpec> BloomCommands() { return kCommands; }

}  // namespace feedkv::server
