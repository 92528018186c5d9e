/* Remote ACP through the C ABI: a C server (acp_server_new) whose callback
 * receives each remote connection as an agent-role acp_connection, and C
 * clients (acp_connection_connect) reaching it over ws:// and http:// on
 * 127.0.0.1. The served agents run in callback mode, each with its own
 * event user_data set by the server callback; the clients poll. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"

#define INIT_RESULT                                                          \
  "{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[]}"
#define CHUNK(text)                                                          \
  "{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":"                     \
  "\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"" text  \
  "\"}}}"
#define PROMPT_S1                                                            \
  "{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}"
#define MAX_AGENTS 16

/* One served connection: what its event callback needs. */
typedef struct {
  acp_connection *conn;
  atomic_int closed;
  atomic_int requests;
} served;

/* What the server callback fills: every connection handed over. */
typedef struct {
  pthread_mutex_t mu;
  served *agents[MAX_AGENTS];
  atomic_int count;
  atomic_int wrong_user_data;
} server_state;

static const char *method_of(acp_event *ev, size_t *n) {
  const char *p = NULL;
  CHECK_OK(acp_event_method(ev, &p, n));
  return p;
}

static bool is(const char *p, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(p, lit, n) == 0;
}

/* The served agent: initialize, session/new "s1", and a prompt turn of two
 * chunks then end_turn. Runs on the connection's dispatch thread; `ud` is
 * the `served` the server callback put in *event_user_data. */
static void agent_event(void *ud, acp_event *ev) {
  served *a = ud;
  int kind = acp_event_get_kind(ev);
  if (kind == ACP_EVENT_REQUEST) {
    atomic_fetch_add(&a->requests, 1);
    size_t n;
    const char *m = method_of(ev, &n);
    acp_request *req = NULL;
    CHECK_OK(acp_event_take_request(ev, &req));
    if (is(m, n, "initialize")) {
      CHECK_OK(acp_request_respond(req, S(INIT_RESULT), NULL));
    } else if (is(m, n, "session/new")) {
      CHECK_OK(acp_request_respond(req, S("{\"sessionId\":\"s1\"}"), NULL));
    } else if (is(m, n, "session/prompt")) {
      CHECK_OK(acp_connection_notify(a->conn, S("session/update"),
                                     S(CHUNK("one")), NULL));
      CHECK_OK(acp_connection_notify(a->conn, S("session/update"),
                                     S(CHUNK("two")), NULL));
      CHECK_OK(acp_request_respond(req, S("{\"stopReason\":\"end_turn\"}"),
                                   NULL));
    } else {
      CHECK_OK(acp_request_respond_error(req, -32601, S("Method not found"),
                                         (acp_str){0}, NULL));
    }
    acp_request_free(req);
  } else if (kind == ACP_EVENT_CLOSED) {
    atomic_store(&a->closed, 1);
  }
  acp_event_free(ev);
}

/* The server callback: keeps the connection and gives it its own event
 * user_data. */
static void on_connection(void *user_data, acp_connection *conn,
                          void **event_user_data) {
  server_state *s = user_data;
  /* The options' user_data is what the slot holds at first. */
  if (*event_user_data != s) atomic_store(&s->wrong_user_data, 1);
  served *a = calloc(1, sizeof *a);
  CHECK(a != NULL);
  a->conn = conn;
  pthread_mutex_lock(&s->mu);
  int i = atomic_load(&s->count);
  CHECK(i < MAX_AGENTS);
  s->agents[i] = a;
  atomic_store(&s->count, i + 1);
  pthread_mutex_unlock(&s->mu);
  *event_user_data = a;
}

static void wait_until(atomic_int *flag, int want, int timeout_ms,
                       const char *what) {
  int64_t deadline = tu_now_ms() + tu_ms(timeout_ms);
  while (atomic_load(flag) < want) {
    CHECK_MSG(tu_now_ms() < deadline, "%s: not within %d ms", what,
              tu_ms(timeout_ms));
    tu_sleep_ms(5);
  }
}

/* A server on 127.0.0.1, any port, its agents in callback mode. `extra`
 * may set more options on the server's options. */
static acp_server *start_server(server_state *s,
                                void (*extra)(acp_options *)) {
  memset(s, 0, sizeof *s);
  pthread_mutex_init(&s->mu, NULL);
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK_OK(acp_options_set_event_callback(o, agent_event, s));
  if (extra) extra(o);
  acp_server *server = NULL;
  acp_error *err = NULL;
  acp_status st =
      acp_server_new(o, S("127.0.0.1:0"), on_connection, s, &server, &err);
  if (st != ACP_OK) {
    size_t n;
    const char *m = tu_error_text(err, &n);
    CHECK_MSG(false, "acp_server_new: %s: %.*s", acp_status_str(st), (int)n,
              m);
  }
  acp_options_free(o);
  CHECK(acp_server_port(server) > 0);
  return server;
}

/* Frees the server, then every connection it handed over (each sees
 * ACP_EVENT_CLOSED first). */
static void stop_server(acp_server *server, server_state *s) {
  acp_server_free(server);
  for (int i = 0; i < atomic_load(&s->count); i++) {
    served *a = s->agents[i];
    wait_until(&a->closed, 1, 10000, "a served connection closes");
    acp_connection_free(a->conn);
    free(a);
  }
  CHECK(atomic_load(&s->wrong_user_data) == 0);
  pthread_mutex_destroy(&s->mu);
}

static char *url_of(acp_server *server, int kind) {
  const char *p = NULL;
  size_t n = 0;
  CHECK_OK(acp_server_url(server, kind, &p, &n));
  return strndup(p, n);
}

static acp_connection *connect_ok(const acp_options *o, const char *url) {
  acp_connection *c = NULL;
  acp_error *err = NULL;
  acp_status st = acp_connection_connect(o, tu_str(url), &c, &err);
  if (st != ACP_OK) {
    size_t n;
    const char *m = tu_error_text(err, &n);
    CHECK_MSG(false, "connect %s: %s: %.*s", url, acp_status_str(st), (int)n,
              m);
  }
  CHECK(c != NULL);
  return c;
}

static void check_kind(const acp_error *e, const char *want) {
  const char *p = NULL;
  size_t n = 0;
  CHECK(e != NULL);
  CHECK_OK(acp_error_kind(e, &p, &n));
  CHECK_MSG(p != NULL && is(p, n, want), "kind %.*s, want %s", (int)n,
            p ? p : "(none)", want);
}

/* A whole turn: initialize, session/new, a prompt whose two updates arrive
 * before its end_turn result; then the client closes. */
static void whole_turn(int kind) {
  server_state s;
  acp_server *server = start_server(&s, NULL);
  char *url = url_of(server, kind);
  CHECK(strncmp(url, kind == ACP_REMOTE_WEBSOCKET ? "ws://127.0.0.1:" : "http://127.0.0.1:",
                kind == ACP_REMOTE_WEBSOCKET ? 15 : 17) == 0);
  acp_connection *c = connect_ok(NULL, url);
  acp_event *ev = tu_call_ok(c, "initialize",
                             "{\"protocolVersion\":1,\"clientCapabilities\":{}}");
  acp_event_free(ev);
  CHECK(acp_connection_protocol_version(c) == 1);
  ev = tu_call_ok(c, "session/new", "{\"cwd\":\"/tmp\",\"mcpServers\":[]}");
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "\"sessionId\":\"s1\"");
  acp_event_free(ev);
  CHECK_OK(acp_connection_request(c, S("session/prompt"), S(PROMPT_S1), NULL,
                                  NULL, NULL));
  int notifications = 0;
  ev = tu_wait_result(c, 10000, &notifications);
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "end_turn");
  acp_event_free(ev);
  CHECK_MSG(notifications == 2, "%d updates before the result",
            notifications);
  CHECK(atomic_load(&s.count) == 1);
  CHECK(atomic_load(&s.agents[0]->requests) == 3);
  CHECK_OK(acp_connection_close(c));
  tu_drain_until_closed(c, 10000);
  acp_connection_free(c);
  /* The served connection sees the client go. */
  wait_until(&s.agents[0]->closed, 1, 10000, "the served connection closes");
  free(url);
  stop_server(server, &s);
}

void test_remote_ws_whole_turn(void) { whole_turn(ACP_REMOTE_WEBSOCKET); }

void test_remote_http_whole_turn(void) {
  whole_turn(ACP_REMOTE_STREAMABLE_HTTP);
}

/* The callback receives every connection (in poll mode too: the clients
 * poll, the server's agents use callbacks); acp_server_connections counts
 * them; shutdown returns and closes them all. */
void test_remote_server_callback_and_shutdown(void) {
  server_state s;
  acp_server *server = start_server(&s, NULL);
  const char *addr;
  size_t addr_len;
  CHECK_OK(acp_server_local_address(server, &addr, &addr_len));
  char *want = tu_fmt("127.0.0.1:%u", (unsigned)acp_server_port(server));
  CHECK(is(addr, addr_len, want));
  free(want);
  const char *p;
  size_t n;
  CHECK_STATUS(acp_server_url(server, 2, &p, &n), ACP_ERR_INVALID_ARGUMENT);
  /* The same port again: taken. */
  acp_server *again = (acp_server *)0x1;
  acp_error *bind_err = NULL;
  CHECK_STATUS(acp_server_new(NULL, (acp_str){addr, addr_len}, on_connection, NULL, &again,
                              &bind_err),
               ACP_ERR_IO);
  CHECK(again == (acp_server *)0x1);
  acp_error_free(bind_err);
  acp_connection *clients[3];
  for (int i = 0; i < 3; i++) {
    char *url = url_of(server, i == 1 ? ACP_REMOTE_STREAMABLE_HTTP
                                      : ACP_REMOTE_WEBSOCKET);
    clients[i] = connect_ok(NULL, url);
    free(url);
    /* initialize: over HTTP the connection exists once it is made. */
    acp_event *ev = tu_call_ok(
        clients[i], "initialize",
        "{\"protocolVersion\":1,\"clientCapabilities\":{}}");
    acp_event_free(ev);
  }
  wait_until(&s.count, 3, 10000, "three connections handed over");
  CHECK_MSG(acp_server_connections(server) == 3, "%zu connections",
            acp_server_connections(server));
  int64_t start = tu_now_ms();
  acp_error *err = NULL;
  CHECK_OK(acp_server_shutdown(server, &err));
  /* Nothing in flight: well below the grace (10 s) plus 5 s. */
  CHECK_MSG(tu_now_ms() - start < tu_ms(15000), "shutdown took %lld ms",
            (long long)(tu_now_ms() - start));
  CHECK(acp_server_connections(server) == 0);
  for (int i = 0; i < 3; i++) {
    wait_until(&s.agents[i]->closed, 1, 10000, "a served connection closes");
    tu_drain_until_closed(clients[i], 10000);
    acp_connection_free(clients[i]);
  }
  /* Idempotent; and a new client is refused now. */
  CHECK_OK(acp_server_shutdown(server, NULL));
  stop_server(server, &s);
}

/* A port where nobody listens: bound, not listening (refused at once),
 * and held, so no one else takes it meanwhile. */
void test_remote_connect_refused_is_typed(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(fd >= 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
  socklen_t len = sizeof sa;
  CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
  const char *schemes[] = {"ws", "http"};
  for (int i = 0; i < 2; i++) {
    char *url = tu_fmt("%s://127.0.0.1:%u/acp", schemes[i],
                       (unsigned)ntohs(sa.sin_port));
    acp_connection *c = (acp_connection *)0x1;
    acp_error *err = NULL;
    acp_status st = acp_connection_connect(NULL, tu_str(url), &c, &err);
    if (st == ACP_OK) {
      /* Streamable HTTP connects lazily: the first request fails. */
      CHECK(i == 1);
      CHECK_OK(acp_connection_request(
          c, S("initialize"), S("{\"protocolVersion\":1}"), NULL, NULL, NULL));
      acp_event *ev = tu_wait_result(c, 10000, NULL);
      CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_REMOTE);
      check_kind(acp_event_error(ev), "refused");
      acp_event_free(ev);
      ev = tu_next_non_log(c, 10000);
      CHECK(acp_event_get_kind(ev) == ACP_EVENT_CLOSED);
      check_kind(acp_event_error(ev), "refused");
      acp_event_free(ev);
      acp_connection_free(c);
    } else {
      CHECK_STATUS(st, ACP_ERR_REMOTE);
      CHECK(c == (acp_connection *)0x1);
      CHECK_STATUS(acp_error_status(err), ACP_ERR_REMOTE);
      check_kind(err, "refused");
      CHECK(acp_error_http_status(err) == 0);
      acp_error_free(err);
    }
    free(url);
  }
  close(fd);
  /* Not a URL at all. */
  acp_error *err = NULL;
  acp_connection *c = (acp_connection *)0x1;
  CHECK_STATUS(acp_connection_connect(NULL, S("ftp://127.0.0.1/acp"), &c, &err),
               ACP_ERR_REMOTE);
  check_kind(err, "invalid_url");
  acp_error_free(err);
  CHECK(c == (acp_connection *)0x1);
}

static void bearer_secret(acp_options *o) {
  acp_error *err = NULL;
  CHECK_OK(acp_options_add_string(o, S("bearer_tokens"), S("s3cret"), &err));
}

static acp_options *with_token(const char *token) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  char *value = tu_fmt("Bearer %s", token);
  CHECK_OK(acp_options_add_pair(o, S("headers"), S("Authorization"),
                                tu_str(value), NULL));
  free(value);
  return o;
}

/* bearer_tokens set: a wrong token is 401, typed `unauthorized`, before
 * any agent code runs; the right one gets in. */
void test_remote_wrong_token_is_unauthorized(void) {
  server_state s;
  acp_server *server = start_server(&s, bearer_secret);
  acp_options *wrong = with_token("guess");
  /* WebSocket: refused at the handshake, in acp_connection_connect. */
  char *ws = url_of(server, ACP_REMOTE_WEBSOCKET);
  acp_connection *c = (acp_connection *)0x1;
  acp_error *err = NULL;
  CHECK_STATUS(acp_connection_connect(wrong, tu_str(ws), &c, &err),
               ACP_ERR_REMOTE);
  CHECK(c == (acp_connection *)0x1);
  check_kind(err, "unauthorized");
  CHECK(acp_error_http_status(err) == 401);
  acp_error_free(err);
  /* Streamable HTTP: the initialize POST is refused; the call and the
   * close event say so. */
  char *http = url_of(server, ACP_REMOTE_STREAMABLE_HTTP);
  c = connect_ok(wrong, http);
  CHECK_OK(acp_connection_request(c, S("initialize"),
                                  S("{\"protocolVersion\":1}"), NULL, NULL,
                                  NULL));
  acp_event *ev = tu_wait_result(c, 10000, NULL);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_REMOTE);
  check_kind(acp_event_error(ev), "unauthorized");
  CHECK(acp_error_http_status(acp_event_error(ev)) == 401);
  acp_event_free(ev);
  ev = tu_next_non_log(c, 10000);
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_CLOSED);
  check_kind(acp_event_error(ev), "unauthorized");
  CHECK_STATUS(acp_error_status(acp_event_error(ev)), ACP_ERR_REMOTE);
  acp_event_free(ev);
  acp_connection_free(c);
  CHECK(atomic_load(&s.count) == 0);
  acp_options_free(wrong);
  /* The right token, both ways. */
  acp_options *right = with_token("s3cret");
  const char *urls[] = {ws, http};
  for (int i = 0; i < 2; i++) {
    c = connect_ok(right, urls[i]);
    ev = tu_call_ok(c, "initialize",
                    "{\"protocolVersion\":1,\"clientCapabilities\":{}}");
    acp_event_free(ev);
    CHECK_OK(acp_connection_close(c));
    tu_drain_until_closed(c, 10000);
    acp_connection_free(c);
  }
  CHECK(atomic_load(&s.count) == 2);
  acp_options_free(right);
  free(ws);
  free(http);
  stop_server(server, &s);
}

/* Freeing the server inside its own callback is allowed: it closes the
 * connection being handed over, and no callback follows. */
static void free_inside(void *user_data, acp_connection *conn,
                        void **event_user_data) {
  (void)event_user_data;
  acp_server **slot = user_data;
  acp_server_free(__atomic_load_n(slot, __ATOMIC_SEQ_CST));
  acp_connection_free(conn);
  /* Last: the test waits for it before its frame (the slot) ends. */
  __atomic_store_n(slot, NULL, __ATOMIC_SEQ_CST);
}

void test_remote_server_freed_inside_its_callback(void) {
  acp_server *server = NULL;
  acp_error *err = NULL;
  CHECK_OK(acp_server_new(NULL, S("127.0.0.1:0"), free_inside, &server,
                          &server, &err));
  /* Streamable HTTP: the connection is made by the initialize POST, which
   * the freed server never answers. */
  char *url = url_of(server, ACP_REMOTE_STREAMABLE_HTTP);
  acp_connection *c = connect_ok(NULL, url);
  CHECK_OK(acp_connection_request(c, S("initialize"),
                                  S("{\"protocolVersion\":1}"), NULL, NULL,
                                  NULL));
  acp_event *ev = tu_wait_result(c, 10000, NULL);
  CHECK(acp_event_result_status(ev) != ACP_OK);
  acp_event_free(ev);
  tu_drain_until_closed(c, 10000);
  /* The callback clears the slot after acp_server_free returns, which can
   * be after this client saw the close that freeing caused; the slot is
   * this frame's, so wait for the callback's last touch of it. */
  int64_t deadline = tu_now_ms() + tu_ms(10000);
  while (__atomic_load_n(&server, __ATOMIC_SEQ_CST) != NULL) {
    CHECK_MSG(tu_now_ms() < deadline,
              "the callback freed the server: not within %d ms", tu_ms(10000));
    tu_sleep_ms(5);
  }
  acp_connection_free(c);
  free(url);
}

/* Options that do not apply: refused by the constructors, by kind. */
void test_remote_options_not_applicable(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  /* A server option on a client connecting by URL. */
  CHECK_OK(acp_options_add_string(o, S("bearer_tokens"), S("t"), NULL));
  acp_connection *c = (acp_connection *)0x1;
  acp_error *err = NULL;
  CHECK_STATUS(acp_connection_connect(o, S("ws://127.0.0.1:1/acp"), &c, &err),
               ACP_ERR_INVALID_ARGUMENT);
  check_kind(err, "not_applicable");
  const char *p;
  size_t n;
  CHECK_OK(acp_error_message(err, &p, &n));
  CHECK_CONTAINS(p, n, "bearer_tokens");
  acp_error_free(err);
  err = NULL;
  CHECK(c == (acp_connection *)0x1);
  /* A client option on a server. */
  CHECK_OK(acp_options_unset(o, S("bearer_tokens"), NULL));
  CHECK_OK(acp_options_set_int(o, S("connect_timeout_ms"), 500, NULL));
  acp_server *server = (acp_server *)0x1;
  CHECK_STATUS(acp_server_new(o, S("127.0.0.1:0"), on_connection, NULL,
                              &server, &err),
               ACP_ERR_INVALID_ARGUMENT);
  check_kind(err, "not_applicable");
  acp_error_free(err);
  CHECK(server == (acp_server *)0x1);
  /* NULL callback. */
  CHECK_STATUS(acp_server_new(NULL, S("127.0.0.1:0"), NULL, NULL, &server,
                              NULL),
               ACP_ERR_NULL_ARGUMENT);
  /* An address that does not parse. */
  err = NULL;
  CHECK_STATUS(acp_server_new(NULL, S("not an address"), on_connection, NULL,
                              &server, &err),
               ACP_ERR_INVALID_ARGUMENT);
  acp_error_free(err);
  CHECK(server == (acp_server *)0x1);
  acp_options_free(o);
}
