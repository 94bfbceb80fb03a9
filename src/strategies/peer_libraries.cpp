// Finding the peer libraries (strategies/peer_libraries.hpp): the folders, the file names, the first folder's
// library of each name.
#include "strategies/peer_libraries.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/text_split.hpp"

namespace ab {

namespace fs = std::filesystem;

std::vector<std::string> peer_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv(kPeersDirEnv)) {  // set (even empty): its folders alone
    for (const std::string& d : split_text(env, ':'))
      if (!d.empty()) dirs.push_back(d);
    return dirs;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // Linux: the running binary, links resolved
  if (!ec && exe.has_parent_path()) {
    dirs.push_back((exe.parent_path() / "peers").string());
    dirs.push_back((exe.parent_path().parent_path() / "lib" / "attnbench" / "peers").lexically_normal().string());
  }
  return dirs;
}

namespace {

// The peer name of a file name libattnbench_peer_<name>.so, or "" for any other file.
std::string peer_name_of(const std::string& file) {
  const std::string prefix = kPeerFilePrefix, suffix = kPeerFileSuffix;
  if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

}  // namespace

std::vector<PeerLibrary> find_peer_libraries() {
  std::vector<PeerLibrary> found;
  std::set<std::string> seen;
  for (const std::string& dir : peer_search_dirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<PeerLibrary> here;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = peer_name_of(it->path().filename().string());
      std::error_code fe;  // a regular file (through links): a FIFO or a device would hang or fool a loader
      if (!name.empty() && it->is_regular_file(fe)) here.push_back({name, it->path().string()});
    }
    std::sort(here.begin(), here.end(), [](const PeerLibrary& a, const PeerLibrary& b) { return a.name < b.name; });
    for (PeerLibrary& p : here)
      if (seen.insert(p.name).second) found.push_back(std::move(p));
  }
  return found;
}

std::optional<std::string> unavailable_reason(const std::string& version) {
  const std::string prefix = kUnavailableVersionPrefix;
  if (version.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string why = trim_text(version.substr(prefix.size()));
  return why.empty() ? std::string("no reason given") : why;
}

}  // namespace ab
