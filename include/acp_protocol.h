/*
 * libacp protocol constants. GENERATED from the core's tables
 * (core/src/protocol: methods.rs, unstable.rs, payload.rs) by
 * ffi/tests/protocol_header.rs: do not edit.
 * Regenerate: ACP_UPDATE_HEADER=1 cargo test -p libacp-ffi --test protocol_header
 *
 * Every ACP v1 method, stable and unstable, spelled once: its wire name,
 * the side that handles it, whether it is a notification, the capability
 * that side must advertise and the unstable feature that turns it on; the
 * feature names the `unstable` option takes; the capability paths libacp
 * checks; the payload rule names of `payload_rule` engine events. C99 and
 * C++; include/README.md says how to use them.
 */
#ifndef LIBACP_ACP_PROTOCOL_H
#define LIBACP_ACP_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

#include "acp.h"

/* ---- Methods: wire names ---- */

/* Stable ACP v1 methods. */
#define ACP_METHOD_INITIALIZE                                "initialize"
#define ACP_METHOD_AUTHENTICATE                              "authenticate"
#define ACP_METHOD_LOGOUT                                    "logout"
#define ACP_METHOD_SESSION_NEW                               "session/new"
#define ACP_METHOD_SESSION_LOAD                              "session/load"
#define ACP_METHOD_SESSION_RESUME                            "session/resume"
#define ACP_METHOD_SESSION_LIST                              "session/list"
#define ACP_METHOD_SESSION_CLOSE                             "session/close"
#define ACP_METHOD_SESSION_DELETE                            "session/delete"
#define ACP_METHOD_SESSION_SET_MODE                          "session/set_mode"
#define ACP_METHOD_SESSION_SET_CONFIG_OPTION                 "session/set_config_option"
#define ACP_METHOD_SESSION_PROMPT                            "session/prompt"
#define ACP_METHOD_SESSION_CANCEL                            "session/cancel"
#define ACP_METHOD_SESSION_REQUEST_PERMISSION                "session/request_permission"
#define ACP_METHOD_FS_READ_TEXT_FILE                         "fs/read_text_file"
#define ACP_METHOD_FS_WRITE_TEXT_FILE                        "fs/write_text_file"
#define ACP_METHOD_TERMINAL_CREATE                           "terminal/create"
#define ACP_METHOD_TERMINAL_OUTPUT                           "terminal/output"
#define ACP_METHOD_TERMINAL_WAIT_FOR_EXIT                    "terminal/wait_for_exit"
#define ACP_METHOD_TERMINAL_KILL                             "terminal/kill"
#define ACP_METHOD_TERMINAL_RELEASE                          "terminal/release"
#define ACP_METHOD_ELICITATION_CREATE                        "elicitation/create"
#define ACP_METHOD_SESSION_UPDATE                            "session/update"
#define ACP_METHOD_ELICITATION_COMPLETE                      "elicitation/complete"

/* Unstable v1 methods: ACP methods only while their feature is on (the
 * `unstable` option), extension methods to libacp otherwise. */
#define ACP_METHOD_AUTH_STATUS                               "auth/status"
#define ACP_METHOD_AUTH_STATUS_UPDATE                        "auth/status_update"
#define ACP_METHOD_PROVIDERS_LIST                            "providers/list"
#define ACP_METHOD_PROVIDERS_SET                             "providers/set"
#define ACP_METHOD_PROVIDERS_DISABLE                         "providers/disable"
#define ACP_METHOD_SESSION_FORK                              "session/fork"
#define ACP_METHOD_SESSION_ARCHIVE                           "session/archive"
#define ACP_METHOD_SESSION_UNARCHIVE                         "session/unarchive"
#define ACP_METHOD_SESSION_STATUS                            "session/status"
#define ACP_METHOD_SESSION_SET_TITLE                         "session/set_title"
#define ACP_METHOD_MCP_MESSAGE                               "mcp/message"

/* Proxy chains (unstable_proxy_chains): the schema's side `proxy`, between a
 * conductor (a client-role connection) and its proxies (agent-role
 * connections): proxy/initialize is a proxy's initialize, and
 * proxy/successor wraps one message each way. Not in ACP_METHODS. */
#define ACP_METHOD_PROXY_INITIALIZE                          "proxy/initialize"
#define ACP_METHOD_PROXY_SUCCESSOR                           "proxy/successor"

/* ---- Unstable features: what the `unstable` option takes ---- */

/* acp_options_add_string(o, ACP_STR("unstable"), ACP_STR(ACP_FEATURE_SESSION_FORK), &err);
 * The Rust SDK's cargo feature names; the short form without `unstable_`
 * is accepted too, and ACP_FEATURE_ALL turns every feature on. */
#define ACP_FEATURE_ALL                                      "all"
#define ACP_FEATURE_AUTH_STATUS                              "unstable_auth_status"
#define ACP_FEATURE_END_TURN_TOKEN_USAGE                     "unstable_end_turn_token_usage"
#define ACP_FEATURE_LLM_PROVIDERS                            "unstable_llm_providers"
#define ACP_FEATURE_MCP_OVER_ACP                             "unstable_mcp_over_acp"
#define ACP_FEATURE_PLAN_OPERATIONS                          "unstable_plan_operations"
#define ACP_FEATURE_PROXY_CHAINS                             "unstable_proxy_chains"
#define ACP_FEATURE_SESSION_ARCHIVE                          "unstable_session_archive"
#define ACP_FEATURE_SESSION_FORK                             "unstable_session_fork"
#define ACP_FEATURE_SESSION_SET_TITLE                        "unstable_session_set_title"
#define ACP_FEATURE_SESSION_STATUS                           "unstable_session_status"
#define ACP_FEATURE_SESSION_SYSTEM_PROMPT                    "unstable_session_system_prompt"
#define ACP_FEATURE_SUBAGENTS                                "unstable_subagents"
#define ACP_FEATURE_COUNT 12
static const char *const ACP_FEATURES[ACP_FEATURE_COUNT] = {
    ACP_FEATURE_AUTH_STATUS,
    ACP_FEATURE_END_TURN_TOKEN_USAGE,
    ACP_FEATURE_LLM_PROVIDERS,
    ACP_FEATURE_MCP_OVER_ACP,
    ACP_FEATURE_PLAN_OPERATIONS,
    ACP_FEATURE_PROXY_CHAINS,
    ACP_FEATURE_SESSION_ARCHIVE,
    ACP_FEATURE_SESSION_FORK,
    ACP_FEATURE_SESSION_SET_TITLE,
    ACP_FEATURE_SESSION_STATUS,
    ACP_FEATURE_SESSION_SYSTEM_PROMPT,
    ACP_FEATURE_SUBAGENTS,
};

/* ---- Capabilities: where each lives in the `initialize` exchange ---- */

/* As written in the spec and in libacp's refusals (the `capability` of a
 * CapabilityNotAdvertised refusal's data, of a `payload_rule` event's
 * details). A boolean capability counts when true, an object one when
 * present and not null. */
#define ACP_CAPABILITY_AGENT_AUTH_LOGOUT                     "agentCapabilities.auth.logout"
#define ACP_CAPABILITY_AGENT_AUTH_STATUS                     "agentCapabilities.auth.status"
#define ACP_CAPABILITY_AGENT_LOAD_SESSION                    "agentCapabilities.loadSession"
#define ACP_CAPABILITY_AGENT_MCP_ACP                         "agentCapabilities.mcpCapabilities.acp"
#define ACP_CAPABILITY_AGENT_MCP_HTTP                        "agentCapabilities.mcpCapabilities.http"
#define ACP_CAPABILITY_AGENT_MCP_SSE                         "agentCapabilities.mcpCapabilities.sse"
#define ACP_CAPABILITY_AGENT_PROMPT_AUDIO                    "agentCapabilities.promptCapabilities.audio"
#define ACP_CAPABILITY_AGENT_PROMPT_EMBEDDED_CONTEXT         "agentCapabilities.promptCapabilities.embeddedContext"
#define ACP_CAPABILITY_AGENT_PROMPT_IMAGE                    "agentCapabilities.promptCapabilities.image"
#define ACP_CAPABILITY_AGENT_PROVIDERS                       "agentCapabilities.providers"
#define ACP_CAPABILITY_AGENT_SESSION_ADDITIONAL_DIRECTORIES  "agentCapabilities.sessionCapabilities.additionalDirectories"
#define ACP_CAPABILITY_AGENT_SESSION_ARCHIVE                 "agentCapabilities.sessionCapabilities.archive"
#define ACP_CAPABILITY_AGENT_SESSION_CLOSE                   "agentCapabilities.sessionCapabilities.close"
#define ACP_CAPABILITY_AGENT_SESSION_DELETE                  "agentCapabilities.sessionCapabilities.delete"
#define ACP_CAPABILITY_AGENT_SESSION_FORK                    "agentCapabilities.sessionCapabilities.fork"
#define ACP_CAPABILITY_AGENT_SESSION_LIST                    "agentCapabilities.sessionCapabilities.list"
#define ACP_CAPABILITY_AGENT_SESSION_RESUME                  "agentCapabilities.sessionCapabilities.resume"
#define ACP_CAPABILITY_AGENT_SESSION_STATUS                  "agentCapabilities.sessionCapabilities.status"
#define ACP_CAPABILITY_AGENT_SESSION_SYSTEM_PROMPT           "agentCapabilities.sessionCapabilities.systemPrompt"
#define ACP_CAPABILITY_AGENT_SESSION_SYSTEM_PROMPT_MODE_OVERRIDE "agentCapabilities.sessionCapabilities.systemPrompt.mode.override"
#define ACP_CAPABILITY_AGENT_SESSION_TITLE                   "agentCapabilities.sessionCapabilities.title"
#define ACP_CAPABILITY_CLIENT_AUTH_TERMINAL                  "clientCapabilities.auth.terminal"
#define ACP_CAPABILITY_CLIENT_ELICITATION                    "clientCapabilities.elicitation"
#define ACP_CAPABILITY_CLIENT_ELICITATION_FORM               "clientCapabilities.elicitation.form"
#define ACP_CAPABILITY_CLIENT_ELICITATION_URL                "clientCapabilities.elicitation.url"
#define ACP_CAPABILITY_CLIENT_FS_READ_TEXT_FILE              "clientCapabilities.fs.readTextFile"
#define ACP_CAPABILITY_CLIENT_FS_WRITE_TEXT_FILE             "clientCapabilities.fs.writeTextFile"
#define ACP_CAPABILITY_CLIENT_PLAN                           "clientCapabilities.plan"
#define ACP_CAPABILITY_CLIENT_SESSION_COMPACTION             "clientCapabilities.session.compaction"
#define ACP_CAPABILITY_CLIENT_SESSION_CONFIG_OPTIONS_BOOLEAN "clientCapabilities.session.configOptions.boolean"
#define ACP_CAPABILITY_CLIENT_SESSION_NOTICES                "clientCapabilities.session.notices"
#define ACP_CAPABILITY_CLIENT_SUBAGENTS                      "clientCapabilities.subagents"
#define ACP_CAPABILITY_CLIENT_TERMINAL                       "clientCapabilities.terminal"

/* ---- Payload rules: what a message may contain ---- */

/* A rule the sender breaks: its own request or notification is refused
 * (ACP_ERR_REFUSED, nothing sent); its own answer goes out without the
 * offending items; what the peer sends is delivered. Each case is an
 * ACP_EVENT_ENGINE event of kind "payload_rule" (acp_options_set_engine_events)
 * whose details name the rule. */
#define ACP_PAYLOAD_RULE_NOTICE                              "notice"
#define ACP_PAYLOAD_RULE_COMPACTION                          "compaction"
#define ACP_PAYLOAD_RULE_BOOLEAN_CONFIG_OPTION               "boolean_config_option"
#define ACP_PAYLOAD_RULE_BOOLEAN_CONFIG_OPTION_UPDATE        "boolean_config_option_update"
#define ACP_PAYLOAD_RULE_FORM_ELICITATION                    "form_elicitation"
#define ACP_PAYLOAD_RULE_URL_ELICITATION                     "url_elicitation"
#define ACP_PAYLOAD_RULE_TERMINAL_AUTH_METHOD                "terminal_auth_method"
#define ACP_PAYLOAD_RULE_PLAN_OPERATIONS                     "plan_operations"
#define ACP_PAYLOAD_RULE_SUBAGENTS                           "subagents"
#define ACP_PAYLOAD_RULE_ADDITIONAL_DIRECTORIES              "additional_directories"
#define ACP_PAYLOAD_RULE_IMAGE_PROMPT                        "image_prompt"
#define ACP_PAYLOAD_RULE_AUDIO_PROMPT                        "audio_prompt"
#define ACP_PAYLOAD_RULE_EMBEDDED_CONTEXT_PROMPT             "embedded_context_prompt"
#define ACP_PAYLOAD_RULE_HTTP_MCP_SERVER                     "http_mcp_server"
#define ACP_PAYLOAD_RULE_SSE_MCP_SERVER                      "sse_mcp_server"
#define ACP_PAYLOAD_RULE_ACP_MCP_SERVER                      "acp_mcp_server"
#define ACP_PAYLOAD_RULE_SYSTEM_PROMPT                       "system_prompt"
#define ACP_PAYLOAD_RULE_SYSTEM_PROMPT_OVERRIDE              "system_prompt_override"
#define ACP_PAYLOAD_RULE_ARCHIVED_FILTER                     "archived_filter"

/* ---- The method table ---- */

/* One row per method and kind (`mcp/message` has two: a request the
 * client handles, a notification the agent handles). */
typedef struct acp_method_info {
  /* The wire name (an ACP_METHOD_* macro). */
  const char *name;
  /* The side that receives it and, for a request, answers it. */
  acp_role handled_by;
  /* A notification (no answer), or a request. */
  bool notification;
  /* The capability the handling side must advertise for it to be sent
   * (an ACP_CAPABILITY_* path), or NULL. */
  const char *capability;
  /* The unstable feature that turns it on (an ACP_FEATURE_* name), or
   * NULL for a stable method. */
  const char *feature;
} acp_method_info;

#define ACP_METHOD_COUNT 36
static const acp_method_info ACP_METHODS[ACP_METHOD_COUNT] = {
    {ACP_METHOD_INITIALIZE, ACP_ROLE_AGENT, false, NULL, NULL},
    {ACP_METHOD_AUTHENTICATE, ACP_ROLE_AGENT, false, NULL, NULL},
    {ACP_METHOD_LOGOUT, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_AUTH_LOGOUT, NULL},
    {ACP_METHOD_SESSION_NEW, ACP_ROLE_AGENT, false, NULL, NULL},
    {ACP_METHOD_SESSION_LOAD, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_LOAD_SESSION, NULL},
    {ACP_METHOD_SESSION_RESUME, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_RESUME, NULL},
    {ACP_METHOD_SESSION_LIST, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_LIST, NULL},
    {ACP_METHOD_SESSION_CLOSE, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_CLOSE, NULL},
    {ACP_METHOD_SESSION_DELETE, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_DELETE, NULL},
    {ACP_METHOD_SESSION_SET_MODE, ACP_ROLE_AGENT, false, NULL, NULL},
    {ACP_METHOD_SESSION_SET_CONFIG_OPTION, ACP_ROLE_AGENT, false, NULL, NULL},
    {ACP_METHOD_SESSION_PROMPT, ACP_ROLE_AGENT, false, NULL, NULL},
    {ACP_METHOD_SESSION_CANCEL, ACP_ROLE_AGENT, true, NULL, NULL},
    {ACP_METHOD_SESSION_REQUEST_PERMISSION, ACP_ROLE_CLIENT, false, NULL, NULL},
    {ACP_METHOD_FS_READ_TEXT_FILE, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_FS_READ_TEXT_FILE, NULL},
    {ACP_METHOD_FS_WRITE_TEXT_FILE, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_FS_WRITE_TEXT_FILE, NULL},
    {ACP_METHOD_TERMINAL_CREATE, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_TERMINAL, NULL},
    {ACP_METHOD_TERMINAL_OUTPUT, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_TERMINAL, NULL},
    {ACP_METHOD_TERMINAL_WAIT_FOR_EXIT, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_TERMINAL, NULL},
    {ACP_METHOD_TERMINAL_KILL, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_TERMINAL, NULL},
    {ACP_METHOD_TERMINAL_RELEASE, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_TERMINAL, NULL},
    {ACP_METHOD_ELICITATION_CREATE, ACP_ROLE_CLIENT, false, ACP_CAPABILITY_CLIENT_ELICITATION, NULL},
    {ACP_METHOD_SESSION_UPDATE, ACP_ROLE_CLIENT, true, NULL, NULL},
    {ACP_METHOD_ELICITATION_COMPLETE, ACP_ROLE_CLIENT, true, NULL, NULL},
    {ACP_METHOD_AUTH_STATUS, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_AUTH_STATUS, ACP_FEATURE_AUTH_STATUS},
    {ACP_METHOD_AUTH_STATUS_UPDATE, ACP_ROLE_CLIENT, true, NULL, ACP_FEATURE_AUTH_STATUS},
    {ACP_METHOD_PROVIDERS_LIST, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_PROVIDERS, ACP_FEATURE_LLM_PROVIDERS},
    {ACP_METHOD_PROVIDERS_SET, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_PROVIDERS, ACP_FEATURE_LLM_PROVIDERS},
    {ACP_METHOD_PROVIDERS_DISABLE, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_PROVIDERS, ACP_FEATURE_LLM_PROVIDERS},
    {ACP_METHOD_SESSION_FORK, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_FORK, ACP_FEATURE_SESSION_FORK},
    {ACP_METHOD_SESSION_ARCHIVE, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_ARCHIVE, ACP_FEATURE_SESSION_ARCHIVE},
    {ACP_METHOD_SESSION_UNARCHIVE, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_ARCHIVE, ACP_FEATURE_SESSION_ARCHIVE},
    {ACP_METHOD_SESSION_STATUS, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_STATUS, ACP_FEATURE_SESSION_STATUS},
    {ACP_METHOD_SESSION_SET_TITLE, ACP_ROLE_AGENT, false, ACP_CAPABILITY_AGENT_SESSION_TITLE, ACP_FEATURE_SESSION_SET_TITLE},
    {ACP_METHOD_MCP_MESSAGE, ACP_ROLE_CLIENT, false, NULL, ACP_FEATURE_MCP_OVER_ACP},
    {ACP_METHOD_MCP_MESSAGE, ACP_ROLE_AGENT, true, NULL, ACP_FEATURE_MCP_OVER_ACP},
};

typedef struct acp_payload_rule_info {
  /* The rule's name (an ACP_PAYLOAD_RULE_* macro). */
  const char *name;
  /* The side whose messages it limits. */
  acp_role sender;
  /* What the receiving side must have advertised (ACP_CAPABILITY_*). */
  const char *capability;
  /* The unstable feature it belongs to (ACP_FEATURE_*), or NULL. */
  const char *feature;
} acp_payload_rule_info;

#define ACP_PAYLOAD_RULE_COUNT 19
static const acp_payload_rule_info ACP_PAYLOAD_RULES[ACP_PAYLOAD_RULE_COUNT] = {
    {ACP_PAYLOAD_RULE_NOTICE, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_SESSION_NOTICES, NULL},
    {ACP_PAYLOAD_RULE_COMPACTION, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_SESSION_COMPACTION, NULL},
    {ACP_PAYLOAD_RULE_BOOLEAN_CONFIG_OPTION, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_SESSION_CONFIG_OPTIONS_BOOLEAN, NULL},
    {ACP_PAYLOAD_RULE_BOOLEAN_CONFIG_OPTION_UPDATE, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_SESSION_CONFIG_OPTIONS_BOOLEAN, NULL},
    {ACP_PAYLOAD_RULE_FORM_ELICITATION, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_ELICITATION_FORM, NULL},
    {ACP_PAYLOAD_RULE_URL_ELICITATION, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_ELICITATION_URL, NULL},
    {ACP_PAYLOAD_RULE_TERMINAL_AUTH_METHOD, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_AUTH_TERMINAL, NULL},
    {ACP_PAYLOAD_RULE_PLAN_OPERATIONS, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_PLAN, ACP_FEATURE_PLAN_OPERATIONS},
    {ACP_PAYLOAD_RULE_SUBAGENTS, ACP_ROLE_AGENT, ACP_CAPABILITY_CLIENT_SUBAGENTS, ACP_FEATURE_SUBAGENTS},
    {ACP_PAYLOAD_RULE_ADDITIONAL_DIRECTORIES, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_SESSION_ADDITIONAL_DIRECTORIES, NULL},
    {ACP_PAYLOAD_RULE_IMAGE_PROMPT, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_PROMPT_IMAGE, NULL},
    {ACP_PAYLOAD_RULE_AUDIO_PROMPT, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_PROMPT_AUDIO, NULL},
    {ACP_PAYLOAD_RULE_EMBEDDED_CONTEXT_PROMPT, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_PROMPT_EMBEDDED_CONTEXT, NULL},
    {ACP_PAYLOAD_RULE_HTTP_MCP_SERVER, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_MCP_HTTP, NULL},
    {ACP_PAYLOAD_RULE_SSE_MCP_SERVER, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_MCP_SSE, NULL},
    {ACP_PAYLOAD_RULE_ACP_MCP_SERVER, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_MCP_ACP, ACP_FEATURE_MCP_OVER_ACP},
    {ACP_PAYLOAD_RULE_SYSTEM_PROMPT, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_SESSION_SYSTEM_PROMPT, ACP_FEATURE_SESSION_SYSTEM_PROMPT},
    {ACP_PAYLOAD_RULE_SYSTEM_PROMPT_OVERRIDE, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_SESSION_SYSTEM_PROMPT_MODE_OVERRIDE, ACP_FEATURE_SESSION_SYSTEM_PROMPT},
    {ACP_PAYLOAD_RULE_ARCHIVED_FILTER, ACP_ROLE_CLIENT, ACP_CAPABILITY_AGENT_SESSION_ARCHIVE, ACP_FEATURE_SESSION_ARCHIVE},
};

#endif /* LIBACP_ACP_PROTOCOL_H */
