// Unit tests of the report printers on a document built here: grouping, the fastest mark, reasons of
// rows that did not run, launch mismatches, markdown and CSV escaping, unknown formats, and the one result
// column table they share (CSV and flat JSON agree column by column and value by value).
#include "report/printers.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/csv.hpp"
#include "core/problem_axes.hpp"
#include "report/compare.hpp"
#include "report/result_columns.hpp"

#include "testing.hpp"

using nlohmann::json;
using namespace ab;

// The documents built here go through the one typed reader, as `attnbench report` reads its file.
static std::string render_report(const json& doc, const std::string& format) {
  return ab::render_report(report_from_json(doc, "'doc'"), format);
}

static json row(int seq_len, const std::string& strategy, const std::string& status, double median, std::string reason = "") {
  json r = {{"problem", {{"batch", 32}, {"heads", 12}, {"seq_len", seq_len}, {"head_dim", 64}, {"pages", 1},
                         {"page_size", seq_len}, {"kv_layout", "contiguous"}, {"dtype", "fp16"}, {"causal", false}}},
            {"strategy", strategy}, {"status", status}, {"reason", reason}};
  if (median > 0) {
    r["time_ms"] = {{"median", median}, {"mean", median}, {"min", median}, {"max", median}, {"stdev", 0.0},
                    {"noise", 0.012}, {"samples", 40}};
    r["tflops"] = 12.0 / median;
    r["gbps"] = 400.0;
  }
  r["launches"] = {{"expected", {{"gemm", 2}, {"kernels", 2}, {"total", 4}}}, {"measured", {{"kernels", 4}}}};
  r["verify"] = {{"rel_l2_err", 0.0009}, {"passed", true}, {"tolerance", 0.005}};
  return r;
}

static json sample_report() {
  json rows = {row(512, "head_batched", "ok", 0.31), row(512, "fused", "ok", 0.086),
               row(512, "nested", "unsupported", 0, "head_dim 64 needs | pages, \"quoted\""),
               row(512, "peer:torch-flash", "ok", 0.118), row(1024, "head_batched", "ok", 1.2),
               row(1024, "fused", "failed", 0, "CUDA error: illegal address")};
  rows[4]["launches"]["measured"]["kernels"] = 5;  // a contract mismatch
  rows[4]["verify"]["passed"] = false;
  FusedTile decode = FusedTile::decode_tile(4);
  rows[1]["config"] = {{"tile", decode.to_json()}, {"tile_source", "heuristic"}, {"source", "heuristic"}};
  return {{"schema", "attnbench.report/1"},
          {"tool", {{"name", "attnbench"}, {"version", "0.1.0"}, {"git", "abc1234"}}},
          {"command", "attnbench --seq_len=512,1024"},
          {"device", {{"backend", "cuda"}, {"name", "NVIDIA H200"}, {"cc", "9.0"}, {"sm_count", 132}}},
          {"settings", {{"hot", false}, {"timer", "events"}, {"warmup", 3}, {"min_samples", 10}, {"max_noise", 0.02}}},
          {"warnings", {"clock throttled"}},
          {"results", rows}};
}

static std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) v.push_back(l);
  return v;
}

static std::string line_with(const std::string& text, const std::string& needle) {
  for (const auto& l : lines(text))
    if (l.find(needle) != std::string::npos) return l;
  return "";
}

TEST(ReportPrinters, console_groups_marks_and_explains) {
  std::string t = render_report(sample_report(), "console");
  EXPECT_TRUE(t.find("NVIDIA H200") != std::string::npos);
  EXPECT_TRUE(line_with(t, " fused ").find("* fused") != std::string::npos);             // fastest of S=512
  EXPECT_TRUE(line_with(t, "peer:torch-flash").find("* ") == std::string::npos);
  EXPECT_TRUE(line_with(t, "peer:torch-flash").find("1.37x") != std::string::npos);      // 0.118 / 0.086
  EXPECT_TRUE(line_with(t, "nested").find("head_dim 64 needs") != std::string::npos);    // reason shown
  EXPECT_TRUE(line_with(t, "illegal address").find("failed") != std::string::npos);
  EXPECT_TRUE(line_with(t, "S=1024").find("* head_batched") != std::string::npos);      // the only ok row
  EXPECT_TRUE(line_with(t, "S=1024").find("5/4!") != std::string::npos);                // mismatch marked
  EXPECT_TRUE(line_with(t, "S=1024").find("9.0e-04!") != std::string::npos);            // failed verify marked
  EXPECT_NE(line_with(t, " fused ").find("decode-s4"), std::string::npos) << t;          // the plan that ran
  EXPECT_NE(t.find("tile = the fused tile that ran"), std::string::npos);
  EXPECT_TRUE(t.find("warning: clock throttled") != std::string::npos);
  // The problem label appears once per group, and every data line of a table is equally aligned.
  int labels = 0;
  for (const auto& l : lines(t)) labels += l.rfind("B=32 H=12 S=512", 0) == 0;
  EXPECT_EQ(labels, 1);
  EXPECT_EQ(line_with(t, "head_batched").find("ok"), line_with(t, "peer:torch-flash").find("ok"));
}

TEST(ReportPrinters, rows_that_missed_their_noise_target_or_ran_at_a_low_clock_are_marked) {
  json r = sample_report();
  r["results"][0]["noise_met"] = false;   // head_batched S=512: stopped on a limit above its target
  r["results"][0]["time_ms"]["noise"] = 0.14;
  r["results"][1]["noise_met"] = true;
  r["results"][1]["clock_low"] = true;    // fused S=512: the SM clock was low
  r["results"][1]["sm_clock_mhz"] = 1100;
  r["results"][1]["rounds"] = {{"count", 20}, {"spread", 0.01}, {"kept", 5}, {"error", 0.002}};
  for (const char* f : {"console", "md"}) {
    std::string t = render_report(r, f);
    EXPECT_TRUE(line_with(t, "head_batched").find("14.0%~") != std::string::npos);
    EXPECT_TRUE(line_with(t, "fused").find("0.0860@") != std::string::npos);  // the first fused row: S=512
    EXPECT_TRUE(line_with(t, "fused").find("~") == std::string::npos);
  }
  std::string csv = render_report(r, "csv");
  EXPECT_TRUE(csv.find("noise_met,rounds,round_spread,sm_clock_mhz,clock_low") != std::string::npos);
  EXPECT_TRUE(line_with(csv, ",head_batched,ok,").find(",false,1,,") != std::string::npos);      // not met, 1 round
  EXPECT_TRUE(line_with(csv, ",fused,ok,").find(",true,20,0.01,1100,true,") != std::string::npos);
}

TEST(ReportPrinters, a_faster_peer_gets_the_star_and_the_best_own_row_a_plus) {
  json r = sample_report();
  r["results"][3]["time_ms"]["median"] = 0.05;  // peer:torch-flash now beats fused (0.086)
  std::string t = render_report(r, "console");
  EXPECT_TRUE(line_with(t, "peer:torch-flash").find("* peer:torch-flash") != std::string::npos);
  EXPECT_TRUE(line_with(t, " fused ").find("+ fused") != std::string::npos);
  EXPECT_TRUE(line_with(t, " fused ").find("1.72x") != std::string::npos);  // 0.086 / 0.05
  EXPECT_TRUE(line_with(render_report(r, "csv"), ",fused,ok,").find(",false,true,") != std::string::npos);
  EXPECT_TRUE(render_report(r, "md").find("*fused*") != std::string::npos);
}

TEST(ReportPrinters, print_console_table_omits_warnings) {
  std::FILE* f = std::tmpfile();
  ASSERT_TRUE(f != nullptr);
  print_console_table(report_from_json(sample_report(), "sample"), f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  std::fclose(f);
  EXPECT_TRUE(s.find("* fused") != std::string::npos);
  EXPECT_TRUE(s.find("clock throttled") == std::string::npos);
}

TEST(ReportPrinters, markdown_is_one_table_with_escaped_cells) {
  std::string t = render_report(sample_report(), "md");
  EXPECT_TRUE(t.find("### attnbench on NVIDIA H200") != std::string::npos);
  EXPECT_TRUE(t.find("|---|---|---|--:|") != std::string::npos);
  EXPECT_TRUE(t.find("**fused**") != std::string::npos);
  EXPECT_TRUE(t.find("needs \\| pages") != std::string::npos);
  // Every table line has the same number of unescaped pipes.
  int want = -1;
  for (const auto& l : lines(t)) {
    if (l.empty() || l[0] != '|') continue;
    int n = 0;
    for (std::size_t i = 0; i < l.size(); ++i) n += l[i] == '|' && (i == 0 || l[i - 1] != '\\');
    if (want < 0) want = n;
    EXPECT_EQ(n, want);
  }
  EXPECT_EQ(want, 13);
  // The fused row says which tile ran (the plan: a decode tile's name ends in its splits), the others "-".
  EXPECT_NE(t.find(" | decode-"), std::string::npos) << t;
}

// Achieved bandwidth as a fraction of the device's measured copy bandwidth: in the device line and every
// printer when the report has it, "-" (and no error) in an older report without it.
TEST(ReportPrinters, copy_fraction_is_shown_when_the_report_has_it) {
  json r = sample_report();
  r["device"]["copy_bandwidth_gbps"] = 4000.0;
  r["results"][1]["copy_fraction"] = 0.1;  // fused: 400 GB/s of 4000
  std::string t = render_report(r, "console");
  EXPECT_TRUE(t.find("copy 4000 GB/s") != std::string::npos);
  EXPECT_TRUE(t.find("%copy") != std::string::npos);
  EXPECT_TRUE(line_with(t, " fused ").find("10.0%") != std::string::npos);
  EXPECT_TRUE(render_report(r, "md").find("| 10.0% |") != std::string::npos);
  std::string csv = render_report(r, "csv");
  EXPECT_TRUE(csv.find(",tflops,gbps,copy_fraction,vs_best,") != std::string::npos);
  EXPECT_TRUE(line_with(csv, ",fused,ok,").find(",400,0.1,") != std::string::npos);
  // An older report: no field, no %copy value, still prints.
  std::string old = render_report(sample_report(), "console");
  EXPECT_TRUE(old.find("copy ") == std::string::npos || old.find("GB/s)") == std::string::npos);
  EXPECT_TRUE(line_with(old, " fused ").find("10.0%") == std::string::npos);
  // A mistyped field is one clear error.
  r["device"]["copy_bandwidth_gbps"] = "fast";
  EXPECT_ANY_THROW(render_report(r, "console"));
}

TEST(ReportPrinters, csv_has_one_line_per_row_and_quotes) {
  std::string t = render_report(sample_report(), "csv");
  auto ls = lines(t);
  ASSERT_TRUE(ls.size() == 7u);
  EXPECT_TRUE(ls[0].rfind("batch,heads,kv_heads,seq_len,q_len,kv_lens,", 0) == 0);
  EXPECT_TRUE(t.find("\"head_dim 64 needs | pages, \"\"quoted\"\"\"") != std::string::npos);
  EXPECT_TRUE(line_with(t, ",fused,ok,").find(",true,") != std::string::npos);  // fastest column
  EXPECT_TRUE(line_with(t, ",fused,ok,").find(",0.086,") != std::string::npos);
}

TEST(ReportPrinters, unknown_format_and_bad_document_throw) {
  EXPECT_ANY_THROW(render_report(sample_report(), "html"));
  json bad = sample_report();
  bad["results"] = "nope";
  EXPECT_ANY_THROW(render_report(bad, "console"));
}

TEST(ReportPrinters, tolerates_sparse_peer_rows) {
  json r = sample_report();
  r["results"] = json::array({{{"problem", {{"batch", 1}, {"heads", 1}, {"seq_len", 64}, {"head_dim", 64},
                                            {"pages", 1}, {"kv_layout", "contiguous"}, {"dtype", "fp16"},
                                            {"causal", false}}},
                               {"strategy", "peer:torch-cudnn"}, {"status", "ok"}, {"time_ms", {{"median", 0.5}}}}});
  for (const char* f : {"console", "md", "csv"}) {
    std::string t = render_report(r, f);
    EXPECT_TRUE(t.find("peer:torch-cudnn") != std::string::npos);
  }
}


// An RFC 4180 reader (as Python's csv module reads with its default dialect): fields separated by commas,
// a quoted field may hold commas, CR, LF and doubled quotes; records end at an unquoted LF (CR LF too).
// Throws on a quote inside an unquoted field or an unterminated quote.
static std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  std::size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    char ch = text[i];
    if (ch == '"' && field.empty()) {
      ++i;
      for (;; ++i) {
        if (i >= text.size()) throw std::runtime_error("unterminated quote");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            ++i;
          } else {
            ++i;
            break;
          }
        } else {
          field += text[i];
        }
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
        throw std::runtime_error("text after a closing quote");
      any = true;
      continue;
    }
    if (ch == '"') throw std::runtime_error("a quote inside an unquoted field");
    if (ch == ',') {
      record.push_back(field);
      field.clear();
      any = true;
    } else if (ch == '\n' || ch == '\r') {
      if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(field);
      records.push_back(record);
      record.clear();
      field.clear();
      any = false;
    } else {
      field += ch;
      any = true;
    }
    ++i;
  }
  if (any || !field.empty()) {
    record.push_back(field);
    records.push_back(record);
  }
  return records;
}

// The one escaper (core/csv.hpp): a field with a comma, a quote, CR or LF comes back as it went in; a plain
// one is written unchanged.
TEST(Csv, fields_round_trip_through_an_rfc4180_reader) {
  const std::vector<std::string> fields = {"plain", "a,b", "say \"hi\"", "cr\rhere", "lf\nhere", "crlf\r\nhere",
                                           "\"", ",", "", " spaced ", "all: ,\"\r\n"};
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("cr\rhere"), "\"cr\rhere\"");  // the tune summary's old escaper left CR unquoted
  EXPECT_EQ(csv_field("lf\nhere"), "\"lf\nhere\"");
  CsvWriter w({"name", "value"});
  for (std::size_t i = 0; i < fields.size(); ++i) w.add_row({{"value", fields[i]}, {"name", std::to_string(i)}});
  auto records = parse_csv(w.text());
  ASSERT_EQ(records.size(), fields.size() + 1);
  EXPECT_EQ(records[0], (std::vector<std::string>{"name", "value"}));
  for (std::size_t i = 0; i < fields.size(); ++i)
    EXPECT_EQ(records[i + 1], (std::vector<std::string>{std::to_string(i), fields[i]}));
}

TEST(Csv, writer_fills_columns_by_name_and_refuses_unknown_ones) {
  CsvWriter w({"a", "b", "c"});
  w.add_row({{"c", "3"}});
  w.add_ordered_row({"1", "2", "3"});
  EXPECT_EQ(w.text(), "a,b,c\n,,3\n1,2,3\n");
  EXPECT_THROW(w.add_row({{"d", "4"}}), std::logic_error);
  EXPECT_THROW(w.add_row({{"a", "1"}, {"a", "2"}}), std::logic_error);
  EXPECT_THROW(w.add_ordered_row({"1", "2"}), std::logic_error);
  EXPECT_THROW(CsvWriter({"a", "a"}), std::logic_error);
}

// The report's CSV: a reason with every special character comes back whole, and every line has the header's
// cells.
TEST(Csv, report_csv_parses_with_the_header_s_cells) {
  json r = sample_report();
  const std::string reason = "needs, \"this\"\r\nand that";
  r["results"][2]["reason"] = reason;  // nested, unsupported
  auto records = parse_csv(render_report(r, "csv"));
  ASSERT_EQ(records.size(), 7u);
  std::size_t reason_col = 0;
  while (reason_col < records[0].size() && records[0][reason_col] != "reason") ++reason_col;
  ASSERT_TRUE(reason_col < records[0].size());
  for (const auto& rec : records) EXPECT_EQ(rec.size(), records[0].size());
  EXPECT_EQ(records[3][reason_col], reason);
}

// compare's CSV: the header and every line (a matched row with a status reason full of separators, a row
// missing from the new run, a new row) have the same cells, and each lone row's values sit under their names.
TEST(Csv, compare_csv_lines_have_the_header_s_cells) {
  json base = sample_report(), next = sample_report();
  const std::string reason = "broke, \"badly\"\r\nsee log";
  next["results"][1]["status"] = "failed";  // fused S=512: ok -> failed, with a reason
  next["results"][1]["reason"] = reason;
  next["results"][1].erase("time_ms");
  json kept = json::array();
  for (std::size_t i = 0; i < next["results"].size(); ++i)
    if (i != 4) kept.push_back(next["results"][i]);  // head_batched S=1024: missing from the new run
  json added = next["results"][0];
  added["problem"]["seq_len"] = 2048;
  added["problem"]["page_size"] = 2048;
  kept.push_back(added);  // head_batched S=2048: new
  next["results"] = kept;
  CompareOptions o;
  CompareResult c = ab::compare_reports(report_from_json(base, "'base'"), report_from_json(next, "'new'"), o);
  ASSERT_EQ(c.missing.size(), 1u);
  ASSERT_EQ(c.added.size(), 1u);
  auto records = parse_csv(render_compare(c, "csv"));
  ASSERT_EQ(records.size(), 1 + c.rows.size() + 2);
  const auto& head = records[0];
  auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  for (const auto& rec : records) EXPECT_EQ(rec.size(), head.size());
  bool saw_reason = false;
  for (std::size_t i = 1; i <= c.rows.size(); ++i)
    if (records[i][col("base_status")] == "ok" && records[i][col("new_status")] == "failed") {
      saw_reason = true;
      EXPECT_EQ(records[i][col("reason")], reason);
      EXPECT_EQ(records[i][col("verdict")], "worse");
    }
  EXPECT_TRUE(saw_reason);
  const auto& miss = records[1 + c.rows.size()];
  EXPECT_EQ(miss[col("verdict")], "missing");
  EXPECT_EQ(miss[col("strategy")], "head_batched");
  EXPECT_EQ(miss[col("seq_len")], "1024");
  EXPECT_EQ(miss[col("base_status")], "ok");
  EXPECT_EQ(miss[col("base_ms")], "1.2");
  EXPECT_EQ(miss[col("new_status")], "");
  EXPECT_EQ(miss[col("new_ms")], "");
  EXPECT_EQ(miss[col("reason")], "");
  const auto& add = records[2 + c.rows.size()];
  EXPECT_EQ(add[col("verdict")], "new");
  EXPECT_EQ(add[col("seq_len")], "2048");
  EXPECT_EQ(add[col("base_status")], "");
  EXPECT_EQ(add[col("new_status")], "ok");
  EXPECT_EQ(add[col("new_ms")], "0.31");
  EXPECT_EQ(add[col("base_ms")], "");
  EXPECT_EQ(add[col("verdict_reason")], "");
}

// The header line of a CPU-backend report: its thread count is not "SMs", and it says no cache is flushed
// (the CPU backend's flush_l2 does nothing), whatever --hot says.
TEST(ReportPrinters, cpu_header_says_threads_and_no_flush) {
  json r = sample_report();
  r["device"] = {{"backend", "cpu"}, {"name", "AMD EPYC"}, {"sm_count", 2}, {"copy_bandwidth_gbps", 22.0}};
  for (const char* f : {"console", "md"}) {
    std::string t = render_report(r, f);
    EXPECT_TRUE(t.find("AMD EPYC (cpu, 2 hardware threads, copy 22 GB/s)") != std::string::npos) << t;
    EXPECT_TRUE(t.find("SMs") == std::string::npos) << t;
    EXPECT_TRUE(t.find("L2 flushed") == std::string::npos && t.find("hot L2") == std::string::npos) << t;
    EXPECT_TRUE(t.find("caches not flushed (cpu backend), events timer") != std::string::npos) << t;
  }
  r["settings"]["hot"] = true;
  EXPECT_TRUE(render_report(r, "console").find("caches not flushed (cpu backend)") != std::string::npos);
  // A GPU report keeps its SMs and its L2.
  std::string gpu = render_report(sample_report(), "console");
  EXPECT_TRUE(gpu.find("(cuda, cc 9.0, 132 SMs)") != std::string::npos) << gpu;
  EXPECT_TRUE(gpu.find("L2 flushed, events timer") != std::string::npos) << gpu;
}

// ---- the result column table (report/result_columns.hpp): one list that every format loops over ----------

// Rows of every kind a column must handle: timed and not, ran and not, measured launches and not, a peer
// without a contract, a configuration with a tile and GEMM plans, rounds, a slowdown, whole-number times.
static json varied_report() {
  json r = sample_report();
  json profiled = row(512, "ptr_array", "ok", 0);  // ran under --profile: counted and checked, not timed
  json unmeasured = row(1024, "ptr_array", "ok", 2.0);  // a contract, nothing counted; a whole-number median
  unmeasured["launches"].erase("measured");
  unmeasured["host_ms"] = {{"median", 3.0}};
  json peer = row(1024, "peer:torch-cudnn", "ok", 0.9);  // counted, no contract
  peer["launches"] = {{"measured", {{"kernels", 1}, {"source", "cupti"}, {"kernel_names", {"cudnn x1"}}}}};
  peer.erase("verify");
  json configured = r["results"][1];
  configured["problem"]["seq_len"] = 2048;
  configured["problem"]["page_size"] = 2048;
  configured["device"] = 1;
  configured["config"] = {{"tile", FusedTile::prefill_tile(128, 128, 12, 2, TileFamily::prefill_wsp).to_json()},
                          {"tile_source", "cache"}, {"source", "cache"}, {"score_dtype", "fp32"},
                          {"gathered_pages", false}, {"gqa_packed", true}, {"padded_fraction", 0.0},
                          {"gemm_algos", {{{"shape", "m1n2k3"}, {"algo", "algo 6"}, {"source", "tuned"}}}}};
  configured["rounds"] = {{"count", 3}, {"medians_ms", {0.08, 0.086, 0.09}}, {"spread", 0.05}, {"kept", 3}, {"error", 0.01}};
  configured["timer"] = "events";
  configured["stop_reason"] = "noise";
  configured["noise_met"] = true;
  configured["sm_clock_mhz"] = 1980;
  configured["injected_slowdown"] = {{"fraction", 0.05}, {"delay_ms", 0.004}, {"base_ms", 0.08}, {"achieved", 0.049}};
  json in_process = row(1024, "peer:cudnn", "ok", 0.8);  // an in-process peer: its library's version
  in_process["launches"] = peer["launches"];
  in_process["library_version"] = "cuDNN 9.19.0";
  for (const json& x : {profiled, unmeasured, peer, configured, in_process}) r["results"].push_back(x);
  return r;
}

static std::map<std::string, std::string> csv_record(const std::vector<std::string>& head, const std::vector<std::string>& rec) {
  std::map<std::string, std::string> m;
  for (std::size_t i = 0; i < head.size() && i < rec.size(); ++i) m[head[i]] = rec[i];
  return m;
}

// A CSV cell and a flat JSON value say the same: "" is null (or ""), true/false booleans, integers in
// decimal, numbers equal when parsed.
static void expect_same_value(const std::string& cell, const json& v, const std::string& where) {
  if (v.is_null()) EXPECT_EQ(cell, "") << where;
  else if (v.is_boolean()) EXPECT_EQ(cell, v.get<bool>() ? "true" : "false") << where;
  else if (v.is_number_integer()) EXPECT_EQ(cell, std::to_string(v.get<std::int64_t>())) << where;
  else if (v.is_number()) {
    ASSERT_FALSE(cell.empty()) << where;
    EXPECT_EQ(std::stod(cell), v.get<double>()) << where;
  } else if (v.is_string()) EXPECT_EQ(cell, v.get<std::string>()) << where;
  else ADD_FAILURE() << where << ": " << v.dump() << " is no column value";
}

TEST(ResultColumns, every_csv_column_is_in_the_flat_rows_with_the_same_value) {
  const json doc = varied_report();
  const auto records = parse_csv(render_report(doc, "csv"));
  const json flat = report_flat_json(report_from_json(doc, "'doc'"));
  ASSERT_EQ(records.size(), flat["rows"].size() + 1);
  const std::vector<std::string> axes = problem_csv_columns();
  for (std::size_t i = 0; i < flat["rows"].size(); ++i) {
    const json& j = flat["rows"][i];
    const auto cells = csv_record(records[0], records[i + 1]);
    for (const std::string& name : records[0]) {
      const bool axis = std::find(axes.begin(), axes.end(), name) != axes.end();
      const json& owner = axis ? j["problem"] : j;
      ASSERT_TRUE(owner.contains(name) || axis) << "CSV column " << name << " is not in the flat rows";
      expect_same_value(cells.at(name), owner.contains(name) ? owner[name] : json(nullptr),
                        j["strategy"].get<std::string>() + " " + name);
    }
  }
}

TEST(ResultColumns, launches_match_is_a_verdict_only_where_both_counts_are_known) {
  const json doc = varied_report();
  const auto records = parse_csv(render_report(doc, "csv"));
  const json flat = report_flat_json(report_from_json(doc, "'doc'"));
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < flat["rows"].size(); ++i) {
    const json& j = flat["rows"][i];
    const std::string csv = csv_record(records[0], records[i + 1]).at("launches_match");
    const bool known = !j["launches_expected"].is_null() && !j["launches_measured"].is_null();
    if (!known) {
      EXPECT_TRUE(j["launches_match"].is_null()) << j["strategy"] << ": no verdict without both counts";
      EXPECT_EQ(csv, "");
      ++seen["unknown"];
    } else {
      const bool match = j["launches_expected"] == j["launches_measured"];
      EXPECT_EQ(j["launches_match"], match) << j["strategy"];
      EXPECT_EQ(csv, match ? "true" : "false");
      ++seen[match ? "match" : "mismatch"];
    }
  }
  EXPECT_EQ(seen["unknown"], 3);  // the unmeasured row and the peers without a contract
  EXPECT_GE(seen["match"], 1);
  EXPECT_EQ(seen["mismatch"], 1);
}

TEST(ResultColumns, each_column_is_declared_once_and_typed_by_its_hint) {
  std::set<std::string> names;
  for (const std::string& a : problem_csv_columns()) names.insert(a);
  names.insert("problem");
  for (const ResultColumn& c : result_columns()) EXPECT_TRUE(names.insert(c.name).second) << c.name << " twice";
  const json flat = report_flat_json(report_from_json(varied_report(), "'doc'"));
  for (const json& row : flat["rows"]) {
    EXPECT_EQ(row.size(), result_columns().size() + 1) << "a flat row key outside the column table";
    for (const ResultColumn& c : result_columns()) {
      const json& v = row.at(c.name);
      if (v.is_null()) continue;
      switch (c.hint) {
        case ColumnHint::text: EXPECT_TRUE(v.is_string()) << c.name; break;
        case ColumnHint::flag: EXPECT_TRUE(v.is_boolean()) << c.name; break;
        case ColumnHint::count: EXPECT_TRUE(v.is_number_integer()) << c.name; break;
        default: EXPECT_TRUE(v.is_number_float()) << c.name << " = " << v.dump(); break;  // 2.0 stays a number
      }
    }
  }
}

// The CSV keeps its names and order (docs/report-format.md shows the header), and the console and markdown
// tables show the table's columns under their headings.
TEST(ResultColumns, csv_header_and_table_headings) {
  const std::string head = lines(render_report(sample_report(), "csv")).front();
  EXPECT_EQ(head,
            "batch,heads,kv_heads,seq_len,q_len,kv_lens,head_dim,pages,page_size,kv_layout,dtype,causal,window,softcap,sinks,"
            "head_dim_v,q_lens,kv_dtype,kv_scale,"
            "strategy,status,"
            "reason,median_ms,mean_ms,min_ms,max_ms,stdev_ms,noise,samples,tflops,gbps,copy_fraction,vs_best,fastest,"
            "fastest_own,launches_expected,launches_measured,launches_match,rel_l2_err,verify_passed,timer,stop_reason,"
            "noise_met,rounds,round_spread,sm_clock_mhz,clock_low,device,device_index,host_median_ms,round_error,"
            "tolerance,max_abs_err,tile,tile_source,config_source,score_dtype,gathered_pages,gqa_packed,padded_fraction,"
            "gemm_algos,launch_formula,launch_source,kernel_names,injected_slowdown,library_version");
  EXPECT_NE(render_report(sample_report(), "md")
                .find("| problem | strategy | status | median ms | noise | vs best | TFLOP/s | GB/s | %copy | launches | rel-err |"),
            std::string::npos);
  const std::string console = render_report(sample_report(), "console");
  EXPECT_NE(console.find("median ms   noise  vs best  TFLOP/s     GB/s   %copy  launches   rel-err"), std::string::npos)
      << console;
}

// A plugin's or in-process peer's library version is a column of every format that lists columns (CSV, flat
// JSON), and missing (an empty cell, null) for the built-in strategies and script peers.
TEST(ResultColumns, library_version_of_plugin_and_peer_rows) {
  const json doc = varied_report();
  const auto records = parse_csv(render_report(doc, "csv"));
  const json flat = report_flat_json(report_from_json(doc, "'doc'"));
  std::map<std::string, std::string> csv_by_strategy;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const auto cells = csv_record(records[0], records[i]);
    csv_by_strategy[cells.at("strategy")] = cells.at("library_version");
  }
  EXPECT_EQ(csv_by_strategy.at("peer:cudnn"), "cuDNN 9.19.0");
  EXPECT_EQ(csv_by_strategy.at("peer:torch-cudnn"), "");
  EXPECT_EQ(csv_by_strategy.at("fused"), "");
  int versioned = 0;
  for (const json& j : flat["rows"]) {
    ASSERT_TRUE(j.contains("library_version")) << j["strategy"];
    if (j["strategy"] == "peer:cudnn") {
      EXPECT_EQ(j["library_version"], "cuDNN 9.19.0");
      ++versioned;
    } else {
      EXPECT_TRUE(j["library_version"].is_null()) << j["strategy"];
    }
  }
  EXPECT_EQ(versioned, 1);
}

// A row that ran under --profile shows its launches and its check in the tables, and "-" for every time.
TEST(ResultColumns, an_untimed_row_shows_launches_and_check_only) {
  const json doc = varied_report();
  const std::string md = render_report(doc, "md"), console = render_report(doc, "console");
  EXPECT_NE(line_with(md, "ptr_array | ok |").find("| - | - | - | - | - | - | 4/4 | 9.0e-04 |"), std::string::npos)
      << line_with(md, "ptr_array | ok |");
  const std::string line = line_with(console, "ptr_array");
  EXPECT_NE(line.find("-        -       -"), std::string::npos) << line;
  EXPECT_NE(line.find("4/4"), std::string::npos) << line;
}
