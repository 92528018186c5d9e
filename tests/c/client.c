/* A C client driving target/debug/libacp-interop-agent (spawned with
 * acp_connection_spawn_agent). The agent's prompt vocabulary
 * (tests/interop/README.md): `stream N`, `permission`, `write PATH TEXT`,
 * `wait` (until cancelled). */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static char *prompt_params(const char *session, const char *text) {
  return tu_fmt("{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"text\",\"text\":"
                "\"%s\"}]}",
                session, text);
}

/* Sends a prompt; returns ACP_OK (the call is in flight). */
static void send_prompt(acp_connection *c, const char *session,
                        const char *text, void *call_data, acp_call **call) {
  char *params = prompt_params(session, text);
  acp_error *err = NULL;
  acp_status st = acp_connection_request(c, S("session/prompt"), tu_str(params),
                                         call_data, call, &err);
  if (st != ACP_OK) {
    size_t n;
    const char *m = tu_error_text(err, &n);
    CHECK_MSG(false, "prompt refused: %s: %.*s", acp_status_str(st), (int)n, m);
  }
  free(params);
}

static acp_options *quick_options(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK_OK(acp_options_set_shutdown_grace_ms(o, 2000, 1000));
  return o;
}

static void close_and_free(acp_connection *c) {
  CHECK_OK(acp_connection_close(c));
  tu_drain_until_closed(c, 10000);
  acp_connection_free(c);
}

static bool readable(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  int r = poll(&p, 1, timeout_ms);
  CHECK(r >= 0);
  return r == 1 && (p.revents & POLLIN);
}

/* ------------------------------------------------------------------------ */

void test_client_poll_mode_prompt_streams_before_result(void) {
  acp_connection *c = tu_spawn_agent(NULL);
  char *sid = tu_init_session(c, NULL);
  int marker = 0;
  send_prompt(c, sid, "stream 3", &marker, NULL);
  for (int i = 0; i < 3; i++) {
    acp_event *ev = tu_next_non_log(c, 10000);
    CHECK_MSG(acp_event_get_kind(ev) == ACP_EVENT_NOTIFICATION,
              "event %d is kind %d", i, acp_event_get_kind(ev));
    const char *p;
    size_t n;
    CHECK_OK(acp_event_method(ev, &p, &n));
    CHECK(n == strlen("session/update") && memcmp(p, "session/update", n) == 0);
    CHECK_OK(acp_event_params(ev, &p, &n));
    char want[32];
    snprintf(want, sizeof want, "chunk %d", i);
    CHECK_CONTAINS(p, n, want);
    CHECK(acp_event_call_data(ev) == NULL);
    acp_event_free(ev);
  }
  acp_event *ev = tu_next_non_log(c, 10000);
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_RESULT);
  CHECK(acp_event_call_data(ev) == &marker);
  CHECK(acp_event_error(ev) == NULL);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "\"stopReason\":\"end_turn\"");
  acp_event_free(ev);
  free(sid);
  close_and_free(c);
}

void test_client_wakeup_fd_readable_only_while_events_wait(void) {
  acp_connection *c = tu_spawn_agent(NULL);
  int fd = acp_connection_wakeup_fd(c);
  CHECK(fd >= 0);
  char *sid = tu_init_session(c, NULL);
  acp_event *ev = NULL;
  CHECK_STATUS(acp_connection_next_event(c, &ev), ACP_ERR_EMPTY);
  CHECK(!readable(fd, 0));
  send_prompt(c, sid, "stream 2", NULL, NULL);
  /* Readable once something waits; stays readable until drained. */
  CHECK(readable(fd, tu_ms(10000)));
  int results = 0;
  while (results == 0) {
    CHECK(readable(fd, tu_ms(10000)));
    CHECK(readable(fd, 0)); /* level-triggered: still readable */
    CHECK_OK(acp_connection_next_event(c, &ev));
    if (acp_event_get_kind(ev) == ACP_EVENT_RESULT) results++;
    acp_event_free(ev);
  }
  CHECK_STATUS(acp_connection_next_event(c, &ev), ACP_ERR_EMPTY);
  CHECK(!readable(fd, 0));
  CHECK(acp_connection_wakeup_fd(c) == fd);
  free(sid);
  close_and_free(c);
}

/* ---- callback mode ---- */

typedef struct {
  atomic_int in_callback;   /* callbacks running now */
  atomic_int overlaps;      /* a callback found another one running */
  atomic_int on_host_thread;
  atomic_int events;
  pthread_t host;
  pthread_t dispatch;
  atomic_int dispatch_known;
  atomic_int other_threads; /* callbacks on a thread other than the first */
  tu_box box;
} cb_ctx;

static void serial_cb(void *user, acp_event *ev) {
  cb_ctx *x = user;
  if (atomic_fetch_add(&x->in_callback, 1) != 0) atomic_fetch_add(&x->overlaps, 1);
  if (pthread_equal(pthread_self(), x->host)) atomic_fetch_add(&x->on_host_thread, 1);
  if (atomic_exchange(&x->dispatch_known, 1) == 0)
    x->dispatch = pthread_self();
  else if (!pthread_equal(pthread_self(), x->dispatch))
    atomic_fetch_add(&x->other_threads, 1);
  atomic_fetch_add(&x->events, 1);
  tu_sleep_ms(1); /* widen the window for an overlap */
  atomic_fetch_sub(&x->in_callback, 1);
  tu_box_put(&x->box, ev);
}

static acp_event *box_result(tu_box *b, int *notifications) {
  for (;;) {
    acp_event *ev = tu_box_take(b, 10000);
    CHECK_MSG(ev != NULL, "no event in callback mode");
    int k = acp_event_get_kind(ev);
    if (k == ACP_EVENT_RESULT) return ev;
    CHECK_MSG(k == ACP_EVENT_NOTIFICATION || k == ACP_EVENT_LOG,
              "unexpected event kind %d", k);
    if (k == ACP_EVENT_NOTIFICATION && notifications) (*notifications)++;
    acp_event_free(ev);
  }
}

static acp_event *box_call(acp_connection *c, tu_box *b, const char *method,
                           const char *params, int *notifications) {
  acp_error *err = NULL;
  CHECK_OK(acp_connection_request(c, tu_str(method), tu_str(params), NULL,
                                  NULL, &err));
  acp_event *ev = box_result(b, notifications);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  return ev;
}

void test_client_callback_mode_serial_on_dispatch_thread(void) {
  static cb_ctx x;
  x.host = pthread_self();
  tu_box_init(&x.box);
  acp_options *o = quick_options();
  CHECK_OK(acp_options_set_event_callback(o, serial_cb, &x));
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  CHECK(acp_connection_wakeup_fd(c) == -1);
  acp_event *ev = (acp_event *)0x1;
  CHECK_STATUS(acp_connection_next_event(c, &ev), ACP_ERR_WRONG_MODE);
  CHECK(ev == (acp_event *)0x1);

  acp_event_free(box_call(c, &x.box, "initialize",
                          "{\"protocolVersion\":1,\"clientCapabilities\":{}}", NULL));
  ev = box_call(c, &x.box, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  char *sid = tu_json_string(p, n, "sessionId");
  CHECK(sid);
  acp_event_free(ev);
  char *params = prompt_params(sid, "stream 20");
  int notifications = 0;
  ev = box_call(c, &x.box, "session/prompt", params, &notifications);
  CHECK_MSG(notifications == 20, "%d notifications before the result", notifications);
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "end_turn");
  acp_event_free(ev);
  free(params);
  free(sid);

  CHECK_OK(acp_connection_close(c));
  for (;;) {
    ev = tu_box_take(&x.box, 10000);
    CHECK_MSG(ev != NULL, "no ACP_EVENT_CLOSED");
    int k = acp_event_get_kind(ev);
    acp_event_free(ev);
    if (k == ACP_EVENT_CLOSED) break;
  }
  acp_connection_free(c); /* waits for the dispatch thread */
  CHECK(tu_box_take(&x.box, 100) == NULL); /* nothing after CLOSED */
  CHECK(atomic_load(&x.overlaps) == 0);
  CHECK(atomic_load(&x.on_host_thread) == 0);
  CHECK(atomic_load(&x.other_threads) == 0);
  CHECK(atomic_load(&x.events) >= 24);
  tu_box_destroy(&x.box);
}

/* ---- answering a request later from another thread ---- */

typedef struct {
  acp_request *req;
  acp_status status;
} answer_job;

static void *answer_later(void *arg) {
  answer_job *job = arg;
  tu_sleep_ms(100);
  static const char result[] =
      "{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow_once\"}}";
  job->status = acp_request_respond(job->req, (acp_str){result, sizeof result - 1}, NULL);
  acp_request_free(job->req);
  return NULL;
}

void test_client_answers_permission_later_from_another_thread(void) {
  acp_connection *c = tu_spawn_agent(NULL);
  char *sid = tu_init_session(c, NULL);
  send_prompt(c, sid, "permission", NULL, NULL);
  pthread_t th;
  answer_job job = {NULL, ACP_ERR_PANIC};
  bool answered = false, saw_outcome = false;
  for (;;) {
    acp_event *ev = tu_next_non_log(c, 10000);
    int k = acp_event_get_kind(ev);
    const char *p;
    size_t n;
    if (k == ACP_EVENT_REQUEST) {
      CHECK(!answered);
      CHECK_OK(acp_event_method(ev, &p, &n));
      CHECK(n == strlen("session/request_permission"));
      CHECK_OK(acp_event_take_request(ev, &job.req));
      CHECK_OK(acp_request_params(job.req, &p, &n));
      CHECK_CONTAINS(p, n, "allow_once");
      CHECK(!acp_request_is_cancelled(job.req));
      CHECK(pthread_create(&th, NULL, answer_later, &job) == 0);
      answered = true;
    } else if (k == ACP_EVENT_NOTIFICATION) {
      CHECK_OK(acp_event_params(ev, &p, &n));
      if (tu_contains(p, n, "permission: allow_once")) saw_outcome = true;
    } else {
      CHECK_MSG(k == ACP_EVENT_RESULT, "kind %d", k);
      CHECK(answered);
      tu_result_text(ev, &p, &n);
      CHECK_CONTAINS(p, n, "end_turn");
      acp_event_free(ev);
      break;
    }
    acp_event_free(ev);
  }
  CHECK(pthread_join(th, NULL) == 0);
  CHECK_STATUS(job.status, ACP_OK);
  CHECK(saw_outcome);
  free(sid);
  close_and_free(c);
}

void test_client_peer_capabilities_and_version(void) {
  acp_connection *c = tu_spawn_agent(NULL);
  CHECK(acp_connection_protocol_version(c) == -1);
  acp_string *caps = NULL;
  CHECK_OK(acp_connection_peer_capabilities(c, &caps));
  CHECK(acp_string_len(caps) == 2 && memcmp(acp_string_ptr(caps), "{}", 2) == 0);
  acp_string_free(caps);
  char *sid = tu_init_session(c, NULL);
  CHECK(acp_connection_protocol_version(c) == 1);
  CHECK_OK(acp_connection_peer_capabilities(c, &caps));
  CHECK_CONTAINS(acp_string_ptr(caps), acp_string_len(caps), "\"loadSession\":true");
  acp_string_free(caps);
  free(sid);
  close_and_free(c);
}

/* ---- arguments checked before anything is sent ---- */

/* A spawned agent, initialized, with a session; the trace counts frames. */
static acp_connection *traced_session(tu_trace *t, char **sid) {
  tu_trace_init(t);
  acp_options *o = quick_options();
  tu_trace_install(t, o);
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  *sid = tu_init_session(c, NULL);
  return c;
}

static void check_refused(acp_connection *c, acp_str method, acp_str params,
                          acp_status want, const char *mentions) {
  acp_error *err = NULL;
  acp_call *call = (acp_call *)0x1;
  CHECK_STATUS(acp_connection_request(c, method, params, NULL, &call, &err), want);
  CHECK(call == (acp_call *)0x1);
  CHECK(err != NULL);
  CHECK_STATUS(acp_error_status(err), want);
  size_t n;
  const char *m = tu_error_text(err, &n);
  CHECK(n > 0);
  if (mentions) CHECK_CONTAINS(m, n, mentions);
  acp_error_free(err);
}

void test_client_invalid_utf8_method(void) {
  tu_trace t;
  char *sid;
  acp_connection *c = traced_session(&t, &sid);
  int sent = atomic_load(&t.outgoing);
  check_refused(c, S("session/\xff\xfe"), S("{}"), ACP_ERR_INVALID_UTF8, NULL);
  check_refused(c, S("session/new"), S("{\"cwd\":\"/tmp\xc3\"}"),
                ACP_ERR_INVALID_UTF8, NULL);
  acp_error *err = NULL;
  CHECK_STATUS(acp_connection_notify(c, S("x\x80"), (acp_str){0}, &err),
               ACP_ERR_INVALID_UTF8);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_INVALID_UTF8);
  acp_error_free(err);
  CHECK(atomic_load(&t.outgoing) == sent);
  free(sid);
  close_and_free(c);
  tu_trace_destroy(&t);
}

void test_client_invalid_json_params(void) {
  tu_trace t;
  char *sid;
  acp_connection *c = traced_session(&t, &sid);
  int sent = atomic_load(&t.outgoing);
  check_refused(c, S("session/new"), S("{\"cwd\":"), ACP_ERR_INVALID_JSON, NULL);
  check_refused(c, S("session/new"), S("{cwd: 1}"), ACP_ERR_INVALID_JSON, NULL);
  check_refused(c, S("session/new"), S("{} trailing"), ACP_ERR_INVALID_JSON, NULL);
  acp_error *err = NULL;
  CHECK_STATUS(acp_connection_notify(c, S("_x/y"), S("[1,"), &err),
               ACP_ERR_INVALID_JSON);
  acp_error_free(err);
  CHECK(atomic_load(&t.outgoing) == sent);
  free(sid);
  close_and_free(c);
  tu_trace_destroy(&t);
}

void test_client_scalar_params(void) {
  tu_trace t;
  char *sid;
  acp_connection *c = traced_session(&t, &sid);
  int sent = atomic_load(&t.outgoing);
  const char *scalars[] = {"42", "\"text\"", "null", "true", " 1.5 "};
  for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
    check_refused(c, S("session/new"), tu_str(scalars[i]), ACP_ERR_INVALID_JSON,
                  NULL);
    acp_error *err = NULL;
    CHECK_STATUS(acp_connection_notify(c, S("_x/y"), tu_str(scalars[i]), &err),
                 ACP_ERR_INVALID_JSON);
    acp_error_free(err);
  }
  CHECK(atomic_load(&t.outgoing) == sent);
  free(sid);
  close_and_free(c);
  tu_trace_destroy(&t);
}

void test_client_refused_before_initialize(void) {
  tu_trace t;
  tu_trace_init(&t);
  acp_options *o = quick_options();
  tu_trace_install(&t, o);
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  check_refused(c, S("session/new"), S("{\"cwd\":\"/tmp\",\"mcpServers\":[]}"),
                ACP_ERR_REFUSED, "initialize");
  CHECK(atomic_load(&t.outgoing) == 0);
  acp_event_free(tu_call_ok(c, "initialize", "{\"protocolVersion\":1}"));
  check_refused(c, S("initialize"), S("{\"protocolVersion\":1}"), ACP_ERR_REFUSED,
                "initialize");
  CHECK(atomic_load(&t.outgoing) == 1);
  close_and_free(c);
  tu_trace_destroy(&t);
}

void test_client_refused_capability_not_advertised(void) {
  tu_trace t;
  char *sid;
  acp_connection *c = traced_session(&t, &sid);
  int sent = atomic_load(&t.outgoing);
  /* libacp-interop-agent advertises loadSession and image, not audio, not
   * the session list. */
  check_refused(c, S("session/list"), S("{}"), ACP_ERR_REFUSED,
                "sessionCapabilities.list");
  char *audio = tu_fmt(
      "{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"audio\",\"mimeType\":"
      "\"audio/wav\",\"data\":\"AAAA\"}]}",
      sid);
  check_refused(c, S("session/prompt"), tu_str(audio), ACP_ERR_REFUSED,
                "promptCapabilities.audio");
  free(audio);
  CHECK(atomic_load(&t.outgoing) == sent);
  /* No turn was left behind: a text prompt still goes out. */
  char *params = prompt_params(sid, "stream 1");
  acp_event_free(tu_call_ok(c, "session/prompt", params));
  free(params);
  free(sid);
  close_and_free(c);
  tu_trace_destroy(&t);
}

/* ---- outgoing cancellation ---- */

void test_client_call_cancel_keep_waiting(void) {
  tu_trace t;
  char *sid;
  acp_connection *c = traced_session(&t, &sid);
  acp_call *call = NULL;
  int marker;
  send_prompt(c, sid, "wait", &marker, &call);
  CHECK(call != NULL);
  CHECK_STATUS(acp_call_cancel(call, 2), ACP_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(acp_call_cancel(call, -1), ACP_ERR_INVALID_ARGUMENT);
  /* The unknown mode cancelled nothing: the peer still waits. */
  CHECK(tu_next_event(c, 200) == NULL);
  CHECK_OK(acp_call_cancel(call, ACP_CANCEL_KEEP_WAITING));
  /* The result event still comes, from the peer. */
  acp_event *ev = tu_wait_result(c, 10000, NULL);
  CHECK(acp_event_call_data(ev) == &marker);
  acp_status st = acp_event_result_status(ev);
  const acp_error *e = acp_event_error(ev);
  CHECK_MSG(st == ACP_ERR_RPC, "result status %s", acp_status_str(st));
  CHECK(e != NULL);
  CHECK_STATUS(acp_error_status(e), ACP_ERR_RPC);
  CHECK_MSG(acp_error_code(e) == -32800, "code %lld", (long long)acp_error_code(e));
  const char *p = (const char *)0x1;
  size_t n = 1;
  CHECK_OK(acp_event_result(ev, &p, &n));
  CHECK(p == NULL && n == 0);
  acp_event_free(ev);
  CHECK(tu_trace_sent(&t, "\"method\":\"$/cancel_request\""));
  /* The call has ended: cancelling again is an invalid argument. */
  CHECK_STATUS(acp_call_cancel(call, ACP_CANCEL_KEEP_WAITING), ACP_ERR_INVALID_ARGUMENT);
  acp_call_free(call);
  free(sid);
  close_and_free(c);
  tu_trace_destroy(&t);
}

void test_client_call_cancel_abandon(void) {
  tu_trace t;
  char *sid;
  acp_connection *c = traced_session(&t, &sid);
  acp_call *call = NULL;
  int marker;
  send_prompt(c, sid, "wait", &marker, &call);
  CHECK_OK(acp_call_cancel(call, ACP_CANCEL_ABANDON));
  acp_event *ev = tu_wait_result(c, 2000, NULL);
  CHECK(acp_event_call_data(ev) == &marker);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_CANCELLED);
  CHECK_STATUS(acp_error_status(acp_event_error(ev)), ACP_ERR_CANCELLED);
  acp_event_free(ev);
  CHECK_STATUS(acp_call_cancel(call, ACP_CANCEL_ABANDON), ACP_ERR_INVALID_ARGUMENT);
  acp_call_free(call);
  /* The late answer of the peer is dropped: no second result. */
  ev = tu_next_event(c, 300);
  while (ev && acp_event_get_kind(ev) == ACP_EVENT_LOG) {
    acp_event_free(ev);
    ev = tu_next_event(c, 300);
  }
  CHECK_MSG(ev == NULL, "unexpected event kind %d", acp_event_get_kind(ev));
  CHECK(tu_trace_sent(&t, "\"method\":\"$/cancel_request\""));
  free(sid);
  close_and_free(c);
  tu_trace_destroy(&t);
}

void test_client_cancel_session_answers_parked_permission(void) {
  tu_trace t;
  char *sid;
  acp_connection *c = traced_session(&t, &sid);
  int prompt_marker;
  send_prompt(c, sid, "permission", &prompt_marker, NULL);
  acp_request *req = NULL;
  while (!req) {
    acp_event *ev = tu_next_non_log(c, 10000);
    if (acp_event_get_kind(ev) == ACP_EVENT_REQUEST)
      CHECK_OK(acp_event_take_request(ev, &req));
    else
      CHECK(acp_event_get_kind(ev) == ACP_EVENT_NOTIFICATION);
    acp_event_free(ev);
  }
  const char *rid;
  size_t rid_len;
  CHECK_OK(acp_request_id(req, &rid, &rid_len));
  /* The host parks the request; the user cancels the turn. */
  CHECK_OK(acp_connection_cancel_session(c, tu_str(sid), NULL));
  bool cancelled_event = false, result = false;
  while (!result || !cancelled_event) {
    acp_event *ev = tu_next_non_log(c, 10000);
    int k = acp_event_get_kind(ev);
    const char *p;
    size_t n;
    if (k == ACP_EVENT_REQUEST_CANCELLED) {
      CHECK_OK(acp_event_request_id(ev, &p, &n));
      CHECK(n == rid_len && memcmp(p, rid, n) == 0);
      cancelled_event = true;
    } else if (k == ACP_EVENT_RESULT) {
      CHECK(acp_event_call_data(ev) == &prompt_marker);
      tu_result_text(ev, &p, &n);
      CHECK_CONTAINS(p, n, "\"stopReason\":\"cancelled\"");
      result = true;
    } else {
      CHECK_MSG(k == ACP_EVENT_NOTIFICATION, "kind %d", k);
    }
    acp_event_free(ev);
  }
  CHECK(acp_request_is_cancelled(req));
  CHECK(tu_trace_sent(&t, "\"method\":\"session/cancel\""));
  CHECK(tu_trace_sent(&t, "\"outcome\":{\"outcome\":\"cancelled\"}"));
  /* libacp answered it `cancelled`: a late answer is refused, not sent. */
  acp_error *err = NULL;
  static const char late[] =
      "{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow_once\"}}";
  CHECK_STATUS(acp_request_respond(req, (acp_str){late, sizeof late - 1}, &err),
               ACP_ERR_ALREADY_ANSWERED);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_ALREADY_ANSWERED);
  acp_error_free(err);
  CHECK(!tu_trace_sent(&t, "\"optionId\":\"allow_once\"}}"));
  acp_request_free(req);
  free(sid);
  close_and_free(c);
  tu_trace_destroy(&t);
}

/* ---- closing ---- */

void test_client_close_is_idempotent(void) {
  acp_options *o = quick_options();
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  acp_event_free(tu_call_ok(c, "initialize", "{\"protocolVersion\":1}"));
  CHECK_OK(acp_connection_close(c));
  CHECK_OK(acp_connection_close(c));
  CHECK(tu_drain_until_closed(c, 5000) == 0);
  CHECK_OK(acp_connection_close(c));
  tu_sleep_ms(50);
  acp_event *ev = NULL;
  CHECK_STATUS(acp_connection_next_event(c, &ev), ACP_ERR_EMPTY);
  acp_connection_free(c);
}

void test_client_calls_after_close_fail_closed(void) {
  acp_options *o = quick_options();
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  char *sid = tu_init_session(c, NULL);
  CHECK_OK(acp_connection_close(c));
  tu_drain_until_closed(c, 5000);
  /* After ACP_EVENT_CLOSED no event can come, so a call must fail now. */
  acp_error *err = NULL;
  acp_call *call = (acp_call *)0x1;
  char *params = prompt_params(sid, "stream 1");
  CHECK_STATUS(acp_connection_request(c, S("session/prompt"), tu_str(params),
                                      NULL, &call, &err),
               ACP_ERR_CLOSED);
  CHECK(call == (acp_call *)0x1);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_CLOSED);
  acp_error_free(err);
  err = NULL;
  CHECK_STATUS(acp_connection_notify(c, S("_test/ping"), S("{}"), &err),
               ACP_ERR_CLOSED);
  acp_error_free(err);
  err = NULL;
  CHECK_STATUS(acp_connection_cancel_session(c, tu_str(sid), &err), ACP_ERR_CLOSED);
  acp_error_free(err);
  acp_event *ev = NULL;
  CHECK_STATUS(acp_connection_next_event(c, &ev), ACP_ERR_EMPTY);
  free(params);
  free(sid);
  acp_connection_free(c);
}

typedef struct {
  acp_connection *conn;
  atomic_int freed;
  atomic_int after_free;
  atomic_int closed;
  tu_box done;
} free_ctx;

static void free_cb(void *user, acp_event *ev) {
  free_ctx *x = user;
  int k = acp_event_get_kind(ev);
  if (atomic_load(&x->freed)) atomic_fetch_add(&x->after_free, 1);
  if (k == ACP_EVENT_RESULT && !atomic_load(&x->freed)) {
    /* Frees the connection from its own dispatch thread (deferred). */
    acp_connection_free(x->conn);
    atomic_store(&x->freed, 1);
  }
  if (k == ACP_EVENT_CLOSED) {
    atomic_store(&x->closed, 1);
    tu_box_put(&x->done, ev);
    return;
  }
  acp_event_free(ev);
}

void test_client_free_inside_callback(void) {
  static free_ctx x;
  tu_box_init(&x.done);
  acp_options *o = quick_options();
  CHECK_OK(acp_options_set_event_callback(o, free_cb, &x));
  x.conn = tu_spawn_agent(o);
  acp_options_free(o);
  CHECK_OK(acp_connection_request(x.conn, S("initialize"),
                                  S("{\"protocolVersion\":1}"), NULL, NULL, NULL));
  /* After the free, the dispatch thread still delivers ACP_EVENT_CLOSED. */
  acp_event *ev = tu_box_take(&x.done, 10000);
  CHECK_MSG(ev != NULL, "no ACP_EVENT_CLOSED after freeing in the callback");
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_CLOSED);
  acp_event_free(ev);
  CHECK(atomic_load(&x.freed) == 1);
  tu_sleep_ms(100); /* let the detached dispatch thread finish */
  tu_box_destroy(&x.done);
}

void test_client_free_with_events_pending(void) {
  acp_options *o = quick_options();
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  char *sid = tu_init_session(c, NULL);
  send_prompt(c, sid, "permission", NULL, NULL);
  /* Wait until the permission request is queued, then free without taking
   * it: it is answered -32603, everything is released. */
  int fd = acp_connection_wakeup_fd(c);
  CHECK(readable(fd, tu_ms(10000)));
  tu_sleep_ms(200);
  acp_connection_free(c);
  free(sid);
}

/* ---- client services ---- */

void test_client_session_model_snapshot(void) {
  acp_options *o = quick_options();
  CHECK_OK(acp_options_set_session_model(o, true));
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  char *sid = tu_init_session(c, NULL);
  acp_string *snap = (acp_string *)0x1;
  acp_error *err = NULL;
  CHECK_STATUS(acp_connection_session_snapshot(c, S("no-such-session"), &snap, &err),
               ACP_ERR_INVALID_ARGUMENT);
  CHECK(snap == (acp_string *)0x1);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_INVALID_ARGUMENT);
  acp_error_free(err);
  char *params = prompt_params(sid, "stream 3");
  int notifications = 0;
  acp_error *e2 = NULL;
  CHECK_OK(acp_connection_request(c, S("session/prompt"), tu_str(params), NULL,
                                  NULL, &e2));
  acp_event *ev = tu_wait_result(c, 10000, &notifications);
  acp_event_free(ev);
  CHECK(notifications == 3); /* the host still sees every update */
  CHECK_OK(acp_connection_session_snapshot(c, tu_str(sid), &snap, NULL));
  const char *p = acp_string_ptr(snap);
  size_t n = acp_string_len(snap);
  char *want = tu_fmt("\"sessionId\":\"%s\"", sid);
  CHECK_CONTAINS(p, n, want);
  CHECK_CONTAINS(p, n, "\"type\":\"agent_message\"");
  CHECK_CONTAINS(p, n, "\"text\":\"chunk 0chunk 1chunk 2\"");
  CHECK_CONTAINS(p, n, "\"toolCalls\":[]");
  acp_string_free(snap);
  free(want);
  free(params);
  free(sid);
  close_and_free(c);

  /* Without the model: WRONG_MODE. */
  c = tu_spawn_agent(NULL);
  err = NULL;
  CHECK_STATUS(acp_connection_session_snapshot(c, S("libacp-1"), &snap, &err),
               ACP_ERR_WRONG_MODE);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_WRONG_MODE);
  acp_error_free(err);
  close_and_free(c);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return strdup(buf);
}

void test_client_fs_service_writes_in_session_cwd(void) {
  tu_trace t;
  tu_trace_init(&t);
  acp_options *o = quick_options();
  CHECK_OK(acp_options_set_fs(o, true));
  tu_trace_install(&t, o);
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  char *dir = tu_tempdir();
  char *sid = tu_init_session(c, dir);
  /* Advertised automatically. */
  CHECK(tu_trace_sent(&t, "\"writeTextFile\":true"));
  char *cmd = tu_fmt("write %s/out.txt hello from the agent", dir);
  char *params = prompt_params(sid, cmd);
  /* tu_call_ok fails on any REQUEST event: the host never sees fs/\*. */
  acp_event *ev = tu_call_ok(c, "session/prompt", params);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "end_turn");
  acp_event_free(ev);
  char *path = tu_fmt("%s/out.txt", dir);
  char *content = read_file(path);
  CHECK_MSG(content && strcmp(content, "hello from the agent") == 0, "file: %s",
            content ? content : "(missing)");
  free(content);
  free(path);
  free(params);
  free(cmd);
  free(sid);
  close_and_free(c);
  tu_rmtree(dir);
  free(dir);
  tu_trace_destroy(&t);
}

void test_client_fs_service_refuses_outside_cwd(void) {
  acp_options *o = quick_options();
  CHECK_OK(acp_options_set_fs(o, true));
  acp_connection *c = tu_spawn_agent(o);
  acp_options_free(o);
  char *dir = tu_tempdir();
  char *outside = tu_tempdir();
  char *sid = tu_init_session(c, dir);
  char *cmd = tu_fmt("write %s/escape.txt nope", outside);
  char *params = prompt_params(sid, cmd);
  CHECK_OK(acp_connection_request(c, S("session/prompt"), tu_str(params), NULL,
                                  NULL, NULL));
  acp_event *ev = tu_wait_result(c, 10000, NULL); /* no REQUEST reaches us */
  /* The agent's write was answered with an error, which the interop agent
   * passes on as its prompt's error. */
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_RPC);
  acp_event_free(ev);
  char *path = tu_fmt("%s/escape.txt", outside);
  struct stat st;
  CHECK(stat(path, &st) != 0);
  free(path);
  free(params);
  free(cmd);
  free(sid);
  close_and_free(c);
  tu_rmtree(dir);
  tu_rmtree(outside);
  free(dir);
  free(outside);
}

void test_client_stderr_lines_as_log_events(void) {
  /* Any program is an "agent" to spawn: this one writes two stderr lines
   * and waits for its stdin to close. */
  acp_str args[] = {S("-c"), S("echo first line >&2; echo second >&2; cat >/dev/null")};
  acp_connection *c = NULL;
  CHECK_OK(acp_connection_spawn_agent(NULL, S("sh"), args, 2, NULL, 0,
                                      (acp_str){0}, &c, NULL));
  const char *want[] = {"first line", "second"};
  for (int i = 0; i < 2; i++) {
    acp_event *ev = tu_next_event(c, 10000);
    CHECK_MSG(ev != NULL, "no LOG event");
    CHECK(acp_event_get_kind(ev) == ACP_EVENT_LOG);
    const char *p;
    size_t n;
    CHECK_OK(acp_event_text(ev, &p, &n));
    CHECK_MSG(n == strlen(want[i]) && memcmp(p, want[i], n) == 0, "log %.*s",
              (int)n, p);
    acp_event_free(ev);
  }
  close_and_free(c);
}

/* A C host keeps SIGPIPE's default action (terminate). An agent that closed
 * its stdin must make libacp's writes fail, not kill the host. */
void test_client_agent_gone_no_sigpipe(void) {
  signal(SIGPIPE, SIG_DFL);
  acp_str args[] = {S("-c"), S("exec 0<&-; exec sleep 2")};
  acp_options *o = quick_options();
  CHECK_OK(acp_options_set_shutdown_grace_ms(o, 100, 100));
  acp_connection *c = NULL;
  CHECK_OK(acp_connection_spawn_agent(o, S("sh"), args, 2, NULL, 0, (acp_str){0},
                                      &c, NULL));
  acp_options_free(o);
  tu_sleep_ms(300); /* the agent has closed its stdin by now */
  /* Big enough to fill the pipe if it were open. */
  size_t big = 200000;
  char *params = malloc(big + 64);
  CHECK(params);
  int len = snprintf(params, 64, "{\"protocolVersion\":1,\"pad\":\"");
  memset(params + len, 'x', big);
  memcpy(params + len + big, "\"}", 3);
  /* Whether libacp finds the pipe broken before or after this call, the
   * call ends ACP_ERR_CLOSED: at once, or as its result event. */
  acp_error *err = NULL;
  acp_status st = acp_connection_request(c, S("initialize"), tu_str(params), NULL,
                                         NULL, &err);
  free(params);
  if (st == ACP_OK) {
    acp_event *ev = tu_wait_result(c, 10000, NULL);
    st = acp_event_result_status(ev);
    acp_event_free(ev);
  } else {
    CHECK_STATUS(acp_error_status(err), st);
    acp_error_free(err);
    err = NULL;
  }
  CHECK_MSG(st == ACP_ERR_CLOSED, "status %s", acp_status_str(st));
  /* A notification and a close on the host thread: still no signal. */
  acp_status ns = acp_connection_notify(c, S("_test/x"), S("{}"), &err);
  CHECK(ns == ACP_ERR_CLOSED || ns == ACP_ERR_REFUSED);
  acp_error_free(err);
  CHECK_OK(acp_connection_close(c));
  tu_drain_until_closed(c, 5000);
  acp_connection_free(c);
}
