// --devices (issue 17): parsing the device list, pinning a worker through CUDA_VISIBLE_DEVICES, the row's
// device and the report's device list in JSON (older reports without them still read), the one-model check.
#include <cstdlib>
#include <string>

#include "orchestrate/device_list.hpp"
#include "orchestrate/pool_devices.hpp"
#include "orchestrate/worker_pool.hpp"
#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "run/run_report.hpp"
#include "testing.hpp"

using namespace ab;
using nlohmann::json;

namespace {

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

ResultRow row_on(int device, int seq_len) {
  ResultRow r;
  r.problem = make_problem(1, 1, seq_len, 8, 1, 0, KvLayout::contiguous, DType::fp16, false);
  r.strategy = "fused";
  r.disposition = Disposition::failed;
  r.reason = "the worker on device 1 died";
  r.device = device;
  return r;
}

}  // namespace

TEST(DeviceList, AllIsEveryVisibleDevice) {
  EXPECT_EQ(parse_device_list("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_device_list("all", 1), (std::vector<int>{0}));
  EXPECT_EQ(parse_device_list("all", -1), (std::vector<int>{0}));  // the CPU backend: one device
  EXPECT_NE(usage_error([] { parse_device_list("all", 0); }).find("no device"), std::string::npos);
}

TEST(DeviceList, IndicesAreSortedAndChecked) {
  EXPECT_EQ(parse_device_list("2,0", 4), (std::vector<int>{0, 2}));
  EXPECT_EQ(parse_device_list("7,3,5", -1), (std::vector<int>{3, 5, 7}));
  EXPECT_NE(usage_error([] { parse_device_list("0,2", 2); }).find("device 2 does not exist"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_device_list("1,1", 4); }).find("named twice"), std::string::npos);
  for (const char* bad : {"", "x", "0,", ",1", "-1", "1.5", "0;1", "1234567"})
    EXPECT_EQ(usage_error([bad] { parse_device_list(bad, -1); }).rfind("--devices", 0), 0u) << bad;
}

TEST(DeviceList, PinsThroughTheInheritedVisibleList) {
  EXPECT_EQ(visible_device_for(3, ""), "3");
  EXPECT_EQ(visible_device_for(1, "4,6"), "6");
  EXPECT_EQ(visible_device_for(0, "GPU-aa,GPU-bb"), "GPU-aa");
  EXPECT_NE(usage_error([] { visible_device_for(2, "4,6"); }).find("does not exist"), std::string::npos);
}

TEST(DeviceList, WorkerArgumentsDropWhatThePoolSets) {
  std::vector<std::string> argv = {"attnbench", "run", "--devices", "0,1", "--json=r.json", "--device=3", "-q",
                                   "--batch=2", "--mixed_devices", "--json", "x.json", "--seq_len=64"};
  EXPECT_EQ(worker_arguments(argv), (std::vector<std::string>{"run", "--batch=2", "--seq_len=64", "--quiet"}));
}

TEST(DeviceModels, DifferentModelsNeedTheFlag) {
  std::vector<json> same = {{{"name", "H200"}, {"index", 0}}, {{"name", "H200"}, {"index", 1}}};
  EXPECT_EQ(check_device_models(same, false), "");
  std::vector<json> mixed = {{{"name", "H200"}, {"index", 0}}, {{"name", "H100"}, {"index", 2}}};
  std::string why = usage_error([&] { check_device_models(mixed, false); });
  EXPECT_NE(why.find("0: H200, 2: H100"), std::string::npos) << why;
  EXPECT_NE(why.find("--mixed_devices"), std::string::npos) << why;
  EXPECT_NE(check_device_models(mixed, true).find("different GPU models"), std::string::npos);
}

TEST(RowDevice, RoundTripsAndOlderRowsReadAsUnknown) {
  json j = to_json(row_on(2, 33));
  EXPECT_EQ(j.at("device"), 2);
  EXPECT_EQ(result_row_from_json(j, "'r.json'").device, 2);
  j.erase("device");
  EXPECT_EQ(result_row_from_json(j, "'r.json'").device, -1);
  EXPECT_FALSE(to_json(row_on(-1, 33)).contains("device"));
  j["device"] = -3;
  EXPECT_NE(usage_error([&] { result_row_from_json(j, "'r.json'", "results[0]."); }).find("results[0].device must be"),
            std::string::npos);
  j["device"] = "1";
  EXPECT_NE(usage_error([&] { result_row_from_json(j, "'r.json'"); }).find("device must be an integer"), std::string::npos);
}

TEST(ReportDevices, HeaderListsEveryDeviceAndOlderReportsHaveNone) {
  Report r;
  r.device = {{"name", "cpu"}, {"backend", "cpu"}};
  r.settings = json::object();
  r.devices = {{{"name", "cpu"}, {"index", 0}}, {{"name", "cpu"}, {"index", 5}}};
  r.rows = {row_on(0, 17), row_on(5, 40)};
  json doc = to_json(r);
  Report back = report_from_json(doc, "'r.json'");
  ASSERT_EQ(back.devices.size(), 2u);
  EXPECT_EQ(back.devices[1].at("index"), 5);
  EXPECT_EQ(back.rows[1].device, 5);
  doc.erase("devices");
  EXPECT_TRUE(report_from_json(doc, "'r.json'").devices.empty());
  doc["devices"] = json::array({{{"name", "cpu"}}});
  EXPECT_NE(usage_error([&] { report_from_json(doc, "'r.json'"); }).find("devices[0].index"), std::string::npos);
}
