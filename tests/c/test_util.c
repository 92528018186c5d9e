#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

acp_str tu_str(const char *s) { return (acp_str){s, s ? strlen(s) : 0}; }

bool tu_contains(const char *hay, size_t len, const char *needle) {
  size_t n = strlen(needle);
  if (!hay || n > len) return false;
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(hay + i, needle, n) == 0) return true;
  return false;
}

char *tu_fmt(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *out = NULL;
  int n = vasprintf(&out, fmt, ap);
  va_end(ap);
  CHECK(n >= 0 && out);
  return out;
}

char *tu_json_string(const char *json, size_t len, const char *key) {
  char *pat = tu_fmt("\"%s\":\"", key);
  size_t pn = strlen(pat);
  char *found = NULL;
  for (size_t i = 0; json && i + pn <= len; i++) {
    if (memcmp(json + i, pat, pn) == 0) {
      size_t start = i + pn, end = start;
      while (end < len && json[end] != '"') end++;
      found = strndup(json + start, end - start);
      break;
    }
  }
  free(pat);
  return found;
}

int tu_ms(int ms) {
  static int scale = 0;
  if (scale == 0) {
    const char *s = getenv("ACP_TEST_TIME_SCALE");
    scale = s && atoi(s) > 0 ? atoi(s) : 1;
  }
  return ms * scale;
}

void tu_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int64_t tu_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *env_path(const char *name) {
  const char *p = getenv(name);
  CHECK_MSG(p && *p, "%s is not set (run the tests through ctest)", name);
  return p;
}

const char *tu_interop_agent(void) { return env_path("ACP_INTEROP_AGENT"); }
const char *tu_interop_client(void) { return env_path("ACP_INTEROP_CLIENT"); }

acp_event *tu_next_event(acp_connection *c, int timeout_ms) {
  int fd = acp_connection_wakeup_fd(c);
  CHECK(fd >= 0);
  int64_t deadline = tu_now_ms() + tu_ms(timeout_ms);
  for (;;) {
    acp_event *ev = NULL;
    acp_status st = acp_connection_next_event(c, &ev);
    if (st == ACP_OK) {
      CHECK(ev != NULL);
      return ev;
    }
    CHECK_STATUS(st, ACP_ERR_EMPTY);
    int64_t left = deadline - tu_now_ms();
    if (left <= 0) return NULL;
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, (int)left);
    CHECK(r >= 0 || errno == EINTR);
  }
}

acp_event *tu_next_non_log(acp_connection *c, int timeout_ms) {
  for (;;) {
    acp_event *ev = tu_next_event(c, timeout_ms);
    CHECK_MSG(ev != NULL, "no event within %d ms", tu_ms(timeout_ms));
    if (acp_event_get_kind(ev) != ACP_EVENT_LOG) return ev;
    acp_event_free(ev);
  }
}

const char *tu_error_text(const acp_error *e, size_t *n) {
  const char *p = NULL;
  *n = 0;
  if (acp_error_message(e, &p, n) != ACP_OK) {
    *n = 7;
    return "(none)";
  }
  return p;
}

acp_event *tu_wait_result(acp_connection *c, int timeout_ms,
                          int *notifications) {
  for (;;) {
    acp_event *ev = tu_next_non_log(c, timeout_ms);
    int k = acp_event_get_kind(ev);
    if (k == ACP_EVENT_RESULT) return ev;
    CHECK_MSG(k == ACP_EVENT_NOTIFICATION,
              "expected a result or a notification, got event kind %d", k);
    if (notifications) (*notifications)++;
    acp_event_free(ev);
  }
}

void tu_result_text(const acp_event *ev, const char **p, size_t *n) {
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_RESULT);
  if (acp_event_result_status(ev) != ACP_OK) {
    size_t mn;
    const char *m = tu_error_text(acp_event_error(ev), &mn);
    CHECK_MSG(false, "the call failed: %s (code %lld): %.*s",
              acp_status_str(acp_event_result_status(ev)),
              (long long)acp_error_code(acp_event_error(ev)), (int)mn, m);
  }
  CHECK_OK(acp_event_result(ev, p, n));
  CHECK(*p != NULL);
}

acp_event *tu_call_ok(acp_connection *c, const char *method,
                      const char *params) {
  tu_request(c, method, params, NULL, NULL);
  acp_event *ev = tu_wait_result(c, 10000, NULL);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  return ev;
}

int tu_drain_until_closed(acp_connection *c, int timeout_ms) {
  int closed_results = 0;
  for (;;) {
    acp_event *ev = tu_next_event(c, timeout_ms);
    CHECK_MSG(ev != NULL, "no ACP_EVENT_CLOSED within %d ms",
              tu_ms(timeout_ms));
    int k = acp_event_get_kind(ev);
    if (k == ACP_EVENT_RESULT &&
        acp_event_result_status(ev) == ACP_ERR_CLOSED)
      closed_results++;
    acp_event_free(ev);
    if (k == ACP_EVENT_CLOSED) return closed_results;
  }
}

acp_connection *tu_spawn_agent(const acp_options *options) {
  acp_connection *c = NULL;
  acp_error *err = NULL;
  acp_status st = acp_connection_spawn_agent(
      options, tu_str(tu_interop_agent()), NULL, 0, NULL, 0, (acp_str){0}, &c,
      &err);
  if (st != ACP_OK) {
    size_t n;
    const char *m = tu_error_text(err, &n);
    CHECK_MSG(false, "spawn: %s: %.*s", acp_status_str(st), (int)n, m);
  }
  CHECK(c != NULL);
  return c;
}

char *tu_init_session(acp_connection *c, const char *cwd) {
  acp_event *ev = tu_call_ok(
      c, "initialize", "{\"protocolVersion\":1,\"clientCapabilities\":{}}");
  acp_event_free(ev);
  char *params = tu_fmt("{\"cwd\":\"%s\",\"mcpServers\":[]}", cwd ? cwd : "/tmp");
  ev = tu_call_ok(c, "session/new", params);
  free(params);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  char *id = tu_json_string(p, n, "sessionId");
  CHECK_MSG(id != NULL, "no sessionId in %.*s", (int)n, p);
  acp_event_free(ev);
  return id;
}

void tu_pair(const acp_options *client_opts, const acp_options *agent_opts,
             bool socket, acp_connection **client, acp_connection **agent) {
  int c_read, c_write, a_read, a_write;
  if (socket) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    c_read = sv[0];
    c_write = fcntl(sv[0], F_DUPFD_CLOEXEC, 0);
    a_read = sv[1];
    a_write = fcntl(sv[1], F_DUPFD_CLOEXEC, 0);
    CHECK(c_write >= 0 && a_write >= 0);
  } else {
    int to_agent[2], to_client[2];
    CHECK(pipe2(to_agent, O_CLOEXEC) == 0);
    CHECK(pipe2(to_client, O_CLOEXEC) == 0);
    c_read = to_client[0];
    c_write = to_agent[1];
    a_read = to_agent[0];
    a_write = to_client[1];
  }
  acp_error *err = NULL;
  CHECK_OK(acp_connection_from_fds(client_opts, ACP_ROLE_CLIENT, c_read,
                                   c_write, client, &err));
  CHECK_OK(acp_connection_from_fds(agent_opts, ACP_ROLE_AGENT, a_read, a_write,
                                   agent, &err));
}

acp_request *tu_expect_request(acp_connection *c, const char *method) {
  acp_event *ev = tu_next_non_log(c, 10000);
  CHECK_MSG(acp_event_get_kind(ev) == ACP_EVENT_REQUEST, "kind %d",
            acp_event_get_kind(ev));
  const char *p;
  size_t n;
  CHECK_OK(acp_event_method(ev, &p, &n));
  CHECK_MSG(n == strlen(method) && memcmp(p, method, n) == 0,
            "got request %.*s, want %s", (int)n, p, method);
  acp_request *req = NULL;
  CHECK_OK(acp_event_take_request(ev, &req));
  CHECK(req != NULL);
  acp_event_free(ev);
  return req;
}

void tu_answer(acp_request *req, const char *json) {
  acp_error *err = NULL;
  acp_status st = acp_request_respond(req, acp_str_from_cstr(json), &err);
  if (st != ACP_OK) {
    size_t n;
    const char *m = tu_error_text(err, &n);
    CHECK_MSG(false, "respond: %s: %.*s", acp_status_str(st), (int)n, m);
  }
  acp_request_free(req);
}

void tu_request(acp_connection *c, const char *method, const char *params,
                void *data, acp_call **call) {
  acp_error *err = NULL;
  acp_status st = acp_connection_request(c, tu_str(method), tu_str(params),
                                         data, call, &err);
  if (st != ACP_OK) {
    size_t n;
    const char *m = tu_error_text(err, &n);
    CHECK_MSG(false, "%s: %s: %.*s", method, acp_status_str(st), (int)n, m);
  }
}

void tu_close_pair(acp_connection *client, acp_connection *agent) {
  CHECK_OK(acp_connection_close(client));
  tu_drain_until_closed(client, 5000);
  /* The agent sees the end of its input and closes too. */
  tu_drain_until_closed(agent, 5000);
  acp_connection_free(client);
  acp_connection_free(agent);
}

char *tu_tempdir(void) {
  char tmpl[] = "/tmp/acp-c-test-XXXXXX";
  CHECK(mkdtemp(tmpl) != NULL);
  char *real = realpath(tmpl, NULL);
  CHECK(real != NULL);
  return real;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void tu_rmtree(const char *dir) {
  nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tu_box_init(tu_box *b) {
  memset(b, 0, sizeof *b);
  pthread_mutex_init(&b->mu, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&b->cv, &attr);
  pthread_condattr_destroy(&attr);
}

void tu_box_destroy(tu_box *b) {
  while (b->count > 0) {
    acp_event_free(b->items[b->head]);
    b->head = (b->head + 1) % 256;
    b->count--;
  }
  pthread_mutex_destroy(&b->mu);
  pthread_cond_destroy(&b->cv);
}

void tu_box_put(tu_box *b, acp_event *ev) {
  pthread_mutex_lock(&b->mu);
  CHECK(b->count < 256);
  b->items[(b->head + b->count) % 256] = ev;
  b->count++;
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->mu);
}

acp_event *tu_box_take(tu_box *b, int timeout_ms) {
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  int64_t ns = deadline.tv_nsec + (int64_t)tu_ms(timeout_ms) * 1000000;
  deadline.tv_sec += ns / 1000000000;
  deadline.tv_nsec = ns % 1000000000;
  pthread_mutex_lock(&b->mu);
  while (b->count == 0) {
    if (pthread_cond_timedwait(&b->cv, &b->mu, &deadline) == ETIMEDOUT) break;
  }
  acp_event *ev = NULL;
  if (b->count > 0) {
    ev = b->items[b->head];
    b->head = (b->head + 1) % 256;
    b->count--;
  }
  pthread_mutex_unlock(&b->mu);
  return ev;
}

void tu_trace_init(tu_trace *t) {
  memset(t, 0, sizeof *t);
  pthread_mutex_init(&t->mu, NULL);
}

void tu_trace_destroy(tu_trace *t) {
  free(t->sent);
  pthread_mutex_destroy(&t->mu);
}

static void trace_cb(void *user, acp_direction dir, const char *frame,
                     size_t len) {
  tu_trace *t = user;
  if (dir == ACP_DIRECTION_INCOMING) {
    atomic_fetch_add(&t->incoming, 1);
    return;
  }
  pthread_mutex_lock(&t->mu);
  char *grown = realloc(t->sent, t->sent_len + len + 2);
  CHECK(grown != NULL);
  memcpy(grown + t->sent_len, frame, len);
  t->sent_len += len;
  grown[t->sent_len++] = '\n';
  grown[t->sent_len] = 0;
  t->sent = grown;
  pthread_mutex_unlock(&t->mu);
  atomic_fetch_add(&t->outgoing, 1);
}

void tu_trace_install(tu_trace *t, acp_options *o) {
  CHECK_OK(acp_options_set_trace_callback(o, trace_cb, t));
}

bool tu_trace_sent(tu_trace *t, const char *needle) {
  pthread_mutex_lock(&t->mu);
  bool found = tu_contains(t->sent, t->sent_len, needle);
  pthread_mutex_unlock(&t->mu);
  return found;
}
