/*
 * Shared pieces of the C bench programs (see bench/README.md): the payloads,
 * byte for byte those of bench/rust/src/lib.rs, and small helpers.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acp.h"
#include "json.h"

#define CHUNK_LEN 100
#define READ_LEN 1024
#define WRITE_PATH "/bench/write.txt"
#define READ_PREFIX "/bench/read/"
#define RESOURCE_URI "file:///bench/resource.txt"

static const char UNIT[] = "\"q\" \\ "; /* 6 bytes */

/* `len` bytes of 64-byte lines (63 bytes of UNITs, then '\n'). */
static inline char *text_of(size_t len) {
  char *s = malloc(len + 1);
  if (!s) abort();
  for (size_t i = 0; i < len; i++) {
    size_t col = i % 64;
    s[i] = col == 63 ? '\n' : UNIT[col % 6];
  }
  s[len] = 0;
  return s;
}

/* The 100-byte text of chunk i into out[CHUNK_LEN + 1]. */
static inline void chunk_text(unsigned long long i, char *out) {
  char head[24];
  snprintf(head, sizeof head, "%010llu ", i % 10000000000ULL);
  memcpy(out, head, 11);
  for (size_t j = 0; j < 89; j++) out[11 + j] = UNIT[j % 6];
  out[CHUNK_LEN] = 0;
}

/* The index of a chunk text, or -1. */
static inline long long chunk_index(const char *text, size_t len) {
  if (len != CHUNK_LEN) return -1;
  long long v = 0;
  for (int i = 0; i < 10; i++) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline acp_str S(const char *s) {
  acp_str r = {s, strlen(s)};
  return r;
}

static inline acp_str SN(const char *s, size_t n) {
  acp_str r = {s, n};
  return r;
}

/* The first text block of a prompt's params, or NULL. */
static inline const char *first_text(const json *params, size_t *len) {
  const json *blocks = json_get(params, "prompt");
  for (size_t i = 0; blocks && i < blocks->len; i++) {
    const json *b = json_at(blocks, i);
    size_t tl = 0;
    const char *type = json_string(json_get(b, "type"), &tl);
    if (type && strcmp(type, "text") == 0) return json_string(json_get(b, "text"), len);
  }
  return NULL;
}

#endif
