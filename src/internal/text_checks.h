// Checks of strings and JSON before they reach PostgreSQL, or nlohmann's recursive copy and
// dump: text PostgreSQL cannot hold (a NUL byte, invalid UTF-8), JSON that jsonb cannot store
// or that JSON cannot represent (NaN and infinities, NUL characters, invalid UTF-8, nesting
// deeper than kMaxJsonDepth), UUID syntax as PostgreSQL reads it, and a printable, bounded
// rendering of hostile values for error messages (docs/errors.md, "Hostile input").
#ifndef PGFLOW_INTERNAL_TEXT_CHECKS_H_
#define PGFLOW_INTERNAL_TEXT_CHECKS_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "internal/strings.h"
#include "nlohmann/json.hpp"

namespace pgflow::internal {

// How deeply the JSON this library sends may nest (arrays and objects; a scalar is level 0).
// Far below what PostgreSQL parses at its default max_stack_depth (about 10 000 levels) and
// what nlohmann copies and dumps without exhausting a thread's stack (its copy and dump
// recurse once per level; its parser and destructor do not).
inline constexpr int kMaxJsonDepth = 1000;

// The length of the well-formed UTF-8 sequence that starts at s[i] (1 for ASCII), as PostgreSQL
// defines it (no overlong forms, no surrogates, nothing above U+10FFFF), or 0 when the bytes
// there are not one.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char c = p[i];
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size() || p[i + 1] < lo || p[i + 1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (p[i + k] < 0x80 || p[i + k] > 0xBF) return 0;
  }
  return len;
}

// The byte offset of the first byte that does not start a well-formed UTF-8 sequence, or npos.
inline std::size_t invalid_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

// A byte as two lowercase hex digits ("ff").
inline std::string hex_byte(unsigned char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[b >> 4], kHex[b & 15]};
}

// Why PostgreSQL cannot take `s` as text ("contains a NUL byte at byte 3", "is not valid UTF-8
// (byte 0xff at byte 3)"), or nullopt.
inline std::optional<std::string> text_problem(std::string_view s) {
  if (const std::size_t nul = s.find('\0'); nul != std::string_view::npos) {
    return absl::StrCat("contains a NUL byte at byte ", nul);
  }
  if (const std::size_t bad = invalid_utf8_at(s); bad != std::string_view::npos) {
    return absl::StrCat("is not valid UTF-8 (byte 0x", hex_byte(static_cast<unsigned char>(s[bad])),
                        " at byte ", bad, ")");
  }
  return std::nullopt;
}

// True for ASCII control characters (below 0x20, and DEL).
inline bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// Appends `text` for a log line or a terminal: control characters as \n, \r, \t or \xNN,
// bytes that are not well-formed UTF-8 as \xNN (and, when `quoted`, '"' and '\' with a
// backslash); everything else as it is. So no value can move a cursor, clear a screen or forge
// a line.
inline void append_escaped(std::string& out, std::string_view text, bool quoted) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const std::size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        out.append("\\x").append(hex_byte(static_cast<unsigned char>(c)));
      } else {
        out.append(text.substr(i, len));
        i += len - 1;
      }
      continue;
    }
    switch (c) {
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '"':
      case '\\':
        if (quoted) out.push_back('\\');
        out.push_back(c);
        break;
      default:
        if (is_control(c)) {
          out.append("\\x").append(hex_byte(static_cast<unsigned char>(c)));
        } else {
          out.push_back(c);
        }
    }
  }
}

// `text` as append_escaped writes it, unquoted: safe to print on an operator's terminal; at most
// `max_bytes` of it, then "...".
inline std::string escaped(std::string_view text, std::size_t max_bytes = std::string_view::npos) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  append_escaped(out, text.substr(0, max_bytes), /*quoted=*/false);
  if (text.size() > max_bytes) out += "...";
  return out;
}

// `s` in double quotes for a message: printable ASCII and well-formed UTF-8 as they are, `"`
// and `\` escaped, every other byte as \xNN; at most `max_bytes` of `s`, then "..." and its
// length. Safe for logs whatever `s` holds.
inline std::string printable(std::string_view s, std::size_t max_bytes = 64) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < s.size() && i < max_bytes) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t len = c >= 0x80 ? utf8_sequence_length(s, i) : 0; len > 0) {
      out.append(s.substr(i, len));  // one whole, well-formed sequence
      i += len;
    } else {
      out += "\\x" + hex_byte(c);
      ++i;
    }
  }
  out += '"';
  if (i < s.size()) absl::StrAppend(&out, "... (", s.size(), " bytes)");
  return out;
}

// True when PostgreSQL's uuid type accepts `s`: 32 hex digits, optionally with a hyphen after
// any group of four (but not after the last), optionally in braces; nothing else, no spaces.
inline bool is_uuid(std::string_view s) {
  auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  std::size_t i = 0;
  const bool braces = !s.empty() && s[0] == '{';
  if (braces) ++i;
  for (int byte = 0; byte < 16; ++byte) {
    if (i + 1 >= s.size() || !hex(s[i]) || !hex(s[i + 1])) return false;
    i += 2;
    if (i < s.size() && s[i] == '-' && byte % 2 == 1 && byte < 15) ++i;
  }
  if (braces) {
    if (i >= s.size() || s[i] != '}') return false;
    ++i;
  }
  return i == s.size();
}

// Appends "/" and `token` escaped for a JSON pointer (RFC 6901: "~" as "~0", "/" as "~1").
inline void append_pointer_token(std::string& path, std::string_view token) {
  path += '/';
  for (char c : token) {
    if (c == '~') {
      path += "~0";
    } else if (c == '/') {
      path += "~1";
    } else {
      path += c;
    }
  }
}

// What keeps JSON from being stored as jsonb. `text` continues "the input ..." / "the output
// ...", e.g. "holds NaN at /a/0, which JSON cannot represent"; `sqlstate` is what PostgreSQL
// says of the same value when it can be sent at all (22P05 for \u0000, 22021 for bytes that
// are not UTF-8), else empty.
struct JsonProblem {
  std::string text;
  std::string_view sqlstate;
};

// What keeps `j` from being stored as jsonb, found without recursion: nesting deeper than
// kMaxJsonDepth, NaN or an infinity (JSON has neither; nlohmann would write null), a string or
// key that is not valid UTF-8 or holds a NUL character (jsonb refuses \u0000), a discarded
// value; nullopt when `j` can be stored.
inline std::optional<JsonProblem> json_problem(const nlohmann::json& j) {
  struct Frame {
    const nlohmann::json* node;
    nlohmann::json::const_iterator it;
    std::size_t index;
  };
  std::vector<Frame> stack;
  // The JSON pointer of the value being looked at (the current child of every open frame).
  auto path = [&stack]() {
    std::string p;
    for (const Frame& f : stack) {
      append_pointer_token(p, f.node->is_object() ? f.it.key() : std::to_string(f.index));
    }
    return p;
  };
  auto where = [&path]() {
    const std::string p = path();
    return p.empty() ? std::string("at the top level") : absl::StrCat("at ", printable(p, 96));
  };
  auto string_problem = [&where](std::string_view s,
                                 std::string_view what) -> std::optional<JsonProblem> {
    if (s.find('\0') != std::string_view::npos) {
      return JsonProblem{
          absl::StrCat("holds a ", absl_view(what), " with a NUL character (\\u0000) ", where(),
                       ", which PostgreSQL's jsonb cannot store"),
          "22P05"};
    }
    if (std::optional<std::string> problem = text_problem(s)) {
      return JsonProblem{
          absl::StrCat("holds a ", absl_view(what), " that ", *problem, " ", where()), "22021"};
    }
    return std::nullopt;
  };
  // Checks one value (its children come later); pushes containers.
  auto visit = [&](const nlohmann::json& v) -> std::optional<JsonProblem> {
    switch (v.type()) {
      case nlohmann::json::value_t::number_float: {
        const double d = v.get<double>();
        if (std::isnan(d))
          return JsonProblem{absl::StrCat("holds NaN ", where(), ", which JSON cannot represent"),
                             ""};
        if (std::isinf(d)) {
          return JsonProblem{absl::StrCat("holds ", d > 0 ? "Infinity " : "-Infinity ", where(),
                                          ", which JSON cannot represent"),
                             ""};
        }
        return std::nullopt;
      }
      case nlohmann::json::value_t::string:
        return string_problem(v.get_ref<const std::string&>(), "string");
      case nlohmann::json::value_t::discarded:
        return JsonProblem{absl::StrCat("holds a discarded value (a failed parse) ", where()), ""};
      case nlohmann::json::value_t::binary:
        // (dump() would write it as {"bytes": [...], "subtype": ...}: another value)
        return JsonProblem{absl::StrCat("holds a binary value ", where(),
                                        ", which JSON cannot represent (encode it, e.g. base64)"),
                           ""};
      case nlohmann::json::value_t::array:
      case nlohmann::json::value_t::object:
        if (static_cast<int>(stack.size()) >= kMaxJsonDepth) {
          return JsonProblem{
              absl::StrCat("is nested deeper than ", kMaxJsonDepth, " levels (", where(), ")"), ""};
        }
        stack.push_back(Frame{&v, v.cbegin(), 0});
        return std::nullopt;
      default:
        return std::nullopt;
    }
  };
  if (std::optional<JsonProblem> problem = visit(j)) return problem;
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.it == f.node->cend()) {
      stack.pop_back();
      if (!stack.empty()) {
        ++stack.back().it;
        ++stack.back().index;
      }
      continue;
    }
    if (f.node->is_object()) {
      if (std::optional<JsonProblem> problem = string_problem(f.it.key(), "key")) return problem;
    }
    const nlohmann::json& child = *f.it;
    const bool container = child.is_array() || child.is_object();
    if (std::optional<JsonProblem> problem = visit(child)) return problem;
    if (!container) {
      ++f.it;  // (f is still valid: visit pushed nothing)
      ++f.index;
    }
  }
  return std::nullopt;
}

}  // namespace pgflow::internal

#endif  // PGFLOW_INTERNAL_TEXT_CHECKS_H_
