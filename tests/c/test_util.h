/*
 * The C ABI tests' tiny harness: CHECK macros, string helpers, poll-mode
 * event helpers, connection builders (a spawned libacp-interop-agent, a C
 * client and a C agent on two pipes or a socketpair), and a thread-safe
 * event box for callback mode. C11, POSIX.
 */
#ifndef ACP_TEST_UTIL_H
#define ACP_TEST_UTIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "acp.h"

/* ---- assertions: a failed check prints where and why and exits 1 ---- */

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,       \
              #cond);                                                        \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#define CHECK_MSG(cond, ...)                                                 \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__,       \
              #cond);                                                        \
      fprintf(stderr, __VA_ARGS__);                                          \
      fputc('\n', stderr);                                                   \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

/* `expr` returns an acp_status that must equal `want`. */
#define CHECK_STATUS(expr, want)                                             \
  do {                                                                       \
    int got_ = (int)(expr);                                                  \
    int want_ = (int)(want);                                                 \
    if (got_ != want_) {                                                     \
      fprintf(stderr, "%s:%d: %s: got status %d (%s), want %d (%s)\n",       \
              __FILE__, __LINE__, #expr, got_, acp_status_str(got_), want_,  \
              acp_status_str(want_));                                        \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, ACP_OK)

/* Substring `needle` occurs in the (ptr, len) text. */
#define CHECK_CONTAINS(ptr, len, needle)                                     \
  do {                                                                       \
    if (!tu_contains((ptr), (len), (needle))) {                              \
      fprintf(stderr, "%s:%d: `%s` not found in: %.*s\n", __FILE__,          \
              __LINE__, (needle), (int)(len), (ptr) ? (ptr) : "(null)");     \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

/* ---- strings ---- */

/* An acp_str for a string literal. */
#define S(lit) ((acp_str){(lit), sizeof(lit) - 1})
/* An acp_str for a NUL-terminated string. */
acp_str tu_str(const char *s);
bool tu_contains(const char *hay, size_t len, const char *needle);
/* A malloc'ed printf. */
char *tu_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The string value of `"key":"..."` in JSON text (first occurrence, no
 * escapes), malloc'ed, or NULL. Good enough for ids in tests. */
char *tu_json_string(const char *json, size_t len, const char *key);

/* ---- time ---- */

/* `ms` times ACP_TEST_TIME_SCALE (the valgrind pass sets it). */
int tu_ms(int ms);
void tu_sleep_ms(int ms);
int64_t tu_now_ms(void);

/* ---- paths of the test peers (from the environment, set by CMake) ---- */

const char *tu_interop_agent(void);
const char *tu_interop_client(void);

/* ---- events, poll mode ---- */

/* The next event within `timeout_ms` (scaled), waiting in poll(2) on the
 * wakeup fd; NULL on timeout. */
acp_event *tu_next_event(acp_connection *c, int timeout_ms);
/* The next event that is not a LOG event (LOG events are freed). Fails the
 * test on timeout. */
acp_event *tu_next_non_log(acp_connection *c, int timeout_ms);
/* Waits for the next RESULT event; notifications and logs before it are
 * freed (counted in *notifications if non-NULL); any other kind fails. */
acp_event *tu_wait_result(acp_connection *c, int timeout_ms,
                          int *notifications);
/* Request + wait for its result; the call must succeed; returns the result
 * event (owned). */
acp_event *tu_call_ok(acp_connection *c, const char *method,
                      const char *params);
/* Drains every event until ACP_EVENT_CLOSED (which must come within
 * timeout); returns how many RESULT events with ACP_ERR_CLOSED came. */
int tu_drain_until_closed(acp_connection *c, int timeout_ms);
/* The result text of a RESULT event (fails if the call failed). */
void tu_result_text(const acp_event *ev, const char **p, size_t *n);
/* Prints an error's message (for diagnostics). */
const char *tu_error_text(const acp_error *e, size_t *n);

/* ---- connections ---- */

/* Spawns libacp-interop-agent with `options` (may be NULL). */
acp_connection *tu_spawn_agent(const acp_options *options);
/* initialize + session/new with `cwd` (NULL: /tmp); returns the session id
 * (malloc'ed). */
char *tu_init_session(acp_connection *c, const char *cwd);
/* A client and an agent connection, each owning one end of two pipes
 * (or a socketpair when `socket` is true). Options may be NULL. */
void tu_pair(const acp_options *client_opts, const acp_options *agent_opts,
             bool socket, acp_connection **client, acp_connection **agent);
/* The next non-LOG event of `c`, which must be a request for `method`:
 * its request, taken (owned). */
acp_request *tu_expect_request(acp_connection *c, const char *method);
/* Answers `req` with the result `json` (must be accepted) and frees it. */
void tu_answer(acp_request *req, const char *json);
/* Sends a request, which must be accepted (its result comes as an event). */
void tu_request(acp_connection *c, const char *method, const char *params,
                void *data, acp_call **call);
/* Closes the client of a tu_pair, drains both ends until ACP_EVENT_CLOSED
 * (the agent sees the end of its input), frees both. */
void tu_close_pair(acp_connection *client, acp_connection *agent);
/* A fresh temporary directory (malloc'ed, canonical path). */
char *tu_tempdir(void);
void tu_rmtree(const char *dir);

/* ---- callback mode: a box the dispatch thread fills and the test drains
 * ---- */

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  acp_event *items[256];
  size_t head, count;
} tu_box;

void tu_box_init(tu_box *b);
void tu_box_destroy(tu_box *b);
void tu_box_put(tu_box *b, acp_event *ev);
/* NULL on timeout (scaled). */
acp_event *tu_box_take(tu_box *b, int timeout_ms);

/* ---- wire trace: counts frames and keeps the outgoing ones ---- */

typedef struct {
  pthread_mutex_t mu;
  atomic_int outgoing, incoming;
  char *sent; /* every outgoing frame, each followed by '\n' */
  size_t sent_len;
} tu_trace;

void tu_trace_init(tu_trace *t);
void tu_trace_destroy(tu_trace *t);
/* Installs the trace callback on `o`. */
void tu_trace_install(tu_trace *t, acp_options *o);
/* Whether some outgoing frame contains `needle`. */
bool tu_trace_sent(tu_trace *t, const char *needle);

#endif
