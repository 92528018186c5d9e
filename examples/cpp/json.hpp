// Just enough JSON for an ACP client plugin: a strict parser into a small
// value tree (to read notifications, requests and results) and a string
// quoter (to build params). Header-only, C++17, no third-party library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace json {

class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Type { Null, Bool, Number, String, Array, Object };

class Value {
 public:
  Type type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string string;               // Type::String
  std::vector<Value> items;         // Type::Array, Type::Object (values)
  std::vector<std::string> keys;    // Type::Object

  bool is_null() const { return type == Type::Null; }
  bool is_string() const { return type == Type::String; }
  bool is_object() const { return type == Type::Object; }
  bool is_array() const { return type == Type::Array; }

  // A member (the last one if repeated); a null value when absent or when
  // this is not an object, so lookups chain: v["update"]["content"]["text"].
  const Value& operator[](std::string_view key) const {
    if (type == Type::Object)
      for (size_t i = keys.size(); i-- > 0;)
        if (keys[i] == key) return items[i];
    return null_value();
  }
  const Value& operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  // The i-th item of an array; a null value when out of range. (A method,
  // not operator[], so that v[0] is not ambiguous with a key.)
  const Value& at(size_t i) const {
    if (type == Type::Array && i < items.size()) return items[i];
    return null_value();
  }

  size_t size() const { return type == Type::Array || type == Type::Object ? items.size() : 0; }

  // The text of a string, or `fallback` for anything else.
  std::string str(std::string_view fallback = {}) const {
    return type == Type::String ? string : std::string(fallback);
  }

  static const Value& null_value() {
    static const Value null;
    return null;
  }
};

namespace detail {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Value parse() {
    Value v = value(0);
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 128;
  std::string_view s_;
  size_t i_ = 0;

  [[noreturn]] void fail(const char* what) const {
    throw ParseError(std::string(what) + " at byte " + std::to_string(i_));
  }

  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      i_++;
  }

  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      i_++;
      return true;
    }
    return false;
  }

  void literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) fail("unexpected character");
    i_ += word.size();
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    ws();
    if (i_ >= s_.size()) fail("unexpected end of input");
    Value v;
    switch (s_[i_]) {
      case '{': {
        v.type = Type::Object;
        i_++;
        ws();
        if (eat('}')) return v;
        for (;;) {
          ws();
          if (i_ >= s_.size() || s_[i_] != '"') fail("expected a member name");
          v.keys.push_back(string());
          ws();
          if (!eat(':')) fail("expected ':'");
          v.items.push_back(value(depth + 1));
          ws();
          if (eat(',')) continue;
          if (eat('}')) return v;
          fail("expected ',' or '}'");
        }
      }
      case '[': {
        v.type = Type::Array;
        i_++;
        ws();
        if (eat(']')) return v;
        for (;;) {
          v.items.push_back(value(depth + 1));
          ws();
          if (eat(',')) continue;
          if (eat(']')) return v;
          fail("expected ',' or ']'");
        }
      }
      case '"':
        v.type = Type::String;
        v.string = string();
        return v;
      case 't':
        literal("true");
        v.type = Type::Bool;
        v.boolean = true;
        return v;
      case 'f':
        literal("false");
        v.type = Type::Bool;
        return v;
      case 'n':
        literal("null");
        return v;
      default:
        v.type = Type::Number;
        v.number = number();
        return v;
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  double number() {
    size_t start = i_;
    eat('-');
    if (eat('0')) {
    } else if (i_ < s_.size() && s_[i_] >= '1' && s_[i_] <= '9') {
      while (i_ < s_.size() && digit(s_[i_])) i_++;
    } else {
      fail("bad number");
    }
    if (eat('.')) {
      if (i_ >= s_.size() || !digit(s_[i_])) fail("bad number");
      while (i_ < s_.size() && digit(s_[i_])) i_++;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      i_++;
      if (!eat('+')) eat('-');
      if (i_ >= s_.size() || !digit(s_[i_])) fail("bad number");
      while (i_ < s_.size() && digit(s_[i_])) i_++;
    }
    return std::strtod(std::string(s_.substr(start, i_ - start)).c_str(), nullptr);
  }

  int hex4() {
    if (s_.size() - i_ < 4) fail("bad \\u escape");
    int v = 0;
    for (int k = 0; k < 4; k++) {
      char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad \\u escape");
    }
    return v;
  }

  static void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // On the opening quote.
  std::string string() {
    i_++;
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated string");
      switch (s_[i_++]) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = static_cast<uint32_t>(hex4());
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            size_t save = i_;
            if (s_.size() - i_ >= 6 && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
              i_ += 2;
              uint32_t lo = static_cast<uint32_t>(hex4());
              if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              } else {
                i_ = save;
                cp = 0xFFFD;
              }
            } else {
              cp = 0xFFFD;
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
          }
          utf8(out, cp);
          break;
        }
        default:
          fail("bad escape in string");
      }
    }
  }
};

}  // namespace detail

inline Value parse(std::string_view text) { return detail::Parser(text).parse(); }

// `s` as a quoted JSON string. `s` must be UTF-8 (libacp rejects anything
// else with ACP_ERR_INVALID_UTF8).
inline std::string quote(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xF];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace json
