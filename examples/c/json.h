/*
 * Just enough JSON for an ACP agent in C: a small, strict parser into a
 * tree (to read request params and call results) and a growing buffer with
 * a string escaper (to build params and results). No third-party library.
 *
 * Parser: RFC 8259 strict (no comments, no trailing commas, no leading
 * zeros, no bare control characters in strings), nesting limited to
 * JSON_MAX_DEPTH, strings decoded to UTF-8 (\uXXXX surrogate pairs joined,
 * a lone surrogate becomes U+FFFD) and NUL-terminated, with their length
 * kept for text that contains U+0000. Input bytes >= 0x80 are copied as
 * they are: libacp only hands out valid UTF-8.
 */
#ifndef ACP_EXAMPLE_JSON_H
#define ACP_EXAMPLE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 128

typedef enum {
  JSON_NULL,
  JSON_BOOL,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT,
} json_type;

typedef struct json json;
struct json {
  json_type type;
  bool boolean;   /* JSON_BOOL */
  double number;  /* JSON_NUMBER */
  char *str;      /* JSON_STRING: decoded, NUL-terminated */
  size_t len;     /* JSON_STRING: bytes; JSON_ARRAY/JSON_OBJECT: items */
  json **items;   /* JSON_ARRAY/JSON_OBJECT: values */
  char **keys;    /* JSON_OBJECT: decoded keys, NUL-terminated */
  size_t *key_lens;
};

/* Parses `len` bytes. NULL on error (with a message in `err`, if given). */
json *json_parse(const char *text, size_t len, char *err, size_t err_size);
void json_free(json *v);

/* The member `key` of an object (the last one if repeated), or NULL when
 * `obj` is NULL, not an object, or has no such member. */
const json *json_get(const json *obj, const char *key);
/* `obj.a.b...`: json_path(v, "update", "sessionUpdate", NULL). */
const json *json_path(const json *v, ...);
/* The i-th item of an array, or NULL. */
const json *json_at(const json *arr, size_t i);
/* The string's text (and length), or NULL when `v` is not a string. */
const char *json_string(const json *v, size_t *len);

/* A growing byte buffer for building JSON text. After an allocation
 * failure it stays failed (`oom`) and keeps nothing new. */
typedef struct {
  char *data;
  size_t len;
  size_t cap;
  bool oom;
} jbuf;

void jb_init(jbuf *b);
void jb_free(jbuf *b);
void jb_raw(jbuf *b, const char *s, size_t n);   /* bytes as they are */
void jb_lit(jbuf *b, const char *s);             /* a C string as it is */
void jb_str(jbuf *b, const char *s, size_t n);   /* a quoted, escaped JSON string */
void jb_cstr(jbuf *b, const char *s);            /* the same, from a C string */
void jb_uint(jbuf *b, unsigned long long v);
void jb_int(jbuf *b, long long v);
/* Writes `v` back as JSON text (numbers with %.17g). */
void jb_json(jbuf *b, const json *v);

#endif
