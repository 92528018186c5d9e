/*
 * What reaches the wire through the C ABI, read by a raw peer on the other
 * end of a socket: calls and notifications leave in the order they are
 * made; params text holding raw newlines (even around a number no double
 * can hold) leaves as one NDJSON frame; a `null` result completes a call;
 * and the descriptor contract of acp_connection_from_fds (one stream socket
 * may be given as both ends; a descriptor that is not open is refused and
 * nothing is taken over).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"

/* A client connection over one socket given twice; *peer gets the other
 * end (the raw peer). */
static acp_connection *client_on_socket(int *peer) {
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  acp_connection *c = NULL;
  acp_error *err = NULL;
  CHECK_OK(acp_connection_from_fds(NULL, ACP_ROLE_CLIENT, sv[0], sv[0], &c,
                                   &err));
  *peer = sv[1];
  return c;
}

/* Reads one line (without its newline) from `fd` within `ms` (scaled);
 * malloc'ed; fails the test on timeout or end of stream. */
static char *read_line(int fd, int ms) {
  size_t cap = 256, len = 0;
  char *buf = malloc(cap);
  CHECK(buf != NULL);
  int64_t deadline = tu_now_ms() + tu_ms(ms);
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int left = (int)(deadline - tu_now_ms());
    CHECK_MSG(left > 0, "no line within %d ms (got %zu bytes)", ms, len);
    if (poll(&p, 1, left) <= 0) {
      continue;
    }
    char c;
    ssize_t n = read(fd, &c, 1);
    CHECK_MSG(n == 1, "end of stream or error reading a line");
    if (c == '\n') {
      buf[len] = '\0';
      return buf;
    }
    if (len + 2 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      CHECK(buf != NULL);
    }
    buf[len++] = c;
  }
}

static void write_line(int fd, const char *line) {
  size_t n = strlen(line);
  CHECK(write(fd, line, n) == (ssize_t)n);
  CHECK(write(fd, "\n", 1) == 1);
}

void test_wire_calls_and_notifications_leave_in_call_order(void) {
  int peer;
  acp_connection *c = client_on_socket(&peer);
  acp_error *err = NULL;
  /* Extension methods may be sent before initialize. */
  for (int i = 0; i < 20; i++) {
    char *params = tu_fmt("{\"i\":%d}", i);
    CHECK_OK(acp_connection_request(c, S("_r"), tu_str(params), NULL, NULL,
                                    &err));
    CHECK_OK(acp_connection_notify(c, S("_n"), tu_str(params), &err));
    free(params);
  }
  for (int i = 0; i < 20; i++) {
    char *want_r = tu_fmt("\"method\":\"_r\",\"params\":{\"i\":%d}", i);
    char *want_n = tu_fmt("\"method\":\"_n\",\"params\":{\"i\":%d}", i);
    char *r = read_line(peer, 5000);
    char *n = read_line(peer, 5000);
    CHECK_CONTAINS(r, strlen(r), want_r);
    CHECK_CONTAINS(n, strlen(n), want_n);
    free(r);
    free(n);
    free(want_r);
    free(want_n);
  }
  close(peer);
  tu_drain_until_closed(c, 5000);
  acp_connection_free(c);
}

void test_wire_params_with_raw_newlines_leave_as_one_frame(void) {
  int peer;
  acp_connection *c = client_on_socket(&peer);
  acp_error *err = NULL;
  /* Valid JSON: the newline is whitespace; 1e999 is beyond a double. */
  CHECK_OK(acp_connection_request(
      c, S("initialize"),
      S("{\"protocolVersion\": 1,\n \"clientCapabilities\": {}, \"x\": 1e999}"),
      NULL, NULL, &err));
  char *line = read_line(peer, 5000);
  CHECK_MSG(strcmp(line, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                         "\"params\":{\"protocolVersion\":1,"
                         "\"clientCapabilities\":{},\"x\":1e999}}") == 0,
            "got %s", line);
  free(line);
  close(peer);
  tu_drain_until_closed(c, 5000);
  acp_connection_free(c);
}

void test_wire_a_null_result_completes_the_call(void) {
  int peer;
  acp_connection *c = client_on_socket(&peer);
  acp_error *err = NULL;
  int tag = 42;
  CHECK_OK(acp_connection_request(c, S("_ext/nothing"), S("{}"), &tag, NULL,
                                  &err));
  char *line = read_line(peer, 5000);
  char *id_pos = strstr(line, "\"id\":");
  CHECK(id_pos != NULL);
  int id = atoi(id_pos + 5);
  free(line);
  char *answer = tu_fmt("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":null}", id);
  write_line(peer, answer);
  free(answer);
  acp_event *ev = tu_wait_result(c, 5000, NULL);
  CHECK(acp_event_call_data(ev) == &tag);
  CHECK_STATUS(acp_event_result_status(ev), ACP_OK);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK(n == 4 && memcmp(p, "null", 4) == 0);
  acp_event_free(ev);
  close(peer);
  tu_drain_until_closed(c, 5000);
  acp_connection_free(c);
}

static bool fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

void test_wire_from_fds_descriptor_contract(void) {
  acp_connection *c = (acp_connection *)0x1;
  acp_error *err = NULL;
  int fds[2];
  CHECK(pipe2(fds, O_CLOEXEC) == 0);
  /* A descriptor that is not open (a number no process can have open):
   * refused, the other one left alone. */
  int closed = 1 << 30;
  CHECK_STATUS(acp_connection_from_fds(NULL, ACP_ROLE_AGENT, closed, fds[1],
                                       &c, &err),
               ACP_ERR_INVALID_ARGUMENT);
  const char *msg;
  size_t n;
  CHECK_OK(acp_error_message(err, &msg, &n));
  CHECK_CONTAINS(msg, n, "not an open file descriptor");
  acp_error_free(err);
  err = NULL;
  /* A pipe end twice: only a stream socket may serve both directions. */
  CHECK_STATUS(acp_connection_from_fds(NULL, ACP_ROLE_AGENT, fds[0], fds[0],
                                       &c, &err),
               ACP_ERR_INVALID_ARGUMENT);
  acp_error_free(err);
  err = NULL;
  CHECK(c == (acp_connection *)0x1);
  CHECK(fd_open(fds[0]) && fd_open(fds[1]));
  close(fds[0]);
  close(fds[1]);
  /* A datagram socket: refused. */
  int dg[2];
  CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, dg) == 0);
  CHECK_STATUS(acp_connection_from_fds(NULL, ACP_ROLE_AGENT, dg[0], dg[1], &c,
                                       &err),
               ACP_ERR_INVALID_ARGUMENT);
  acp_error_free(err);
  CHECK(fd_open(dg[0]) && fd_open(dg[1]));
  close(dg[0]);
  close(dg[1]);
  /* One stream socket as both ends: a working connection, whose close the
   * peer sees as end of stream even though a duplicate stays open. */
  int peer;
  acp_connection *ok = client_on_socket(&peer);
  int keep = dup(peer);
  CHECK_OK(acp_connection_close(ok));
  char byte;
  struct pollfd p = {.fd = peer, .events = POLLIN};
  CHECK(poll(&p, 1, tu_ms(5000)) == 1);
  CHECK(read(peer, &byte, 1) == 0);
  close(keep);
  close(peer);
  tu_drain_until_closed(ok, 5000);
  acp_connection_free(ok);
}
