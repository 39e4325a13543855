// FsyncPolicy: when the AOF writer fsyncs (the appendfsync setting, parsed
// once when set). A header of its own so the server's config can hold the
// parsed value without including the writer.
#pragma once

namespace feedkv::aof {

enum class FsyncPolicy { kAlways, kEverySec, kNo };

}  // namespace feedkv::aof
