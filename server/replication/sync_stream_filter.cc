// SyncStreamFilter. See sync_stream_filter.h.
#include "server/replication/sync_stream_filter.h"

#include <algorithm>
#include <cctype>

namespace feedkv::server {

namespace {

// The number after a header line's type byte ("*3\r\n" -> 3); -1 if none.
int64_t HeaderNumber(const std::string& line) {
  int64_t n = 0;
  size_t i = 1;
  for (; i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); ++i) {
    if (n > (int64_t{1} << 40)) return -1;
    n = n * 10 + (line[i] - '0');
  }
  return i > 1 ? n : -1;
}

bool IsSelect(std::string_view name) {
  constexpr std::string_view kSelect = "select";
  if (name.size() != kSelect.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) != kSelect[i]) return false;
  }
  return true;
}

// Longest database index text a held SELECT may carry.
constexpr uint64_t kMaxDbText = 20;

}  // namespace

void SyncStreamFilter::Feed(std::string_view in, std::string* out) {
  size_t i = 0;
  while (i < in.size()) {
    switch (state_) {
      case State::kTop:
        if (in[i] == '#') {
          state_ = State::kTrailer;
          ++i;
        } else if (in[i] == '*') {
          state_ = State::kCountLine;
          line_.clear();
          held_.clear();
          holding_ = true;
        } else {
          out->push_back(in[i++]);  // not a command (a newline): passed on
        }
        break;
      case State::kTrailer: {
        const size_t nl = in.find('\n', i);
        i = nl == std::string_view::npos ? in.size() : nl + 1;
        if (nl != std::string_view::npos) state_ = State::kTop;
        break;
      }
      case State::kCountLine:
      case State::kBulkLine: {
        const size_t nl = in.find('\n', i);
        const size_t end = nl == std::string_view::npos ? in.size() : nl + 1;
        line_.append(in.substr(i, end - i));
        i = end;
        if (nl != std::string_view::npos) HeaderLine(out);
        break;
      }
      case State::kBulkBody: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(body_left_, in.size() - i));
        const std::string_view chunk = in.substr(i, n);
        if (holding_) arg_.append(chunk);
        Emit(chunk, out);
        i += n;
        body_left_ -= n;
        if (body_left_ == 0) ArgumentDone(out);
        break;
      }
    }
  }
}

void SyncStreamFilter::Emit(std::string_view bytes, std::string* out) {
  if (holding_) {
    held_.append(bytes);
  } else {
    out->append(bytes);
  }
}

void SyncStreamFilter::HeaderLine(std::string* out) {
  const int64_t n = HeaderNumber(line_);
  Emit(line_, out);
  auto release = [&] {
    if (holding_) out->append(held_);
    held_.clear();
    holding_ = false;
  };
  if (state_ == State::kCountLine) {
    argc_ = n;
    arg_index_ = 0;
    if (argc_ != 2) release();
    if (argc_ <= 0) {
      state_ = State::kTop;
      return;
    }
    state_ = State::kBulkLine;
    line_.clear();
    return;
  }
  if (line_.empty() || line_[0] != '$' || n < 0) {  // not RESP we know: passed on as is
    release();
    state_ = State::kTop;
    return;
  }
  body_len_ = static_cast<uint64_t>(n);
  body_left_ = body_len_ + 2;
  arg_.clear();
  if ((arg_index_ == 0 && body_len_ != 6) || (arg_index_ == 1 && body_len_ > kMaxDbText)) release();
  state_ = State::kBulkBody;
}

void SyncStreamFilter::ArgumentDone(std::string* out) {
  if (holding_) {
    arg_.resize(static_cast<size_t>(body_len_));
    if (arg_index_ == 0 && !IsSelect(arg_)) {
      out->append(held_);
      held_.clear();
      holding_ = false;
    }
  }
  if (++arg_index_ < argc_) {
    state_ = State::kBulkLine;
    line_.clear();
    return;
  }
  if (holding_) {  // a whole SELECT <db>: passed on only where the database changes
    if (arg_ != selected_) {
      selected_ = arg_;
      out->append(held_);
    }
    held_.clear();
    holding_ = false;
  }
  state_ = State::kTop;
}

}  // namespace feedkv::server
