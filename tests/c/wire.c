/*
 * What reaches the wire through the C ABI, read by a raw peer on the other
 * end of a socket: calls and notifications leave in the order they are
 * made; params text holding raw newlines (even around a number no double
 * can hold) leaves as one NDJSON frame; a `null` result completes a call;
 * and the descriptor contract of acp_connection_from_fds (one stream socket
 * may be given as both ends; a descriptor that is not open is refused and
 * nothing is taken over); a request flood waits for a host that does not
 * answer (issue 14).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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

/* The raw client of the flood test: writes `initialize` and FLOOD
 * requests (its writes block while libacp reads no further), then reads
 * the answers, counting each id once. */
enum { FLOOD = 3000, IN_FLIGHT = 1024 };

typedef struct {
  int fd;
  int answered; /* distinct ids answered, initialize included */
  bool twice;   /* an id answered twice */
} flood_peer;

static void *flood_writer(void *arg) {
  flood_peer *p = arg;
  write_line(p->fd, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                    "\"params\":{\"protocolVersion\":1,"
                    "\"clientCapabilities\":{}}}");
  for (int i = 1; i <= FLOOD; i++) {
    char *line =
        tu_fmt("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"_flood/q\","
               "\"params\":{}}",
               i);
    write_line(p->fd, line);
    free(line);
  }
  return NULL;
}

static void *flood_reader(void *arg) {
  flood_peer *p = arg;
  static bool seen[FLOOD + 1];
  memset(seen, 0, sizeof seen);
  while (p->answered < FLOOD + 1) {
    char *line = read_line(p->fd, 60000);
    char *id_pos = strstr(line, "\"id\":");
    CHECK_MSG(id_pos != NULL && strstr(line, "\"result\"") != NULL, "%s",
              line);
    int id = atoi(id_pos + 5);
    CHECK(id >= 0 && id <= FLOOD);
    if (seen[id]) {
      p->twice = true;
    }
    seen[id] = true;
    p->answered++;
    free(line);
  }
  return NULL;
}

/* Issue 14, defect 2: a peer sending requests to a C host that does not
 * answer them is read no further once IN_FLIGHT (the core's
 * incoming_requests) are unanswered, whether or not the host took them as
 * events; answering lets the rest in, and each is answered once. */
void test_wire_a_request_flood_waits_for_the_host(void) {
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  acp_connection *c = NULL;
  acp_error *err = NULL;
  CHECK_OK(
      acp_connection_from_fds(NULL, ACP_ROLE_AGENT, sv[0], sv[0], &c, &err));
  flood_peer peer = {.fd = sv[1]};
  pthread_t writer, reader;
  CHECK(pthread_create(&writer, NULL, flood_writer, &peer) == 0);
  CHECK(pthread_create(&reader, NULL, flood_reader, &peer) == 0);

  static acp_request *parked[FLOOD];
  int taken = 0;
  int answered = 0;
  bool released = false;
  int64_t deadline = tu_now_ms() + tu_ms(60000);
  while (answered < FLOOD) {
    CHECK_MSG(tu_now_ms() < deadline, "%d taken, %d answered", taken,
              answered);
    acp_event *ev = tu_next_event(c, 500);
    if (ev == NULL) {
      /* Quiet for 500 ms (scaled). Until IN_FLIGHT requests came, keep
       * waiting (a slow machine); then none more may come (checked
       * below) until the host answers them. */
      if (released || taken < IN_FLIGHT) {
        continue;
      }
      released = true;
      for (int i = 0; i < taken; i++) {
        CHECK_OK(acp_request_respond(parked[i], S("{}"), &err));
        acp_request_free(parked[i]);
        answered++;
      }
      continue;
    }
    CHECK_MSG(acp_event_get_kind(ev) == ACP_EVENT_REQUEST, "kind %d",
              acp_event_get_kind(ev));
    const char *m;
    size_t n;
    CHECK_OK(acp_event_method(ev, &m, &n));
    bool init = n == 10 && memcmp(m, "initialize", 10) == 0;
    acp_request *req = NULL;
    CHECK_OK(acp_event_take_request(ev, &req));
    acp_event_free(ev);
    if (init) {
      CHECK_OK(acp_request_respond(
          req, S("{\"protocolVersion\":1,\"agentCapabilities\":{}}"), &err));
      acp_request_free(req);
    } else if (released) {
      CHECK_OK(acp_request_respond(req, S("{}"), &err));
      acp_request_free(req);
      answered++;
    } else {
      CHECK_MSG(taken < IN_FLIGHT, "request %d reached the host", taken + 1);
      parked[taken++] = req;
    }
  }
  CHECK(pthread_join(writer, NULL) == 0);
  CHECK(pthread_join(reader, NULL) == 0);
  CHECK(peer.answered == FLOOD + 1 && !peer.twice);
  close(sv[1]);
  tu_drain_until_closed(c, 10000);
  acp_connection_free(c);
}
