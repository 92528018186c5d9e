/*
 * The bench client on libacp's C ABI (callback mode):
 *   bench-c-client WORKLOAD [ARGS] -- AGENT_COMMAND...
 * Calls are made from the main thread (and, for W4, from INFLIGHT worker
 * threads) and waited for on a condition variable; the dispatch thread
 * checks chunks, answers fs requests and completes the calls.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "common.h"

static acp_connection *CONN;
static pthread_mutex_t MU = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t CV = PTHREAD_COND_INITIALIZER;
static char ERRORS[1024];

/* ---- the tracker (under MU) */
typedef struct sess {
  char *id;
  size_t len;
  unsigned long long chunks;
  struct sess *next;
} sess;
static sess *SESSIONS;
static double *READ_TIMES;
static size_t READ_CAP, READS;
static char *EXPECTED_WRITE;
static size_t EXPECTED_WRITE_LEN;
static unsigned WRITES;
static char *READ_ANSWER; /* {"content": "<1024 bytes>"} */
static size_t READ_ANSWER_LEN;

static void error_(const char *msg) {
  if (!ERRORS[0]) snprintf(ERRORS, sizeof ERRORS, "%s", msg);
}

static sess *find(const char *id, size_t len, bool create) {
  for (sess *s = SESSIONS; s; s = s->next)
    if (s->len == len && memcmp(s->id, id, len) == 0) return s;
  if (!create) return NULL;
  sess *s = calloc(1, sizeof *s);
  s->id = malloc(len + 1);
  memcpy(s->id, id, len);
  s->id[len] = 0;
  s->len = len;
  s->next = SESSIONS;
  SESSIONS = s;
  return s;
}

/* Chunks seen for the session; forgets it. */
static unsigned long long take_chunks(const char *id) {
  pthread_mutex_lock(&MU);
  unsigned long long n = 0;
  for (sess **p = &SESSIONS; *p; p = &(*p)->next) {
    if (strcmp((*p)->id, id) == 0) {
      sess *s = *p;
      n = s->chunks;
      *p = s->next;
      free(s->id);
      free(s);
      break;
    }
  }
  pthread_mutex_unlock(&MU);
  return n;
}

/* ---- calls */
typedef struct {
  bool done;
  acp_status status;
  char *result;
  size_t len;
  char message[256];
} call;

/* Sends a request and waits for its result (owned by the caller), or NULL. */
static char *request(const char *method, const char *params, size_t plen, char *why, size_t why_size) {
  call c = {0};
  acp_error *err = NULL;
  acp_status st = acp_connection_request(CONN, S(method), SN(params, plen), &c, NULL, &err);
  if (st != ACP_OK) {
    const char *m = NULL;
    size_t ml = 0;
    if (err) acp_error_message(err, &m, &ml);
    snprintf(why, why_size, "%s: %s %.*s", method, acp_status_str(st), (int)ml, m ? m : "");
    acp_error_free(err);
    return NULL;
  }
  pthread_mutex_lock(&MU);
  while (!c.done) pthread_cond_wait(&CV, &MU);
  pthread_mutex_unlock(&MU);
  if (c.status != ACP_OK) {
    snprintf(why, why_size, "%s: %s %s", method, acp_status_str(c.status), c.message);
    return NULL;
  }
  return c.result;
}

static void on_result(acp_event *ev) {
  call *c = acp_event_call_data(ev);
  acp_status st = acp_event_result_status(ev);
  char *copy = NULL;
  size_t len = 0;
  if (st == ACP_OK) {
    const char *text = NULL;
    acp_event_result(ev, &text, &len);
    copy = malloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = 0;
  }
  pthread_mutex_lock(&MU);
  c->status = st;
  c->result = copy;
  c->len = len;
  if (st != ACP_OK) {
    const acp_error *e = acp_event_error(ev);
    const char *m = NULL;
    size_t ml = 0;
    if (e) acp_error_message(e, &m, &ml);
    snprintf(c->message, sizeof c->message, "%.*s", (int)ml, m ? m : "");
  }
  c->done = true;
  pthread_cond_broadcast(&CV);
  pthread_mutex_unlock(&MU);
}

static void on_notification(acp_event *ev) {
  const char *m = NULL, *p = NULL;
  size_t ml = 0, pl = 0;
  acp_event_method(ev, &m, &ml);
  if (ml != 14 || memcmp(m, "session/update", 14) != 0) return;
  acp_event_params(ev, &p, &pl);
  json *params = json_parse(p, pl, NULL, 0);
  size_t kl = 0, sl = 0, tl = 0;
  const char *kind = json_string(json_path(params, "update", "sessionUpdate", NULL), &kl);
  const char *sid = json_string(json_get(params, "sessionId"), &sl);
  const char *text = json_string(json_path(params, "update", "content", "text", NULL), &tl);
  if (kind && sid && text && strcmp(kind, "agent_message_chunk") == 0) {
    pthread_mutex_lock(&MU);
    sess *s = find(sid, sl, true);
    if (chunk_index(text, tl) == (long long)s->chunks)
      s->chunks++;
    else
      error_("a chunk out of order");
    pthread_mutex_unlock(&MU);
  }
  json_free(params);
}

static void respond(acp_request *req, const char *text, size_t len) {
  acp_error *err = NULL;
  if (acp_request_respond(req, (acp_str){text, len}, &err) != ACP_OK) acp_error_free(err);
}

static void respond_error(acp_request *req, const char *message) {
  acp_error *err = NULL;
  if (acp_request_respond_error(req, -32602, acp_str_from_cstr(message), (acp_str){NULL, 0}, &err) != ACP_OK)
    acp_error_free(err);
}

static void on_request(acp_event *ev) {
  acp_request *req = NULL;
  if (acp_event_take_request(ev, &req) != ACP_OK) return;
  const char *m = NULL, *p = NULL;
  size_t ml = 0, pl = 0;
  acp_request_method(req, &m, &ml);
  acp_request_params(req, &p, &pl);
  bool is_read = ml == 17 && memcmp(m, "fs/read_text_file", 17) == 0;
  bool is_write = ml == 18 && memcmp(m, "fs/write_text_file", 18) == 0;
  if (!is_read && !is_write) {
    acp_error *err = NULL;
    if (acp_request_respond_error(req, -32601, ACP_STR("Method not found"), (acp_str){NULL, 0}, &err) != ACP_OK)
      acp_error_free(err);
    acp_request_free(req);
    return;
  }
  json *params = json_parse(p, pl, NULL, 0);
  size_t pathl = 0, cl = 0;
  const char *path = json_string(json_get(params, "path"), &pathl);
  pthread_mutex_lock(&MU);
  if (is_read) {
    if (READS < READ_CAP) READ_TIMES[READS] = now_s();
    char expected[64];
    snprintf(expected, sizeof expected, READ_PREFIX "%zu", READS);
    READS++;
    bool ok = path && strcmp(path, expected) == 0;
    pthread_mutex_unlock(&MU);
    if (ok)
      respond(req, READ_ANSWER, READ_ANSWER_LEN);
    else {
      error_("a read of the wrong path");
      respond_error(req, "wrong read path");
    }
  } else {
    const char *content = json_string(json_get(params, "content"), &cl);
    bool ok = path && strcmp(path, WRITE_PATH) == 0 && content && EXPECTED_WRITE &&
              cl == EXPECTED_WRITE_LEN && memcmp(content, EXPECTED_WRITE, cl) == 0;
    if (ok) WRITES++;
    else error_("a write of unexpected content");
    pthread_mutex_unlock(&MU);
    if (ok)
      respond(req, "{}", 2);
    else
      respond_error(req, "unexpected write");
  }
  acp_request_free(req);
  json_free(params);
}

static void on_event(void *user_data, acp_event *ev) {
  (void)user_data;
  switch (acp_event_get_kind(ev)) {
    case ACP_EVENT_NOTIFICATION: on_notification(ev); break;
    case ACP_EVENT_REQUEST: on_request(ev); break;
    case ACP_EVENT_RESULT: on_result(ev); break;
    case ACP_EVENT_LOG: {
      const char *t = NULL;
      size_t l = 0;
      acp_event_text(ev, &t, &l);
      fprintf(stderr, "%.*s\n", (int)l, t);
      break;
    }
    default: break;
  }
  acp_event_free(ev);
}

/* ---- the driver */
static char WHY[1024];

static bool new_session(char *out, size_t out_size) {
  const char *params = "{\"cwd\":\"/tmp\",\"mcpServers\":[]}";
  char *r = request("session/new", params, strlen(params), WHY, sizeof WHY);
  if (!r) return false;
  json *v = json_parse(r, strlen(r), NULL, 0);
  size_t l = 0;
  const char *sid = json_string(json_get(v, "sessionId"), &l);
  bool ok = sid && l < out_size;
  if (ok) memcpy(out, sid, l + 1);
  json_free(v);
  free(r);
  if (!ok) snprintf(WHY, sizeof WHY, "session/new: no sessionId");
  return ok;
}

/* A prompt (text, plus a resource of `res` bytes when res_len > 0); its time, or -1. */
static double prompt(const char *sid, const char *text, const char *res, size_t res_len, char *why, size_t why_size) {
  jbuf b;
  jb_init(&b);
  jb_lit(&b, "{\"sessionId\":");
  jb_cstr(&b, sid);
  jb_lit(&b, ",\"prompt\":[{\"type\":\"text\",\"text\":");
  jb_cstr(&b, text);
  jb_lit(&b, "}");
  if (res) {
    jb_lit(&b, ",{\"type\":\"resource\",\"resource\":{\"uri\":\"" RESOURCE_URI "\",\"text\":");
    jb_str(&b, res, res_len);
    jb_lit(&b, "}}");
  }
  jb_lit(&b, "]}");
  double start = now_s();
  char *r = request("session/prompt", b.data, b.len, why, why_size);
  double took = now_s() - start;
  jb_free(&b);
  if (!r) return -1;
  bool ok = strstr(r, "\"end_turn\"") != NULL;
  if (!ok) snprintf(why, why_size, "%s: answered %.200s", text, r);
  free(r);
  pthread_mutex_lock(&MU);
  if (ERRORS[0]) {
    snprintf(why, why_size, "%s", ERRORS);
    ok = false;
  }
  pthread_mutex_unlock(&MU);
  return ok ? took : -1;
}

static double stream(const char *sid, unsigned long long n) {
  char text[64];
  snprintf(text, sizeof text, "stream %llu", n);
  double t = prompt(sid, text, NULL, 0, WHY, sizeof WHY);
  if (t < 0) return t;
  unsigned long long got = take_chunks(sid);
  if (got != n) {
    snprintf(WHY, sizeof WHY, "stream %llu: got %llu chunks", n, got);
    return -1;
  }
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p) {
  if (n == 0) return 0;
  qsort(v, n, sizeof *v, cmp_double);
  size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return v[rank - 1];
}

/* Times of the reads; returns the prompt's time or -1; gaps (us) into *gaps. */
static double reads(const char *sid, size_t m, double **gaps) {
  pthread_mutex_lock(&MU);
  free(READ_TIMES);
  READ_TIMES = calloc(m + 1, sizeof(double));
  READ_CAP = m;
  READS = 0;
  pthread_mutex_unlock(&MU);
  char text[64];
  snprintf(text, sizeof text, "read %zu", m);
  double t = prompt(sid, text, NULL, 0, WHY, sizeof WHY);
  if (t < 0) return t;
  if (READS != m) {
    snprintf(WHY, sizeof WHY, "read %zu: got %zu reads", m, READS);
    return -1;
  }
  *gaps = calloc(m + 1, sizeof(double));
  for (size_t i = 1; i < m; i++) (*gaps)[i - 1] = (READ_TIMES[i] - READ_TIMES[i - 1]) * 1e6;
  return t;
}

static double write_(const char *sid, size_t n) {
  pthread_mutex_lock(&MU);
  free(EXPECTED_WRITE);
  EXPECTED_WRITE = text_of(n);
  EXPECTED_WRITE_LEN = n;
  WRITES = 0;
  pthread_mutex_unlock(&MU);
  char text[64];
  snprintf(text, sizeof text, "write %zu", n);
  double t = prompt(sid, text, NULL, 0, WHY, sizeof WHY);
  if (t >= 0 && WRITES != 1) {
    snprintf(WHY, sizeof WHY, "write: not exactly one write");
    return -1;
  }
  return t;
}

/* W4 */
static size_t W4_NEXT, W4_COUNT;
static unsigned long long W4_CHUNKS;
static bool W4_FAILED;
static char W4_WHY[512];

static void *w4_worker(void *arg) {
  (void)arg;
  char why[512];
  for (;;) {
    pthread_mutex_lock(&MU);
    bool more = W4_NEXT < W4_COUNT && !W4_FAILED;
    W4_NEXT++;
    pthread_mutex_unlock(&MU);
    if (!more) return NULL;
    char sid[256];
    const char *params = "{\"cwd\":\"/tmp\",\"mcpServers\":[]}";
    char *r = request("session/new", params, strlen(params), why, sizeof why);
    bool ok = r != NULL;
    if (r) {
      json *v = json_parse(r, strlen(r), NULL, 0);
      size_t l = 0;
      const char *s = json_string(json_get(v, "sessionId"), &l);
      ok = s && l < sizeof sid;
      if (ok) memcpy(sid, s, l + 1);
      json_free(v);
      free(r);
    }
    if (ok) {
      char text[64];
      snprintf(text, sizeof text, "stream %llu", W4_CHUNKS);
      ok = prompt(sid, text, NULL, 0, why, sizeof why) >= 0;
      if (ok && take_chunks(sid) != W4_CHUNKS) {
        snprintf(why, sizeof why, "w4: session %s: wrong chunk count", sid);
        ok = false;
      }
    }
    if (!ok) {
      pthread_mutex_lock(&MU);
      if (!W4_FAILED) snprintf(W4_WHY, sizeof W4_WHY, "%s", why);
      W4_FAILED = true;
      pthread_mutex_unlock(&MU);
      return NULL;
    }
  }
}

static double sessions(size_t count, unsigned long long chunks, size_t inflight) {
  W4_NEXT = 0;
  W4_COUNT = count;
  W4_CHUNKS = chunks;
  W4_FAILED = false;
  if (inflight > count) inflight = count;
  pthread_t *threads = calloc(inflight + 1, sizeof(pthread_t));
  double start = now_s();
  for (size_t i = 0; i < inflight; i++) pthread_create(&threads[i], NULL, w4_worker, NULL);
  for (size_t i = 0; i < inflight; i++) pthread_join(threads[i], NULL);
  double took = now_s() - start;
  free(threads);
  if (W4_FAILED) {
    snprintf(WHY, sizeof WHY, "%s", W4_WHY);
    return -1;
  }
  return took;
}

static void emit(const char *workload, const char *result, const char *error) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  jbuf b;
  jb_init(&b);
  jb_lit(&b, "{\"impl\":\"libacp-c\",\"workload\":");
  jb_cstr(&b, workload);
  if (result) {
    jb_lit(&b, ",\"result\":");
    jb_lit(&b, result);
  } else {
    jb_lit(&b, ",\"error\":");
    jb_cstr(&b, error);
  }
  char usage[128];
  snprintf(usage, sizeof usage, ",\"usage\":{\"client_rss_kb\":%ld,\"client_cpu_s\":%.6f}}\n", ru.ru_maxrss, cpu);
  jb_lit(&b, usage);
  fwrite(b.data, 1, b.len, stdout);
  fflush(stdout);
  jb_free(&b);
}

static unsigned long long arg(int argc, char **argv, int i, int split, unsigned long long dflt) {
  return i < split && i < argc ? strtoull(argv[i], NULL, 10) : dflt;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  int split = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) {
      split = i;
      break;
    }
  if (split < 2 || split == argc - 1) {
    fprintf(stderr, "usage: bench-c-client (w1 [N] | w2 [M] | w3 [BYTES [REPS]] | w4 [SESSIONS [CHUNKS [INFLIGHT]]] | smoke) -- AGENT_COMMAND...\n");
    return 2;
  }
  const char *workload = argv[1];
  char *read_content = text_of(READ_LEN);
  jbuf ra;
  jb_init(&ra);
  jb_lit(&ra, "{\"content\":");
  jb_str(&ra, read_content, READ_LEN);
  jb_lit(&ra, "}");
  READ_ANSWER = ra.data;
  READ_ANSWER_LEN = ra.len;
  free(read_content);

  acp_options *opts = NULL;
  acp_error *err = NULL;
  if (acp_options_new(&opts) != ACP_OK || acp_options_set_event_callback(opts, on_event, NULL) != ACP_OK) return 1;
  int nargs = argc - split - 2;
  acp_str *args = calloc((size_t)nargs + 1, sizeof(acp_str));
  for (int i = 0; i < nargs; i++) args[i] = S(argv[split + 2 + i]);
  acp_str none = {NULL, 0};
  pthread_mutex_lock(&MU);
  acp_status st = acp_connection_spawn_agent(opts, S(argv[split + 1]), args, (size_t)nargs, NULL, 0, none, &CONN, &err);
  pthread_mutex_unlock(&MU);
  acp_options_free(opts);
  free(args);
  if (st != ACP_OK) {
    emit(workload, NULL, acp_status_str(st));
    return 1;
  }
  const char *init = "{\"protocolVersion\":1,\"clientCapabilities\":{\"fs\":{\"readTextFile\":true,\"writeTextFile\":true}}}";
  char *r = request("initialize", init, strlen(init), WHY, sizeof WHY);
  char sid[256];
  char result[4096];
  bool ok = r != NULL && new_session(sid, sizeof sid);
  free(r);
  if (ok && strcmp(workload, "w1") == 0) {
    unsigned long long n = arg(argc, argv, 2, split, 100000);
    double t = stream(sid, n);
    ok = t >= 0;
    snprintf(result, sizeof result, "{\"n\":%llu,\"seconds\":%.9f,\"per_s\":%.3f}", n, t, (double)n / t);
  } else if (ok && strcmp(workload, "w2") == 0) {
    size_t m = (size_t)arg(argc, argv, 2, split, 20000);
    double *gaps = NULL;
    double t = reads(sid, m, &gaps);
    ok = t >= 0;
    if (ok) {
      size_t ng = m > 0 ? m - 1 : 0;
      double p50 = pct(gaps, ng, 50), p99 = pct(gaps, ng, 99);
      snprintf(result, sizeof result, "{\"m\":%zu,\"seconds\":%.9f,\"per_s\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f}",
               m, t, (double)m / t, p50, p99);
    }
    free(gaps);
  } else if (ok && strcmp(workload, "w3") == 0) {
    size_t n = (size_t)arg(argc, argv, 2, split, 8u << 20);
    size_t reps = (size_t)arg(argc, argv, 3, split, 5);
    if (reps > 64) reps = 64;
    double w[64], res[64];
    for (size_t i = 0; ok && i < reps; i++) ok = (w[i] = write_(sid, n)) >= 0;
    char *text = text_of(n);
    for (size_t i = 0; ok && i < reps; i++) ok = (res[i] = prompt(sid, "echo", text, n, WHY, sizeof WHY)) >= 0;
    free(text);
    if (ok) {
      jbuf b;
      jb_init(&b);
      char num[64];
      jb_lit(&b, "{\"bytes\":");
      jb_uint(&b, n);
      jb_lit(&b, ",\"reps\":");
      jb_uint(&b, reps);
      jb_lit(&b, ",\"write_samples\":[");
      for (size_t i = 0; i < reps; i++) {
        snprintf(num, sizeof num, "%s%.9f", i ? "," : "", w[i]);
        jb_lit(&b, num);
      }
      jb_lit(&b, "],\"resource_samples\":[");
      for (size_t i = 0; i < reps; i++) {
        snprintf(num, sizeof num, "%s%.9f", i ? "," : "", res[i]);
        jb_lit(&b, num);
      }
      snprintf(num, sizeof num, "],\"write_s\":%.9f", pct(w, reps, 50));
      jb_lit(&b, num);
      snprintf(num, sizeof num, ",\"resource_s\":%.9f}", pct(res, reps, 50));
      jb_lit(&b, num);
      snprintf(result, sizeof result, "%.*s", (int)b.len, b.data);
      jb_free(&b);
    }
  } else if (ok && strcmp(workload, "w4") == 0) {
    size_t count = (size_t)arg(argc, argv, 2, split, 1000);
    unsigned long long chunks = arg(argc, argv, 3, split, 10);
    size_t inflight = (size_t)arg(argc, argv, 4, split, 64);
    double t = sessions(count, chunks, inflight ? inflight : 1);
    ok = t >= 0;
    snprintf(result, sizeof result, "{\"sessions\":%zu,\"chunks\":%llu,\"inflight\":%zu,\"seconds\":%.9f}", count,
             chunks, inflight, t);
  } else if (ok && strcmp(workload, "smoke") == 0) {
    double *gaps = NULL;
    char *text = text_of(10000);
    ok = stream(sid, 50) >= 0 && reads(sid, 20, &gaps) >= 0 && write_(sid, 10000) >= 0 &&
         prompt(sid, "echo", text, 10000, WHY, sizeof WHY) >= 0 && sessions(8, 5, 4) >= 0;
    free(text);
    free(gaps);
    snprintf(result, sizeof result, "{\"ok\":true}");
  } else if (ok) {
    snprintf(WHY, sizeof WHY, "unknown workload %s", workload);
    ok = false;
  }
  acp_connection_close(CONN);
  acp_connection_free(CONN);
  emit(workload, ok ? result : NULL, WHY);
  return ok ? 0 : 1;
}
