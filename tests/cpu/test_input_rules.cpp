// The one rule for every file attnbench reads (core/input_file.hpp), the one-line rule for messages that
// quote input (core/text_excerpt.hpp) and the outputs-are-not-inputs rule (core/file_identity.hpp).
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/file_identity.hpp"
#include "core/input_file.hpp"
#include "core/text_excerpt.hpp"
#include "testing.hpp"

using namespace ab;
using attnbench_testing::usage_error_of;

TEST(EscapedText, cuts_at_a_whole_escape_or_character_and_bounds_whole_messages) {
  EXPECT_EQ(escaped_text("0/2\n", 40), "0/2\\n");
  EXPECT_EQ(escaped_text(std::string("a\0b\t\xff", 5), 40), "a\\x00b\\t\\xff");
  EXPECT_EQ(escaped_text(std::string(100, '7'), 10), "7777777777...");
  EXPECT_EQ(escaped_text("\n\n\n\n", 5), "\\n\\n...");  // an escape is never cut in half
  EXPECT_EQ(escaped_text("config 'caf\xc3\xa9': bad\nsecond line\r", 1024), "config 'caf\xc3\xa9': bad\\nsecond line\\r");
  std::string cut = escaped_text(std::string(10, 'a') + "\xc3\xa9" + std::string(10, 'b'), 11);
  EXPECT_EQ(cut, std::string(10, 'a') + "...");  // not inside the two-byte character
  EXPECT_EQ(escaped_text(std::string(5000000, 'x'), 1024).size(), 1027u);  // main()'s bound on an error line
}

TEST(InputFile, names_of_streams) {
  for (const char* s : {"-", "/dev/stdin", "/dev/fd/63", "/proc/self/fd/0"}) EXPECT_TRUE(names_stream(s)) << s;
  for (const char* s : {"", "/dev/fd/", "/dev/fd/6x", "fifo", "/dev/zero", "/dev/stdout2"}) EXPECT_FALSE(names_stream(s)) << s;
}

TEST(InputFile, regular_files_within_the_limit_only) {
  const std::string dir = "test_input_rules.d";
  ::mkdir(dir.c_str(), 0755);
  const std::string file = dir + "/f.txt", fifo = dir + "/fifo";
  { std::ofstream(file) << "0123456789"; }
  EXPECT_EQ(read_input_file(file, 10), "0123456789");
  EXPECT_NE(usage_error_of([&] { read_input_file(file, 9); }).find("larger than 9 bytes"), std::string::npos);
  EXPECT_NE(usage_error_of([&] { read_input_file(dir, 100); }).find("is a directory"), std::string::npos);
  EXPECT_NE(usage_error_of([&] { read_input_file(dir + "/missing", 100); }).find("cannot open file"), std::string::npos);
  // A FIFO with no writer is refused at once, not waited on; so is a device.
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(usage_error_of([&] { read_input_file(fifo, 100); }).find("a FIFO or pipe, not a regular file"), std::string::npos);
  EXPECT_NE(usage_error_of([&] { read_input_file("/dev/zero", 100); }).find("a character device"), std::string::npos);
  EXPECT_NE(usage_error_of([&] { check_regular_input(fifo, "--plugin"); }).find("--plugin"), std::string::npos);
  EXPECT_TRUE(usage_error_of([&] { check_regular_input(file, "--plugin"); }).empty());
  // A path with a newline is quoted on one line.
  std::string why = usage_error_of([&] { read_input_file(dir + "/a\nb", 100); });
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  ::unlink(fifo.c_str());
  ::unlink(file.c_str());
  ::rmdir(dir.c_str());
}

TEST(FileIdentity, an_output_is_neither_an_input_nor_another_output) {
  { std::ofstream("test_identity_cache.json") << "{}"; }
  std::string why = usage_error_of([] {
    check_outputs_distinct({{"--json", "./test_identity_cache.json"}}, {{"--cache", "test_identity_cache.json"}});
  });
  EXPECT_NE(why.find("--json './test_identity_cache.json' is also --cache"), std::string::npos) << why;
  why = usage_error_of([] { check_outputs_distinct({{"--json", "new.json"}, {"--csv", "sub/../new.json"}}, {}); });
  EXPECT_NE(why.find("two outputs cannot share one file"), std::string::npos) << why;
  EXPECT_TRUE(usage_error_of([] {
                check_outputs_distinct({{"--json", "-"}, {"--md", "-"}, {"--csv", "/dev/null"}, {"--x", "/dev/null"}},
                                       {{"--cache", "test_identity_cache.json"}});
              }).empty());
  EXPECT_TRUE(usage_error_of([] { check_outputs_distinct({{"--json", "a.json"}}, {{"--cache", "b.json"}}); }).empty());
  ::unlink("test_identity_cache.json");
}
