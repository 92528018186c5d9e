/* A C agent (acp_connection_from_fds, ACP_ROLE_AGENT) driven by a C client
 * in the same process, over two pipes or a socketpair; both in poll mode
 * unless said otherwise. */
#define _GNU_SOURCE
#include <unistd.h>

#include "test_util.h"

static acp_event *client_result(acp_connection *client) {
  return tu_wait_result(client, 10000, NULL);
}

#define INIT_RESULT                                                          \
  "{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[]}"
#define PROMPT_S1 "{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}"

/* initialize and session/new (answered "s1") through both ends. */
static void open_session(acp_connection *client, acp_connection *agent) {
  tu_request(client, "initialize", "{\"protocolVersion\":1,\"clientCapabilities\":{}}",
          NULL, NULL);
  acp_request *req = tu_expect_request(agent, "initialize");
  const char *p;
  size_t n;
  CHECK_OK(acp_request_params(req, &p, &n));
  CHECK_CONTAINS(p, n, "\"protocolVersion\":1");
  tu_answer(req, INIT_RESULT);
  acp_event *ev = client_result(client);
  tu_result_text(ev, &p, &n);
  acp_event_free(ev);
  CHECK(acp_connection_protocol_version(client) == 1);
  CHECK(acp_connection_protocol_version(agent) == 1);
  tu_request(client, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL, NULL);
  tu_answer(tu_expect_request(agent, "session/new"), "{\"sessionId\":\"s1\"}");
  ev = client_result(client);
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "\"sessionId\":\"s1\"");
  acp_event_free(ev);
}

static void agent_notify_chunk(acp_connection *agent, const char *text) {
  char *params = tu_fmt(
      "{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
      "\"content\":{\"type\":\"text\",\"text\":\"%s\"}}}",
      text);
  acp_error *err = NULL;
  acp_status st = acp_connection_notify(agent, S("session/update"), tu_str(params), &err);
  if (st != ACP_OK) {
    size_t n;
    const char *m = tu_error_text(err, &n);
    CHECK_MSG(false, "notify: %s: %.*s", acp_status_str(st), (int)n, m);
  }
  free(params);
}

static void roundtrip(bool socket) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, socket, &client, &agent);
  open_session(client, agent);
  int marker;
  tu_request(client, "session/prompt", PROMPT_S1, &marker, NULL);
  acp_request *req = tu_expect_request(agent, "session/prompt");
  agent_notify_chunk(agent, "one");
  agent_notify_chunk(agent, "two");
  tu_answer(req, "{\"stopReason\":\"end_turn\"}");
  const char *want[] = {"\"text\":\"one\"", "\"text\":\"two\""};
  for (int i = 0; i < 2; i++) {
    acp_event *ev = tu_next_non_log(client, 10000);
    CHECK(acp_event_get_kind(ev) == ACP_EVENT_NOTIFICATION);
    const char *p;
    size_t n;
    CHECK_OK(acp_event_params(ev, &p, &n));
    CHECK_CONTAINS(p, n, want[i]);
    acp_event_free(ev);
  }
  acp_event *ev = client_result(client);
  CHECK(acp_event_call_data(ev) == &marker);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "end_turn");
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

void test_agent_pipes_roundtrip(void) { roundtrip(false); }

void test_agent_socketpair_roundtrip(void) { roundtrip(true); }

typedef struct {
  acp_connection *agent;
  acp_request *req;
  acp_status notify_status, respond_status;
} later_job;

static void *answer_later(void *arg) {
  later_job *job = arg;
  tu_sleep_ms(100);
  static const char chunk[] =
      "{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
      "\"content\":{\"type\":\"text\",\"text\":\"from a thread\"}}}";
  job->notify_status = acp_connection_notify(job->agent, S("session/update"),
                                             S(chunk), NULL);
  static const char result[] = "{\"stopReason\":\"end_turn\"}";
  job->respond_status = acp_request_respond(job->req, (acp_str){result, sizeof result - 1}, NULL);
  acp_request_free(job->req);
  return NULL;
}

void test_agent_answers_prompt_later_from_another_thread(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  open_session(client, agent);
  tu_request(client, "session/prompt", PROMPT_S1, NULL, NULL);
  later_job job = {agent, tu_expect_request(agent, "session/prompt"), ACP_ERR_PANIC,
                   ACP_ERR_PANIC};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, answer_later, &job) == 0);
  int notifications = 0;
  acp_event *ev = client_result(client);
  CHECK(pthread_join(th, NULL) == 0);
  (void)notifications;
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "end_turn");
  acp_event_free(ev);
  CHECK_OK(job.notify_status);
  CHECK_OK(job.respond_status);
  tu_close_pair(client, agent);
}

void test_agent_take_request_twice(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  tu_request(client, "initialize", "{\"protocolVersion\":1}", NULL, NULL);
  acp_event *ev = tu_next_non_log(agent, 10000);
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_REQUEST);
  /* NULL out-params: statuses, nothing taken. */
  CHECK_STATUS(acp_event_take_request(ev, NULL), ACP_ERR_NULL_ARGUMENT);
  const char *p;
  CHECK_STATUS(acp_event_method(ev, &p, NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_event_params(ev, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
  acp_request *req = NULL;
  CHECK_OK(acp_event_take_request(ev, &req));
  acp_request *again = (acp_request *)0x1;
  CHECK_STATUS(acp_event_take_request(ev, &again), ACP_ERR_INVALID_ARGUMENT);
  CHECK(again == (acp_request *)0x1);
  /* The event's own data is still readable after the take. */
  size_t n;
  CHECK_OK(acp_event_method(ev, &p, &n));
  CHECK(n == strlen("initialize") && memcmp(p, "initialize", n) == 0);
  CHECK_OK(acp_event_request_id(ev, &p, &n));
  const char *rid;
  size_t rid_len;
  CHECK_OK(acp_request_id(req, &rid, &rid_len));
  CHECK(n == rid_len && memcmp(p, rid, n) == 0);
  acp_event_free(ev);
  CHECK_STATUS(acp_request_method(req, NULL, &n), ACP_ERR_NULL_ARGUMENT);
  tu_answer(req, INIT_RESULT);
  ev = client_result(client);
  /* Not a request event: nothing to take. */
  CHECK_STATUS(acp_event_take_request(ev, &again), ACP_ERR_INVALID_ARGUMENT);
  CHECK(again == (acp_request *)0x1);
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

void test_agent_respond_twice_already_answered(void) {
  tu_trace t;
  tu_trace_init(&t);
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  tu_trace_install(&t, o);
  acp_connection *client, *agent;
  tu_pair(NULL, o, false, &client, &agent);
  acp_options_free(o);
  tu_request(client, "initialize", "{\"protocolVersion\":1}", NULL, NULL);
  acp_request *req = tu_expect_request(agent, "initialize");
  CHECK_OK(acp_request_respond(req, acp_str_from_cstr(INIT_RESULT), NULL));
  acp_error *err = NULL;
  CHECK_STATUS(acp_request_respond(req, acp_str_from_cstr(INIT_RESULT), &err),
               ACP_ERR_ALREADY_ANSWERED);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_ALREADY_ANSWERED);
  acp_error_free(err);
  err = NULL;
  CHECK_STATUS(acp_request_respond_error(req, -32000, ACP_STR("late"), (acp_str){NULL, 0}, &err),
               ACP_ERR_ALREADY_ANSWERED);
  acp_error_free(err);
  acp_request_free(req);
  acp_event *ev = client_result(client);
  CHECK_OK(acp_event_result_status(ev));
  acp_event_free(ev);
  /* Exactly one answer went out. */
  tu_sleep_ms(100);
  CHECK(atomic_load(&t.outgoing) == 1);
  CHECK(tu_next_event(client, 100) == NULL);
  tu_close_pair(client, agent);
  tu_trace_destroy(&t);
}

void test_agent_respond_invalid_json_then_valid(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  open_session(client, agent);
  tu_request(client, "session/prompt", PROMPT_S1, NULL, NULL);
  acp_request *req = tu_expect_request(agent, "session/prompt");
  acp_error *err = NULL;
  CHECK_STATUS(acp_request_respond(req, ACP_STR("{\"stopReason\":"), &err),
               ACP_ERR_INVALID_JSON);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_INVALID_JSON);
  acp_error_free(err);
  CHECK_STATUS(acp_request_respond(req, ACP_STR("\"\xff\""), NULL), ACP_ERR_INVALID_UTF8);
  CHECK_STATUS(acp_request_respond(req, (acp_str){NULL, 3}, NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_request_respond_error(req, -32000, ACP_STR("m"), ACP_STR("{bad"), NULL),
               ACP_ERR_INVALID_JSON);
  CHECK_STATUS(acp_request_respond_error(req, -32000, ACP_STR("\xc3"), (acp_str){NULL, 0}, NULL),
               ACP_ERR_INVALID_UTF8);
  /* None of those answered: the request is still open. */
  CHECK(tu_next_event(client, 100) == NULL);
  CHECK_OK(acp_request_respond_error(req, -32042, ACP_STR("custom"), ACP_STR("{\"why\":\"test\"}"), NULL));
  acp_request_free(req);
  acp_event *ev = client_result(client);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_RPC);
  const acp_error *e = acp_event_error(ev);
  CHECK(acp_error_code(e) == -32042);
  const char *p;
  size_t n;
  CHECK_OK(acp_error_message(e, &p, &n));
  CHECK(n == 6 && memcmp(p, "custom", 6) == 0);
  CHECK_OK(acp_error_data(e, &p, &n));
  CHECK_CONTAINS(p, n, "\"why\":\"test\"");
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

void test_agent_unanswered_request_freed_answers_internal_error(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  open_session(client, agent);
  /* A taken request freed unanswered. */
  tu_request(client, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL, NULL);
  acp_request_free(tu_expect_request(agent, "session/new"));
  acp_event *ev = client_result(client);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_RPC);
  CHECK(acp_error_code(acp_event_error(ev)) == -32603);
  acp_event_free(ev);
  /* A request event freed without taking the request. */
  tu_request(client, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL, NULL);
  ev = tu_next_non_log(agent, 10000);
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_REQUEST);
  acp_event_free(ev);
  ev = client_result(client);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_RPC);
  CHECK(acp_error_code(acp_event_error(ev)) == -32603);
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

/* ---- incoming cancellation ---- */

/* Waits for ACP_EVENT_REQUEST_CANCELLED naming `req`; notifications before
 * it are allowed (counted in *session_cancel if it is session/cancel). */
static void expect_cancelled(acp_connection *agent, acp_request *req,
                             int *session_cancel) {
  const char *rid;
  size_t rid_len;
  CHECK_OK(acp_request_id(req, &rid, &rid_len));
  for (;;) {
    acp_event *ev = tu_next_non_log(agent, 10000);
    int k = acp_event_get_kind(ev);
    const char *p;
    size_t n;
    if (k == ACP_EVENT_NOTIFICATION) {
      CHECK_OK(acp_event_method(ev, &p, &n));
      if (session_cancel && tu_contains(p, n, "session/cancel")) (*session_cancel)++;
      acp_event_free(ev);
      continue;
    }
    CHECK_MSG(k == ACP_EVENT_REQUEST_CANCELLED, "kind %d", k);
    CHECK_OK(acp_event_request_id(ev, &p, &n));
    CHECK_MSG(n == rid_len && memcmp(p, rid, n) == 0, "cancelled %.*s, want %.*s",
              (int)n, p, (int)rid_len, rid);
    acp_event_free(ev);
    return;
  }
}

void test_agent_incoming_cancel_request(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  open_session(client, agent);
  /* An extension request, cancelled with $/cancel_request. */
  acp_call *call = NULL;
  tu_request(client, "_test/slow", "{\"n\":1}", NULL, &call);
  acp_request *req = tu_expect_request(agent, "_test/slow");
  CHECK(!acp_request_is_cancelled(req));
  CHECK_OK(acp_call_cancel(call, ACP_CANCEL_KEEP_WAITING));
  expect_cancelled(agent, req, NULL);
  CHECK(acp_request_is_cancelled(req));
  /* libacp answered -32800 already. */
  CHECK_STATUS(acp_request_respond(req, ACP_STR("{}"), NULL), ACP_ERR_ALREADY_ANSWERED);
  acp_request_free(req);
  acp_event *ev = client_result(client);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_RPC);
  CHECK(acp_error_code(acp_event_error(ev)) == -32800);
  acp_event_free(ev);
  acp_call_free(call);
  tu_close_pair(client, agent);
}

void test_agent_incoming_session_cancel(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  open_session(client, agent);
  int marker;
  tu_request(client, "session/prompt", PROMPT_S1, &marker, NULL);
  acp_request *req = tu_expect_request(agent, "session/prompt");
  CHECK_OK(acp_connection_cancel_session(client, S("s1"), NULL));
  int session_cancel = 0;
  expect_cancelled(agent, req, &session_cancel);
  CHECK(acp_request_is_cancelled(req));
  /* For a prompt, the host answers; any answer becomes "cancelled". */
  tu_answer(req, "{\"stopReason\":\"end_turn\"}");
  acp_event *ev = client_result(client);
  CHECK(acp_event_call_data(ev) == &marker);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "\"stopReason\":\"cancelled\"");
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

void test_agent_require_auth(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK_OK(acp_options_set_require_auth(o, true));
  acp_connection *client, *agent;
  tu_pair(NULL, o, false, &client, &agent);
  acp_options_free(o);
  tu_request(client, "initialize", "{\"protocolVersion\":1}", NULL, NULL);
  tu_answer(tu_expect_request(agent, "initialize"),
         "{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":"
         "[{\"id\":\"token\",\"name\":\"Token\"}]}");
  acp_event_free(client_result(client));
  /* Answered by libacp, the host never sees it. */
  tu_request(client, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL, NULL);
  acp_event *ev = client_result(client);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_RPC);
  const acp_error *e = acp_event_error(ev);
  CHECK(acp_error_code(e) == -32000);
  const char *p;
  size_t n;
  CHECK_OK(acp_error_data(e, &p, &n));
  CHECK_CONTAINS(p, n, "authMethods");
  CHECK_CONTAINS(p, n, "token");
  acp_event_free(ev);
  CHECK(tu_next_event(agent, 50) == NULL);
  tu_request(client, "authenticate", "{\"methodId\":\"token\"}", NULL, NULL);
  tu_answer(tu_expect_request(agent, "authenticate"), "{}");
  acp_event_free(client_result(client));
  tu_request(client, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL, NULL);
  tu_answer(tu_expect_request(agent, "session/new"), "{\"sessionId\":\"s1\"}");
  ev = client_result(client);
  CHECK_OK(acp_event_result_status(ev));
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

/* ---- callback mode on both ends ---- */

typedef struct {
  atomic_int in_callback;
  atomic_int overlaps;
  atomic_int failures;
  atomic_int closed;
  tu_box box; /* client side: events for the test thread */
} side_ctx;

/* The agent answers everything itself, inside its callback. */
static void agent_cb(void *user, acp_event *ev) {
  side_ctx *x = user;
  if (atomic_fetch_add(&x->in_callback, 1) != 0) atomic_fetch_add(&x->overlaps, 1);
  int k = acp_event_get_kind(ev);
  if (k == ACP_EVENT_REQUEST) {
    acp_request *req = NULL;
    if (acp_event_take_request(ev, &req) != ACP_OK) atomic_fetch_add(&x->failures, 1);
    const char *m;
    size_t n;
    acp_request_method(req, &m, &n);
    const char *result = "{}";
    if (n == 10 && memcmp(m, "initialize", 10) == 0) result = INIT_RESULT;
    else if (n == 11 && memcmp(m, "session/new", 11) == 0) result = "{\"sessionId\":\"s1\"}";
    else if (n == 14 && memcmp(m, "session/prompt", 14) == 0) result = "{\"stopReason\":\"end_turn\"}";
    if (acp_request_respond(req, acp_str_from_cstr(result), NULL) != ACP_OK)
      atomic_fetch_add(&x->failures, 1);
    acp_request_free(req);
  }
  if (k == ACP_EVENT_CLOSED) atomic_store(&x->closed, 1);
  tu_sleep_ms(1);
  atomic_fetch_sub(&x->in_callback, 1);
  acp_event_free(ev);
}

static void client_cb(void *user, acp_event *ev) {
  side_ctx *x = user;
  if (atomic_fetch_add(&x->in_callback, 1) != 0) atomic_fetch_add(&x->overlaps, 1);
  tu_sleep_ms(1);
  atomic_fetch_sub(&x->in_callback, 1);
  tu_box_put(&x->box, ev);
}

static acp_event *box_next_result(tu_box *b) {
  for (;;) {
    acp_event *ev = tu_box_take(b, 10000);
    CHECK(ev != NULL);
    if (acp_event_get_kind(ev) == ACP_EVENT_RESULT) return ev;
    acp_event_free(ev);
  }
}

void test_agent_callback_mode_both_ends(void) {
  static side_ctx a, c;
  tu_box_init(&a.box);
  tu_box_init(&c.box);
  acp_options *ao = NULL, *co = NULL;
  CHECK_OK(acp_options_new(&ao));
  CHECK_OK(acp_options_new(&co));
  CHECK_OK(acp_options_set_event_callback(ao, agent_cb, &a));
  CHECK_OK(acp_options_set_event_callback(co, client_cb, &c));
  acp_connection *client, *agent;
  tu_pair(co, ao, false, &client, &agent);
  acp_options_free(ao);
  acp_options_free(co);
  const char *calls[][2] = {
      {"initialize", "{\"protocolVersion\":1}"},
      {"session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}"},
      {"session/prompt", PROMPT_S1},
  };
  for (size_t i = 0; i < 3; i++) {
    tu_request(client, calls[i][0], calls[i][1], NULL, NULL);
    acp_event *ev = box_next_result(&c.box);
    CHECK_MSG(acp_event_result_status(ev) == ACP_OK, "%s failed", calls[i][0]);
    acp_event_free(ev);
  }
  /* Many calls at once: each callback still runs one at a time. */
  for (int i = 0; i < 20; i++) tu_request(client, "_test/echo", "{}", NULL, NULL);
  for (int i = 0; i < 20; i++) {
    acp_event *ev = box_next_result(&c.box);
    CHECK_OK(acp_event_result_status(ev));
    acp_event_free(ev);
  }
  CHECK_OK(acp_connection_close(client));
  acp_connection_free(client);
  int64_t deadline = tu_now_ms() + tu_ms(5000);
  while (!atomic_load(&a.closed) && tu_now_ms() < deadline) tu_sleep_ms(10);
  CHECK(atomic_load(&a.closed));
  acp_connection_free(agent);
  CHECK(atomic_load(&a.overlaps) == 0 && atomic_load(&c.overlaps) == 0);
  CHECK(atomic_load(&a.failures) == 0);
  tu_box_destroy(&a.box);
  tu_box_destroy(&c.box);
}

/* ---- the trace callback runs on libacp's threads ---- */

typedef struct {
  _Atomic(acp_connection *) conn;
  atomic_int calls;
  atomic_int wrong_thread;
  atomic_int other;
} trace_ctx;

static void blocking_trace(void *user, acp_direction dir, const char *f, size_t n) {
  (void)dir;
  (void)f;
  (void)n;
  trace_ctx *x = user;
  acp_connection *c = atomic_load(&x->conn);
  if (!c) return;
  atomic_fetch_add(&x->calls, 1);
  acp_status s[3] = {
      acp_connection_close(c),
      acp_connection_notify(c, S("_test/x"), (acp_str){0}, NULL),
      acp_connection_cancel_session(c, S("s1"), NULL),
  };
  for (int i = 0; i < 3; i++) {
    if (s[i] == ACP_ERR_WRONG_THREAD) atomic_fetch_add(&x->wrong_thread, 1);
    else atomic_fetch_add(&x->other, 1);
  }
}

void test_agent_blocking_calls_refused_in_trace_callback(void) {
  static trace_ctx x;
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK_OK(acp_options_set_trace_callback(o, blocking_trace, &x));
  acp_connection *client, *agent;
  tu_pair(o, NULL, false, &client, &agent);
  acp_options_free(o);
  atomic_store(&x.conn, client);
  tu_request(client, "initialize", "{\"protocolVersion\":1}", NULL, NULL);
  tu_answer(tu_expect_request(agent, "initialize"), INIT_RESULT);
  acp_event *ev = client_result(client);
  CHECK_OK(acp_event_result_status(ev)); /* the close above did not happen */
  acp_event_free(ev);
  /* Round trips on an idle connection: the request is then written by this
   * thread itself, so the trace callback runs here, inside
   * acp_connection_request; a blocking call from it must be refused here
   * too (it once waited for that very write). */
  for (int i = 0; i < 10; i++) {
    tu_request(client, "_test/x", "{}", NULL, NULL);
    tu_answer(tu_expect_request(agent, "_test/x"), "{}");
    ev = client_result(client);
    CHECK_OK(acp_event_result_status(ev));
    acp_event_free(ev);
  }
  atomic_store(&x.conn, NULL);
  CHECK(atomic_load(&x.calls) >= 22); /* each request out, each answer in */
  CHECK_MSG(atomic_load(&x.other) == 0, "%d calls were not WRONG_THREAD",
            atomic_load(&x.other));
  tu_close_pair(client, agent);
}

void test_agent_peer_closes_input(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  open_session(client, agent);
  tu_request(client, "session/prompt", PROMPT_S1, NULL, NULL);
  acp_request *req = tu_expect_request(agent, "session/prompt");
  /* The agent asks for permission; the client never answers, it goes away. */
  int marker;
  tu_request(agent, "session/request_permission",
          "{\"sessionId\":\"s1\",\"toolCall\":{\"toolCallId\":\"t1\"},\"options\":"
          "[{\"optionId\":\"a\",\"name\":\"Allow\",\"kind\":\"allow_once\"}]}",
          &marker, NULL);
  acp_event *ev = tu_next_non_log(client, 10000);
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_REQUEST);
  acp_connection_free(client); /* the request in `ev` is answered -32603 */
  acp_event_free(ev);
  /* The permission call gets -32603 or ends CLOSED; then CLOSED comes. */
  bool result = false;
  for (;;) {
    ev = tu_next_non_log(agent, 10000);
    int k = acp_event_get_kind(ev);
    if (k == ACP_EVENT_RESULT) {
      CHECK(acp_event_call_data(ev) == &marker);
      acp_status st = acp_event_result_status(ev);
      CHECK_MSG(st == ACP_ERR_CLOSED ||
                    (st == ACP_ERR_RPC && acp_error_code(acp_event_error(ev)) == -32603),
                "status %s", acp_status_str(st));
      result = true;
    } else if (k == ACP_EVENT_REQUEST_CANCELLED) {
      /* the prompt, cancelled by the connection's end */
    } else {
      CHECK_MSG(k == ACP_EVENT_CLOSED, "kind %d", k);
      CHECK(result);
      acp_event_free(ev);
      break;
    }
    acp_event_free(ev);
  }
  CHECK(acp_request_is_cancelled(req));
  CHECK_STATUS(acp_request_respond(req, ACP_STR("{\"stopReason\":\"end_turn\"}"), NULL),
               ACP_ERR_CLOSED);
  acp_request_free(req);
  acp_connection_free(agent);
}

/* The client closes with calls pending: each ends with an ACP_ERR_CLOSED
 * result event, then ACP_EVENT_CLOSED comes, last. The peer here is a C
 * agent that never answers (with libacp-interop-agent the agent's late
 * answer can race the close: see tests/c/README.md, known core bugs). */
void test_client_close_with_pending_calls(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  open_session(client, agent);
  tu_request(client, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL, NULL);
  tu_answer(tu_expect_request(agent, "session/new"), "{\"sessionId\":\"s2\"}");
  acp_event_free(client_result(client));
  int a, b, c;
  tu_request(client, "session/prompt", PROMPT_S1, &a, NULL);
  tu_request(client, "session/prompt",
          "{\"sessionId\":\"s2\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}", &b, NULL);
  tu_request(client, "_test/slow", "{}", &c, NULL);
  acp_request *parked[3];
  for (int i = 0; i < 3; i++) {
    acp_event *ev = tu_next_non_log(agent, 10000);
    CHECK(acp_event_get_kind(ev) == ACP_EVENT_REQUEST);
    CHECK_OK(acp_event_take_request(ev, &parked[i]));
    acp_event_free(ev);
  }
  CHECK_OK(acp_connection_close(client));
  bool got[3] = {false, false, false};
  for (;;) {
    acp_event *ev = tu_next_event(client, 10000);
    CHECK_MSG(ev != NULL, "no ACP_EVENT_CLOSED");
    int k = acp_event_get_kind(ev);
    if (k == ACP_EVENT_RESULT) {
      CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_CLOSED);
      CHECK_STATUS(acp_error_status(acp_event_error(ev)), ACP_ERR_CLOSED);
      void *d = acp_event_call_data(ev);
      CHECK(d == &a || d == &b || d == &c);
      got[d == &a ? 0 : d == &b ? 1 : 2] = true;
    } else {
      CHECK_MSG(k == ACP_EVENT_CLOSED, "kind %d", k);
      CHECK_MSG(got[0] && got[1] && got[2], "CLOSED before the pending results");
      const char *p;
      size_t n;
      CHECK_OK(acp_event_text(ev, &p, &n));
      CHECK(n > 0);
      acp_event_free(ev);
      break;
    }
    acp_event_free(ev);
  }
  /* CLOSED is the last event. */
  tu_sleep_ms(100);
  acp_event *ev = NULL;
  CHECK_STATUS(acp_connection_next_event(client, &ev), ACP_ERR_EMPTY);
  acp_connection_free(client);
  /* The agent saw its input end; its requests can no longer be answered. */
  tu_drain_until_closed(agent, 5000);
  for (int i = 0; i < 3; i++) {
    CHECK(acp_request_is_cancelled(parked[i]));
    CHECK_STATUS(acp_request_respond(parked[i], ACP_STR("{}"), NULL), ACP_ERR_CLOSED);
    acp_request_free(parked[i]);
  }
  acp_connection_free(agent);
}
