// Peers (docs/peers.md) below the binary: where peer libraries are found (ATTNBENCH_PEERS_DIR's folders alone when set, a
// name's first folder winning, other files ignored), the "unavailable:" version, --peers' parsing, an undeclared
// launch contract (plugin.h's -1), a row's library_version through its JSON, and compare's version warning.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/peer_flags.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "report/compare.hpp"
#include "run/launch_summary.hpp"
#include "run/result_row.hpp"
#include "run/run_report.hpp"
#include "strategies/peer_catalog.hpp"
#include "strategies/peer_libraries.hpp"
#include "testing.hpp"

using namespace ab;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the test's working directory.
fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::current_path() / ("peers-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void touch(const fs::path& p) { std::ofstream(p) << "not a library: finding one reads nothing"; }

// ATTNBENCH_PEERS_DIR set for one test.
struct PeersDirEnv {
  explicit PeersDirEnv(const std::string& value) { setenv(kPeersDirEnv, value.c_str(), 1); }
  ~PeersDirEnv() { unsetenv(kPeersDirEnv); }
};

}  // namespace

TEST(PeerLibraries, FoldersInOrderFirstFolderWins) {
  fs::path a = fresh_dir("a"), b = fresh_dir("b");
  touch(a / "libattnbench_peer_zeta.so");
  touch(a / "libattnbench_peer_cudnn.so");
  touch(b / "libattnbench_peer_cudnn.so");   // shadowed by a's
  touch(b / "libattnbench_peer_alpha.so");
  touch(b / "libattnbench_peer_.so");        // no name
  touch(b / "libcudnn_example.so");          // not a peer
  touch(b / "libattnbench_peer_x.so.1");     // not .so at the end
  fs::create_directories(b / "libattnbench_peer_dir.so");  // not a file
  PeersDirEnv env(a.string() + "::" + b.string());
  std::vector<std::string> dirs = peer_search_dirs();  // set: its folders alone, not the build tree's peers
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], a.string());
  EXPECT_EQ(dirs[1], b.string());
  std::vector<PeerLibrary> found = find_peer_libraries();
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].name, "cudnn");
  EXPECT_EQ(found[0].path, (a / "libattnbench_peer_cudnn.so").string());
  EXPECT_EQ(found[1].name, "zeta");
  EXPECT_EQ(found[2].name, "alpha");
}

TEST(PeerLibraries, WithoutTheVariableTheBinarysFolders) {
  unsetenv(kPeersDirEnv);
  std::vector<std::string> dirs = peer_search_dirs();
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(fs::path(dirs[0]).filename(), "peers");  // <binary's folder>/peers
  EXPECT_NE(dirs[1].find("lib/attnbench/peers"), std::string::npos);
}

TEST(PeerLibraries, UnavailableVersion) {
  EXPECT_EQ(unavailable_reason("unavailable: libcudnn.so.9 not found"), std::optional<std::string>("libcudnn.so.9 not found"));
  EXPECT_EQ(unavailable_reason("unavailable:"), std::optional<std::string>("no reason given"));
  EXPECT_EQ(unavailable_reason("cuDNN 9.19.0"), std::nullopt);
  EXPECT_EQ(unavailable_reason("Unavailable: x"), std::nullopt);  // the prefix is exact
}

TEST(PeerCatalog, KnownPeersAndHowToGetThem) {
  ASSERT_NE(find_known_peer("cudnn"), nullptr);
  EXPECT_EQ(find_known_peer("cudnn")->source, PeerSource::library);
  ASSERT_NE(find_known_peer("torch-flash"), nullptr);
  EXPECT_EQ(find_known_peer("torch-flash")->source, PeerSource::script);
  ASSERT_NE(find_known_peer("flashinfer-fa3"), nullptr);
  EXPECT_EQ(find_known_peer("flashinfer-fa3")->source, PeerSource::library);  // built when CUTLASS is fetched
  EXPECT_NE(how_to_get(PeerSource::unbuilt).find("not built by this project"), std::string::npos);
  EXPECT_EQ(find_known_peer("nosuch"), nullptr);
  EXPECT_EQ(how_to_get(PeerSource::library),
            "scripts/fetch-peers.sh, then rebuild (the peers build when their headers are found; docs/peers.md)");
  for (const char* n : {"flashinfer-decode", "flashinfer-prefill", "flashinfer-fa3", "torch-cudnn", "torch-efficient", "torch-math"})
    EXPECT_NE(find_known_peer(n), nullptr) << n;
}

TEST(PeersFlag, Parsing) {
  EXPECT_TRUE(parse_peers_flag("all").all);
  EXPECT_TRUE(parse_peers_flag("none").names.empty());
  EXPECT_FALSE(parse_peers_flag("none").all);
  EXPECT_EQ(parse_peers_flag("cudnn,flashinfer-decode").names, (std::vector<std::string>{"cudnn", "flashinfer-decode"}));
  using attnbench_testing::usage_error_of;
  EXPECT_NE(usage_error_of([] { parse_peers_flag("cudnn,all"); }).find("stands alone"), std::string::npos);
  EXPECT_NE(usage_error_of([] { parse_peers_flag("a,a"); }).find("listed twice"), std::string::npos);
  EXPECT_NE(usage_error_of([] { parse_peers_flag(""); }).find("is not a peer name"), std::string::npos);
  EXPECT_NE(usage_error_of([] { parse_peers_flag("a,,b"); }).find("is not a peer name"), std::string::npos);
  EXPECT_NE(usage_error_of([] { parse_peers_flag("a/b"); }).find("is not a peer name"), std::string::npos);
}

TEST(PeersFlag, ChildrenAreToldThePeersLoaded) {
  // No peer loaded in this program: --peers (either spelling) becomes --peers=none; without one, argv stays.
  EXPECT_EQ(arguments_with_loaded_peers({"attnbench", "--peers=all", "--batch=2"}),
            (std::vector<std::string>{"attnbench", "--batch=2", "--peers=none"}));
  EXPECT_EQ(arguments_with_loaded_peers({"attnbench", "--peers", "cudnn", "--batch=2"}),
            (std::vector<std::string>{"attnbench", "--batch=2", "--peers=none"}));
  EXPECT_EQ(arguments_with_loaded_peers({"attnbench", "--batch=2"}), (std::vector<std::string>{"attnbench", "--batch=2"}));
  // A suite may name peers: its children are told the peers loaded here, not the suite's again.
  EXPECT_EQ(arguments_with_loaded_peers({"attnbench", "--config=s.json"}),
            (std::vector<std::string>{"attnbench", "--config=s.json", "--peers=none"}));
  EXPECT_EQ(loaded_peers(), "none");  // what a journal records when no peer is loaded
}

// A suite's "peers" select peers as --peers does when --peers is not given ("all", "none", --peers' spelling or a
// list of names; several suites: each peer once); --peers replaces them; a malformed "peers" names the file.
TEST(PeersFlag, ASuiteNamesPeers) {
  using attnbench_testing::usage_error_of;
  const fs::path d = fresh_dir("suites");
  auto suite = [&](const std::string& name, const json& peers) {
    json doc = {{"name", name}, {"grids", {{{"batch", 1}, {"heads", 2}, {"seq_len", 16}, {"head_dim", 8}}}}};
    if (!peers.is_null()) doc["peers"] = peers;
    std::ofstream((d / name).string()) << doc.dump();
    EXPECT_FALSE(load_suite((d / name).string()).empty()) << name;  // the suite reader takes the key
    return (d / name).string();
  };
  SharedFlags f;
  f.config = suite("a.json", json::array({"cudnn", "flashinfer-decode"}));
  PeerSelection s = selected_peers(f);
  EXPECT_FALSE(s.all);
  EXPECT_EQ(s.names, (std::vector<std::string>{"cudnn", "flashinfer-decode"}));
  EXPECT_EQ(s.origin, "config '" + f.config + "': peers");
  const std::string b = suite("b.json", "flashinfer-prefill,cudnn"), none = suite("none.json", "none");
  const std::string plain = suite("plain.json", json());
  f.config = f.config + "," + none + "," + b + "," + plain;
  EXPECT_EQ(selected_peers(f).names, (std::vector<std::string>{"cudnn", "flashinfer-decode", "flashinfer-prefill"}));
  f.config = suite("all.json", "all") + "," + b;
  EXPECT_TRUE(selected_peers(f).all);
  f.peers = "none";  // given: it replaces the suites'
  s = selected_peers(f);
  EXPECT_TRUE(!s.all && s.names.empty() && s.origin == "--peers");
  f.peers.clear();
  f.config = plain;
  EXPECT_TRUE(selected_peers(f).names.empty() && !selected_peers(f).all);
  for (const auto& [bad, needle] : std::vector<std::pair<json, std::string>>{
           {3, "peers must be \"all\", \"none\" or a list of peer names"},
           {json::array(), "peers must be"},
           {json::array({"a,b"}), "peers: 'a,b' is not a peer name"},
           {json::array({"cudnn", "cudnn"}), "peers: 'cudnn' is listed twice"},
           {json::array({"all"}), "peers: 'all' stands alone"},
           {"bad name", "peers: 'bad name' is not a peer name"}}) {
    f.config = suite("bad.json", bad);
    const std::string e = usage_error_of([&] { selected_peers(f); });
    EXPECT_NE(e.find("config '" + f.config + "': " + needle), std::string::npos) << bad.dump() << ": " << e;
  }
}

TEST(UndeclaredContract, MeasuredWithoutAVerdict) {
  LaunchContract c{0, 0, "decided by the library's plan at setup (not declared)", false};
  LaunchRecord rec;
  rec.kernels = 3;
  rec.kernel_names = {"sdpa_kernel x3"};
  rec.source = "cupti";
  RowLaunches l = summarize_launches(c, rec);
  EXPECT_FALSE(l.has_contract);
  EXPECT_TRUE(l.match);
  ASSERT_TRUE(l.measured);
  EXPECT_EQ(l.measured->kernels, 3);
  json j = to_json(l);
  EXPECT_FALSE(j.contains("expected"));
  EXPECT_FALSE(j.contains("match"));
  EXPECT_EQ(j["measured"]["kernels"], 3);
  // A declared contract keeps its verdict.
  RowLaunches declared = summarize_launches(LaunchContract{0, 1, "1 kernel", true}, rec);
  EXPECT_TRUE(declared.has_contract);
  EXPECT_FALSE(declared.match);
}

TEST(LibraryVersion, RoundTripAndAbsence) {
  ResultRow r;
  r.problem = make_problem(1, 2, 24, 16, 1, 0, KvLayout::contiguous, DType::fp16, false);
  r.strategy = "peer:cudnn";
  r.disposition = Disposition::unsupported;
  r.reason = "not here";
  r.library_version = "cuDNN 9.19.0";
  json j = to_json(r);
  EXPECT_EQ(j["library_version"], "cuDNN 9.19.0");
  EXPECT_TRUE(r.peer());
  EXPECT_EQ(result_row_from_json(j, "'t'").library_version, "cuDNN 9.19.0");
  r.library_version.clear();
  EXPECT_FALSE(to_json(r).contains("library_version"));
  j["library_version"] = 3;
  EXPECT_NE(attnbench_testing::usage_error_of([&] { result_row_from_json(j, "'t'"); }).find("library_version must be a string"),
            std::string::npos);
}

TEST(LibraryVersion, CompareWarnsOnceAStrategyWithoutFailing) {
  auto doc = [](const std::string& version) {
    json rows = json::array();
    for (int s : {64, 128})
      for (const char* st : {"fused", "peer:cudnn"}) {
        json r = {{"problem", {{"batch", 2}, {"heads", 4}, {"seq_len", s}, {"head_dim", 64}, {"pages", 1},
                               {"page_size", s}, {"kv_layout", "contiguous"}, {"dtype", "fp16"}, {"causal", false}}},
                  {"strategy", st}, {"status", "ok"}, {"reason", ""},
                  {"time_ms", {{"median", 1.0}, {"mean", 1.0}, {"noise", 0.001}, {"samples", 50}}}};
        if (std::string(st) == "peer:cudnn" && !version.empty()) r["library_version"] = version;
        rows.push_back(r);
      }
    return report_from_json({{"schema", "attnbench.report/1"},
                             {"tool", {{"name", "attnbench"}, {"version", "0.1.0"}, {"git", "abc"}}},
                             {"device", {{"backend", "cuda"}, {"name", "H100"}}},
                             {"settings", {{"timer", "events"}}},
                             {"results", rows}},
                            "'doc'");
  };
  CompareResult c = compare_reports(doc("9.10"), doc("9.19"), CompareOptions{});
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "library versions differ: peer:cudnn is '9.10' in the baseline and '9.19' in the new run "
                           "(2 rows); its changes may come from the library");
  EXPECT_FALSE(c.regressed());
  int changed = 0;
  for (const CompareRow& r : c.rows) changed += r.library_changed();
  EXPECT_EQ(changed, 2);
  // The same version, or a side that does not say (an older report): nothing.
  EXPECT_TRUE(compare_reports(doc("9.10"), doc("9.10"), CompareOptions{}).warnings.empty());
  EXPECT_TRUE(compare_reports(doc(""), doc("9.10"), CompareOptions{}).warnings.empty());
}
