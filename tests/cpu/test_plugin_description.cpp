// A plugin loader's answer as the parent reads it (strategies/plugin_description.hpp): a good description is
// taken and round-trips; refusals, malformed JSON, wrong types, rule breaks (names, control characters,
// configuration counts, duplicates) are one UsageError line quoting at most a short escaped excerpt; and the
// escaping itself (core/text_excerpt.hpp).
#include <string>

#include <gtest/gtest.h>

#include <attnbench/plugin.h>

#include "core/errors.hpp"
#include "core/text_excerpt.hpp"
#include "strategies/plugin_description.hpp"

using namespace ab;

namespace {

const std::string kPath = "lib.so";

std::string doc(const std::string& plugin) {
  return R"({"schema":"attnbench.plugin_description/1","plugin":)" + plugin + "}";
}

// The one-line refusal of `text`, or "" when it was accepted.
std::string refusal(const std::string& text) {
  try {
    plugin_info_from_description(text, kPath);
  } catch (const UsageError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind("--plugin=lib.so: ", 0), 0u) << what;
    return what;
  }
  return "";
}

}  // namespace

TEST(PluginDescription, good_description_is_taken_and_round_trips) {
  PluginInfo info = plugin_info_from_description(
      doc(R"({"name":"mine","version":"1.0","description":"a kernel","configs":["k32","k64"]})"), kPath);
  EXPECT_EQ(info.name, "mine");
  EXPECT_EQ(info.version, "1.0");
  EXPECT_EQ(info.path, kPath);
  EXPECT_EQ(info.configs, (std::vector<std::string>{"k32", "k64"}));
  PluginInfo again = plugin_info_from_description(plugin_description_json(info), kPath);
  EXPECT_EQ(again.configs, info.configs);
  EXPECT_EQ(again.description, info.description);
  EXPECT_TRUE(info.variants.empty()) << "a description without variants runs none";
  // The variants a table declares travel by name and come back the same.
  info.variants = {"sliding window", "sinks"};
  EXPECT_EQ(plugin_info_from_description(plugin_description_json(info), kPath).variants, info.variants);
}

TEST(PluginDescription, variant_bits_and_names) {
  std::vector<std::string> names;
  std::uint32_t bad = 0;
  EXPECT_TRUE(variant_names_of_bits(0, &names, &bad));
  EXPECT_TRUE(names.empty());
  EXPECT_TRUE(variant_names_of_bits(AB_VARIANT_SINKS | AB_VARIANT_SLIDING_WINDOW, &names, &bad));
  EXPECT_EQ(names, (std::vector<std::string>{"sliding window", "sinks"}));
  EXPECT_TRUE(variant_names_of_bits(AB_VARIANT_HEAD_DIM_V | AB_VARIANT_SOFT_CAPPING, &names, &bad));
  EXPECT_EQ(names, (std::vector<std::string>{"soft-capping", "value head dim"}));
  // A loader's description may name it too.
  PluginInfo info;
  info.name = "x";
  info.version = "1";
  info.description = "d";
  info.configs = {"k"};
  info.variants = {"value head dim", "sinks"};
  EXPECT_EQ(plugin_info_from_description(plugin_description_json(info), kPath).variants, info.variants);
  EXPECT_FALSE(variant_names_of_bits(AB_VARIANT_SOFT_CAPPING | 0x100u, &names, &bad));
  EXPECT_EQ(bad, 0x100u);
  EXPECT_NE(refusal(doc(R"({"name":"x","version":"1","description":"d","configs":["k"],"variants":["alibi"]})")), "");
  EXPECT_NE(refusal(doc(R"({"name":"x","version":"1","description":"d","configs":["k"],"variants":["sinks","sinks"]})")), "");
  EXPECT_NE(refusal(doc(R"({"name":"x","version":"1","description":"d","configs":["k"],"variants":"sinks"})")), "");
}

TEST(PluginDescription, refusal_is_one_escaped_line_under_the_parents_prefix) {
  std::string r = refusal(plugin_refusal_json("--plugin=lib.so: built for plugin ABI version 999"));
  EXPECT_EQ(r, "--plugin=lib.so: built for plugin ABI version 999");
  r = refusal(plugin_refusal_json("line one\nline two\x1b[31m"));
  EXPECT_EQ(r, "--plugin=lib.so: line one\\nline two\\x1b[31m");
  r = refusal(plugin_refusal_json(std::string(5000, 'x')));
  EXPECT_LT(r.size(), 500u);
  EXPECT_NE(refusal(plugin_refusal_json("")), "");
}

TEST(PluginDescription, malformed_answers_are_refused) {
  EXPECT_NE(refusal(""), "");
  EXPECT_NE(refusal("{\"schema\":\"attnbench.plugin_description/1\",\"plugin\":{\"na"), "");
  EXPECT_NE(refusal("[]"), "");
  EXPECT_NE(refusal(R"({"schema":"other/1","plugin":{}})"), "");
  EXPECT_NE(refusal(R"({"schema":"attnbench.plugin_description/1"})"), "");
  EXPECT_NE(refusal(doc(R"({"name":"x","version":"1","description":"d","configs":"k"})")), "");
  EXPECT_NE(refusal(doc(R"({"name":"x","version":1,"description":"d","configs":["k"]})")), "");
  EXPECT_NE(refusal(doc(R"({"name":"x","version":"1","description":"d","configs":[7]})")), "");
  EXPECT_NE(refusal(std::string("{\"schema\":\"attnbench.plugin_description/1\",\"refused\":\"\xff\"}")), "");
}

TEST(PluginDescription, rules_are_enforced_with_short_excerpts) {
  std::string r = refusal(doc(R"({"name":"bad name\n","version":"1","description":"d","configs":["k"]})"));
  EXPECT_NE(r.find("its name 'bad name\\n' must be"), std::string::npos) << r;
  r = refusal(doc(R"({"name":"x","version":"1","description":"d","configs":["a","two\nlines"]})"));
  EXPECT_NE(r.find("configuration 1 'two\\nlines' must be one line"), std::string::npos) << r;
  r = refusal(doc(R"({"name":"x","version":"1","description":"d","configs":[]})"));
  EXPECT_NE(r.find("between 1 and 4096 configurations (it lists 0)"), std::string::npos) << r;
  r = refusal(doc(R"({"name":"x","version":"1","description":"d","configs":["a","a"]})"));
  EXPECT_NE(r.find("configuration 1 'a' is listed twice"), std::string::npos) << r;
  r = refusal(doc(R"({"name":"x","version":"1","description":"d","configs":[""]})"));
  EXPECT_NE(r.find("configuration 0 has no name"), std::string::npos) << r;
  std::string many = "[";
  for (int i = 0; i <= kMaxPluginConfigs; ++i) many += (i ? ",\"c" : "\"c") + std::to_string(i) + "\"";
  r = refusal(doc(R"({"name":"x","version":"1","description":"d","configs":)" + many + "]}"));
  EXPECT_NE(r.find("(it lists 4097)"), std::string::npos) << r;
  r = refusal(doc(R"({"name":"x","version":")" + std::string(300, 'v') + R"(","description":"d","configs":["k"]})"));
  EXPECT_NE(r.find("its version 'vvvv"), std::string::npos) << r;
  EXPECT_LT(r.size(), 200u) << r;
}

TEST(TextExcerpt, escapes_controls_and_bytes_that_are_not_utf8) {
  EXPECT_EQ(escaped_text("a\tb\r\n", 100), "a\\tb\\r\\n");
  EXPECT_EQ(escaped_text("\x1b[0m\x7f", 100), "\\x1b[0m\\x7f");
  EXPECT_EQ(escaped_text("caf\xc3\xa9", 100), "caf\xc3\xa9");  // UTF-8 stays
  EXPECT_EQ(escaped_text("\xc3(", 100), "\\xc3(");             // a cut sequence does not
  EXPECT_EQ(escaped_text("\xc2\x85", 100), "\\xc2\\x85");      // C1 control (NEL)
  EXPECT_EQ(escaped_text("\xed\xa0\x80", 100), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(escaped_text("a\\nb", 100), "a\\nb");              // escaped text escapes to itself
  EXPECT_EQ(escaped_text("abcdef", 3), "abc...");
  EXPECT_EQ(quoted_excerpt(std::string(100, 'x')), "'" + std::string(40, 'x') + "...'");
  EXPECT_TRUE(is_one_line_text("caf\xc3\xa9 1.0"));
  EXPECT_FALSE(is_one_line_text("a\nb"));
  EXPECT_FALSE(is_one_line_text("\xff"));
}
