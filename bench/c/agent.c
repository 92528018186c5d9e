/*
 * The bench agent on libacp's C ABI (callback mode), on stdin/stdout.
 * Every prompt is an event-driven state machine on the dispatch thread:
 * `stream N` notifies N chunks (acp_connection_notify blocks while the
 * outgoing queue is full: back-pressure), `read M` issues the next read
 * from the result event of the previous one, `write B` one write.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "common.h"

static acp_connection *CONN;
static pthread_mutex_t MU = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t CV = PTHREAD_COND_INITIALIZER;
static bool CLOSED;
static unsigned long SESSIONS;

enum { K_READ = 1, K_WRITE = 2 };

typedef struct {
  acp_request *req;
  char *sid;
  size_t sid_len;
  int kind;
  unsigned long long n, i;
} turn;

static void answer(acp_request *req, const char *json_text) {
  acp_error *err = NULL;
  if (acp_request_respond(req, acp_str_from_cstr(json_text), &err) != ACP_OK) acp_error_free(err);
  acp_request_free(req);
}

static void answer_error(acp_request *req, const char *message) {
  acp_error *err = NULL;
  if (acp_request_respond_error(req, -32603, acp_str_from_cstr(message), (acp_str){NULL, 0}, &err) != ACP_OK)
    acp_error_free(err);
  acp_request_free(req);
}

static void turn_end(turn *t, const char *error) {
  if (error)
    answer_error(t->req, error);
  else
    answer(t->req, "{\"stopReason\":\"end_turn\"}");
  free(t->sid);
  free(t);
}

/* Issues the turn's next read (or write). */
static void turn_call(turn *t) {
  jbuf b;
  jb_init(&b);
  jb_lit(&b, "{\"sessionId\":");
  jb_str(&b, t->sid, t->sid_len);
  const char *method;
  if (t->kind == K_READ) {
    char path[64];
    snprintf(path, sizeof path, READ_PREFIX "%llu", t->i);
    jb_lit(&b, ",\"path\":");
    jb_cstr(&b, path);
    method = "fs/read_text_file";
  } else {
    char *content = text_of((size_t)t->n);
    jb_lit(&b, ",\"path\":\"" WRITE_PATH "\",\"content\":");
    jb_str(&b, content, (size_t)t->n);
    free(content);
    method = "fs/write_text_file";
  }
  jb_lit(&b, "}");
  acp_error *err = NULL;
  acp_status st = acp_connection_request(CONN, S(method), SN(b.data, b.len), t, NULL, &err);
  jb_free(&b);
  if (st != ACP_OK) {
    acp_error_free(err);
    turn_end(t, acp_status_str(st));
  }
}

static void on_result(acp_event *ev) {
  turn *t = acp_event_call_data(ev);
  acp_status st = acp_event_result_status(ev);
  if (st != ACP_OK) {
    turn_end(t, acp_status_str(st));
    return;
  }
  if (t->kind == K_READ) {
    const char *text = NULL;
    size_t len = 0;
    acp_event_result(ev, &text, &len);
    json *r = json_parse(text, len, NULL, 0);
    size_t clen = 0;
    const char *content = json_string(json_get(r, "content"), &clen);
    bool ok = content && clen == READ_LEN;
    json_free(r);
    if (!ok) {
      turn_end(t, "read: wrong content length");
      return;
    }
    if (++t->i < t->n) {
      turn_call(t);
      return;
    }
  }
  turn_end(t, NULL);
}

/* Notifies N chunks; NULL, or the failure's message (malloc'd), which
 * fails the turn: a bench agent that sent fewer chunks than asked must not
 * answer end_turn as if it had sent them all. */
static char *stream(const char *sid, size_t sid_len, unsigned long long n) {
  jbuf b;
  jb_init(&b);
  char text[CHUNK_LEN + 1];
  char *failure = NULL;
  for (unsigned long long i = 0; i < n && !failure; i++) {
    b.len = 0;
    chunk_text(i, text);
    jb_lit(&b, "{\"sessionId\":");
    jb_str(&b, sid, sid_len);
    jb_lit(&b, ",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":");
    jb_str(&b, text, CHUNK_LEN);
    jb_lit(&b, "}}}");
    acp_error *err = NULL;
    acp_status st = acp_connection_notify(CONN, S("session/update"), SN(b.data, b.len), &err);
    if (st != ACP_OK) {
      const char *msg = NULL;
      size_t len = 0;
      if (!err || acp_error_message(err, &msg, &len) != ACP_OK) msg = acp_status_str(st), len = strlen(msg);
      failure = malloc(len + 64);
      snprintf(failure, len + 64, "chunk %llu not sent: %.*s", i, (int)len, msg);
      acp_error_free(err);
    }
  }
  jb_free(&b);
  return failure;
}

static void on_request(acp_event *ev) {
  acp_request *req = NULL;
  if (acp_event_take_request(ev, &req) != ACP_OK) return;
  const char *m = NULL, *p = NULL;
  size_t ml = 0, pl = 0;
  acp_request_method(req, &m, &ml);
  acp_request_params(req, &p, &pl);
  if (ml == 10 && memcmp(m, "initialize", 10) == 0) {
    answer(req, "{\"protocolVersion\":1,\"agentCapabilities\":{\"promptCapabilities\":{\"embeddedContext\":true}},\"authMethods\":[]}");
  } else if (ml == 11 && memcmp(m, "session/new", 11) == 0) {
    char out[64];
    snprintf(out, sizeof out, "{\"sessionId\":\"c-%lu\"}", ++SESSIONS);
    answer(req, out);
  } else if (ml == 14 && memcmp(m, "session/prompt", 14) == 0) {
    json *params = json_parse(p, pl, NULL, 0);
    size_t sl = 0, tl = 0;
    const char *sid = json_string(json_get(params, "sessionId"), &sl);
    const char *text = first_text(params, &tl);
    char word[16] = {0};
    unsigned long long n = 0;
    int got = text ? sscanf(text, "%15s %llu", word, &n) : 0;
    if (!sid || got < 1) {
      answer_error(req, "unknown bench command");
    } else if (strcmp(word, "echo") == 0) {
      answer(req, "{\"stopReason\":\"end_turn\"}");
    } else if (got == 2 && strcmp(word, "stream") == 0) {
      char *failure = stream(sid, sl, n);
      if (failure) {
        fprintf(stderr, "bench-c-agent: %s\n", failure);
        answer_error(req, failure);
        free(failure);
      } else {
        answer(req, "{\"stopReason\":\"end_turn\"}");
      }
    } else if (got == 2 && (strcmp(word, "read") == 0 || strcmp(word, "write") == 0)) {
      turn *t = calloc(1, sizeof *t);
      t->req = req;
      t->sid = malloc(sl + 1);
      memcpy(t->sid, sid, sl + 1);
      t->sid_len = sl;
      t->kind = word[0] == 'r' ? K_READ : K_WRITE;
      t->n = n;
      if (t->kind == K_READ && n == 0)
        turn_end(t, NULL);
      else
        turn_call(t);
    } else {
      answer_error(req, "unknown bench command");
    }
    json_free(params);
  } else {
    acp_error *err = NULL;
    if (acp_request_respond_error(req, -32601, ACP_STR("Method not found"), (acp_str){NULL, 0}, &err) != ACP_OK)
      acp_error_free(err);
    acp_request_free(req);
  }
}

static void on_event(void *user_data, acp_event *ev) {
  (void)user_data;
  switch (acp_event_get_kind(ev)) {
    case ACP_EVENT_REQUEST: on_request(ev); break;
    case ACP_EVENT_RESULT: on_result(ev); break;
    case ACP_EVENT_CLOSED:
      pthread_mutex_lock(&MU);
      CLOSED = true;
      pthread_cond_broadcast(&CV);
      pthread_mutex_unlock(&MU);
      break;
    default: break;
  }
  acp_event_free(ev);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  acp_options *opts = NULL;
  acp_error *err = NULL;
  if (acp_options_new(&opts) != ACP_OK || acp_options_set_event_callback(opts, on_event, NULL) != ACP_OK) return 1;
  pthread_mutex_lock(&MU);
  acp_status st = acp_connection_serve_stdio(opts, &CONN, &err);
  pthread_mutex_unlock(&MU);
  acp_options_free(opts);
  if (st != ACP_OK) {
    fprintf(stderr, "bench-c-agent: serve_stdio: %s\n", acp_status_str(st));
    acp_error_free(err);
    return 1;
  }
  pthread_mutex_lock(&MU);
  while (!CLOSED) pthread_cond_wait(&CV, &MU);
  pthread_mutex_unlock(&MU);
  acp_connection_free(CONN);
  return 0;
}
