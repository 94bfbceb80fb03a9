// A fused tile's name, its parse and its JSON (core/fused_tile.hpp).
#include "core/fused_tile.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace ab {

namespace {

// A decode tile name: "decode", then "-ws", "-n<keys>", "-rows" and "-s<splits>" in that order, each optional.
std::optional<FusedTile> decode_from_name(const std::string& s) {
  if (s.rfind("decode", 0) != 0) return std::nullopt;
  bool ws = false, rows = false;
  int block_n = 64, splits = 0;
  std::size_t at = 6;
  auto field = [&](const char* prefix) {
    const std::size_t n = std::strlen(prefix);
    if (s.compare(at, n, prefix) != 0) return false;
    at += n;
    return true;
  };
  auto number = [&](int* v) {
    std::size_t end = at;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) && end - at < 6) ++end;
    if (end == at) return false;
    *v = std::stoi(s.substr(at, end - at));
    at = end;
    return *v > 0;
  };
  if (field("-ws")) ws = true;
  if (field("-n") && !number(&block_n)) return std::nullopt;
  if (field("-rows")) rows = true;
  if (field("-s") && !number(&splits)) return std::nullopt;
  if (at != s.size()) return std::nullopt;
  return FusedTile::decode_tile(splits, ws, block_n, rows);
}

// A prefill tile name: "m<block_m>n<block_n>w<warps>s<stages>", then "ws" or "wsp".
std::optional<FusedTile> prefill_from_name(const std::string& s) {
  auto ends_with = [&](const char* tail) {
    const std::size_t n = std::strlen(tail);
    return s.size() > n && s.compare(s.size() - n, n, tail) == 0;
  };
  FusedTile t;
  t.family = ends_with("wsp") ? TileFamily::prefill_wsp : ends_with("ws") ? TileFamily::prefill_ws : TileFamily::prefill;
  if (std::sscanf(s.c_str(), "m%dn%dw%ds%d", &t.block_m, &t.block_n, &t.warps, &t.stages) != 4) return std::nullopt;
  if (t.block_m <= 0 || t.block_n <= 0 || t.warps <= 0 || t.stages <= 0) return std::nullopt;
  return t;
}

}  // namespace

const char* tile_family_name(TileFamily f) {
  switch (f) {
    case TileFamily::prefill: return "prefill";
    case TileFamily::prefill_ws: return "prefill-ws";
    case TileFamily::prefill_wsp: return "prefill-wsp";
    case TileFamily::decode: return "decode";
    case TileFamily::decode_ws: return "decode-ws";
  }
  return "?";
}

std::string FusedTile::name() const {
  if (decode())
    return fmt::format("decode{}{}{}", ws() ? "-ws" : "", block_n != 64 ? fmt::format("-n{}", block_n) : std::string(),
                       row_boxes ? "-rows" : "") +
           (splits > 0 ? fmt::format("-s{}", splits) : std::string());
  return fmt::format("m{}n{}w{}s{}{}", block_m, block_n, warps, stages, persistent() ? "wsp" : ws() ? "ws" : "");
}

std::optional<FusedTile> FusedTile::from_name(const std::string& s) {
  std::optional<FusedTile> t = s.rfind("decode", 0) == 0 ? decode_from_name(s) : prefill_from_name(s);
  if (t && t->name() != s) return std::nullopt;  // one spelling per tile ("-n64", leading zeros are not names)
  return t;
}

nlohmann::json FusedTile::to_json() const {
  nlohmann::json j = {{"block_m", block_m}, {"block_n", block_n}, {"warps", warps}, {"stages", stages}, {"name", name()}};
  if (ws()) j["ws"] = true;
  if (row_boxes) j["row_boxes"] = true;
  if (persistent()) j["persistent"] = true;
  if (decode()) {
    j["decode"] = true;
    j["splits"] = splits;
  }
  return j;
}

FusedTile FusedTile::from_json(const nlohmann::json& j, const FieldFailure& fail) {
  auto size = [&](const char* key) {
    auto it = j.find(key);
    if (it == j.end()) fail(key, "is missing");
    if (!it->is_number_integer()) fail(key, "must be an integer");
    if (it->get<std::int64_t>() <= 0 || it->get<std::int64_t>() > (1 << 20)) fail(key, "must be positive");
    return it->get<int>();
  };
  auto flag = [&](const char* key) {  // absent in earlier versions' tiles: false
    auto it = j.find(key);
    if (it == j.end()) return false;
    if (!it->is_boolean()) fail(key, "must be true or false");
    return it->get<bool>();
  };
  if (!j.is_object()) fail("", "must be an object");
  FusedTile t = prefill_tile(size("block_m"), size("block_n"), size("warps"), size("stages"));
  const bool ws = flag("ws"), persistent = flag("persistent"), rows = flag("row_boxes");
  if (flag("decode")) {  // its block fields are the decode kernel's own, whatever the file says
    int splits = 0;
    if (auto it = j.find("splits"); it != j.end()) {
      if (!it->is_number_integer()) fail("splits", "must be an integer");
      if (it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > (1 << 20)) fail("splits", "must be 0 or more");
      splits = it->get<int>();
    }
    return decode_tile(splits, ws, t.block_n, rows);  // earlier caches: 64-key tiles without row_boxes
  }
  t.family = !ws ? TileFamily::prefill : persistent ? TileFamily::prefill_wsp : TileFamily::prefill_ws;
  return t;
}

}  // namespace ab
