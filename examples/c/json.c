/* See json.h. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Parser                                                               */

typedef struct {
  const char *p;
  const char *end;
  const char *start;
  char *err;
  size_t err_size;
  bool failed;
} parser;

static void fail(parser *ps, const char *what) {
  if (ps->failed) return;
  ps->failed = true;
  if (ps->err && ps->err_size > 0)
    snprintf(ps->err, ps->err_size, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->end &&
         (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static json *node(parser *ps, json_type type) {
  json *v = calloc(1, sizeof *v);
  if (!v) fail(ps, "out of memory");
  else v->type = type;
  return v;
}

static int hex4(const char *s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return -1;
  }
  return v;
}

static size_t utf8_put(char *out, uint32_t cp) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Parses a string at ps->p (on the opening quote) into a fresh buffer. The
 * decoded text is never longer than the escaped source (\uXXXX: 6 bytes
 * in, at most 3 out; a surrogate pair: 12 in, 4 out), so one allocation of
 * the source's length suffices. */
static char *parse_string(parser *ps, size_t *out_len) {
  ps->p++; /* opening quote */
  const char *q = ps->p;
  while (q < ps->end && *q != '"') {
    if (*q == '\\') {
      if (ps->end - q < 2) break;
      q++;
    }
    q++;
  }
  if (q >= ps->end) {
    fail(ps, "unterminated string");
    return NULL;
  }
  char *out = malloc((size_t)(q - ps->p) + 1);
  if (!out) {
    fail(ps, "out of memory");
    return NULL;
  }
  size_t n = 0;
  while (ps->p < ps->end && *ps->p != '"') {
    unsigned char c = (unsigned char)*ps->p;
    if (c < 0x20) {
      fail(ps, "control character in string");
      free(out);
      return NULL;
    }
    if (c != '\\') {
      out[n++] = (char)c;
      ps->p++;
      continue;
    }
    ps->p++;
    if (ps->p >= ps->end) break;
    char e = *ps->p++;
    switch (e) {
      case '"': out[n++] = '"'; break;
      case '\\': out[n++] = '\\'; break;
      case '/': out[n++] = '/'; break;
      case 'b': out[n++] = '\b'; break;
      case 'f': out[n++] = '\f'; break;
      case 'n': out[n++] = '\n'; break;
      case 'r': out[n++] = '\r'; break;
      case 't': out[n++] = '\t'; break;
      case 'u': {
        int hi = ps->end - ps->p >= 4 ? hex4(ps->p) : -1;
        if (hi < 0) {
          fail(ps, "bad \\u escape");
          free(out);
          return NULL;
        }
        ps->p += 4;
        uint32_t cp = (uint32_t)hi;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          int lo = -1;
          if (ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u')
            lo = hex4(ps->p + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            ps->p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
          } else {
            cp = 0xFFFD; /* lone high surrogate */
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD; /* lone low surrogate */
        }
        n += utf8_put(out + n, cp);
        break;
      }
      default:
        fail(ps, "bad escape in string");
        free(out);
        return NULL;
    }
  }
  if (ps->p >= ps->end) {
    fail(ps, "unterminated string");
    free(out);
    return NULL;
  }
  ps->p++; /* closing quote */
  out[n] = '\0';
  *out_len = n;
  return out;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static json *parse_number(parser *ps) {
  const char *s = ps->p;
  const char *p = s;
  if (p < ps->end && *p == '-') p++;
  if (p < ps->end && *p == '0') {
    p++;
  } else if (p < ps->end && *p >= '1' && *p <= '9') {
    while (p < ps->end && is_digit(*p)) p++;
  } else {
    fail(ps, "bad number");
    return NULL;
  }
  if (p < ps->end && *p == '.') {
    p++;
    if (p >= ps->end || !is_digit(*p)) {
      fail(ps, "bad number");
      return NULL;
    }
    while (p < ps->end && is_digit(*p)) p++;
  }
  if (p < ps->end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < ps->end && (*p == '+' || *p == '-')) p++;
    if (p >= ps->end || !is_digit(*p)) {
      fail(ps, "bad number");
      return NULL;
    }
    while (p < ps->end && is_digit(*p)) p++;
  }
  /* strtod needs a terminated copy: the input is not NUL-terminated. */
  char buf[64];
  size_t n = (size_t)(p - s);
  char *copy = n < sizeof buf ? buf : malloc(n + 1);
  if (!copy) {
    fail(ps, "out of memory");
    return NULL;
  }
  memcpy(copy, s, n);
  copy[n] = '\0';
  json *v = node(ps, JSON_NUMBER);
  if (v) v->number = strtod(copy, NULL);
  if (copy != buf) free(copy);
  ps->p = p;
  return v;
}

static bool literal(parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
    ps->p += n;
    return true;
  }
  fail(ps, "unexpected character");
  return false;
}

/* Appends to a growing array of items (and keys, for objects). */
static bool push_item(parser *ps, json *parent, size_t *cap, json *item, char *key,
                      size_t key_len) {
  if (parent->len == *cap) {
    size_t ncap = *cap ? *cap * 2 : 4;
    json **items = realloc(parent->items, ncap * sizeof *items);
    if (!items) goto oom;
    parent->items = items;
    if (parent->type == JSON_OBJECT) {
      char **keys = realloc(parent->keys, ncap * sizeof *keys);
      if (!keys) goto oom;
      parent->keys = keys;
      size_t *lens = realloc(parent->key_lens, ncap * sizeof *lens);
      if (!lens) goto oom;
      parent->key_lens = lens;
    }
    *cap = ncap;
  }
  parent->items[parent->len] = item;
  if (parent->type == JSON_OBJECT) {
    parent->keys[parent->len] = key;
    parent->key_lens[parent->len] = key_len;
  }
  parent->len++;
  return true;
oom:
  fail(ps, "out of memory");
  json_free(item);
  free(key);
  return false;
}

static json *parse_value(parser *ps, int depth);

static json *parse_container(parser *ps, int depth, bool object) {
  char close = object ? '}' : ']';
  json *v = node(ps, object ? JSON_OBJECT : JSON_ARRAY);
  if (!v) return NULL;
  size_t cap = 0;
  ps->p++; /* [ or { */
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    return v;
  }
  for (;;) {
    char *key = NULL;
    size_t key_len = 0;
    skip_ws(ps);
    if (object) {
      if (ps->p >= ps->end || *ps->p != '"') {
        fail(ps, "expected a member name");
        break;
      }
      key = parse_string(ps, &key_len);
      if (!key) break;
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != ':') {
        fail(ps, "expected ':'");
        free(key);
        break;
      }
      ps->p++;
    }
    json *item = parse_value(ps, depth + 1);
    if (!item) {
      free(key);
      break;
    }
    if (!push_item(ps, v, &cap, item, key, key_len)) break;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) {
      ps->p++;
      return v;
    }
    fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    break;
  }
  json_free(v);
  return NULL;
}

static json *parse_value(parser *ps, int depth) {
  if (depth > JSON_MAX_DEPTH) {
    fail(ps, "nested too deeply");
    return NULL;
  }
  skip_ws(ps);
  if (ps->p >= ps->end) {
    fail(ps, "unexpected end of input");
    return NULL;
  }
  json *v;
  switch (*ps->p) {
    case '{': return parse_container(ps, depth, true);
    case '[': return parse_container(ps, depth, false);
    case '"': {
      size_t n = 0;
      char *s = parse_string(ps, &n);
      if (!s) return NULL;
      v = node(ps, JSON_STRING);
      if (!v) {
        free(s);
        return NULL;
      }
      v->str = s;
      v->len = n;
      return v;
    }
    case 't':
    case 'f': {
      bool b = *ps->p == 't';
      if (!literal(ps, b ? "true" : "false")) return NULL;
      v = node(ps, JSON_BOOL);
      if (v) v->boolean = b;
      return v;
    }
    case 'n':
      if (!literal(ps, "null")) return NULL;
      return node(ps, JSON_NULL);
    default:
      return parse_number(ps);
  }
}

json *json_parse(const char *text, size_t len, char *err, size_t err_size) {
  if (err && err_size) err[0] = '\0';
  parser ps = {text, text + len, text, err, err_size, false};
  if (!text) {
    fail(&ps, "no input");
    return NULL;
  }
  json *v = parse_value(&ps, 0);
  if (!v) return NULL;
  skip_ws(&ps);
  if (ps.p != ps.end) {
    fail(&ps, "trailing characters");
    json_free(v);
    return NULL;
  }
  return v;
}

void json_free(json *v) {
  if (!v) return;
  for (size_t i = 0; i < v->len && v->items; i++) {
    json_free(v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->key_lens);
  free(v->str);
  free(v);
}

const json *json_get(const json *obj, const char *key) {
  if (!obj || obj->type != JSON_OBJECT || !key) return NULL;
  size_t n = strlen(key);
  for (size_t i = obj->len; i-- > 0;) {
    if (obj->key_lens[i] == n && memcmp(obj->keys[i], key, n) == 0) return obj->items[i];
  }
  return NULL;
}

const json *json_path(const json *v, ...) {
  va_list ap;
  va_start(ap, v);
  const char *key;
  while (v && (key = va_arg(ap, const char *)) != NULL) v = json_get(v, key);
  va_end(ap);
  return v;
}

const json *json_at(const json *arr, size_t i) {
  if (!arr || arr->type != JSON_ARRAY || i >= arr->len) return NULL;
  return arr->items[i];
}

const char *json_string(const json *v, size_t *len) {
  if (!v || v->type != JSON_STRING) return NULL;
  if (len) *len = v->len;
  return v->str;
}

/* ------------------------------------------------------------------ */
/* Writer                                                               */

void jb_init(jbuf *b) { memset(b, 0, sizeof *b); }

void jb_free(jbuf *b) {
  free(b->data);
  jb_init(b);
}

static bool reserve(jbuf *b, size_t extra) {
  if (b->oom) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) {
    if (cap > SIZE_MAX / 2) {
      b->oom = true;
      return false;
    }
    cap *= 2;
  }
  char *data = realloc(b->data, cap);
  if (!data) {
    b->oom = true;
    return false;
  }
  b->data = data;
  b->cap = cap;
  return true;
}

void jb_raw(jbuf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void jb_lit(jbuf *b, const char *s) { jb_raw(b, s, strlen(s)); }

void jb_str(jbuf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  jb_raw(b, "\"", 1);
  size_t run = 0; /* bytes copied as they are, flushed in one go */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = NULL;
    char u[6];
    switch (c) {
      case '"': esc = "\\\""; break;
      case '\\': esc = "\\\\"; break;
      case '\n': esc = "\\n"; break;
      case '\r': esc = "\\r"; break;
      case '\t': esc = "\\t"; break;
      case '\b': esc = "\\b"; break;
      case '\f': esc = "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          u[0] = '\\'; u[1] = 'u'; u[2] = '0'; u[3] = '0';
          u[4] = hex[c >> 4]; u[5] = hex[c & 0xF];
          jb_raw(b, s + i - run, run);
          run = 0;
          jb_raw(b, u, 6);
          continue;
        }
        run++;
        continue;
    }
    jb_raw(b, s + i - run, run);
    run = 0;
    jb_lit(b, esc);
  }
  jb_raw(b, s + n - run, run);
  jb_raw(b, "\"", 1);
}

void jb_cstr(jbuf *b, const char *s) { jb_str(b, s, strlen(s)); }

void jb_uint(jbuf *b, unsigned long long v) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%llu", v);
  jb_raw(b, buf, (size_t)n);
}

void jb_int(jbuf *b, long long v) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%lld", v);
  jb_raw(b, buf, (size_t)n);
}

void jb_json(jbuf *b, const json *v) {
  if (!v) {
    jb_lit(b, "null");
    return;
  }
  switch (v->type) {
    case JSON_NULL: jb_lit(b, "null"); break;
    case JSON_BOOL: jb_lit(b, v->boolean ? "true" : "false"); break;
    case JSON_NUMBER: {
      char buf[40];
      if (!isfinite(v->number)) {
        jb_lit(b, "null");
        break;
      }
      int n = snprintf(buf, sizeof buf, "%.17g", v->number);
      jb_raw(b, buf, (size_t)n);
      break;
    }
    case JSON_STRING: jb_str(b, v->str, v->len); break;
    case JSON_ARRAY:
    case JSON_OBJECT:
      jb_raw(b, v->type == JSON_ARRAY ? "[" : "{", 1);
      for (size_t i = 0; i < v->len; i++) {
        if (i) jb_raw(b, ",", 1);
        if (v->type == JSON_OBJECT) {
          jb_str(b, v->keys[i], v->key_lens[i]);
          jb_raw(b, ":", 1);
        }
        jb_json(b, v->items[i]);
      }
      jb_raw(b, v->type == JSON_ARRAY ? "]" : "}", 1);
      break;
  }
}
