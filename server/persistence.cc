#include "server/persistence.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "server/command_context.h"
#include "server/startup.h"
#include "storage/aof_reader.h"
#include "storage/counter_space.h"
#include "storage/rdb_digest.h"
#include "storage/rdb_reader.h"
#include "storage/rdb_writer.h"

namespace feedkv::server {

// A thread that runs jobs in order (snapshot finishing when there is no AOF
// writer thread to do it).
class JobThread {
 public:
  JobThread() : thread_([this] { Run(); }) {}
  ~JobThread() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void Submit(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      q_.push_back(std::move(fn));
    }
    cv_.notify_one();
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lk(mu_);
    while (true) {
      cv_.wait(lk, [&] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;
      auto fn = std::move(q_.front());
      q_.pop_front();
      lk.unlock();
      fn();
      lk.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::thread thread_;
};

namespace {

std::map<Server*, Persistence*>& Registry() {
  static auto* r = new std::map<Server*, Persistence*>();
  return *r;
}

// "3600 1 300 100" -> {(3600,1), (300,100)}.
std::vector<std::pair<int64_t, int64_t>> SavePoints(const std::string& spec) {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::vector<int64_t> nums;
  size_t i = 0;
  while (i < spec.size()) {
    while (i < spec.size() && spec[i] == ' ') i++;
    size_t j = i;
    while (j < spec.size() && spec[j] != ' ') j++;
    if (j > i) nums.push_back(std::atoll(spec.substr(i, j - i).c_str()));
    i = j;
  }
  for (size_t k = 0; k + 1 < nums.size(); k += 2) out.emplace_back(nums[k], nums[k + 1]);
  return out;
}

aof::FsyncPolicy PolicyOf(const std::string& s) {
  aof::FsyncPolicy p = aof::FsyncPolicy::kEverySec;
  aof::ParseFsyncPolicy(s, &p);
  return p;
}

}  // namespace

Persistence::Persistence(Server& server, Env* env) : server_(server), env_(env) {
  Registry()[&server] = this;
}

Persistence::~Persistence() {
  if (child_.pid > 0) {
    ::kill(child_.pid, SIGKILL);
    ::waitpid(child_.pid, nullptr, 0);
  }
  StopWriter();
  jobs_.reset();
  Registry().erase(&server_);
}

Persistence* Persistence::Of(Server& server) {
  auto it = Registry().find(&server);
  return it == Registry().end() ? nullptr : it->second;
}

std::string Persistence::rdb_path() const {
  return JoinPath(server_.cfg().dir, server_.cfg().dbfilename);
}

std::string Persistence::aof_dir() const { return aof_dir_; }

bool Persistence::Attach() {
  // A child writing a snapshot may exceed a file size limit; fail the write,
  // do not die.
  ::signal(SIGXFSZ, SIG_IGN);
  aof_dir_ = JoinPath(server_.cfg().dir, server_.cfg().appenddirname);
  RemoveTemporaryFiles();
  jobs_ = std::make_unique<JobThread>();
  server_.set_loading(true);
  int64_t t0 = NowMs();
  bool ok = LoadAtStartup();
  load_ms_ = NowMs() - t0;
  server_.set_loading(false);
  if (!ok) return false;
  server_.stats().dirty = 0;
  last_save_ms_ = NowMs();
  cfg_appendonly_ = server_.cfg().appendonly;
  cfg_fsync_ = server_.cfg().appendfsync;
  cfg_segment_size_ = server_.cfg().aof_segment_size;
  server_.AddCronHook([this](int64_t now) { Cron(now); });
  server_.AddShutdownHook([this](const ShutdownOptions& o) { return Shutdown(o); });
  server_.AddInfoSection("persistence", [this](std::string* out) { InfoSection(out); });
  return true;
}

void Persistence::RemoveTemporaryFiles() {
  // Left by a process that died while saving: a snapshot being written
  // (temp-*.rdb, as Redis names them) or a manifest being replaced (*.tmp).
  // Nothing reads them; they would only fill the disk.
  auto sweep = [&](const std::string& dir, auto is_temp) {
    std::vector<std::string> names;
    if (!env_->ListDir(dir, &names).ok()) return;
    for (const std::string& n : names) {
      if (!is_temp(n)) continue;
      server_.Log(2, "Removing temporary file " + JoinPath(dir, n) + " left by an earlier run");
      env_->RemoveFile(JoinPath(dir, n)).PermitUnchecked();
    }
  };
  sweep(server_.cfg().dir, [](std::string_view n) {
    return n.starts_with("temp-") && n.ends_with(".rdb");
  });
  const std::string manifest_tmp = server_.cfg().appendfilename + ".manifest.tmp";
  sweep(aof_dir_, [&](std::string_view n) { return n == manifest_tmp; });
}

bool Persistence::LoadAtStartup() {
  const ServerConfig& cfg = server_.cfg();
  std::string rdb = rdb_path();
  auto fatal = [&](const std::string& msg) {
    server_.Log(3, msg);
    return false;
  };
  if (!cfg.appendonly) {
    if (!env_->FileExists(rdb)) return true;
    rdb::Header h;
    Status s = LoadSnapshot(rdb, &h);
    if (!s.ok()) return fatal("Fatal error loading the snapshot: " + s.ToString());
    last_snapshot_ = h;
    return true;
  }
  Status s = env_->CreateDirIfMissing(aof_dir_);
  if (!s.ok()) return fatal("Can't open the append-only directory: " + s.ToString());
  aof::Manifest m;
  s = aof::LoadManifest(env_, aof_dir_, cfg.appendfilename, &m);
  if (s.IsNotFound()) {
    std::vector<std::string> names;
    env_->ListDir(aof_dir_, &names).PermitUnchecked();
    for (const auto& n : names) {
      uint64_t seq;
      if (aof::ParseSegmentName(cfg.appendfilename, n, &seq)) {
        return fatal(fmt::format("AOF segment {} exists in {} but there is no manifest; refusing "
                                 "to start (see docs/persistence.md)", n, aof_dir_));
      }
    }
    // A new log. Whatever the snapshot holds becomes its base.
    bool loaded = false;
    if (env_->FileExists(rdb)) {
      rdb::Header h;
      s = LoadSnapshot(rdb, &h);
      if (!s.ok()) return fatal("Fatal error loading the snapshot: " + s.ToString());
      loaded = true;
    }
    s = StartNewLog(loaded);
    if (!s.ok()) return fatal("Can't create the append-only log: " + s.ToString());
    return true;
  }
  if (!s.ok()) return fatal("Bad AOF manifest: " + s.ToString());

  // Pick the starting point: the snapshot, if it belongs to this log.
  aof::Position from{m.segments.front().seq, 0};
  bool whole_log = m.segments.front().start == 0;
  if (env_->FileExists(rdb)) {
    rdb::Header h;
    s = rdb::ReadHeaderFile(env_, rdb, &h);
    const aof::SegmentInfo* seg = s.ok() ? m.Find(h.aof_segment) : nullptr;
    bool matches = s.ok() && h.aof_lineage == m.lineage && seg != nullptr &&
                   seg->start + h.aof_segment_offset == h.aof_offset;
    if (matches) {
      s = LoadSnapshot(rdb, &h);
      if (s.ok()) {
        from = {h.aof_segment, h.aof_segment_offset};
        last_snapshot_ = h;
      } else if (!whole_log) {
        return fatal("Fatal error loading the snapshot: " + s.ToString());
      } else {
        server_.Log(3, "The snapshot is damaged (" + s.ToString() +
                           "); replaying the whole AOF instead");
        for (int i = 0; i < server_.num_dbs(); i++) server_.db(i).Clear();
        server_.counter_spaces().clear();
      }
    } else if (!whole_log) {
      return fatal(fmt::format("{} does not match the AOF (lineage {:016x}) and the AOF no longer "
                               "starts at offset 0: cannot recover; see docs/persistence.md",
                               rdb, m.lineage));
    } else {
      server_.Log(3, fmt::format("{} does not belong to this AOF; replaying the whole AOF", rdb));
    }
  } else if (!whole_log) {
    return fatal("No snapshot and the AOF no longer starts at offset 0: cannot recover");
  }

  aof::LogReport report;
  s = ReplayAof(m, from, &report);
  if (!s.ok()) {
    return fatal("Fatal error replaying the AOF: " + s.ToString() +
                 ". Run tools/feedkv-check-aof on " + aof_dir_ + " (--fix truncates it).");
  }
  if (report.truncated) {
    server_.Log(3, fmt::format("!!! Warning: torn last write in {}: bytes [{}, {}) ({} bytes) were "
                               "cut (aof-load-truncated yes): {}",
                               report.truncated_file, report.truncated_at,
                               report.truncated_at + report.truncated_bytes, report.truncated_bytes,
                               report.truncated_reason));
  }
  server_.Log(2, fmt::format("AOF replayed from {}:{}: {} commands; log ends at {}:{} (offset {})",
                             from.segment, from.offset, report.records, report.end.segment,
                             report.end.offset, report.end_offset));
  // Orphans: segment files the manifest does not name (a roll or a
  // retirement interrupted by a crash).
  std::vector<std::string> names;
  env_->ListDir(aof_dir_, &names).PermitUnchecked();
  for (const auto& n : names) {
    uint64_t seq;
    if (aof::ParseSegmentName(cfg.appendfilename, n, &seq) && m.Find(seq) == nullptr) {
      server_.Log(2, "Removing orphan AOF segment " + n);
      env_->RemoveFile(JoinPath(aof_dir_, n)).PermitUnchecked();
    }
  }
  s = OpenWriter(m, report.tail_size);
  if (!s.ok()) return fatal("Can't open the AOF for writing: " + s.ToString());
  return true;
}

Status Persistence::LoadSnapshot(const std::string& path, rdb::Header* h) {
  std::vector<Database*> dbs;
  for (int i = 0; i < server_.num_dbs(); i++) dbs.push_back(&server_.db(i));
  rdb::DatasetLoader loader(dbs, NowMs());
  rdb::LoadStats st;
  Status s = rdb::ReadSnapshotFile(env_, path, server_.num_dbs(), &loader, h, &st);
  if (!s.ok()) {
    for (Database* db : dbs) db->Clear();
    return s;
  }
  auto& spaces = server_.counter_spaces();
  spaces.clear();
  for (auto& [name, space] : loader.counter_spaces()) spaces[name] = std::move(space);
  load_keys_ = st.keys;
  load_expired_ = loader.expired_keys();
  server_.Log(2, fmt::format("Snapshot {} loaded: {} keys, {} counter spaces, {} bytes", path,
                             st.keys, st.counter_spaces, st.bytes));
  return Status::OK();
}

Status Persistence::ReplayAof(const aof::Manifest& m, aof::Position from, aof::LogReport* report) {
  Client fake;
  fake.authenticated = true;
  fake.addr = "aof-replay";
  uint64_t errors = 0;
  std::vector<const aof::Record*> tx;
  bool in_tx = false;
  const CommandTable& table = server_.table();
  std::string last_name;  // the log repeats a few names: skip most lookups
  const CommandSpec* last_spec = nullptr;
  auto apply = [&](uint64_t seq, const aof::Record& r) -> Status {
    const CommandSpec* spec = last_spec;
    if (spec == nullptr || r.argv[0] != last_name) {
      spec = table.Find(r.argv[0]);
      last_name.assign(r.argv[0]);
      last_spec = spec;
    }
    int argc = static_cast<int>(r.argv.size());
    if (spec == nullptr || (spec->arity > 0 && argc != spec->arity) ||
        (spec->arity < 0 && argc < -spec->arity)) {
      return Status::Corruption(fmt::format("{} command '{}' at offset {} of {}",
                                            spec == nullptr ? "unknown" : "wrong arity for",
                                            r.argv[0], r.offset,
                                            aof::SegmentName(server_.cfg().appendfilename, seq)));
    }
    CommandContext ctx(server_, fake, *spec, std::span<const std::string_view>(r.argv));
    spec->handler(ctx);
    if (ctx.failed() && errors++ < 5) {
      server_.Log(3, fmt::format("AOF command '{}' at {}:{} failed: {}", r.argv[0], seq, r.offset,
                                 fake.out.substr(0, 200)));
    }
    return Status::OK();
  };
  aof::ReadOptions opts;
  opts.truncate_torn_tail = server_.cfg().aof_load_truncated;
  Status s = aof::ReadLog(
      env_, aof_dir_, server_.cfg().appendfilename, m, from, opts,
      [&](uint64_t seq, const aof::Group& g) -> Status {
        for (const auto& r : g.records) {
          std::string_view name = r.argv[0];
          if (EqualsIgnoreCase(name, "SELECT") && r.argv.size() == 2) {
            int64_t db;
            if (!ParseInt64(r.argv[1], &db) || db < 0 || db >= server_.num_dbs()) {
              return Status::Corruption(fmt::format("bad SELECT at offset {} of segment {}", r.offset, seq));
            }
            fake.db = static_cast<int>(db);
          } else if (EqualsIgnoreCase(name, "MULTI")) {
            in_tx = true;
            tx.clear();
          } else if (EqualsIgnoreCase(name, "EXEC")) {
            for (const aof::Record* q : tx) {
              Status st = apply(seq, *q);
              if (!st.ok()) return st;
            }
            in_tx = false;
            tx.clear();
          } else if (in_tx) {
            tx.push_back(&r);
          } else {
            Status st = apply(seq, r);
            if (!st.ok()) return st;
          }
          fake.out.clear();
        }
        if (in_tx) {
          return Status::Corruption(fmt::format("MULTI without EXEC in the group at offset {} of segment {}",
                                                g.begin, seq));
        }
        return Status::OK();
      },
      report);
  return s;
}

Status Persistence::StartNewLog(bool save_base) {
  aof::Manifest m;
  std::random_device rd;
  m.lineage = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(NowUs());
  m.segments.push_back({1, 0});
  std::string seg = JoinPath(aof_dir_, aof::SegmentName(server_.cfg().appendfilename, 1));
  std::unique_ptr<WritableFile> f;
  Status s = env_->NewWritableFile(seg, true, &f);
  if (s.ok()) s = f->Close();
  if (!s.ok()) return s;
  if (save_base) {
    // The snapshot becomes the log's base: it must name the new lineage
    // before the manifest exists.
    rdb::Header h;
    h.aof_lineage = m.lineage;
    h.aof_segment = 1;
    h.ctime_ms = NowMs();
    rdb::SnapshotSource src = Source(h);
    std::string tmp = JoinPath(server_.cfg().dir, fmt::format("temp-base-{}.rdb", getpid()));
    rdb::SaveStats st;
    s = rdb::WriteSnapshotFile(env_, tmp, src, &st);
    if (s.ok()) s = env_->RenameFile(tmp, rdb_path());
    if (s.ok()) s = env_->SyncDir(DirName(rdb_path()));
    if (!s.ok()) return s;
    last_snapshot_ = src.header;
  }
  s = aof::StoreManifest(env_, aof_dir_, server_.cfg().appendfilename, m);
  if (!s.ok()) return s;
  server_.Log(2, fmt::format("Created a new AOF (lineage {:016x}) in {}", m.lineage, aof_dir_));
  return OpenWriter(m, 0);
}

Status Persistence::OpenWriter(const aof::Manifest& m, uint64_t tail_size) {
  aof::WriterOptions o;
  o.env = env_;
  o.dir = aof_dir_;
  o.base_name = server_.cfg().appendfilename;
  o.policy = PolicyOf(server_.cfg().appendfsync);
  o.segment_size = static_cast<uint64_t>(std::max<int64_t>(server_.cfg().aof_segment_size, 1024));
  aof::WriterCallbacks cb;
  boost::asio::io_context& io = server_.io();
  // Replies wait for ack_offset(): the written offset under everysec and no, the
  // durable one under always (the policy the command thread has now decides, so a
  // report that crosses a CONFIG SET appendfsync is judged by the new policy).
  cb.on_durable = [this, &io](uint64_t off) {
    boost::asio::post(io, [this, off] { server_.SetAckOffset(off); });
  };
  cb.on_written = [this, &io](uint64_t off) {
    boost::asio::post(io, [this, off] {
      if (writer_ && writer_->policy() != aof::FsyncPolicy::kAlways) server_.SetAckOffset(off);
    });
  };
  cb.on_status = [this, &io](const Status& st) {
    std::string msg = st.ok() ? std::string() : st.ToString();
    boost::asio::post(io, [this, msg] {
      if (msg.empty()) {
        server_.Log(3, "AOF write error is solved: the AOF can be written again");
      } else {
        server_.Log(3, "Error writing to the AOF: " + msg);
      }
      aof_error_ = msg;
      UpdateWriteError();
    });
  };
  auto w = std::make_unique<aof::AofWriter>(o, m, tail_size, cb);
  Status s = w->Start();
  if (!s.ok()) return s;
  writer_ = std::move(w);
  // Everything loaded is durable: replies need not wait for older offsets.
  server_.SetAckOffset(writer_->offset());
  server_.set_change_sink(this);
  return Status::OK();
}

void Persistence::StopWriter() {
  if (!writer_) return;
  server_.set_change_sink(nullptr);
  Status s = writer_->Stop();
  if (!s.ok()) server_.Log(3, "Could not make the AOF durable at stop: " + s.ToString());
  const uint64_t end = writer_->offset();  // sealed by Stop
  writer_.reset();
  // Nothing is logged any more: replies still waiting for the log go out.
  server_.SetAckOffset(end);
  aof_error_.clear();
  UpdateWriteError();
}

// --- ChangeSink ---

void Persistence::Append(int db, const std::vector<std::vector<std::string>>& cmds) {
  if (!writer_) return;
  writer_->AppendBatch(db, cmds);
  if (!seal_posted_) {
    // Seal after the handlers already queued in this loop turn have run: one
    // group (and under "always" one fsync) for all of them.
    seal_posted_ = true;
    boost::asio::post(server_.io(), [this] {
      seal_posted_ = false;
      if (writer_) writer_->Seal();
    });
  }
}

uint64_t Persistence::ReplyBarrier(bool must_wait) {
  // Under every policy a write is acknowledged only once its records are written
  // (and under always, fsynced): a kill -9 then loses nothing acknowledged, as in
  // Redis, which writes the AOF before it replies. Reads are answered at once, so
  // they go on while the disk is failing; a read may see a write whose own reply
  // still waits, and which a crash can still undo.
  if (!writer_ || !must_wait) return 0;
  return writer_->offset();
}

// --- snapshots ---

rdb::SnapshotSource Persistence::Source(const rdb::Header& h) {
  rdb::SnapshotSource src;
  src.header = h;
  src.compress = server_.cfg().rdbcompression;
  src.aux = {{"feedkv-ver", kFeedkvVersion},
             {"redis-ver", kRedisCompatVersion},
             {"ctime", std::to_string(h.ctime_ms / 1000)},
             {"used-mem", std::to_string(server_.UsedMemory())}};
  for (int i = 0; i < server_.num_dbs(); i++) src.dbs.push_back(&server_.db(i));
  for (const auto& [n, sp] : server_.counter_spaces()) src.counter_spaces.emplace_back(n, sp.get());
  return src;
}

rdb::Header Persistence::SnapshotHeader() {
  rdb::Header h;
  h.ctime_ms = NowMs();
  if (writer_) {
    writer_->Seal();
    writer_->ForgetSelectedDb();
    h.aof_lineage = writer_->lineage();
    h.aof_segment = writer_->position().segment;
    h.aof_segment_offset = writer_->position().offset;
    h.aof_offset = writer_->sealed_offset();
  }
  return h;
}

std::function<void(const Status&)> Persistence::FinishWork(
    std::string tmp, rdb::Header h, std::function<void(const Status&)> after) {
  std::string final_path = rdb_path();
  Env* env = env_;
  aof::AofWriter* writer = writer_.get();
  uint64_t retain = static_cast<uint64_t>(server_.cfg().aof_retain_segments);
  return [=](const Status& aof_status) {
    Status s = aof_status;
    if (s.ok()) s = env->RenameFile(tmp, final_path);
    if (s.ok()) s = env->SyncDir(DirName(final_path));
    if (!s.ok()) env->RemoveFile(tmp).PermitUnchecked();
    // Segments before the snapshot's are history now; keep `retain` of them.
    if (s.ok() && writer != nullptr && h.aof_segment > 0) {
      writer->RetireBefore(h.aof_segment > retain ? h.aof_segment - retain : 1);
    }
    after(s);
  };
}

void Persistence::RunFinish(std::function<void(const Status&)> work) {
  if (writer_) {
    writer_->RunWhenDurable(std::move(work));
  } else {
    jobs_->Submit([work] { work(Status::OK()); });
  }
}

void Persistence::Finalize(std::string tmp, rdb::Header h, std::function<void(const Status&)> done) {
  finalizing_++;
  boost::asio::io_context& io = server_.io();
  RunFinish(FinishWork(std::move(tmp), h, [this, &io, h, done](const Status& s) {
    boost::asio::post(io, [this, s, h, done] {
      finalizing_--;
      if (s.ok()) last_snapshot_ = h;
      done(s);
    });
  }));
}

Status Persistence::Save() {
  if (child_.pid > 0) return Status::Busy("ERR Background save already in progress");
  rdb::SnapshotSource src = Source(SnapshotHeader());
  std::string tmp = JoinPath(server_.cfg().dir, fmt::format("temp-{}.rdb", getpid()));
  rdb::SaveStats st;
  Status s = rdb::WriteSnapshotFile(env_, tmp, src, &st);
  if (s.ok()) {
    // The rename waits for the AOF to be durable to the snapshot's position
    // (it runs on the writer thread): wait for it here, as SAVE blocks.
    std::promise<Status> done;
    std::future<Status> f = done.get_future();
    RunFinish(FinishWork(tmp, src.header, [&done](const Status& r) { done.set_value(r); }));
    s = f.get();
    if (s.ok()) last_snapshot_ = src.header;
  }
  if (!s.ok()) {
    env_->RemoveFile(tmp).PermitUnchecked();
    server_.Log(3, "Failed saving the snapshot: " + s.ToString());
    return s;
  }
  server_.stats().dirty = 0;
  last_save_ms_ = NowMs();
  rdb_saves_++;
  last_bgsave_ok_ = true;
  UpdateWriteError();
  server_.Log(2, fmt::format("DB saved on disk ({} keys, {} bytes)", st.keys, st.bytes));
  return Status::OK();
}

Status Persistence::BgSave(bool rewrite, bool schedule, std::string* reply) {
  if (child_.pid > 0) {
    if (rewrite && child_.rewrite) return Status::Busy("ERR Background append only file rewriting already in progress");
    if (rewrite || schedule) {
      (rewrite ? rewrite_scheduled_ : bgsave_scheduled_) = true;
      *reply = rewrite ? "Background append only file rewriting scheduled" : "Background saving scheduled";
      return Status::OK();
    }
    return Status::Busy("ERR Background save already in progress");
  }
  Child c;
  c.rewrite = rewrite;
  if (rewrite && writer_) writer_->RequestRoll();
  c.header = SnapshotHeader();
  c.start_ms = NowMs();
  c.dirty_at_start = server_.stats().dirty;
  c.tmp = JoinPath(server_.cfg().dir, fmt::format("temp-bg-{}-{}.rdb", getpid(), total_forks_));
  rdb::SnapshotSource src = Source(c.header);
  int64_t t0 = NowUs();
  pid_t pid = ::fork();
  if (pid == 0) {
    // Child: a frozen copy of the dataset (copy-on-write). Only the snapshot
    // code runs here; no Asio, no other thread's state.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    rdb::SaveStats st;
    Status s = rdb::WriteSnapshotFile(Env::Default(), c.tmp, src, &st);
    if (!s.ok()) {
      std::fprintf(stderr, "feedkv snapshot child: %s\n", s.ToString().c_str());
      ::_exit(1);
    }
    ::_exit(0);
  }
  last_fork_us_ = NowUs() - t0;
  total_forks_++;
  server_.stats().latest_fork_usec = last_fork_us_;
  server_.stats().total_forks++;
  last_bgsave_try_ms_ = c.start_ms;
  if (pid < 0) {
    std::string err = fmt::format("Can't fork: {}", std::strerror(errno));
    server_.Log(3, err);
    last_bgsave_ok_ = false;
    return Status::IOError("ERR " + err);
  }
  c.pid = pid;
  child_ = c;
  server_.set_fork_child_active(true);
  server_.Log(2, fmt::format("Background {} started by pid {} (fork took {} us)",
                             rewrite ? "AOF rewrite" : "saving", pid, last_fork_us_));
  *reply = rewrite ? "Background append only file rewriting started" : "Background saving started";
  return Status::OK();
}

void Persistence::ReapChild() {
  int status = 0;
  pid_t r = ::waitpid(child_.pid, &status, WNOHANG);
  if (r == 0) return;
  Child c = child_;
  child_ = Child{};
  server_.set_fork_child_active(false);
  bool ok = r == c.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  int64_t secs = (NowMs() - c.start_ms + 500) / 1000;
  auto record = [this, c, secs](bool success) {
    if (c.rewrite) {
      // A failed rewrite loses nothing (the log goes on): unlike a failed BGSAVE
      // it does not stop writes (Redis's MISCONF is for BGSAVE and AOF writes).
      last_rewrite_ok_ = success;
      last_rewrite_secs_ = secs;
      if (success) aof_rewrites_++;
    } else {
      last_bgsave_ok_ = success;
      last_bgsave_secs_ = secs;
    }
    UpdateWriteError();
  };
  if (!ok) {
    server_.Log(3, fmt::format("Background saving error (child pid {} status {})", c.pid, status));
    env_->RemoveFile(c.tmp).PermitUnchecked();
    record(false);
    return;
  }
  Finalize(c.tmp, c.header, [this, c, record](const Status& s) {
    if (!s.ok()) {
      server_.Log(3, "Background saving failed to finish: " + s.ToString());
      record(false);
      return;
    }
    uint64_t dirty = server_.stats().dirty;
    server_.stats().dirty = dirty > c.dirty_at_start ? dirty - c.dirty_at_start : 0;
    last_save_ms_ = c.start_ms;
    rdb_saves_++;
    server_.Log(2, c.rewrite ? "Background AOF rewrite finished successfully"
                             : "Background saving terminated with success");
    record(true);
  });
}

Status Persistence::Reload(bool save) {
  if (save) {
    Status s = Save();
    if (!s.ok()) return s;
  }
  for (int i = 0; i < server_.num_dbs(); i++) {
    server_.TouchWatchedInDb(i);
    server_.db(i).Clear();
  }
  server_.counter_spaces().clear();
  rdb::Header h;
  bool was_loading = server_.loading();
  server_.set_loading(true);
  Status s = LoadSnapshot(rdb_path(), &h);
  server_.set_loading(was_loading);
  return s;
}

std::string Persistence::Digest() {
  rdb::DigestBuilder b;
  for (int i = 0; i < server_.num_dbs(); i++) b.AddDatabase(i, server_.db(i));
  for (const auto& [n, sp] : server_.counter_spaces()) b.AddCounterSpace(n, *sp);
  return b.Hex();
}

// --- cron, config, errors, shutdown ---

void Persistence::Cron(int64_t now_ms) {
  if (child_.pid > 0) ReapChild();
  CheckConfig();
  // A reaped child's snapshot is still being finished (renamed once the AOF is
  // durable to its position) until `dirty` and the save time are reset: a save
  // point checked now would start a second, needless BGSAVE.
  if (child_.pid > 0 || finalizing_ > 0) return;
  std::string reply;
  if (rewrite_scheduled_) {
    rewrite_scheduled_ = false;
    BgSave(true, false, &reply).PermitUnchecked();
    return;
  }
  if (bgsave_scheduled_) {
    bgsave_scheduled_ = false;
    BgSave(false, false, &reply).PermitUnchecked();
    return;
  }
  // Save points; after a failure, retry no sooner than 5 s (as Redis).
  uint64_t dirty = server_.stats().dirty;
  for (const auto& [secs, changes] : SavePoints(server_.cfg().save)) {
    if (dirty >= static_cast<uint64_t>(changes) && now_ms - last_save_ms_ > secs * 1000 &&
        (last_bgsave_ok_ || now_ms - last_bgsave_try_ms_ > 5000)) {
      server_.Log(2, fmt::format("{} changes in {} seconds. Saving...", changes, secs));
      BgSave(false, false, &reply).PermitUnchecked();
      break;
    }
  }
}

void Persistence::CheckConfig() {
  const ServerConfig& cfg = server_.cfg();
  if (cfg.appendonly != cfg_appendonly_) {
    cfg_appendonly_ = cfg.appendonly;
    if (!cfg.appendonly) {
      StopWriter();
      server_.Log(2, "AOF turned off");
    } else if (!writer_) {
      // A new log whose base is a snapshot of the data now (taken in the
      // foreground, so no moment exists where the log is not recoverable).
      Status s = env_->CreateDirIfMissing(aof_dir_);
      aof::Manifest old;
      if (s.ok() && aof::LoadManifest(env_, aof_dir_, cfg.appendfilename, &old).ok()) {
        for (const auto& seg : old.segments) {
          env_->RemoveFile(JoinPath(aof_dir_, aof::SegmentName(cfg.appendfilename, seg.seq)))
              .PermitUnchecked();
        }
      }
      if (s.ok()) s = StartNewLog(true);
      if (!s.ok()) server_.Log(3, "Could not turn the AOF on: " + s.ToString());
    }
  }
  if (writer_ && cfg.appendfsync != cfg_fsync_) writer_->set_policy(PolicyOf(cfg.appendfsync));
  if (writer_ && cfg.aof_segment_size != cfg_segment_size_) {
    writer_->set_segment_size(static_cast<uint64_t>(std::max<int64_t>(cfg.aof_segment_size, 1024)));
  }
  cfg_fsync_ = cfg.appendfsync;
  cfg_segment_size_ = cfg.aof_segment_size;
}

void Persistence::UpdateWriteError() {
  std::string msg;
  if (!aof_error_.empty()) {
    msg = "MISCONF Errors writing to the AOF file: " + aof_error_;
  } else if (!last_bgsave_ok_ && server_.cfg().stop_writes_on_bgsave_error &&
             !SavePoints(server_.cfg().save).empty()) {
    msg = "MISCONF Errors writing the snapshot to disk";
  }
  server_.set_write_error(msg);
}

Status Persistence::Shutdown(const ShutdownOptions& o) {
  if (shut_down_) return Status::OK();
  if (child_.pid > 0) {
    // As Redis: the final save replaces whatever the child was writing.
    server_.Log(3, "There is a child saving an .rdb. Killing it!");
    ::kill(child_.pid, SIGKILL);
    ::waitpid(child_.pid, nullptr, 0);
    env_->RemoveFile(child_.tmp).PermitUnchecked();
    child_ = Child{};
    server_.set_fork_child_active(false);
  }
  const bool save = o.save == ShutdownOptions::Save::kSave ||
                    (o.save == ShutdownOptions::Save::kDefault && !SavePoints(server_.cfg().save).empty());
  if (save) {
    server_.Log(3, "Saving the final RDB snapshot before exiting.");
    Status s = Save();
    // The server stays up (unless FORCE) and this hook runs again at the next try.
    if (!s.ok()) return s;
  }
  shut_down_ = true;
  StopWriter();
  jobs_.reset();
  return Status::OK();
}

}  // namespace feedkv::server
