/* The unstable v1 extensions and the payload capability rules through the
 * C ABI: the `unstable` option, unstable methods between a C client and a
 * C agent (two pipes, poll mode), `payload_rule` engine events
 * (ACP_EVENT_ENGINE), and the constants of acp_protocol.h. */
#include "acp_protocol.h"
#include "test_util.h"

static acp_options *unstable_options(const char *const *features, size_t n) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  for (size_t i = 0; i < n; i++) {
    acp_error *err = NULL;
    CHECK_OK(acp_options_add_string(o, S("unstable"), tu_str(features[i]), &err));
  }
  return o;
}

/* The text `get` gives for `ev`, which must be `want`. */
#define CHECK_EVENT_TEXT(get, ev, want)                                      \
  do {                                                                       \
    const char *p_ = NULL;                                                   \
    size_t n_ = 0;                                                           \
    CHECK_OK(get((ev), &p_, &n_));                                           \
    CHECK_MSG(n_ == strlen(want) && memcmp(p_, (want), n_) == 0,             \
              "%s: got %.*s, want %s", #get, (int)n_, p_ ? p_ : "", want);   \
  } while (0)

/* The next result of `c`: for the call made with `call_data`, successful,
 * its text containing `needle`. */
static void expect_result(acp_connection *c, void *call_data, const char *needle) {
  acp_event *ev = tu_wait_result(c, 10000, NULL);
  CHECK(acp_event_call_data(ev) == call_data);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, needle);
  acp_event_free(ev);
}

/* initialize through both ends; the agent advertises `agent_caps`. */
static void initialize(acp_connection *client, acp_connection *agent,
                       const char *agent_caps) {
  tu_request(client, ACP_METHOD_INITIALIZE,
             "{\"protocolVersion\":1,\"clientCapabilities\":{}}", NULL, NULL);
  char *result = tu_fmt("{\"protocolVersion\":1,\"agentCapabilities\":%s}", agent_caps);
  tu_answer(tu_expect_request(agent, ACP_METHOD_INITIALIZE), result);
  free(result);
  acp_event_free(tu_wait_result(client, 10000, NULL));
}

/* With session_fork and mcp_over_acp on at both ends (long and short
 * names): session/fork opens the session its answer names, on both sides,
 * so a prompt for it goes out and is served; the forked-from session was
 * never opened here, so a prompt for it is refused locally. During the
 * turn the agent asks the client's MCP-over-ACP server (mcp/message, a
 * request the client handles) and the client sends it an mcp/message
 * notification (which the agent handles). */
void test_unstable_fork_and_mcp_message_round_trip(void) {
  const char *const features[] = {ACP_FEATURE_SESSION_FORK, "mcp_over_acp"};
  acp_options *o = unstable_options(features, 2);
  acp_connection *client, *agent;
  tu_pair(o, o, false, &client, &agent);
  acp_options_free(o);
  initialize(client, agent, "{\"sessionCapabilities\":{\"fork\":{}}}");

  tu_request(client, ACP_METHOD_SESSION_FORK, "{\"sessionId\":\"listed\",\"cwd\":\"/tmp\"}",
             NULL, NULL);
  acp_request *req = tu_expect_request(agent, ACP_METHOD_SESSION_FORK);
  const char *p;
  size_t n;
  CHECK_OK(acp_request_params(req, &p, &n));
  CHECK_CONTAINS(p, n, "\"sessionId\":\"listed\"");
  tu_answer(req, "{\"sessionId\":\"forked\"}");
  expect_result(client, NULL, "\"sessionId\":\"forked\"");

  int prompt_marker, mcp_marker;
  tu_request(client, ACP_METHOD_SESSION_PROMPT,
             "{\"sessionId\":\"forked\",\"prompt\":[{\"type\":\"text\",\"text\":\"go on\"}]}",
             &prompt_marker, NULL);
  acp_request *prompt = tu_expect_request(agent, ACP_METHOD_SESSION_PROMPT);

  tu_request(agent, ACP_METHOD_MCP_MESSAGE,
             "{\"serverId\":\"tools\",\"requestId\":\"r1\",\"method\":\"tools/list\"}",
             &mcp_marker, NULL);
  req = tu_expect_request(client, ACP_METHOD_MCP_MESSAGE);
  CHECK_OK(acp_request_params(req, &p, &n));
  CHECK_CONTAINS(p, n, "\"method\":\"tools/list\"");
  tu_answer(req, "{\"result\":{\"tools\":[{\"name\":\"grep\"}]}}");
  expect_result(agent, &mcp_marker, "\"name\":\"grep\"");

  acp_error *err = NULL;
  CHECK_OK(acp_connection_notify(
      client, S(ACP_METHOD_MCP_MESSAGE),
      S("{\"serverId\":\"tools\",\"requestId\":\"r2\",\"method\":\"notifications/progress\"}"),
      &err));
  acp_event *ev = tu_next_non_log(agent, 10000);
  CHECK(acp_event_get_kind(ev) == ACP_EVENT_NOTIFICATION);
  CHECK_EVENT_TEXT(acp_event_method, ev, ACP_METHOD_MCP_MESSAGE);
  CHECK_OK(acp_event_params(ev, &p, &n));
  CHECK_CONTAINS(p, n, "notifications/progress");
  acp_event_free(ev);

  tu_answer(prompt, "{\"stopReason\":\"end_turn\"}");
  expect_result(client, &prompt_marker, "end_turn");

  CHECK_STATUS(acp_connection_request(
                   client, S(ACP_METHOD_SESSION_PROMPT),
                   S("{\"sessionId\":\"listed\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}"),
                   NULL, NULL, &err),
               ACP_ERR_REFUSED);
  CHECK_OK(acp_error_message(err, &p, &n));
  CHECK_CONTAINS(p, n, "listed");
  acp_error_free(err);
  tu_close_pair(client, agent);
}

/* The option checks each name when it is added: a name that is no
 * feature is refused there, saying which option, which name, and what the
 * features are; every name acp_protocol.h spells is accepted. */
void test_unstable_option_refuses_unknown_feature(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  acp_error *err = NULL;
  CHECK_STATUS(acp_options_add_string(o, S("unstable"), S("session_forks"), &err),
               ACP_ERR_INVALID_ARGUMENT);
  CHECK(err != NULL);
  CHECK_STATUS(acp_error_status(err), ACP_ERR_INVALID_ARGUMENT);
  CHECK_EVENT_TEXT(acp_error_kind, err, "range");
  const char *p;
  size_t n;
  CHECK_OK(acp_error_message(err, &p, &n));
  CHECK_CONTAINS(p, n, "unstable");
  CHECK_CONTAINS(p, n, "session_forks");
  CHECK_CONTAINS(p, n, ACP_FEATURE_SESSION_FORK);
  acp_error_free(err);
  err = NULL;

  CHECK_OK(acp_options_add_string(o, S("unstable"), S(ACP_FEATURE_ALL), &err));
  for (size_t i = 0; i < ACP_FEATURE_COUNT; i++) {
    CHECK_OK(acp_options_add_string(o, S("unstable"), tu_str(ACP_FEATURES[i]), &err));
    /* The short form too. */
    const char *shortname = ACP_FEATURES[i] + strlen("unstable_");
    CHECK_OK(acp_options_add_string(o, S("unstable"), tu_str(shortname), &err));
  }
  /* The refused name left nothing behind: the connection is made. */
  acp_connection *client, *agent;
  tu_pair(o, o, false, &client, &agent);
  acp_options_free(o);
  tu_close_pair(client, agent);
}

/* The agent answers session/new with a boolean config option; the client
 * did not advertise clientCapabilities.session.configOptions.boolean, so
 * the option is withheld from the answer, and the agent's host gets an
 * ACP_EVENT_ENGINE of kind payload_rule saying so. The client (engine
 * events on) gets the answer without it and no event. */
void test_engine_event_payload_rule_withheld(void) {
  acp_options *o = NULL;
  CHECK_OK(acp_options_new(&o));
  CHECK_OK(acp_options_set_engine_events(o, true));
  acp_connection *client, *agent;
  tu_pair(o, o, false, &client, &agent);
  acp_options_free(o);
  initialize(client, agent, "{}");

  tu_request(client, ACP_METHOD_SESSION_NEW, "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL,
             NULL);
  tu_answer(tu_expect_request(agent, ACP_METHOD_SESSION_NEW),
            "{\"sessionId\":\"s1\",\"configOptions\":["
            "{\"id\":\"thinking\",\"name\":\"Thinking\",\"type\":\"boolean\",\"currentValue\":false},"
            "{\"id\":\"model\",\"name\":\"Model\",\"type\":\"select\",\"currentValue\":\"fast\","
            "\"options\":[{\"value\":\"fast\",\"name\":\"Fast\"}]}]}");

  acp_event *ev = tu_next_non_log(agent, 10000);
  CHECK_MSG(acp_event_get_kind(ev) == ACP_EVENT_ENGINE, "kind %d", acp_event_get_kind(ev));
  CHECK_EVENT_TEXT(acp_event_engine_kind, ev, "payload_rule");
  const char *p;
  size_t n;
  CHECK_OK(acp_event_text(ev, &p, &n));
  CHECK_CONTAINS(p, n, "withheld /configOptions/0/type from the session/new answer");
  CHECK_CONTAINS(p, n, ACP_CAPABILITY_CLIENT_SESSION_CONFIG_OPTIONS_BOOLEAN);
  CHECK_OK(acp_event_details(ev, &p, &n));
  CHECK_CONTAINS(p, n, "\"rule\":\"" ACP_PAYLOAD_RULE_BOOLEAN_CONFIG_OPTION "\"");
  CHECK_CONTAINS(p, n, "\"withheld\":true");
  CHECK_CONTAINS(p, n, "\"method\":\"session/new\"");
  CHECK_CONTAINS(p, n, "\"field\":\"/configOptions/0/type\"");
  CHECK_CONTAINS(p, n,
                 "\"capability\":\"" ACP_CAPABILITY_CLIENT_SESSION_CONFIG_OPTIONS_BOOLEAN "\"");
  /* What other kinds give: nothing. */
  CHECK_OK(acp_event_method(ev, &p, &n));
  CHECK(n == 0);
  acp_event_free(ev);

  /* Any engine event at the client would fail tu_wait_result. */
  ev = tu_wait_result(client, 10000, NULL);
  tu_result_text(ev, &p, &n);
  CHECK_CONTAINS(p, n, "\"id\":\"model\"");
  CHECK(!tu_contains(p, n, "thinking"));
  /* Other events have no engine kind and no details. */
  CHECK_OK(acp_event_engine_kind(ev, &p, &n));
  CHECK(n == 0);
  CHECK_OK(acp_event_details(ev, &p, &n));
  CHECK(p == NULL && n == 0);
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

/* Issue 24: an engine event reaches the host in wire order, before the
 * answer that follows it. The client serves fs/read_text_file in its core
 * (acp_options_set_fs) with engine events on; the agent reads a file three
 * times during a prompt, each after a session/update, then answers. The
 * client's events are, in order: update, served, update, served, update,
 * served, the prompt's result. */
void test_engine_events_come_before_the_answer_that_follows_them(void) {
  char *dir = tu_tempdir();
  char *file = tu_fmt("%s/f.txt", dir);
  FILE *f = fopen(file, "w");
  CHECK(f != NULL);
  fputs("x", f);
  fclose(f);
  acp_options *co = NULL;
  CHECK_OK(acp_options_new(&co));
  CHECK_OK(acp_options_set_engine_events(co, true));
  CHECK_OK(acp_options_set_fs(co, true));
  acp_connection *client, *agent;
  tu_pair(co, NULL, false, &client, &agent);
  acp_options_free(co);
  initialize(client, agent, "{}");
  char *params = tu_fmt("{\"cwd\":\"%s\",\"mcpServers\":[]}", dir);
  tu_request(client, ACP_METHOD_SESSION_NEW, params, NULL, NULL);
  free(params);
  tu_answer(tu_expect_request(agent, ACP_METHOD_SESSION_NEW), "{\"sessionId\":\"s1\"}");
  expect_result(client, NULL, "s1");

  int prompt_marker;
  tu_request(client, ACP_METHOD_SESSION_PROMPT, "{\"sessionId\":\"s1\",\"prompt\":[]}",
             &prompt_marker, NULL);
  acp_request *prompt = tu_expect_request(agent, ACP_METHOD_SESSION_PROMPT);
  char *read = tu_fmt("{\"sessionId\":\"s1\",\"path\":\"%s\"}", file);
  acp_error *err = NULL;
  for (int i = 0; i < 3; i++) {
    CHECK_OK(acp_connection_notify(
        agent, S(ACP_METHOD_SESSION_UPDATE),
        S("{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
          "\"content\":{\"type\":\"text\",\"text\":\"t\"}}}"),
        &err));
    tu_request(agent, ACP_METHOD_FS_READ_TEXT_FILE, read, NULL, NULL);
    acp_event_free(tu_wait_result(agent, 10000, NULL));
  }
  free(read);
  tu_answer(prompt, "{\"stopReason\":\"end_turn\"}");

  for (int i = 0; i < 3; i++) {
    acp_event *ev = tu_next_non_log(client, 10000);
    CHECK_MSG(acp_event_get_kind(ev) == ACP_EVENT_NOTIFICATION, "step %d: kind %d", i,
              acp_event_get_kind(ev));
    acp_event_free(ev);
    ev = tu_next_non_log(client, 10000);
    CHECK_MSG(acp_event_get_kind(ev) == ACP_EVENT_ENGINE, "step %d: kind %d", i,
              acp_event_get_kind(ev));
    CHECK_EVENT_TEXT(acp_event_engine_kind, ev, "served");
    acp_event_free(ev);
  }
  expect_result(client, &prompt_marker, "end_turn");
  tu_close_pair(client, agent);
  tu_rmtree(dir);
  free(file);
  free(dir);
}

/* Engine events are off by default: the same withheld option reaches the
 * agent's host as nothing; its next event is the client's next message. */
void test_engine_events_off_by_default(void) {
  acp_connection *client, *agent;
  tu_pair(NULL, NULL, false, &client, &agent);
  initialize(client, agent, "{}");
  tu_request(client, ACP_METHOD_SESSION_NEW, "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", NULL,
             NULL);
  tu_answer(tu_expect_request(agent, ACP_METHOD_SESSION_NEW),
            "{\"sessionId\":\"s1\",\"configOptions\":[{\"id\":\"thinking\",\"name\":\"T\","
            "\"type\":\"boolean\",\"currentValue\":true}]}");
  acp_event *ev = tu_wait_result(client, 10000, NULL);
  const char *p;
  size_t n;
  tu_result_text(ev, &p, &n);
  CHECK(!tu_contains(p, n, "thinking"));
  acp_event_free(ev);
  acp_error *err = NULL;
  CHECK_OK(acp_connection_notify(client, S(ACP_METHOD_SESSION_CANCEL),
                                 S("{\"sessionId\":\"s1\"}"), &err));
  ev = tu_next_non_log(agent, 10000);
  CHECK_MSG(acp_event_get_kind(ev) == ACP_EVENT_NOTIFICATION, "kind %d",
            acp_event_get_kind(ev));
  CHECK_EVENT_TEXT(acp_event_method, ev, ACP_METHOD_SESSION_CANCEL);
  acp_event_free(ev);
  tu_close_pair(client, agent);
}

/* acp_protocol.h's tables say what the core's say: spot checks of rows
 * (the header itself is generated from the core and drift-checked). */
void test_protocol_header_tables(void) {
  int fork_rows = 0, mcp_rows = 0;
  for (size_t i = 0; i < ACP_METHOD_COUNT; i++) {
    const acp_method_info *m = &ACP_METHODS[i];
    CHECK(m->name != NULL);
    if (strcmp(m->name, ACP_METHOD_SESSION_FORK) == 0) {
      fork_rows++;
      CHECK(m->handled_by == ACP_ROLE_AGENT && !m->notification);
      CHECK(strcmp(m->feature, ACP_FEATURE_SESSION_FORK) == 0);
      CHECK(strcmp(m->capability, ACP_CAPABILITY_AGENT_SESSION_FORK) == 0);
    }
    if (strcmp(m->name, ACP_METHOD_MCP_MESSAGE) == 0) {
      mcp_rows++;
      /* A request to the client, a notification to the agent. */
      CHECK(m->notification == (m->handled_by == ACP_ROLE_AGENT));
      CHECK(strcmp(m->feature, ACP_FEATURE_MCP_OVER_ACP) == 0);
      CHECK(m->capability == NULL);
    }
    if (strcmp(m->name, ACP_METHOD_SESSION_UPDATE) == 0)
      CHECK(m->handled_by == ACP_ROLE_CLIENT && m->notification && !m->feature);
  }
  CHECK(fork_rows == 1 && mcp_rows == 2);
  int boolean_rule = 0;
  for (size_t i = 0; i < ACP_PAYLOAD_RULE_COUNT; i++) {
    const acp_payload_rule_info *r = &ACP_PAYLOAD_RULES[i];
    if (strcmp(r->name, ACP_PAYLOAD_RULE_BOOLEAN_CONFIG_OPTION) == 0) {
      boolean_rule++;
      CHECK(r->sender == ACP_ROLE_AGENT && r->feature == NULL);
      CHECK(strcmp(r->capability, ACP_CAPABILITY_CLIENT_SESSION_CONFIG_OPTIONS_BOOLEAN) == 0);
    }
  }
  CHECK(boolean_rule == 1);
}
