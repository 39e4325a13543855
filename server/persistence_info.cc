// Persistence::InfoSection: the INFO persistence fields (Redis's names, then
// feedkv's AOF position fields). Runs on the command thread.
#include <fmt/format.h>

#include "server/persistence.h"

namespace feedkv::server {

void Persistence::InfoSection(std::string* o) {
  int64_t now = NowMs();
  bool child = child_.pid > 0;
  *o += fmt::format(
      "loading:{}\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n"
      "current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n"
      "current_save_keys_total:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\n"
      "rdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\n"
      "rdb_current_bgsave_time_sec:{}\r\nrdb_saves:{}\r\nrdb_last_cow_size:0\r\n"
      "rdb_last_load_keys_expired:{}\r\nrdb_last_load_keys_loaded:{}\r\n"
      "rdb_last_fork_usec:{}\r\nrdb_total_forks:{}\r\nrdb_load_time_ms:{}\r\n"
      "rdb_snapshot_aof_segment:{}\r\nrdb_snapshot_aof_segment_offset:{}\r\n"
      "rdb_snapshot_aof_offset:{}\r\n",
      server_.loading() ? 1 : 0, server_.stats().dirty, child ? 1 : 0, last_save_ms_ / 1000,
      last_bgsave_ok_ ? "ok" : "err", last_bgsave_secs_,
      child ? (now - child_.start_ms) / 1000 : -1, rdb_saves_, load_expired_, load_keys_,
      last_fork_us_, total_forks_, load_ms_, last_snapshot_.aof_segment,
      last_snapshot_.aof_segment_offset, last_snapshot_.aof_offset);
  *o += fmt::format(
      "aof_enabled:{}\r\naof_rewrite_in_progress:{}\r\naof_rewrite_scheduled:{}\r\n"
      "aof_last_rewrite_time_sec:{}\r\naof_current_rewrite_time_sec:{}\r\n"
      "aof_last_bgrewrite_status:{}\r\naof_rewrites:{}\r\naof_rewrites_consecutive_failures:0\r\n"
      "aof_last_write_status:{}\r\naof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\n"
      "module_fork_last_cow_size:0\r\n",
      writer_ ? 1 : 0, child && child_.rewrite ? 1 : 0, rewrite_scheduled_ ? 1 : 0,
      last_rewrite_secs_, child && child_.rewrite ? (now - child_.start_ms) / 1000 : -1,
      last_rewrite_ok_ ? "ok" : "err", aof_rewrites_, aof_error_.empty() ? "ok" : "err");
  if (!writer_) return;
  aof::WriterStats ws = writer_->stats();
  aof::Manifest m = writer_->manifest();
  uint64_t first_start = m.segments.front().start;
  *o += fmt::format(
      "aof_current_size:{}\r\naof_base_size:0\r\naof_pending_rewrite:0\r\naof_buffer_length:{}\r\n"
      "aof_pending_bio_fsync:0\r\naof_delayed_fsync:0\r\n"
      "aof_offset:{}\r\naof_segment_id:{}\r\naof_segment_offset:{}\r\naof_written_offset:{}\r\n"
      "aof_durable_offset:{}\r\naof_first_segment_id:{}\r\naof_first_offset:{}\r\naof_segments:{}\r\n"
      "aof_lineage:{:016x}\r\naof_fsync_policy:{}\r\naof_fsyncs:{}\r\naof_last_fsync_usec:{}\r\n"
      "aof_write_errors:{}\r\n",
      writer_->sealed_offset() - first_start, ws.pending_bytes, server_.journal().end_offset(),
      writer_->position().segment, writer_->position().offset, ws.written_offset,
      ws.durable_offset, m.segments.front().seq, first_start, m.segments.size(), m.lineage,
      server_.config().ValueOf("appendfsync"), ws.fsyncs, ws.last_fsync_us, ws.write_errors);
}

int64_t Persistence::aof_free_disk_percent() const {
  return writer_ ? writer_->stats().free_disk_percent : -1;
}

}  // namespace feedkv::server
