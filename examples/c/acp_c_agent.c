/*
 * acp-c-agent: a small ACP agent in C on libacp's C ABI (acp.h), serving on
 * its stdin/stdout in *callback mode*.
 *
 * It speaks the prompt vocabulary of the interop test agents
 * (tests/interop/README.md), so the official TypeScript, Python and Rust
 * clients can run their whole check sequence against it:
 *
 *   stream N          N agent_message_chunk updates "chunk 0" .. "chunk N-1"
 *   permission        tool_call, session/request_permission, chunk, tool_call_update
 *   read PATH         fs/read_text_file, the content as one chunk
 *   write PATH TEXT   fs/write_text_file, then the chunk "wrote"
 *   terminal CMD...   terminal/create (sh -c CMD), wait_for_exit, output, release
 *   wait              nothing until session/cancel; stopReason "cancelled"
 *   anything else     an ordinary turn: the reply "You said: TEXT", end_turn
 *
 * and session/load replays a session's history (the user's prompt texts and
 * every agent_message_chunk sent) before answering.
 *
 * Threads. libacp calls on_event() on its dispatch thread, one event at a
 * time. Quick requests (initialize, session/new, session/load) are answered
 * right there. A prompt turn needs answers from the client (permission,
 * files, terminals), and an event callback must never wait for another
 * event, so each turn runs on a thread of its own: it sends its calls with
 * acp_connection_request() and sleeps on a condition variable until
 * on_event() hands it the ACP_EVENT_RESULT. Notifications go out with
 * acp_connection_notify() from the turn's thread, so they precede the
 * prompt's answer on the wire.
 *
 * It exits 0 once its stdin closes (ACP_EVENT_CLOSED). Logs go to stderr;
 * stdout carries only ACP messages (libacp writes them).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acp.h"
#include "acp_protocol.h"
#include "json.h"

#define AGENT_NAME "libacp-c-agent"
#define AGENT_VERSION "0.1.0"

/* JSON-RPC / ACP error codes used here. */
#define RPC_INVALID_PARAMS (-32602)
#define RPC_INTERNAL_ERROR (-32603)
#define RPC_METHOD_NOT_FOUND (-32601)
#define ACP_RESOURCE_NOT_FOUND (-32002)

static void logf_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("c-agent: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static acp_str S(const char *s) { return acp_str_from_cstr(s); }

/* ------------------------------------------------------------------ */
/* State                                                                */

typedef struct {
  bool user; /* user_message_chunk, else agent_message_chunk */
  char *text;
  size_t len;
} history_entry;

typedef struct session {
  char *id;
  char *cwd;
  history_entry *history;
  size_t history_len, history_cap;
  bool cancelled; /* session/cancel arrived during the current turn */
  struct session *next;
} session;

typedef struct turn {
  pthread_t thread;
  acp_request *request; /* the session/prompt, answered by the thread */
  session *session;
  char *text; /* the prompt's first text block */
  size_t text_len;
  char *request_id; /* JSON text, to match ACP_EVENT_REQUEST_CANCELLED */
  bool cancelled;   /* the request was cancelled ($/cancel_request) */
  bool finished;
  struct turn *next;
} turn;

/* One outgoing call a turn is waiting for (its acp_event call_data). */
typedef struct {
  bool done;
  acp_status status;
  json *result;     /* parsed result (ACP_OK) */
  int64_t code;     /* JSON-RPC error code, or 0 */
  char *message;    /* error message */
  char *data;       /* error data, JSON text, or NULL */
  size_t data_len;
} pending_call;

static struct {
  acp_connection *conn;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* results, cancellations, close */
  bool closed;
  session *sessions;
  turn *turns;
  unsigned long tool_calls;
  unsigned long sessions_made;
} A = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* Called with A.mu held. */
static session *find_session(const char *id) {
  for (session *s = A.sessions; s; s = s->next)
    if (strcmp(s->id, id) == 0) return s;
  return NULL;
}

/* Called with A.mu held. */
static bool history_push(session *s, bool user, const char *text, size_t len) {
  if (s->history_len == s->history_cap) {
    size_t cap = s->history_cap ? s->history_cap * 2 : 16;
    history_entry *h = realloc(s->history, cap * sizeof *h);
    if (!h) return false;
    s->history = h;
    s->history_cap = cap;
  }
  char *copy = dup_n(text, len);
  if (!copy) return false;
  s->history[s->history_len++] = (history_entry){user, copy, len};
  return true;
}

/* ------------------------------------------------------------------ */
/* Answering requests                                                   */

static void log_status(const char *what, acp_status st, acp_error *err) {
  const char *msg = acp_status_str(st);
  size_t len = strlen(msg);
  if (err) acp_error_message(err, &msg, &len);
  logf_("%s failed: %.*s", what, (int)len, msg);
  acp_error_free(err);
}

static void respond(acp_request *req, const jbuf *result) {
  acp_error *err = NULL;
  acp_status st;
  if (result->oom) {
    static const char msg[] = "out of memory";
    st = acp_request_respond_error(req, RPC_INTERNAL_ERROR, (acp_str){msg, sizeof msg - 1}, (acp_str){NULL, 0}, &err);
  } else {
    st = acp_request_respond(req, (acp_str){result->data, result->len}, &err);
  }
  /* ALREADY_ANSWERED: libacp answered for us (cancelled, or the connection
   * closed); nothing to do. */
  if (st != ACP_OK && st != ACP_ERR_ALREADY_ANSWERED && st != ACP_ERR_CLOSED)
    log_status("respond", st, err);
  else
    acp_error_free(err);
}

static void respond_error(acp_request *req, int64_t code, const char *message,
                          const jbuf *data) {
  acp_error *err = NULL;
  const char *d = data && !data->oom ? data->data : NULL;
  size_t dn = data && !data->oom ? data->len : 0;
  acp_status st = acp_request_respond_error(req, code, acp_str_from_cstr(message), (acp_str){d, dn}, &err);
  if (st != ACP_OK && st != ACP_ERR_ALREADY_ANSWERED && st != ACP_ERR_CLOSED)
    log_status("respond_error", st, err);
  else
    acp_error_free(err);
}

static void respond_unknown_session(acp_request *req, const char *id, size_t len) {
  jbuf data;
  jb_init(&data);
  jb_lit(&data, "{\"sessionId\":");
  jb_str(&data, id, len);
  jb_lit(&data, "}");
  respond_error(req, ACP_RESOURCE_NOT_FOUND, "Resource not found", &data);
  jb_free(&data);
}

/* Sends a session/update notification with `update` (a JSON object). */
static bool send_update(const char *session_id, const jbuf *update) {
  jbuf p;
  jb_init(&p);
  jb_lit(&p, "{\"sessionId\":");
  jb_cstr(&p, session_id);
  jb_lit(&p, ",\"update\":");
  jb_raw(&p, update->data ? update->data : "null", update->data ? update->len : 4);
  jb_lit(&p, "}");
  bool ok = false;
  if (!p.oom && !update->oom) {
    acp_error *err = NULL;
    acp_status st =
        acp_connection_notify(A.conn, S(ACP_METHOD_SESSION_UPDATE), (acp_str){p.data, p.len}, &err);
    if (st == ACP_OK) {
      ok = true;
      acp_error_free(err);
    } else {
      log_status("session/update", st, err);
    }
  }
  jb_free(&p);
  return ok;
}

static void text_chunk(jbuf *u, bool user, const char *text, size_t len) {
  jb_lit(u, user ? "{\"sessionUpdate\":\"user_message_chunk\""
                 : "{\"sessionUpdate\":\"agent_message_chunk\"");
  jb_lit(u, ",\"content\":{\"type\":\"text\",\"text\":");
  jb_str(u, text, len);
  jb_lit(u, "}}");
}

/* ------------------------------------------------------------------ */
/* Calls to the client, from a turn's thread                            */

static void pending_clear(pending_call *c) {
  json_free(c->result);
  free(c->message);
  free(c->data);
  memset(c, 0, sizeof *c);
}

/* Sends `method` with `params` and waits for its result. ACP_OK with
 * c->result set, or a failure with c->code/c->message (a refusal, a
 * JSON-RPC error from the client, the connection closing). */
static acp_status call(const char *method, const jbuf *params, pending_call *c) {
  memset(c, 0, sizeof *c);
  if (params->oom) {
    c->status = ACP_ERR_INVALID_ARGUMENT;
    c->message = dup_n("out of memory", 13);
    return c->status;
  }
  acp_error *err = NULL;
  acp_status st = acp_connection_request(A.conn, S(method), (acp_str){params->data, params->len},
                                         c, NULL, &err);
  if (st != ACP_OK) {
    /* Refused locally (or closed): nothing was sent, no event will come. */
    const char *msg = acp_status_str(st);
    size_t len = strlen(msg);
    if (err) acp_error_message(err, &msg, &len);
    c->status = st;
    c->code = err ? acp_error_code(err) : 0;
    c->message = dup_n(msg, len);
    acp_error_free(err);
    logf_("%s not sent: %s", method, c->message ? c->message : "?");
    return st;
  }
  pthread_mutex_lock(&A.mu);
  /* Every call sent ends with exactly one ACP_EVENT_RESULT, delivered
   * before ACP_EVENT_CLOSED (pending calls end with ACP_ERR_CLOSED). And
   * nothing comes after ACP_EVENT_CLOSED: once it is seen, a result not
   * yet here never will be, and `c` can go. */
  while (!c->done && !A.closed) pthread_cond_wait(&A.cv, &A.mu);
  if (!c->done) {
    c->status = ACP_ERR_CLOSED;
    c->message = dup_n("the connection closed", 21);
  }
  pthread_mutex_unlock(&A.mu);
  if (c->status != ACP_OK)
    logf_("%s failed: %s", method, c->message ? c->message : acp_status_str(c->status));
  return c->status;
}

/* On the dispatch thread: hands a result to the turn waiting for it. */
static void deliver_result(acp_event *ev) {
  pending_call *c = acp_event_call_data(ev);
  if (!c) return;
  acp_status st = acp_event_result_status(ev);
  json *result = NULL;
  char *message = NULL, *data = NULL;
  size_t data_len = 0;
  int64_t code = 0;
  if (st == ACP_OK) {
    const char *text = NULL;
    size_t len = 0;
    char perr[128];
    acp_event_result(ev, &text, &len);
    result = json_parse(text, len, perr, sizeof perr);
    if (!result) {
      st = ACP_ERR_INVALID_RESULT;
      message = dup_n(perr, strlen(perr));
    }
  } else {
    const acp_error *e = acp_event_error(ev);
    const char *msg = acp_status_str(st);
    size_t len = strlen(msg);
    const char *d = NULL;
    if (e) {
      acp_error_message(e, &msg, &len);
      acp_error_data(e, &d, &data_len);
      code = acp_error_code(e);
    }
    message = dup_n(msg, len);
    if (d) data = dup_n(d, data_len);
  }
  pthread_mutex_lock(&A.mu);
  c->status = st;
  c->result = result;
  c->code = code;
  c->message = message;
  c->data = data;
  c->data_len = data ? data_len : 0;
  c->done = true;
  pthread_cond_broadcast(&A.cv);
  pthread_mutex_unlock(&A.mu);
}

/* ------------------------------------------------------------------ */
/* Prompt turns                                                         */

/* How a turn ends: a stop reason, or an error for the prompt. */
typedef struct {
  const char *stop_reason; /* NULL: failed */
  int64_t code;
  char *message;
  char *data; /* JSON text or NULL */
  size_t data_len;
} outcome;

static outcome stop(const char *reason) { return (outcome){.stop_reason = reason}; }

static outcome failure(int64_t code, const char *message, const jbuf *data) {
  outcome o = {.code = code, .message = dup_n(message, strlen(message))};
  if (data && !data->oom && data->data) {
    o.data = dup_n(data->data, data->len);
    o.data_len = data->len;
  }
  return o;
}

/* The prompt fails with the failed call's error ("if a client request
 * fails, the prompt fails with that error"). */
static outcome call_failure(pending_call *c) {
  outcome o = {0};
  if (c->code != 0) {
    o.code = c->code;
  } else {
    o.code = RPC_INTERNAL_ERROR;
  }
  o.message = c->message ? c->message : dup_n("call failed", 11);
  o.data = c->data;
  o.data_len = c->data_len;
  c->message = NULL;
  c->data = NULL;
  pending_clear(c);
  return o;
}

static outcome oom_failure(void) { return failure(RPC_INTERNAL_ERROR, "out of memory", NULL); }

/* Records and sends one agent_message_chunk. */
static bool say(turn *t, const char *text, size_t len) {
  pthread_mutex_lock(&A.mu);
  bool kept = history_push(t->session, false, text, len);
  pthread_mutex_unlock(&A.mu);
  if (!kept) return false;
  jbuf u;
  jb_init(&u);
  text_chunk(&u, false, text, len);
  bool ok = send_update(t->session->id, &u);
  jb_free(&u);
  return ok;
}

static outcome said(turn *t, const char *text, size_t len) {
  if (!say(t, text, len))
    return failure(RPC_INTERNAL_ERROR, "could not send session/update", NULL);
  return stop(NULL); /* stop_reason filled in by the caller */
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* [s, s+n) without leading and trailing white space. */
static void trim(const char **s, size_t *n) {
  while (*n && is_space(**s)) (*s)++, (*n)--;
  while (*n && is_space((*s)[*n - 1])) (*n)--;
}

static const char *done_reason(turn *t) {
  pthread_mutex_lock(&A.mu);
  bool cancelled = t->session->cancelled || t->cancelled;
  pthread_mutex_unlock(&A.mu);
  return cancelled ? "cancelled" : "end_turn";
}

static void params_start(jbuf *p, turn *t) {
  jb_lit(p, "{\"sessionId\":");
  jb_cstr(p, t->session->id);
}

static outcome cmd_chat(turn *t);

static outcome cmd_stream(turn *t, const char *arg, size_t n) {
  /* Like parseInt of the first word: a non-negative decimal count. */
  size_t i = 0;
  unsigned long count = 0;
  bool any = false;
  while (i < n && arg[i] >= '0' && arg[i] <= '9') {
    if (count > 1000000) break; /* no more than a million chunks */
    count = count * 10 + (unsigned long)(arg[i++] - '0');
    any = true;
  }
  /* "stream" without a count is ordinary text ("stream it to me"). */
  if (!any || (i < n && !is_space(arg[i])) || count > 1000000) return cmd_chat(t);
  for (unsigned long k = 0; k < count; k++) {
    char chunk[32];
    int len = snprintf(chunk, sizeof chunk, "chunk %lu", k);
    if (!say(t, chunk, (size_t)len))
      return failure(RPC_INTERNAL_ERROR, "could not send session/update", NULL);
  }
  return stop(done_reason(t));
}

static outcome cmd_permission(turn *t) {
  char id[32];
  pthread_mutex_lock(&A.mu);
  snprintf(id, sizeof id, "call-%lu", ++A.tool_calls);
  pthread_mutex_unlock(&A.mu);

  jbuf u;
  jb_init(&u);
  jb_lit(&u, "{\"sessionUpdate\":\"tool_call\",\"toolCallId\":");
  jb_cstr(&u, id);
  jb_lit(&u, ",\"title\":\"Edit file\",\"kind\":\"edit\",\"status\":\"pending\"}");
  bool sent = send_update(t->session->id, &u);
  jb_free(&u);
  if (!sent) return failure(RPC_INTERNAL_ERROR, "could not send session/update", NULL);

  jbuf p;
  jb_init(&p);
  params_start(&p, t);
  jb_lit(&p, ",\"toolCall\":{\"toolCallId\":");
  jb_cstr(&p, id);
  jb_lit(&p, ",\"title\":\"Edit file\",\"kind\":\"edit\",\"status\":\"pending\"},\"options\":["
             "{\"optionId\":\"allow_once\",\"name\":\"Allow once\",\"kind\":\"allow_once\"},"
             "{\"optionId\":\"reject_once\",\"name\":\"Reject once\",\"kind\":\"reject_once\"}]}");
  pending_call c;
  acp_status st = call(ACP_METHOD_SESSION_REQUEST_PERMISSION, &p, &c);
  jb_free(&p);
  if (st != ACP_OK) return call_failure(&c);

  const json *outcome_v = json_path(c.result, "outcome", "outcome", NULL);
  const char *kind = json_string(outcome_v, NULL);
  size_t option_len = 0;
  const char *option = json_string(json_path(c.result, "outcome", "optionId", NULL), &option_len);
  bool selected = kind && strcmp(kind, "selected") == 0 && option;
  bool cancelled = kind && strcmp(kind, "cancelled") == 0;
  if (!selected && !cancelled) {
    pending_clear(&c);
    return failure(RPC_INTERNAL_ERROR, "the permission answer has no valid outcome", NULL);
  }

  jbuf label;
  jb_init(&label);
  jb_lit(&label, "permission: ");
  if (selected) jb_raw(&label, option, option_len);
  else jb_lit(&label, "cancelled");
  bool allowed = selected && option_len >= 5 && memcmp(option, "allow", 5) == 0;
  pending_clear(&c);
  bool ok = !label.oom && say(t, label.data, label.len);
  jb_free(&label);
  if (!ok) return failure(RPC_INTERNAL_ERROR, "could not send session/update", NULL);

  jb_init(&u);
  jb_lit(&u, "{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":");
  jb_cstr(&u, id);
  jb_lit(&u, allowed ? ",\"status\":\"completed\"}" : ",\"status\":\"failed\"}");
  sent = send_update(t->session->id, &u);
  jb_free(&u);
  if (!sent) return failure(RPC_INTERNAL_ERROR, "could not send session/update", NULL);
  return stop(cancelled ? "cancelled" : done_reason(t));
}

static outcome cmd_read(turn *t, const char *path, size_t n) {
  jbuf p;
  jb_init(&p);
  params_start(&p, t);
  jb_lit(&p, ",\"path\":");
  jb_str(&p, path, n);
  jb_lit(&p, "}");
  pending_call c;
  acp_status st = call(ACP_METHOD_FS_READ_TEXT_FILE, &p, &c);
  jb_free(&p);
  if (st != ACP_OK) return call_failure(&c);
  size_t len = 0;
  const char *content = json_string(json_get(c.result, "content"), &len);
  if (!content) {
    pending_clear(&c);
    return failure(RPC_INTERNAL_ERROR, "fs/read_text_file answered no content", NULL);
  }
  outcome o = said(t, content, len);
  pending_clear(&c);
  if (!o.message) o.stop_reason = done_reason(t);
  return o;
}

static outcome cmd_write(turn *t, const char *arg, size_t n) {
  /* write PATH TEXT: PATH is the first word, TEXT the rest of the line. */
  size_t path_len = 0;
  while (path_len < n && !is_space(arg[path_len])) path_len++;
  const char *text = arg + path_len;
  size_t text_len = n - path_len;
  while (text_len && is_space(*text)) text++, text_len--;
  jbuf p;
  jb_init(&p);
  params_start(&p, t);
  jb_lit(&p, ",\"path\":");
  jb_str(&p, arg, path_len);
  jb_lit(&p, ",\"content\":");
  jb_str(&p, text, text_len);
  jb_lit(&p, "}");
  pending_call c;
  acp_status st = call(ACP_METHOD_FS_WRITE_TEXT_FILE, &p, &c);
  jb_free(&p);
  if (st != ACP_OK) return call_failure(&c);
  pending_clear(&c);
  outcome o = said(t, "wrote", 5);
  if (!o.message) o.stop_reason = done_reason(t);
  return o;
}

/* terminal/<what> {sessionId, terminalId}. */
static acp_status terminal_call(turn *t, const char *method, const char *terminal_id,
                                pending_call *c) {
  jbuf p;
  jb_init(&p);
  params_start(&p, t);
  jb_lit(&p, ",\"terminalId\":");
  jb_cstr(&p, terminal_id);
  jb_lit(&p, "}");
  acp_status st = call(method, &p, c);
  jb_free(&p);
  return st;
}

static outcome cmd_terminal(turn *t, const char *cmd, size_t n) {
  jbuf p;
  jb_init(&p);
  params_start(&p, t);
  jb_lit(&p, ",\"command\":\"sh\",\"args\":[\"-c\",");
  jb_str(&p, cmd, n);
  jb_lit(&p, "],\"cwd\":");
  pthread_mutex_lock(&A.mu); /* session/load may change the cwd */
  jb_cstr(&p, t->session->cwd);
  pthread_mutex_unlock(&A.mu);
  jb_lit(&p, "}");
  pending_call c;
  acp_status st = call(ACP_METHOD_TERMINAL_CREATE, &p, &c);
  jb_free(&p);
  if (st != ACP_OK) return call_failure(&c);
  const char *tid = json_string(json_get(c.result, "terminalId"), NULL);
  char *terminal_id = tid ? dup_n(tid, strlen(tid)) : NULL;
  pending_clear(&c);
  if (!terminal_id) return failure(RPC_INTERNAL_ERROR, "terminal/create answered no terminalId", NULL);

  outcome o = {0};
  if (terminal_call(t, ACP_METHOD_TERMINAL_WAIT_FOR_EXIT, terminal_id, &c) != ACP_OK) {
    o = call_failure(&c);
  } else {
    pending_clear(&c);
    if (terminal_call(t, ACP_METHOD_TERMINAL_OUTPUT, terminal_id, &c) != ACP_OK) {
      o = call_failure(&c);
    } else {
      size_t len = 0;
      const char *output = json_string(json_get(c.result, "output"), &len);
      if (!output) o = failure(RPC_INTERNAL_ERROR, "terminal/output answered no output", NULL);
      else o = said(t, output, len);
      pending_clear(&c);
    }
  }
  /* Released whatever happened (a `finally`). */
  if (terminal_call(t, ACP_METHOD_TERMINAL_RELEASE, terminal_id, &c) != ACP_OK && !o.message) {
    o = call_failure(&c);
  } else {
    pending_clear(&c);
  }
  free(terminal_id);
  if (!o.message) o.stop_reason = done_reason(t);
  return o;
}

static outcome cmd_wait(turn *t) {
  pthread_mutex_lock(&A.mu);
  while (!t->session->cancelled && !t->cancelled && !A.closed) pthread_cond_wait(&A.cv, &A.mu);
  pthread_mutex_unlock(&A.mu);
  return stop("cancelled");
}

/* Anything else is ordinary text, as a user types it: an ordinary turn,
 * a short reply and end_turn (or cancelled, if the client cancelled). */
static outcome cmd_chat(turn *t) {
  static const char prefix[] = "You said: ";
  const char *text = t->text;
  size_t n = t->text_len;
  trim(&text, &n);
  if (n == 0) {
    text = "(no text)";
    n = strlen(text);
  }
  char *reply = malloc(sizeof prefix - 1 + n);
  if (!reply) return oom_failure();
  memcpy(reply, prefix, sizeof prefix - 1);
  memcpy(reply + sizeof prefix - 1, text, n);
  bool said = say(t, reply, sizeof prefix - 1 + n);
  free(reply);
  if (!said) return failure(RPC_INTERNAL_ERROR, "could not send session/update", NULL);
  return stop(done_reason(t));
}

static outcome run_command(turn *t) {
  const char *text = t->text;
  size_t n = t->text_len;
  trim(&text, &n);
  size_t word = 0;
  while (word < n && !is_space(text[word])) word++;
  const char *arg = text + word;
  size_t arg_len = n - word;
  trim(&arg, &arg_len);

#define IS(w) (word == sizeof(w) - 1 && memcmp(text, w, word) == 0)
  if (IS("stream")) return cmd_stream(t, arg, arg_len);
  if (IS("permission")) return cmd_permission(t);
  if (IS("read")) return cmd_read(t, arg, arg_len);
  if (IS("write")) return cmd_write(t, arg, arg_len);
  if (IS("terminal")) return cmd_terminal(t, arg, arg_len);
  if (IS("wait")) return cmd_wait(t);
#undef IS
  return cmd_chat(t);
}

static void *turn_main(void *arg) {
  turn *t = arg;
  outcome o = run_command(t);
  if (o.stop_reason && !o.message) {
    jbuf r;
    jb_init(&r);
    jb_lit(&r, "{\"stopReason\":");
    jb_cstr(&r, o.stop_reason);
    jb_lit(&r, "}");
    respond(t->request, &r);
    jb_free(&r);
    logf_("session %s: prompt done: %s", t->session->id, o.stop_reason);
  } else {
    acp_error *err = NULL;
    const char *message = o.message ? o.message : "prompt failed";
    acp_status st = acp_request_respond_error(t->request, o.code ? o.code : RPC_INTERNAL_ERROR, acp_str_from_cstr(message), (acp_str){o.data, o.data_len}, &err);
    if (st != ACP_OK && st != ACP_ERR_ALREADY_ANSWERED && st != ACP_ERR_CLOSED)
      log_status("respond_error", st, err);
    else
      acp_error_free(err);
    logf_("session %s: prompt failed: %ld %s", t->session->id, (long)o.code, message);
  }
  free(o.message);
  free(o.data);
  acp_request_free(t->request);
  t->request = NULL;
  pthread_mutex_lock(&A.mu);
  t->finished = true;
  pthread_mutex_unlock(&A.mu);
  return NULL;
}

/* Joins and frees the turns that have finished (all of them with `all`,
 * waiting for the others). Not with A.mu held. */
static void reap_turns(bool all) {
  for (;;) {
    turn *done = NULL;
    pthread_mutex_lock(&A.mu);
    for (turn **pp = &A.turns; *pp; pp = &(*pp)->next) {
      if (all || (*pp)->finished) {
        done = *pp;
        *pp = done->next;
        break;
      }
    }
    pthread_mutex_unlock(&A.mu);
    if (!done) return;
    pthread_join(done->thread, NULL);
    free(done->text);
    free(done->request_id);
    free(done);
  }
}

/* ------------------------------------------------------------------ */
/* Requests and notifications from the client (dispatch thread)         */

static json *parse_params(acp_request *req) {
  const char *text = NULL;
  size_t len = 0;
  char err[128];
  acp_request_params(req, &text, &len);
  json *v = json_parse(text, len, err, sizeof err);
  if (!v) logf_("bad params: %s", err);
  return v;
}

static void on_initialize(acp_request *req, const json *params) {
  const json *v = json_get(params, "protocolVersion");
  if (!v || v->type != JSON_NUMBER || v->number != 1)
    logf_("the client asked for another protocol version; answering 1");
  jbuf r;
  jb_init(&r);
  jb_lit(&r,
         "{\"protocolVersion\":1,"
         "\"agentCapabilities\":{\"loadSession\":true,"
         "\"promptCapabilities\":{\"image\":true,\"audio\":false,\"embeddedContext\":true}},"
         "\"authMethods\":[],"
         "\"agentInfo\":{\"name\":\"" AGENT_NAME "\",\"version\":\"" AGENT_VERSION "\"}}");
  respond(req, &r);
  jb_free(&r);
}

static void new_session_id(char *out, size_t size) {
  unsigned char r[8] = {0};
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool got = fd >= 0 && read(fd, r, sizeof r) == (ssize_t)sizeof r;
  if (fd >= 0) close(fd);
  if (!got) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
    memcpy(r, &x, sizeof r);
  }
  snprintf(out, size, "c-%lu-%02x%02x%02x%02x%02x%02x%02x%02x", ++A.sessions_made, r[0], r[1],
           r[2], r[3], r[4], r[5], r[6], r[7]);
}

static void on_session_new(acp_request *req, const json *params) {
  const char *cwd = json_string(json_get(params, "cwd"), NULL);
  if (!cwd) {
    respond_error(req, RPC_INVALID_PARAMS, "Invalid params: cwd is required", NULL);
    return;
  }
  session *s = calloc(1, sizeof *s);
  char id[64];
  pthread_mutex_lock(&A.mu);
  new_session_id(id, sizeof id);
  if (s) {
    s->id = strdup(id);
    s->cwd = strdup(cwd);
  }
  if (!s || !s->id || !s->cwd) {
    pthread_mutex_unlock(&A.mu);
    if (s) free(s->id), free(s->cwd);
    free(s);
    respond_error(req, RPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  s->next = A.sessions;
  A.sessions = s;
  pthread_mutex_unlock(&A.mu);
  logf_("session/new %s in %s", id, cwd);
  jbuf r;
  jb_init(&r);
  jb_lit(&r, "{\"sessionId\":");
  jb_cstr(&r, id);
  jb_lit(&r, "}");
  respond(req, &r);
  jb_free(&r);
}

static void on_session_load(acp_request *req, const json *params) {
  size_t id_len = 0;
  const char *id = json_string(json_get(params, "sessionId"), &id_len);
  const char *cwd = json_string(json_get(params, "cwd"), NULL);
  if (!id || !cwd) {
    respond_error(req, RPC_INVALID_PARAMS, "Invalid params: sessionId and cwd are required", NULL);
    return;
  }
  /* Snapshot the history under the lock, then replay it without the lock
   * (acp_connection_notify blocks while the outgoing queue is full). */
  pthread_mutex_lock(&A.mu);
  session *s = find_session(id);
  size_t n = 0;
  jbuf *updates = NULL;
  bool oom = false;
  if (s) {
    char *c = strdup(cwd);
    if (c) {
      free(s->cwd);
      s->cwd = c;
    }
    n = s->history_len;
    updates = calloc(n ? n : 1, sizeof *updates);
    if (!updates) oom = true;
    for (size_t i = 0; updates && i < n; i++) {
      jb_init(&updates[i]);
      text_chunk(&updates[i], s->history[i].user, s->history[i].text, s->history[i].len);
    }
  }
  pthread_mutex_unlock(&A.mu);
  if (!s) {
    respond_unknown_session(req, id, id_len);
    return;
  }
  if (oom) {
    respond_error(req, RPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  logf_("session/load %s: replaying %zu updates", id, n);
  bool ok = true;
  for (size_t i = 0; i < n; i++) {
    if (ok) ok = send_update(id, &updates[i]);
    jb_free(&updates[i]);
  }
  free(updates);
  if (!ok) {
    respond_error(req, RPC_INTERNAL_ERROR, "could not replay the history", NULL);
    return;
  }
  jbuf r;
  jb_init(&r);
  jb_lit(&r, "{}");
  respond(req, &r);
  jb_free(&r);
}

/* Takes ownership of `req`. */
static void on_session_prompt(acp_request *req, const json *params) {
  size_t id_len = 0;
  const char *id = json_string(json_get(params, "sessionId"), &id_len);
  const json *prompt = json_get(params, "prompt");
  if (!id || !prompt || prompt->type != JSON_ARRAY) {
    respond_error(req, RPC_INVALID_PARAMS, "Invalid params: sessionId and prompt are required",
                  NULL);
    acp_request_free(req);
    return;
  }
  /* The command is the first text block. */
  const char *text = "";
  size_t text_len = 0;
  for (size_t i = 0; i < prompt->len; i++) {
    const json *b = json_at(prompt, i);
    const char *type = json_string(json_get(b, "type"), NULL);
    const char *t = json_string(json_get(b, "text"), &text_len);
    if (type && strcmp(type, "text") == 0 && t) {
      text = t;
      break;
    }
    text_len = 0;
  }

  reap_turns(false);
  turn *t = calloc(1, sizeof *t);
  const char *rid = NULL;
  size_t rid_len = 0;
  acp_request_id(req, &rid, &rid_len);
  if (t) {
    t->text = dup_n(text, text_len);
    t->text_len = text_len;
    t->request_id = rid ? dup_n(rid, rid_len) : dup_n("null", 4);
    t->request = req;
  }
  if (!t || !t->text || !t->request_id) {
    if (t) free(t->text), free(t->request_id);
    free(t);
    respond_error(req, RPC_INTERNAL_ERROR, "out of memory", NULL);
    acp_request_free(req);
    return;
  }

  pthread_mutex_lock(&A.mu);
  session *s = find_session(id);
  if (s) {
    s->cancelled = false; /* a new turn */
    if (!history_push(s, true, text, text_len)) s = NULL;
  }
  if (s) {
    t->session = s;
    t->next = A.turns;
    A.turns = t;
  }
  pthread_mutex_unlock(&A.mu);
  if (!s) {
    respond_unknown_session(req, id, id_len);
    acp_request_free(req);
    free(t->text);
    free(t->request_id);
    free(t);
    return;
  }
  logf_("session %s: prompt %.*s", s->id, (int)text_len, text);
  int rc = pthread_create(&t->thread, NULL, turn_main, t);
  if (rc != 0) {
    pthread_mutex_lock(&A.mu);
    for (turn **pp = &A.turns; *pp; pp = &(*pp)->next)
      if (*pp == t) {
        *pp = t->next;
        break;
      }
    pthread_mutex_unlock(&A.mu);
    respond_error(req, RPC_INTERNAL_ERROR, "could not start the turn", NULL);
    acp_request_free(req);
    free(t->text);
    free(t->request_id);
    free(t);
  }
}

static void on_request(acp_event *ev) {
  acp_request *req = NULL;
  if (acp_event_take_request(ev, &req) != ACP_OK) return;
  const char *m = NULL;
  size_t mlen = 0;
  acp_request_method(req, &m, &mlen);
  char method[64];
  snprintf(method, sizeof method, "%.*s", (int)(mlen < 63 ? mlen : 63), m);
  json *params = parse_params(req);
  if (!params) {
    respond_error(req, RPC_INVALID_PARAMS, "Invalid params", NULL);
    acp_request_free(req);
    return;
  }
  if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) {
    on_initialize(req, params);
  } else if (strcmp(method, ACP_METHOD_SESSION_NEW) == 0) {
    on_session_new(req, params);
  } else if (strcmp(method, ACP_METHOD_SESSION_LOAD) == 0) {
    on_session_load(req, params);
  } else if (strcmp(method, ACP_METHOD_SESSION_PROMPT) == 0) {
    on_session_prompt(req, params); /* takes req */
    req = NULL;
  } else {
    jbuf data;
    jb_init(&data);
    jb_lit(&data, "{\"method\":");
    jb_str(&data, m, mlen);
    jb_lit(&data, "}");
    respond_error(req, RPC_METHOD_NOT_FOUND, "Method not found", &data);
    jb_free(&data);
  }
  json_free(params);
  acp_request_free(req);
}

static void on_notification(acp_event *ev) {
  const char *m = NULL, *p = NULL;
  size_t mlen = 0, plen = 0;
  acp_event_method(ev, &m, &mlen);
  if (!(mlen == strlen(ACP_METHOD_SESSION_CANCEL) &&
        memcmp(m, ACP_METHOD_SESSION_CANCEL, mlen) == 0)) {
    logf_("ignored notification %.*s", (int)mlen, m);
    return;
  }
  acp_event_params(ev, &p, &plen);
  json *params = json_parse(p, plen, NULL, 0);
  const char *id = json_string(json_get(params, "sessionId"), NULL);
  pthread_mutex_lock(&A.mu);
  session *s = id ? find_session(id) : NULL;
  if (s) {
    s->cancelled = true;
    pthread_cond_broadcast(&A.cv);
  }
  pthread_mutex_unlock(&A.mu);
  if (s) logf_("session/cancel for %s", id);
  else logf_("session/cancel for unknown session %s", id ? id : "(none)");
  json_free(params);
}

static void on_request_cancelled(acp_event *ev) {
  const char *id = NULL;
  size_t len = 0;
  acp_event_request_id(ev, &id, &len);
  pthread_mutex_lock(&A.mu);
  for (turn *t = A.turns; t; t = t->next) {
    if (strlen(t->request_id) == len && memcmp(t->request_id, id, len) == 0) {
      t->cancelled = true;
      pthread_cond_broadcast(&A.cv);
    }
  }
  pthread_mutex_unlock(&A.mu);
}

static void on_event(void *user_data, acp_event *ev) {
  (void)user_data;
  switch (acp_event_get_kind(ev)) {
    case ACP_EVENT_REQUEST: on_request(ev); break;
    case ACP_EVENT_NOTIFICATION: on_notification(ev); break;
    case ACP_EVENT_RESULT: deliver_result(ev); break;
    case ACP_EVENT_REQUEST_CANCELLED: on_request_cancelled(ev); break;
    case ACP_EVENT_CLOSED: {
      const char *why = NULL;
      size_t len = 0;
      acp_event_text(ev, &why, &len);
      logf_("connection closed (%.*s)", (int)len, why);
      pthread_mutex_lock(&A.mu);
      A.closed = true;
      pthread_cond_broadcast(&A.cv);
      pthread_mutex_unlock(&A.mu);
      break;
    }
    default: break;
  }
  acp_event_free(ev);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv) {
  (void)argv;
  if (argc > 1) {
    fprintf(stderr,
            "usage: acp-c-agent\n"
            "  An ACP agent on stdin/stdout (the interop prompt vocabulary:\n"
            "  stream N, permission, read PATH, write PATH TEXT, terminal CMD, wait).\n");
    return 2;
  }
  /* A write to a pipe whose reader is gone (the client went away) must
   * fail with EPIPE, not kill the agent. */
  signal(SIGPIPE, SIG_IGN);

  acp_options *opts = NULL;
  acp_error *err = NULL;
  if (acp_options_new(&opts) != ACP_OK ||
      acp_options_set_event_callback(opts, on_event, NULL) != ACP_OK) {
    logf_("cannot set up options");
    return 1;
  }
  acp_connection *conn = NULL;
  /* A.conn is read by the dispatch thread: set it before the first event
   * can be delivered. Events are only delivered once we return from
   * serve_stdio and the client has sent something; the mutex makes the
   * store visible to the dispatch thread. */
  pthread_mutex_lock(&A.mu);
  acp_status st = acp_connection_serve_stdio(opts, &conn, &err);
  A.conn = conn;
  pthread_mutex_unlock(&A.mu);
  acp_options_free(opts);
  if (st != ACP_OK) {
    log_status("acp_connection_serve_stdio", st, err);
    return 1;
  }

  pthread_mutex_lock(&A.mu);
  while (!A.closed) pthread_cond_wait(&A.cv, &A.mu);
  pthread_mutex_unlock(&A.mu);

  /* Turns still running see the close (their calls end with
   * ACP_ERR_CLOSED, `wait` wakes up) and finish. */
  reap_turns(true);
  acp_connection_free(conn);

  while (A.sessions) {
    session *s = A.sessions;
    A.sessions = s->next;
    for (size_t i = 0; i < s->history_len; i++) free(s->history[i].text);
    free(s->history);
    free(s->id);
    free(s->cwd);
    free(s);
  }
  return 0;
}
