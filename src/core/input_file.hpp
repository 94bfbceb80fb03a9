// The one rule for every file attnbench reads (reports, caches, suites, journals, lengths files, plugins):
// a regular file of bounded size; a pipe, device, socket or FIFO only where the user names a stream
// explicitly ("-" or /dev/stdin for standard input, /dev/fd/N as a shell's <(...) gives); never a
// directory. Opening never blocks (a FIFO with no writer is refused, not waited on), the size is checked
// before and while reading, and errors are one line quoting the path as a short escaped excerpt.
#pragma once
#include <cstdint>
#include <string>

namespace ab {

// True for "-", "/dev/stdin" and "/dev/fd/N" (or /proc/self/fd/N): names of a stream, not of a file.
bool names_stream(const std::string& path);
// The path as error messages quote it: 'PATH', escaped and cut (core/text_excerpt.hpp).
std::string quoted_path(const std::string& path);
// The whole file, at most `max_bytes` bytes. Throws UsageError "'PATH': why" (cannot open, a directory, not
// a regular file, larger than the limit, a read error).
std::string read_input_file(const std::string& path, std::int64_t max_bytes);
// For a file another library opens (dlopen): where it exists, it must be a regular file (links followed), so
// that the opener never waits on a FIFO. Throws UsageError "WHAT 'PATH': why".
void check_regular_input(const std::string& path, const std::string& what);

}  // namespace ab
