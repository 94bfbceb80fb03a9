// Journal lines: a new journal written beside the old and renamed into place under an exclusive lock,
// O_APPEND writes of whole checksummed lines with an fsync after each; reading tolerates a torn last line
// and marks lines that do not check.
#include "core/journal_file.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fd_write.hpp"
#include "core/file_writer.hpp"
#include "core/fnv_hash.hpp"
#include "core/input_file.hpp"
#include "core/json_file.hpp"

namespace ab {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("cannot write journal {}: {}", quoted_path(path), why));
}

std::string dumped(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The checksum of an entry: FNV-1a of the run id and the entry's text (keys sorted, so the same entry always
// gives the same text).
std::string entry_check(const std::string& run_id, const nlohmann::json& entry) {
  return fmt::format("{:016x}", fnv1a(dumped(entry), fnv1a(run_id + "\n")));
}

std::string new_run_id() {
  std::random_device rd;
  std::uint64_t seed = (std::uint64_t(rd()) << 32) ^ rd() ^
                       static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return fmt::format("{:016x}", std::mt19937_64(seed ^ static_cast<std::uint64_t>(::getpid()))());
}

// Bytes of the file open at `fd` up to and including its last newline (a torn last line cut off), read
// backwards from its end a block at a time: the journal --resume has just read is not read again. -1 on a
// read error.
off_t whole_lines_size(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return -1;
  char buf[1 << 16];
  for (off_t end = st.st_size; end > 0;) {
    const off_t start = std::max<off_t>(0, end - static_cast<off_t>(sizeof buf));
    const ssize_t n = ::pread(fd, buf, static_cast<std::size_t>(end - start), start);
    if (n != end - start) return -1;
    for (ssize_t i = n - 1; i >= 0; --i)
      if (buf[i] == '\n') return start + i + 1;
    end = start;
  }
  return 0;
}

// Whether `j` is a journal header: an object whose "schema" is kJournalSchema and whose "run_id", if any, is a
// string.
bool is_header(const nlohmann::json& j) {
  if (!j.is_object()) return false;
  auto schema = j.find("schema"), run_id = j.find("run_id");
  return schema != j.end() && schema->is_string() && *schema == kJournalSchema &&
         (run_id == j.end() || run_id->is_string());
}

// Parses one line of at most kMaxJsonDepth levels; a discarded value when it is not JSON or too deep.
nlohmann::json parse_line(const std::string& line, std::string* fault) {
  if (json_nesting_depth(line, kMaxJsonDepth) > kMaxJsonDepth) {
    *fault = fmt::format("it is nested more than {} levels deep", kMaxJsonDepth);
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) *fault = "it is not JSON";
  return j;
}

// Takes the exclusive lock of an open journal, or refuses: another process writes it.
void lock_or_fail(int fd, const std::string& path) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      throw JournalBusy(fmt::format("cannot write journal {}: another attnbench process is writing it (two runs with "
                                    "the same output at once); wait for it to finish or choose another output",
                                    quoted_path(path)));
    fail(path, fmt::format("cannot lock it ({})", std::strerror(err)));
  }
}

// What is at `path` may be written: nothing, or a regular, writable file that is not a link.
bool check_target(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    fail(path, std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode))
    fail(path, "it is a symbolic link; attnbench writes a journal only as a file of its own (remove the link)");
  if (!S_ISREG(st.st_mode)) fail(path, "it is not a regular file");
  if (::access(path.c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0) fail(path, "the journal is read-only");
  return true;
}

// Opens and locks the file at `path` (flags as for open), making sure the lock is on the file that is there
// now (not one a concurrent writer replaced meanwhile); -1 when there is none.
int open_locked(const std::string& path, int flags) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (!check_target(path)) return -1;
    int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      fail(path, std::strerror(errno));
    }
    lock_or_fail(fd, path);
    struct stat held{}, now{};
    if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino && held.st_dev == now.st_dev)
      return fd;
    ::close(fd);  // replaced while we locked it: look again
  }
  fail(path, "it keeps being replaced by another process");
}

// Refuses to replace a file attnbench did not write: the file at `path` must start with a journal header,
// or be an empty or cut-short start of one.
void check_ours(int fd, const std::string& path) {
  char buf[1 << 16];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  const std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  auto nl = text.find('\n');
  if (nl == std::string::npos) {
    // Empty, or a header cut short as it was written (its keys sorted, it starts with "command").
    const std::string start = "{\"command\":";
    if (text.empty() || text.compare(0, start.size(), start, 0, std::min(text.size(), start.size())) == 0) return;
  } else {
    std::string fault;
    if (is_header(parse_line(text.substr(0, nl), &fault))) return;
  }
  fail(path, "it is not an attnbench journal, and attnbench does not replace a file it did not write (remove it, or "
             "choose another output)");
}

mode_t journal_mode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0644 & ~mask;
}

// Closes a descriptor when a constructor that opened it throws.
struct FdGuard {
  int* fd;
  ~FdGuard() {
    if (fd && *fd >= 0) ::close(*fd);
  }
  void release() { fd = nullptr; }
};

}  // namespace

JournalWriter::JournalWriter(const std::string& path, const nlohmann::json& header, bool fresh) : path_(path) {
  FdGuard guard{&fd_};
  if (!fresh) {
    auto id = header.find("run_id");
    run_id_ = id != header.end() && id->is_string() ? id->get<std::string>() : "";
    fd_ = open_locked(path, O_RDWR | O_APPEND);
    if (fd_ < 0) fail(path, "it disappeared");
    const off_t whole = whole_lines_size(fd_);
    if (whole < 0 || ::ftruncate(fd_, whole) != 0) fail(path, std::strerror(errno));
    guard.release();
    return;
  }
  nlohmann::json h = header;
  h["schema"] = kJournalSchema;
  h["run_id"] = run_id_ = new_run_id();
  remove_stale_temps(path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    int old = open_locked(path, O_RDONLY);  // held until the new journal has replaced it
    FdGuard old_guard{&old};
    if (old >= 0) check_ours(old, path);
    std::string tmp;
    fd_ = create_temp_beside(path, path, &tmp);
    const int flags = ::fcntl(fd_, F_GETFL);
    if (::fchmod(fd_, journal_mode()) != 0 || ::flock(fd_, LOCK_EX | LOCK_NB) != 0 || flags < 0 ||
        ::fcntl(fd_, F_SETFL, flags | O_APPEND) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      fail(path, std::strerror(err));
    }
    try {
      write_line(dumped(h));
    } catch (...) {
      ::unlink(tmp.c_str());
      throw;
    }
    // Where there was no journal, link() (not rename) so that a journal another run created meanwhile is
    // never replaced: that run holds it, and the next look finds it locked.
    const bool placed = old >= 0 ? ::rename(tmp.c_str(), path.c_str()) == 0 : ::link(tmp.c_str(), path.c_str()) == 0;
    const int err = errno;
    if (old < 0 || !placed) ::unlink(tmp.c_str());
    if (placed) {
      guard.release();
      return;
    }
    ::close(fd_);
    fd_ = -1;
    if (err != EEXIST) fail(path, std::strerror(err));
  }
  fail(path, "it keeps being replaced by another process");
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

void JournalWriter::remove_file() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // best effort: a journal left behind only offers a --resume of finished work
  ::close(fd_);
  fd_ = -1;
}

void JournalWriter::append(const nlohmann::json& entry) {
  nlohmann::json line = entry;
  line.erase("check");
  const std::string check = entry_check(run_id_, line);
  line["check"] = check;
  write_line(dumped(line));
}

void JournalWriter::write_line(const std::string& line) {
  if (!write_fully(fd_, line + "\n") || ::fsync(fd_) != 0) fail(path_, std::strerror(errno));
}

JournalContents read_journal(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw UsageError(fmt::format("{}: a symbolic link; attnbench reads and writes a journal only as a file of its own "
                                 "(remove the link)", quoted_path(path)));
  const std::string text = read_input_file(path, kMaxJournalBytes);
  JournalContents c;
  std::size_t pos = 0, line_no = 0;
  std::string run_id;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) {  // no newline: a write cut short
      c.torn_tail = true;
      break;
    }
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    JournalEntry e;
    e.line = line_no;
    nlohmann::json j = parse_line(line, &e.fault);
    if (line_no == 1) {
      if (!is_header(j))
        throw UsageError(fmt::format("{}: not an attnbench journal (no '{}' header line)", quoted_path(path), kJournalSchema));
      c.header = std::move(j);
      run_id = c.header.contains("run_id") ? c.header["run_id"].get<std::string>() : "";
      continue;
    }
    if (e.fault.empty() && !j.is_object()) e.fault = "it is not a JSON object";
    if (e.fault.empty()) {
      auto check = j.find("check");
      if (check == j.end() || !check->is_string()) {
        e.fault = "it has no checksum";
      } else {
        std::string want = check->get<std::string>();
        j.erase("check");
        if (want != entry_check(run_id, j)) e.fault = "its checksum does not match (changed after it was written)";
      }
    }
    if (e.fault.empty()) e.value = std::move(j);
    c.entries.push_back(std::move(e));
  }
  return c;
}

std::string journal_path_for(const std::string& output_path) {
  if (output_path.empty()) return "";
  std::error_code ec;
  auto st = std::filesystem::status(output_path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) return "";
  return output_path + ".journal";
}

void check_journal_header(const std::string& path, const nlohmann::json& found, const nlohmann::json& expected) {
  for (const auto& [key, want] : expected.items()) {
    if (key == "created" || key == "schema" || key == "run_id") continue;
    nlohmann::json was = found.contains(key) ? found[key] : nlohmann::json();
    if (was == want) continue;
    auto brief = [](const nlohmann::json& j) {
      std::string s = j.is_string() ? j.get<std::string>() : j.dump();
      return s.size() > 80 ? s.substr(0, 77) + "..." : s;
    };
    throw UsageError(fmt::format("--resume: {} belongs to another run: its {} differs (was {}, now {})", quoted_path(path),
                                 key, brief(was), brief(want)));
  }
}

}  // namespace ab
