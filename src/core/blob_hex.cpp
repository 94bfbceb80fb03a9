// Hex encoding and decoding of algorithm blobs.
#include "core/blob_hex.hpp"

#include <cctype>

namespace ab {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;  // is_blob_hex checked it
}

}  // namespace

std::string blob_to_hex(const std::vector<std::uint8_t>& blob) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(blob.size() * 2);
  for (std::uint8_t b : blob) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

bool is_blob_hex(const std::string& text) {
  if (text.size() % 2) return false;
  for (char c : text)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool blob_from_hex(const std::string& text, std::vector<std::uint8_t>* blob) {
  if (!is_blob_hex(text)) return false;
  blob->clear();
  for (std::size_t i = 0; i < text.size(); i += 2)
    blob->push_back(static_cast<std::uint8_t>(hex_digit(text[i]) * 16 + hex_digit(text[i + 1])));
  return true;
}

}  // namespace ab
