/* Statuses, options and argument checking: no peer needed (a pipe pair
 * where a live connection is required). Bad arguments give statuses,
 * never crashes; out-params are written only on ACP_OK. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "test_util.h"

void test_status_str_every_code(void) {
  const char *seen[ACP_ERR_REMOTE + 1];
  for (int s = ACP_OK; s <= ACP_ERR_REMOTE; s++) {
    const char *text = acp_status_str(s);
    CHECK(text != NULL);
    CHECK_MSG(strlen(text) > 0, "status %d", s);
    CHECK_MSG(strcmp(text, "unknown status") != 0, "status %d is unknown", s);
    for (int t = 0; t < s; t++)
      CHECK_MSG(strcmp(seen[t], text) != 0, "statuses %d and %d share \"%s\"",
                t, s, text);
    seen[s] = text;
  }
  CHECK(strcmp(acp_status_str(ACP_OK), "ok") == 0);
  /* Same pointer every time: a static string. */
  CHECK(acp_status_str(ACP_ERR_CLOSED) == acp_status_str(ACP_ERR_CLOSED));
  int unknown[] = {ACP_ERR_REMOTE + 1, -1, 1000, INT32_MAX, INT32_MIN};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    CHECK(strcmp(acp_status_str(unknown[i]), "unknown status") == 0);
}

/* acp_version() is the version of the header the suite was built with,
 * and the same static string every time. */
void test_version_is_the_headers_and_static(void) {
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", ACP_VERSION_MAJOR,
           ACP_VERSION_MINOR, ACP_VERSION_PATCH);
  CHECK(acp_version() != NULL);
  CHECK_MSG(strcmp(acp_version(), expected) == 0, "acp_version() is \"%s\", the header says %s",
            acp_version(), expected);
  CHECK(acp_version() == acp_version());
}

/* ACP_STR and acp_str_from_cstr: the bytes without the NUL, borrowed. */
void test_str_helpers_make_pointer_and_length(void) {
  acp_str lit = ACP_STR("session/new");
  CHECK(lit.len == strlen("session/new"));
  CHECK(memcmp(lit.ptr, "session/new", lit.len) == 0);
  CHECK(ACP_STR("").len == 0);
  const char *text = "h\xc3\xa9llo";
  acp_str s = acp_str_from_cstr(text);
  CHECK(s.ptr == text);
  CHECK(s.len == 6);
  acp_str none = acp_str_from_cstr(NULL);
  CHECK(none.ptr == NULL && none.len == 0);
}

/* Every function given NULL where an object or buffer is required. */
void test_null_arguments_give_statuses(void) {
  const char *p = "untouched";
  size_t n = 77;
  acp_string *str = (acp_string *)0x1;
  acp_event *ev = (acp_event *)0x1;
  acp_request *req = (acp_request *)0x1;
  acp_error *err = NULL;

  /* options */
  CHECK_STATUS(acp_options_new(NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_framing(NULL, 0), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_max_frame_size(NULL, 10), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_request_timeout_ms(NULL, 10), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_shutdown_grace_ms(NULL, 1, 1), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_event_callback(NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_trace_callback(NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_stderr_events(NULL, true), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_require_auth(NULL, true), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_session_model(NULL, true), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_fs(NULL, true), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_terminals(NULL, true), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_event_queue_capacity(NULL, 5), ACP_ERR_NULL_ARGUMENT);

  /* constructors */
  acp_connection *conn = (acp_connection *)0x1;
  /* Every failure fills *error, naming the NULL argument. */
  CHECK_STATUS(acp_connection_spawn_agent(NULL, S("true"), NULL, 0, NULL, 0,
                                          (acp_str){0}, NULL, &err),
               ACP_ERR_NULL_ARGUMENT);
  CHECK(err != NULL);
  CHECK_STATUS(acp_error_message(err, &p, &n), ACP_OK);
  CHECK(n == strlen("`out` is NULL") && memcmp(p, "`out` is NULL", n) == 0);
  acp_error_free(err);
  err = NULL;
  CHECK_STATUS(acp_connection_spawn_agent(NULL, S("true"), NULL, 2, NULL, 0,
                                          (acp_str){0}, &conn, &err),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_error_message(err, &p, &n), ACP_OK);
  CHECK(n == strlen("`args` is NULL") && memcmp(p, "`args` is NULL", n) == 0);
  acp_error_free(err);
  err = NULL;
  CHECK_STATUS(acp_connection_spawn_agent(NULL, S("true"), NULL, 0, NULL, 1,
                                          (acp_str){0}, &conn, &err),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_NULL_ARGUMENT);
  acp_error_free(err);
  err = NULL;
  p = "untouched";
  n = 77;
  /* A NULL string pointer with a length: an error object says so. */
  CHECK_STATUS(acp_connection_spawn_agent(NULL, (acp_str){NULL, 4}, NULL, 0,
                                          NULL, 0, (acp_str){0}, &conn, &err),
               ACP_ERR_NULL_ARGUMENT);
  CHECK(err != NULL);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_NULL_ARGUMENT);
  acp_error_free(err);
  err = NULL;
  /* NULL/0 program is the empty string: not a program. */
  CHECK_STATUS(acp_connection_spawn_agent(NULL, (acp_str){0}, NULL, 0, NULL, 0,
                                          (acp_str){0}, &conn, NULL),
               ACP_ERR_INVALID_ARGUMENT);
  CHECK(conn == (acp_connection *)0x1);
  CHECK_STATUS(acp_connection_from_fds(NULL, ACP_ROLE_CLIENT, 0, 1, NULL, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_serve_stdio(NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);

  /* connection functions with a NULL connection */
  CHECK_STATUS(acp_connection_request(NULL, S("initialize"), S("{}"), NULL,
                                      NULL, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_notify(NULL, S("x"), (acp_str){0}, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_cancel_session(NULL, S("s"), NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_next_event(NULL, &ev), ACP_ERR_NULL_ARGUMENT);
  CHECK(ev == (acp_event *)0x1);
  CHECK(acp_connection_wakeup_fd(NULL) == -1);
  CHECK(acp_connection_protocol_version(NULL) == -1);
  CHECK_STATUS(acp_connection_peer_capabilities(NULL, &str), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_session_snapshot(NULL, S("s"), &str, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK(str == (acp_string *)0x1);
  CHECK_STATUS(acp_connection_close(NULL), ACP_ERR_NULL_ARGUMENT);

  /* errors */
  CHECK_STATUS(acp_error_status(NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK(acp_error_code(NULL) == 0);
  CHECK_STATUS(acp_error_message(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_error_data(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);

  /* events */
  CHECK(acp_event_get_kind(NULL) == ACP_EVENT_NONE);
  CHECK_STATUS(acp_event_method(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_event_params(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_event_request_id(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_event_take_request(NULL, &req), ACP_ERR_NULL_ARGUMENT);
  CHECK(req == (acp_request *)0x1);
  CHECK(acp_event_call_data(NULL) == NULL);
  CHECK_STATUS(acp_event_result_status(NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_event_result(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK(acp_event_error(NULL) == NULL);
  CHECK_STATUS(acp_event_text(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);

  /* requests and calls */
  CHECK_STATUS(acp_request_method(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_request_params(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_request_id(NULL, &p, &n), ACP_ERR_NULL_ARGUMENT);
  CHECK(!acp_request_is_cancelled(NULL));
  CHECK_STATUS(acp_request_respond(NULL, ACP_STR("{}"), NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_request_respond_error(NULL, -1, ACP_STR("m"), (acp_str){NULL, 0}, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_call_cancel(NULL, ACP_CANCEL_ABANDON), ACP_ERR_NULL_ARGUMENT);

  /* strings */
  CHECK(acp_string_ptr(NULL) == NULL);
  CHECK(acp_string_len(NULL) == 0);

  /* Nothing above wrote an out-param. */
  CHECK(strcmp(p, "untouched") == 0 && n == 77);

  /* A live connection with NULL out-params or NULL strings with lengths. */
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  CHECK_STATUS(acp_connection_next_event(client, NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_peer_capabilities(client, NULL), ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_session_snapshot(client, S("s"), NULL, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_request(client, (acp_str){NULL, 3}, (acp_str){0},
                                      NULL, NULL, &err),
               ACP_ERR_NULL_ARGUMENT);
  CHECK(err != NULL);
  acp_error_free(err);
  err = NULL;
  CHECK_STATUS(acp_connection_request(client, S("initialize"), (acp_str){NULL, 3},
                                      NULL, NULL, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_notify(client, (acp_str){NULL, 1}, (acp_str){0}, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_connection_cancel_session(client, (acp_str){NULL, 1}, NULL),
               ACP_ERR_NULL_ARGUMENT);
  /* Nothing was sent or received: no event on either side. */
  CHECK_STATUS(acp_connection_next_event(agent, &ev), ACP_ERR_EMPTY);
  CHECK_STATUS(acp_connection_next_event(client, &ev), ACP_ERR_EMPTY);
  CHECK(ev == (acp_event *)0x1);
  acp_connection_free(client);
  acp_connection_free(agent);
}

void test_free_functions_accept_null(void) {
  acp_options_free(NULL);
  acp_connection_free(NULL);
  acp_event_free(NULL);
  acp_request_free(NULL);
  acp_call_free(NULL);
  acp_error_free(NULL);
  acp_string_free(NULL);
}

static bool fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

void test_unknown_enum_values_are_invalid_arguments(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK_STATUS(acp_options_set_framing(o, 2), ACP_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(acp_options_set_framing(o, -1), ACP_ERR_INVALID_ARGUMENT);
  CHECK_OK(acp_options_set_framing(o, ACP_FRAMING_CONTENT_LENGTH));
  CHECK_OK(acp_options_set_framing(o, ACP_FRAMING_NDJSON));

  /* An unknown role: refused before the descriptors are taken. */
  int fds[2];
  CHECK(pipe2(fds, O_CLOEXEC) == 0);
  acp_connection *c = (acp_connection *)0x1;
  CHECK_STATUS(acp_connection_from_fds(o, 2, fds[0], fds[1], &c, NULL),
               ACP_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(acp_connection_from_fds(o, -1, fds[0], fds[1], &c, NULL),
               ACP_ERR_INVALID_ARGUMENT);
  /* A pipe end twice (only a stream socket may be both), or a negative
   * descriptor. */
  CHECK_STATUS(acp_connection_from_fds(o, ACP_ROLE_CLIENT, fds[0], fds[0], &c, NULL),
               ACP_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(acp_connection_from_fds(o, ACP_ROLE_CLIENT, -1, fds[1], &c, NULL),
               ACP_ERR_INVALID_ARGUMENT);
  /* A descriptor that is not open (checked with fcntl: a debug build of
   * Rust would abort on taking it over); the other one stays the caller's. */
  /* (A high number: new descriptors, libacp's own included, take the
   * lowest free ones.) */
  int closed = 900;
  while (fd_open(closed)) closed++;
  CHECK_STATUS(acp_connection_from_fds(o, ACP_ROLE_CLIENT, closed, fds[1], &c, NULL),
               ACP_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(acp_connection_from_fds(o, ACP_ROLE_CLIENT, fds[0], closed, &c, NULL),
               ACP_ERR_INVALID_ARGUMENT);
  CHECK(c == (acp_connection *)0x1);
  CHECK(fd_open(fds[0]) && fd_open(fds[1]));
  close(fds[0]);
  close(fds[1]);
  acp_options_free(o);
  /* acp_call_cancel with an unknown mode is in client.c (needs a call). */
}

void test_options_reject_out_of_range_values(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK(o != NULL);
  CHECK_STATUS(acp_options_set_max_frame_size(o, 0), ACP_ERR_INVALID_ARGUMENT);
  CHECK_OK(acp_options_set_max_frame_size(o, 1));
  CHECK_STATUS(acp_options_set_event_queue_capacity(o, 0), ACP_ERR_INVALID_ARGUMENT);
  CHECK_OK(acp_options_set_event_queue_capacity(o, 1));
  CHECK_OK(acp_options_set_request_timeout_ms(o, 0));
  CHECK_OK(acp_options_set_request_timeout_ms(o, UINT64_MAX));
  CHECK_OK(acp_options_set_shutdown_grace_ms(o, 0, 0));
  CHECK_OK(acp_options_set_event_callback(o, NULL, NULL)); /* poll mode */
  CHECK_OK(acp_options_set_trace_callback(o, NULL, NULL));
  acp_options_free(o);
}

void test_spawn_missing_program_fails_at_once(void) {
  acp_connection *c = (acp_connection *)0x1;
  acp_error *err = NULL;
  int64_t start = tu_now_ms();
  acp_status st = acp_connection_spawn_agent(NULL, S("/nonexistent/acp-agent"),
                                             NULL, 0, NULL, 0, (acp_str){0}, &c,
                                             &err);
  if (st == ACP_OK && getenv("ACP_UNDER_VALGRIND")) {
    /* Under valgrind, glibc's posix_spawn cannot report the failed exec
     * (valgrind runs its CLONE_VFORK child as a fork): the "agent" is a
     * child that exits 127 at once. The connection then just closes. */
    fprintf(stderr, "note: under valgrind the failed exec is not reported\n");
    tu_drain_until_closed(c, 10000);
    acp_connection_free(c);
    return;
  }
  CHECK_STATUS(st, ACP_ERR_SPAWN);
  CHECK(tu_now_ms() - start < tu_ms(2000));
  CHECK(c == (acp_connection *)0x1);
  CHECK(err != NULL);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_SPAWN);
  CHECK(acp_error_code(err) == 0);
  size_t n;
  const char *m = tu_error_text(err, &n);
  CHECK(n > 0);
  (void)m;
  const char *d = (const char *)0x1;
  CHECK_OK(acp_error_data(err, &d, &n));
  CHECK(d == NULL && n == 0);
  acp_error_free(err);

  /* Invalid UTF-8 in an argument is a status too. */
  err = NULL;
  acp_str bad_arg = S("\xff\xfe");
  CHECK_STATUS(acp_connection_spawn_agent(NULL, S("true"), &bad_arg, 1, NULL, 0,
                                          (acp_str){0}, &c, &err),
               ACP_ERR_INVALID_UTF8);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_INVALID_UTF8);
  acp_error_free(err);
  CHECK(c == (acp_connection *)0x1);
}

/* The error in *errp (then freed, *errp NULL): its kind (acp_error_kind)
 * is `want`, and its message names the option. */
static void check_refusal(acp_status st, acp_error **errp, const char *want,
                          const char *option) {
  /* Read after the call (argument evaluation order is unspecified). */
  acp_error *err = *errp;
  *errp = NULL;
  CHECK_STATUS(st, ACP_ERR_INVALID_ARGUMENT);
  CHECK(err != NULL);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_INVALID_ARGUMENT);
  const char *p = NULL;
  size_t n = 0;
  CHECK_OK(acp_error_kind(err, &p, &n));
  CHECK_MSG(p && n == strlen(want) && memcmp(p, want, n) == 0,
            "kind %.*s, want %s", (int)n, p ? p : "(none)", want);
  CHECK_OK(acp_error_message(err, &p, &n));
  CHECK_CONTAINS(p, n, option);
  acp_error_free(err);
}

/* Options by name: the core's table checks each value when it is set
 * (unknown name, wrong type, out of range, a callback), and each refusal
 * says which option and why. */
void test_options_by_name_refused_by_kind(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  acp_error *err = NULL;
  check_refusal(acp_options_set_bool(o, S("no_such_option"), true, &err), &err,
                "unknown", "no_such_option");
  err = NULL;
  check_refusal(acp_options_set_bool(o, S("max_frame_size"), true, &err), &err,
                "type", "max_frame_size");
  err = NULL;
  check_refusal(acp_options_set_string(o, S("fs"), S("yes"), &err), &err,
                "type", "fs");
  err = NULL;
  check_refusal(acp_options_add_string(o, S("fs"), S("yes"), &err), &err,
                "type", "fs");
  err = NULL;
  check_refusal(acp_options_add_pair(o, S("bearer_tokens"), S("a"), S("b"),
                                     &err), &err, "type", "bearer_tokens");
  err = NULL;
  check_refusal(acp_options_set_int(o, S("max_frame_size"), 0, &err), &err,
                "range", "max_frame_size");
  err = NULL;
  check_refusal(acp_options_set_int(o, S("outgoing_queue"), -1, &err), &err,
                "range", "outgoing_queue");
  err = NULL;
  check_refusal(acp_options_set_double(o, S("outgoing_queue"), 1.5, &err), &err,
                "range", "outgoing_queue");
  err = NULL;
  check_refusal(acp_options_set_double(o, S("request_timeout_ms"), 0.0 / 0.0,
                                       &err), &err, "range", "request_timeout_ms");
  err = NULL;
  check_refusal(acp_options_set_string(o, S("framing"), S("xml"), &err), &err,
                "range", "framing");
  err = NULL;
  check_refusal(acp_options_add_string(o, S("allowed_origins"), S(""), &err), &err, "range", "allowed_origins");
  err = NULL;
  check_refusal(acp_options_add_pair(o, S("env"), S("A=B"), S("c"), &err), &err,
                "range", "A=B");
  err = NULL;
  /* Callbacks have their own setters. */
  check_refusal(acp_options_set_bool(o, S("trace"), true, &err), &err,
                "not_applicable", "trace");
  err = NULL;
  check_refusal(acp_options_unset(o, S("nope"), &err), &err, "unknown", "nope");
  /* Not UTF-8, NULL: the usual statuses. */
  CHECK_STATUS(acp_options_set_bool(o, (acp_str){"\xff", 1}, true, NULL),
               ACP_ERR_INVALID_UTF8);
  CHECK_STATUS(acp_options_set_bool(NULL, S("fs"), true, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_int(NULL, S("queue"), 1, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_double(NULL, S("queue"), 1, NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_set_string(NULL, S("path"), S("/x"), NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_add_string(NULL, S("bearer_tokens"), S("x"), NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_add_pair(NULL, S("env"), S("A"), S("b"), NULL),
               ACP_ERR_NULL_ARGUMENT);
  CHECK_STATUS(acp_options_unset(NULL, S("env"), NULL), ACP_ERR_NULL_ARGUMENT);
  /* What is accepted: every kind of value. */
  CHECK_OK(acp_options_set_bool(o, S("session_model"), true, NULL));
  CHECK_OK(acp_options_set_int(o, S("max_frame_size"), 4096, NULL));
  CHECK_OK(acp_options_set_double(o, S("request_timeout_ms"), 1.5, NULL));
  CHECK_OK(acp_options_set_double(o, S("incoming_queue"), 8.0, NULL));
  CHECK_OK(acp_options_set_string(o, S("framing"), S("content-length"), NULL));
  CHECK_OK(acp_options_add_string(o, S("allowed_origins"), S("*"), NULL));
  CHECK_OK(acp_options_add_pair(o, S("headers"), S("X-A"), S("b"), NULL));
  CHECK_OK(acp_options_add_pair(o, S("headers"), S("X-C"), S("d"), NULL));
  CHECK_OK(acp_options_unset(o, S("headers"), NULL));
  /* An error kind is absent where there is none. */
  CHECK_STATUS(acp_options_set_framing(o, 7), ACP_ERR_INVALID_ARGUMENT);
  acp_options_free(o);
}

/* "Not applicable here" is the constructor's refusal: a client option on
 * an agent, a spawn option on descriptors. Nothing is taken over. The
 * typed setters keep their meaning: ignored where they do not apply. */
void test_options_by_name_not_applicable_at_the_constructor(void) {
  const char *names[] = {"fs", "cwd"};
  for (int i = 0; i < 2; i++) {
    acp_options *o = NULL;
    CHECK_OK(acp_options_new(&o));
    if (i == 0)
      CHECK_OK(acp_options_set_bool(o, S("fs"), true, NULL));
    else
      CHECK_OK(acp_options_set_string(o, S("cwd"), S("/tmp"), NULL));
    int fds[2];
    CHECK(pipe2(fds, O_CLOEXEC) == 0);
    acp_connection *c = (acp_connection *)0x1;
    acp_error *err = NULL;
    check_refusal(acp_connection_from_fds(o, ACP_ROLE_AGENT, fds[0], fds[1],
                                          &c, &err), &err, "not_applicable", names[i]);
    CHECK(c == (acp_connection *)0x1);
    /* Still ours: open. */
    CHECK(fcntl(fds[0], F_GETFD) >= 0 && fcntl(fds[1], F_GETFD) >= 0);
    close(fds[0]);
    close(fds[1]);
    acp_options_free(o);
  }
  /* The typed setters on the same connections: accepted, as before. */
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK_OK(acp_options_set_fs(o, true));
  CHECK_OK(acp_options_set_terminals(o, true));
  CHECK_OK(acp_options_set_session_model(o, true));
  CHECK_OK(acp_options_set_shutdown_grace_ms(o, 10, 10));
  acp_connection *client, *agent;
  tu_pair(o, o, false, &client, &agent);
  CHECK_OK(acp_connection_close(client));
  tu_drain_until_closed(client, 5000);
  tu_drain_until_closed(agent, 5000);
  acp_connection_free(client);
  acp_connection_free(agent);
  acp_options_free(o);
}

/* Options set by name take effect: a request timeout in fractional
 * milliseconds ends a call the peer never answers with ACP_ERR_TIMEOUT,
 * and require_auth by name makes the agent refuse session/new. */
void test_options_by_name_take_effect(void) {
  /* The timeout, on the one call made: initialize, which the agent holds. */
  acp_options *co = NULL;
  CHECK_OK(acp_options_new(&co));
  CHECK_OK(acp_options_set_double(co, S("request_timeout_ms"), 200.5, NULL));
  acp_connection *client, *agent;
  tu_pair(co, NULL, true, &client, &agent);
  int64_t start = tu_now_ms();
  CHECK_OK(acp_connection_request(client, S("initialize"),
                                  S("{\"protocolVersion\":1}"), NULL, NULL,
                                  NULL));
  acp_event *ev = tu_next_non_log(agent, 10000);
  acp_request *held = NULL;
  CHECK_OK(acp_event_take_request(ev, &held));
  acp_event_free(ev);
  ev = tu_wait_result(client, 10000, NULL);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_TIMEOUT);
  CHECK(tu_now_ms() - start >= 200);
  acp_event_free(ev);
  acp_request_free(held); /* answered -32603: too late, dropped */
  CHECK_OK(acp_connection_close(client));
  tu_drain_until_closed(client, 5000);
  tu_drain_until_closed(agent, 5000);
  acp_connection_free(client);
  acp_connection_free(agent);
  acp_options_free(co);

  /* require_auth: the core answers session/new -32000 without the host. */
  acp_options *ao = NULL;
  CHECK_OK(acp_options_new(&ao));
  CHECK_OK(acp_options_set_bool(ao, S("require_auth"), true, NULL));
  tu_pair(NULL, ao, true, &client, &agent);
  CHECK_OK(acp_connection_request(client, S("initialize"),
                                  S("{\"protocolVersion\":1}"), NULL, NULL,
                                  NULL));
  ev = tu_next_non_log(agent, 10000);
  acp_request *req = NULL;
  CHECK_OK(acp_event_take_request(ev, &req));
  acp_event_free(ev);
  CHECK_OK(acp_request_respond(
      req,
      S("{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":"
        "[{\"id\":\"k\",\"name\":\"Key\"}]}"),
      NULL));
  acp_request_free(req);
  ev = tu_wait_result(client, 10000, NULL);
  CHECK_OK(acp_event_result_status(ev));
  acp_event_free(ev);
  CHECK_OK(acp_connection_request(client, S("session/new"),
                                  S("{\"cwd\":\"/tmp\",\"mcpServers\":[]}"),
                                  NULL, NULL, NULL));
  ev = tu_wait_result(client, 10000, NULL);
  CHECK_STATUS(acp_event_result_status(ev), ACP_ERR_RPC);
  CHECK(acp_error_code(acp_event_error(ev)) == -32000);
  acp_event_free(ev);
  CHECK_OK(acp_connection_close(client));
  tu_drain_until_closed(client, 5000);
  tu_drain_until_closed(agent, 5000);
  acp_connection_free(client);
  acp_connection_free(agent);
  acp_options_free(ao);
}
