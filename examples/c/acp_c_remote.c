/*
 * acp-c-remote: remote ACP from C, both ends in one program.
 *
 * A server (acp_server_new) listens on 127.0.0.1 (any free port) and hands
 * each remote connection to a callback as an agent-role acp_connection
 * (callback mode: its events carry that connection's own state). A client
 * (acp_connection_connect) then reaches it over WebSocket and over
 * Streamable HTTP, in poll mode, and runs a whole turn each time:
 * initialize, session/new, session/prompt, whose reply streams as
 * session/update notifications before the prompt's result.
 *
 *   acp-c-remote            # prints each turn, exits 0
 *   acp-c-remote --token T  # the server requires "Authorization: Bearer T";
 *                           # the client first tries a wrong one (401)
 */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acp.h>

#define SESSION "s1"

/* The agent side: one per remote connection. */
typedef struct {
  acp_connection *conn;
  int closed;
} agent;

static int has(const char *p, size_t n, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; p && i + k <= n; i++)
    if (memcmp(p + i, needle, k) == 0) return 1;
  return 0;
}

static void respond(acp_request *req, const char *json) {
  acp_request_respond(req, acp_str_from_cstr(json), NULL);
  acp_request_free(req);
}

/* The agent's event callback, on its connection's dispatch thread. */
static void agent_event(void *user_data, acp_event *ev) {
  agent *a = user_data;
  if (acp_event_get_kind(ev) == ACP_EVENT_REQUEST) {
    const char *m;
    size_t n;
    acp_event_method(ev, &m, &n);
    acp_request *req = NULL;
    acp_event_take_request(ev, &req);
    if (has(m, n, "initialize")) {
      respond(req, "{\"protocolVersion\":1,\"agentCapabilities\":{}}");
    } else if (has(m, n, "session/new")) {
      respond(req, "{\"sessionId\":\"" SESSION "\"}");
    } else if (has(m, n, "session/prompt")) {
      const char *words[] = {"Hello ", "from ", "a remote ", "C agent."};
      for (size_t i = 0; i < 4; i++) {
        char params[256];
        snprintf(params, sizeof params,
                 "{\"sessionId\":\"" SESSION "\",\"update\":{\"sessionUpdate\":"
                 "\"agent_message_chunk\",\"content\":{\"type\":\"text\","
                 "\"text\":\"%s\"}}}",
                 words[i]);
        acp_connection_notify(a->conn, ACP_STR("session/update"),
                              acp_str_from_cstr(params), NULL);
      }
      respond(req, "{\"stopReason\":\"end_turn\"}");
    } else {
      acp_request_respond_error(req, -32601, ACP_STR("Method not found"),
                                (acp_str){NULL, 0}, NULL);
      acp_request_free(req);
    }
  } else if (acp_event_get_kind(ev) == ACP_EVENT_CLOSED) {
    /* The last event: free the connection on another thread (not here,
     * acp_connection_free would defer); this program frees them at exit. */
    a->closed = 1;
  }
  acp_event_free(ev);
}

/* Every connection the server handed over, freed at exit. */
static agent *agents[64];
static size_t n_agents;

/* The server callback, on the server's thread. */
static void on_connection(void *server_user_data, acp_connection *conn,
                          void **event_user_data) {
  (void)server_user_data;
  agent *a = calloc(1, sizeof *a);
  if (!a || n_agents == 64) {
    free(a);
    acp_connection_free(conn); /* refused */
    return;
  }
  a->conn = conn;
  agents[n_agents++] = a;
  *event_user_data = a;
}

static void fail(const char *what, acp_status st, acp_error *err) {
  const char *m = "";
  size_t n = 0;
  if (err) acp_error_message(err, &m, &n);
  fprintf(stderr, "%s: %s: %.*s\n", what, acp_status_str((int)st), (int)n, m);
  exit(1);
}

/* The next event of a poll-mode connection, waiting on its wake-up fd
 * (10 s at most). */
static acp_event *next_event(acp_connection *c) {
  for (int waited = 0; waited < 100; waited++) {
    acp_event *ev = NULL;
    if (acp_connection_next_event(c, &ev) == ACP_OK) return ev;
    struct pollfd p = {acp_connection_wakeup_fd(c), POLLIN, 0};
    poll(&p, 1, 100);
  }
  fprintf(stderr, "no event within 10 s\n");
  exit(1);
}

/* Sends a request and waits for its result; prints the text of the
 * updates that come first. Returns the result event (yours to free). */
static acp_event *call(acp_connection *c, const char *method,
                       const char *params) {
  acp_error *err = NULL;
  acp_status st = acp_connection_request(c, acp_str_from_cstr(method),
                                         acp_str_from_cstr(params), NULL,
                                         NULL, &err);
  if (st != ACP_OK) fail(method, st, err);
  for (;;) {
    acp_event *ev = next_event(c);
    int kind = acp_event_get_kind(ev);
    if (kind == ACP_EVENT_RESULT) return ev;
    if (kind == ACP_EVENT_NOTIFICATION) {
      const char *p;
      size_t n;
      acp_event_params(ev, &p, &n);
      /* The text of an agent_message_chunk, without a JSON parser. */
      const char *key = "\"text\":\"";
      for (size_t i = 0; i + strlen(key) <= n; i++) {
        if (memcmp(p + i, key, strlen(key)) == 0) {
          size_t start = i + strlen(key), end = start;
          while (end < n && p[end] != '"') end++;
          printf("%.*s", (int)(end - start), p + start);
          break;
        }
      }
    }
    acp_event_free(ev);
  }
}

static void turn(const char *url, const acp_options *options) {
  acp_connection *c = NULL;
  acp_error *err = NULL;
  acp_status st =
      acp_connection_connect(options, acp_str_from_cstr(url), &c, &err);
  if (st != ACP_OK) fail(url, st, err);
  printf("%s\n", url);
  const char *methods[] = {"initialize", "session/new", "session/prompt"};
  const char *params[] = {
      "{\"protocolVersion\":1,\"clientCapabilities\":{}}",
      "{\"cwd\":\"/tmp\",\"mcpServers\":[]}",
      "{\"sessionId\":\"" SESSION "\",\"prompt\":[{\"type\":\"text\","
      "\"text\":\"hi\"}]}"};
  for (size_t i = 0; i < 3; i++) {
    acp_event *ev = call(c, methods[i], params[i]);
    if (acp_event_result_status(ev) != ACP_OK)
      fail(methods[i], acp_event_result_status(ev),
           (acp_error *)acp_event_error(ev));
    if (i == 2) {
      const char *r;
      size_t n;
      acp_event_result(ev, &r, &n);
      printf("\nstop reason: %s\n", has(r, n, "end_turn") ? "end_turn" : "?");
    }
    acp_event_free(ev);
  }
  acp_connection_free(c);
}

int main(int argc, char **argv) {
  const char *token = argc == 3 && strcmp(argv[1], "--token") == 0 ? argv[2] : NULL;
  acp_options *so = NULL;
  acp_options_new(&so);
  acp_options_set_event_callback(so, agent_event, NULL);
  acp_error *err = NULL;
  if (token)
    acp_options_add_string(so, ACP_STR("bearer_tokens"),
                           acp_str_from_cstr(token), &err);
  acp_server *server = NULL;
  acp_status st = acp_server_new(so, ACP_STR("127.0.0.1:0"), on_connection,
                                 NULL, &server, &err);
  acp_options_free(so);
  if (st != ACP_OK) fail("acp_server_new", st, err);

  acp_options *co = NULL;
  acp_options_new(&co);
  const char *url;
  size_t url_len;
  char ws[128], http[128];
  acp_server_url(server, ACP_REMOTE_WEBSOCKET, &url, &url_len);
  snprintf(ws, sizeof ws, "%.*s", (int)url_len, url);
  acp_server_url(server, ACP_REMOTE_STREAMABLE_HTTP, &url, &url_len);
  snprintf(http, sizeof http, "%.*s", (int)url_len, url);

  if (token) {
    /* A wrong token: refused at the WebSocket handshake, typed. */
    acp_options_add_pair(co, ACP_STR("headers"), ACP_STR("Authorization"),
                         ACP_STR("Bearer wrong"), NULL);
    acp_connection *c = NULL;
    st = acp_connection_connect(co, acp_str_from_cstr(ws), &c, &err);
    const char *kind = "";
    size_t kind_len = 0;
    if (st == ACP_ERR_REMOTE) acp_error_kind(err, &kind, &kind_len);
    printf("wrong token: %s, %.*s (HTTP %u)\n", acp_status_str((int)st),
           (int)kind_len, kind, (unsigned)acp_error_http_status(err));
    acp_error_free(err);
    err = NULL;
    if (st == ACP_OK) acp_connection_free(c);
    acp_options_unset(co, ACP_STR("headers"), NULL);
    char bearer[256];
    snprintf(bearer, sizeof bearer, "Bearer %s", token);
    acp_options_add_pair(co, ACP_STR("headers"), ACP_STR("Authorization"),
                         acp_str_from_cstr(bearer), NULL);
  }
  turn(ws, co);
  turn(http, co);
  acp_options_free(co);

  /* Graceful: nothing is in flight, so this returns at once. */
  st = acp_server_shutdown(server, &err);
  if (st != ACP_OK) fail("acp_server_shutdown", st, err);
  printf("served %zu connections\n", n_agents);
  acp_server_free(server);
  for (size_t i = 0; i < n_agents; i++) {
    acp_connection_free(agents[i]->conn);
    free(agents[i]);
  }
  return 0;
}
