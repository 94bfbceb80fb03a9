// Journal lines: O_APPEND writes of whole lines, fsync after each; reading tolerates a torn last line.
#include "core/journal_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/json_file.hpp"

namespace ab {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("cannot write journal '{}': {}", path, why));
}

// Bytes of `path` up to and including its last newline (a torn last line cut off).
off_t whole_lines_size(const std::string& text) {
  auto nl = text.rfind('\n');
  return nl == std::string::npos ? 0 : static_cast<off_t>(nl + 1);
}

}  // namespace

JournalWriter::JournalWriter(const std::string& path, const nlohmann::json& header, bool fresh) : path_(path) {
  if (!fresh) {
    std::string text = read_text_file(path);
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) fail(path, std::strerror(errno));
    if (::ftruncate(fd_, whole_lines_size(text)) != 0) fail(path, std::strerror(errno));
    return;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path, std::strerror(errno));
  nlohmann::json h = header;
  h["schema"] = kJournalSchema;
  write_line(h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::append(const nlohmann::json& entry) {
  write_line(entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void JournalWriter::write_line(const std::string& line) {
  std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path_, std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) fail(path_, std::strerror(errno));
}

JournalContents read_journal(const std::string& path) {
  std::string text = read_text_file(path);
  JournalContents c;
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) {  // no newline: a write cut short
      c.torn_tail = true;
      break;
    }
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw UsageError(fmt::format("'{}': line {} is not a journal entry", path, line_no));
    if (line_no == 1) c.header = std::move(j);
    else c.entries.push_back(std::move(j));
  }
  if (!c.header.is_object() || c.header.value("schema", "") != kJournalSchema)
    throw UsageError(fmt::format("'{}': not an attnbench journal (no '{}' header line)", path, kJournalSchema));
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
    if (key == "created" || key == "schema") continue;
    nlohmann::json was = found.contains(key) ? found[key] : nlohmann::json();
    if (was == want) continue;
    auto brief = [](const nlohmann::json& j) {
      std::string s = j.is_string() ? j.get<std::string>() : j.dump();
      return s.size() > 80 ? s.substr(0, 77) + "..." : s;
    };
    throw UsageError(fmt::format("--resume: '{}' belongs to another run: its {} differs (was {}, now {})", path, key,
                                 brief(was), brief(want)));
  }
}

}  // namespace ab
