#include "storage/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace feedkv {

namespace {

Status PosixError(std::string_view what, const std::string& path, int err) {
  std::string msg = fmt::format("{} {}: {}", what, path, std::strerror(err));
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) return Status::NoSpace(msg);
  if (err == ENOENT) return Status::NotFound(msg);
  return Status::IOError(msg);
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view data) override {
    // pwrite at our own position: after a failed, partly written append the
    // next attempt (following a Truncate) overwrites whatever landed.
    uint64_t pos = size_;
    while (!data.empty()) {
      ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(pos));
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError("write", path_, errno);
      }
      if (n == 0) return PosixError("write", path_, ENOSPC);
      data.remove_prefix(static_cast<size_t>(n));
      pos += static_cast<uint64_t>(n);
    }
    size_ = pos;
    return Status::OK();
  }

  Status Sync() override {
    if (::fdatasync(fd_) != 0) return PosixError("fsync", path_, errno);
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return PosixError("truncate", path_, errno);
    size_ = size;
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    int r = ::close(fd_);
    fd_ = -1;
    if (r != 0) return PosixError("close", path_, errno);
    return Status::OK();
  }

  uint64_t Size() const override { return size_; }

 private:
  std::string path_;
  int fd_;
  uint64_t size_;
};

class PosixSequentialFile : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, char* scratch, size_t* got) override {
    *got = 0;
    while (*got < n) {
      ssize_t r = ::read(fd_, scratch + *got, n - *got);
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError("read", path_, errno);
      }
      if (r == 0) break;
      *got += static_cast<size_t>(r);
    }
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixMappedFile : public MappedFile {
 public:
  PosixMappedFile(void* base, size_t size) : base_(base), size_(size) {}
  ~PosixMappedFile() override {
    if (size_ > 0) ::munmap(base_, size_);
  }
  std::string_view data() const override {
    return size_ == 0 ? std::string_view() : std::string_view(static_cast<const char*>(base_), size_);
  }

 private:
  void* base_;
  size_t size_;
};

// Opens path (creating it 0644 when flags say O_CREAT) and reports its size; the
// descriptor is closed again when the size cannot be read.
Status OpenWithSize(const std::string& path, int flags, int* fd, uint64_t* size) {
  *fd = ::open(path.c_str(), flags, 0644);
  if (*fd < 0) return PosixError("open", path, errno);
  struct stat st;
  if (::fstat(*fd, &st) != 0) {
    int err = errno;
    ::close(*fd);
    return PosixError("stat", path, err);
  }
  *size = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

class PosixEnv : public Env {
 public:
  Status NewWritableFile(const std::string& path, bool truncate,
                         std::unique_ptr<WritableFile>* out) override {
    int fd;
    uint64_t size;
    Status s = OpenWithSize(path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), &fd,
                            &size);
    if (!s.ok()) return s;
    *out = std::make_unique<PosixWritableFile>(path, fd, size);
    return Status::OK();
  }

  Status NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* out) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", path, errno);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    *out = std::make_unique<PosixSequentialFile>(path, fd);
    return Status::OK();
  }

  Status MapFile(const std::string& path, std::unique_ptr<MappedFile>* out) override {
    int fd;
    uint64_t file_size;
    Status s = OpenWithSize(path, O_RDONLY | O_CLOEXEC, &fd, &file_size);
    if (!s.ok()) return s;
    size_t size = static_cast<size_t>(file_size);
    void* base = nullptr;
    if (size > 0) {
      base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (base == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        return PosixError("mmap", path, err);
      }
      ::madvise(base, size, MADV_SEQUENTIAL);
    }
    ::close(fd);
    *out = std::make_unique<PosixMappedFile>(base, size);
    return Status::OK();
  }

  Status ReadFile(const std::string& path, std::string* out) override {
    std::unique_ptr<SequentialFile> f;
    Status s = NewSequentialFile(path, &f);
    if (!s.ok()) return s;
    out->clear();
    char buf[64 * 1024];
    while (true) {
      size_t got = 0;
      s = f->Read(sizeof(buf), buf, &got);
      if (!s.ok()) return s;
      if (got == 0) break;
      out->append(buf, got);
    }
    return Status::OK();
  }

  Status FileSize(const std::string& path, uint64_t* size) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return PosixError("stat", path, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Status ListDir(const std::string& dir, std::vector<std::string>* names) override {
    names->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError("opendir", dir, errno);
    while (struct dirent* e = ::readdir(d)) {
      std::string_view n = e->d_name;
      if (n != "." && n != "..") names->emplace_back(n);
    }
    ::closedir(d);
    return Status::OK();
  }

  Status CreateDirIfMissing(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return PosixError("mkdir", dir, errno);
    return Status::OK();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return PosixError("rename", from, errno);
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return PosixError("unlink", path, errno);
    return Status::OK();
  }

  Status TruncateFile(const std::string& path, uint64_t size) override {
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) {
      return PosixError("truncate", path, errno);
    }
    return Status::OK();
  }

  Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", dir, errno);
    int r = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (r != 0) return PosixError("fsync", dir, err);
    return Status::OK();
  }
};

// Forwards to a real file, failing on the owner's request.
class FaultyWritableFile : public WritableFile {
 public:
  FaultyWritableFile(FaultInjectionEnv* env, std::unique_ptr<WritableFile> base)
      : env_(env), base_(std::move(base)) {}

  Status Append(std::string_view data) override {
    env_->appends++;
    if (env_->fail_appends.load()) {
      // A short write: half lands, the position stays where it was.
      uint64_t before = base_->Size();
      base_->Append(data.substr(0, data.size() / 2)).PermitUnchecked();
      base_->Truncate(base_->Size()).PermitUnchecked();
      reported_size_ = before;
      return Status::NoSpace("injected: no space left on device");
    }
    reported_size_.reset();
    return base_->Append(data);
  }
  Status Sync() override {
    env_->syncs++;
    if (env_->fail_syncs.load()) return Status::IOError("injected: fsync failed");
    return base_->Sync();
  }
  Status Truncate(uint64_t size) override {
    reported_size_.reset();
    return base_->Truncate(size);
  }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return reported_size_ ? *reported_size_ : base_->Size(); }

 private:
  FaultInjectionEnv* env_;
  std::unique_ptr<WritableFile> base_;
  std::optional<uint64_t> reported_size_;
};

}  // namespace

Env* Env::Default() {
  // PosixEnv holds no state, so a static object (rather than a leaked one) stays
  // usable by threads still running while the process exits.
  static PosixEnv env;
  return &env;
}

Status FaultInjectionEnv::NewWritableFile(const std::string& path, bool truncate,
                                          std::unique_ptr<WritableFile>* out) {
  std::unique_ptr<WritableFile> base;
  Status s = base_->NewWritableFile(path, truncate, &base);
  if (!s.ok()) return s;
  *out = std::make_unique<FaultyWritableFile>(this, std::move(base));
  return Status::OK();
}

Status FaultInjectionEnv::RenameFile(const std::string& from, const std::string& to) {
  if (fail_renames.load()) return Status::IOError("injected: rename failed");
  return base_->RenameFile(from, to);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status WriteFileAtomic(Env* env, const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp";
  std::unique_ptr<WritableFile> f;
  Status s = env->NewWritableFile(tmp, true, &f);
  if (s.ok()) s = f->Append(data);
  if (s.ok()) s = f->Sync();
  if (s.ok()) s = f->Close();
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (s.ok()) s = env->SyncDir(DirName(path));
  if (!s.ok()) env->RemoveFile(tmp).PermitUnchecked();
  return s;
}

}  // namespace feedkv
