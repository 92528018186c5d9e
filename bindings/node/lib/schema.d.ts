/**
 * JSON RPC Request Id
 *
 * An identifier established by the Client that MUST contain a String, Number, or NULL value if included. If it is not included it is assumed to be a notification. The value SHOULD normally not be Null \[1\] and Numbers SHOULD NOT contain fractional parts \[2\]
 *
 * The Server MUST reply with the same value in the Response object if included. This member is used to correlate the context between the two objects.
 *
 * \[1\] The use of Null as a value for the id member in a Request object is discouraged, because this specification uses a value of Null for Responses with an unknown id. Also, because JSON-RPC 1.0 uses an id value of Null for Notifications this could cause confusion in handling.
 *
 * \[2\] Fractional parts may be problematic, since many decimal fractions cannot be represented exactly as binary fractions.
 */
export type RequestId = null | number | string;
/**
 * A unique identifier for a conversation session between a client and agent.
 *
 * Each session has its own context, conversation history, and state, so one
 * agent can run several independent sessions.
 *
 * See protocol docs: [Session ID](https://agentclientprotocol.com/protocol/v1/draft/session-setup#session-id)
 */
export type SessionId = string;
/**
 * Unique identifier for a tool call within a session.
 */
export type ToolCallId = string;
/**
 * Categories of tools that can be invoked.
 *
 * Tool kinds help clients choose appropriate icons and optimize how they
 * display tool execution progress.
 *
 * See protocol docs: [Creating](https://agentclientprotocol.com/protocol/v1/draft/tool-calls#creating)
 */
export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "switch_mode" | "other";
/**
 * Execution status of a tool call.
 *
 * Tool calls progress through different statuses during their lifecycle.
 *
 * See protocol docs: [Status](https://agentclientprotocol.com/protocol/v1/draft/tool-calls#status)
 */
export type ToolCallStatus = "pending" | "in_progress" | "completed" | "failed";
/**
 * Content produced by a tool call.
 *
 * Tool calls can produce different types of content including
 * standard content blocks (text, images) or file diffs.
 *
 * See protocol docs: [Content](https://agentclientprotocol.com/protocol/v1/draft/tool-calls#content)
 */
export type ToolCallContent = (Content & {
    type: "content";
    [k: string]: unknown;
}) | (Diff & {
    type: "diff";
    [k: string]: unknown;
}) | (Terminal & {
    type: "terminal";
    [k: string]: unknown;
});
/**
 * Content blocks represent displayable information in the Agent Client Protocol.
 *
 * Content blocks appear in:
 * - User prompts sent via `session/prompt`
 * - Language model output streamed through `session/update` notifications
 * - Progress updates and results from tool calls
 *
 * This structure is compatible with the Model Context Protocol (MCP), so agents can
 * forward content from MCP tool outputs without transformation.
 *
 * See protocol docs: [Content](https://agentclientprotocol.com/protocol/v1/draft/content)
 */
export type ContentBlock = (TextContent & {
    type: "text";
    [k: string]: unknown;
}) | (ImageContent & {
    type: "image";
    [k: string]: unknown;
}) | (AudioContent & {
    type: "audio";
    [k: string]: unknown;
}) | (ResourceLink & {
    type: "resource_link";
    [k: string]: unknown;
}) | (EmbeddedResource & {
    type: "resource";
    [k: string]: unknown;
});
/**
 * The sender or recipient of messages and data in a conversation.
 */
export type Role = "assistant" | "user";
/**
 * Resource content that can be embedded in a message.
 */
export type EmbeddedResourceResource = TextResourceContents | BlobResourceContents;
/**
 * Typed identifier used for terminal values on the wire.
 */
export type TerminalId = string;
/**
 * Unique identifier for a permission option.
 */
export type PermissionOptionId = string;
/**
 * The type of permission option being presented to the user.
 *
 * Helps clients choose appropriate icons and UI treatment.
 */
export type PermissionOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";
/**
 * Request from the agent to elicit structured user input.
 *
 * The agent sends this to the client to request information from the user,
 * either via a form or by directing them to a URL.
 * Elicitations are tied to a session (optionally a tool call) or a request.
 */
export type CreateElicitationRequest = CreateElicitationRequest1 & {
    /**
     * A human-readable message describing what input is needed.
     */
    message: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
};
export type CreateElicitationRequest1 = (ElicitationFormMode & {
    mode: "form";
    [k: string]: unknown;
}) | (ElicitationUrlMode & {
    mode: "url";
    [k: string]: unknown;
}) | ((ElicitationSessionScope | ElicitationRequestScope) & {
    /**
     * Custom or future elicitation mode.
     *
     * Values beginning with `_` are reserved for implementation-specific
     * extensions. Unknown values that do not begin with `_` are reserved for
     * future ACP variants.
     */
    mode: string;
    [k: string]: unknown;
});
/**
 * Form-based elicitation mode where the client renders a form from the provided schema.
 */
export type ElicitationFormMode = ElicitationFormMode1 & {
    /**
     * A JSON Schema describing the form fields to present to the user.
     */
    requestedSchema: ElicitationSchema;
    [k: string]: unknown;
};
export type ElicitationFormMode1 = ElicitationSessionScope | ElicitationRequestScope;
/**
 * Type discriminator for elicitation schemas.
 */
export type ElicitationSchemaType = "object";
/**
 * Property schema for elicitation form fields.
 *
 * Each variant corresponds to a JSON Schema `"type"` value.
 * Single-select enums use `type: "string"` with `enum` or `oneOf` set.
 * Multi-select enums use `type: "array"`.
 */
export type ElicitationPropertySchema = (StringPropertySchema & {
    type: "string";
    [k: string]: unknown;
}) | (NumberPropertySchema & {
    type: "number";
    [k: string]: unknown;
}) | (IntegerPropertySchema & {
    type: "integer";
    [k: string]: unknown;
}) | (BooleanPropertySchema & {
    type: "boolean";
    [k: string]: unknown;
}) | (MultiSelectPropertySchema & {
    type: "array";
    [k: string]: unknown;
}) | {
    /**
     * Custom or future elicitation property schema type.
     *
     * Values beginning with `_` are reserved for implementation-specific
     * extensions. Unknown values that do not begin with `_` are reserved for
     * future ACP variants.
     */
    type: string;
    [k: string]: unknown;
};
/**
 * String format types for string properties in elicitation schemas.
 */
export type StringFormat = "email" | "uri" | "date" | "date-time";
/**
 * Items for a multi-select (array) property schema.
 */
export type MultiSelectItems = (StringMultiSelectItems & {
    type: "string";
    [k: string]: unknown;
}) | {
    /**
     * Custom or future multi-select item type.
     *
     * Values beginning with `_` are reserved for implementation-specific
     * extensions. Unknown values that do not begin with `_` are reserved for
     * future ACP variants.
     */
    type: string;
    [k: string]: unknown;
} | TitledMultiSelectItems;
/**
 * URL-based elicitation mode where the client directs the user to a URL.
 */
export type ElicitationUrlMode = ElicitationUrlMode1 & {
    /**
     * The unique identifier for this elicitation.
     */
    elicitationId: ElicitationId;
    /**
     * The URL to direct the user to.
     */
    url: string;
    [k: string]: unknown;
};
export type ElicitationUrlMode1 = ElicitationSessionScope | ElicitationRequestScope;
/**
 * Unique identifier for an elicitation.
 */
export type ElicitationId = string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Unique identifier for an MCP server using the ACP transport.
 *
 * The value is opaque and generated by the ACP component providing the MCP server. It is
 * used by `mcp/message` to route requests to the component that declared the server.
 */
export type McpServerAcpId = string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Identifies an inner MCP request active against a server on this ACP connection.
 *
 * Generated by the caller and preserved unchanged by proxies. This is distinct
 * from the outer ACP JSON-RPC request ID.
 */
export type McpRequestId = string;
/**
 * A JSON-RPC response object.
 */
export type AgentResponse = {
    /**
     * The id of the request this response answers.
     */
    id: RequestId;
    /**
     * Method-specific response data.
     */
    result: InitializeResponse | AuthenticateResponse | ListProvidersResponse | SetProviderResponse | DisableProviderResponse | LogoutResponse | AuthStatusResponse | NewSessionResponse | LoadSessionResponse | ListSessionsResponse | DeleteSessionResponse | ForkSessionResponse | ArchiveSessionResponse | UnarchiveSessionResponse | SessionStatusResponse | SetSessionTitleResponse | ResumeSessionResponse | CloseSessionResponse | SetSessionModeResponse | SetSessionConfigOptionResponse | PromptResponse | ExtResponse;
    [k: string]: unknown;
} | {
    /**
     * The id of the request this response answers.
     */
    id: RequestId;
    /**
     * Method-specific error data.
     */
    error: Error;
    [k: string]: unknown;
};
/**
 * Protocol version identifier.
 *
 * This version is only bumped for breaking changes.
 * Non-breaking changes should be introduced via capabilities.
 */
export type ProtocolVersion = number;
/**
 * Describes an available authentication method.
 *
 * The `type` field acts as the discriminator in the serialized JSON form.
 * When no `type` is present, the method is treated as `agent`.
 */
export type AuthMethod = (AuthMethodTerminal & {
    type: "terminal";
    [k: string]: unknown;
}) | AuthMethodAgent;
/**
 * Typed identifier used for auth method values on the wire.
 */
export type AuthMethodId = string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Unique identifier for a configurable LLM provider.
 */
export type ProviderId = string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Well-known API protocol identifiers for LLM providers.
 *
 * Agents and clients MUST handle unknown protocol identifiers gracefully.
 *
 * Protocol names beginning with `_` are free for custom use, like other ACP extension methods.
 * Protocol names that do not begin with `_` are reserved for the ACP spec.
 */
export type LlmProtocol = "anthropic" | "openai" | "azure" | "vertex" | "bedrock" | string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * The agent's overall authentication state.
 */
export type AuthState = "authenticated" | "unauthenticated" | "not_required" | "unknown" | string;
/**
 * Unique identifier for a Session Mode.
 */
export type SessionModeId = string;
/**
 * A session configuration option selector and its current state.
 */
export type SessionConfigOption = {
    /**
     * Unique identifier for the configuration option.
     */
    id: SessionConfigId;
    /**
     * Human-readable label for the option.
     */
    name: string;
    /**
     * Optional description for the Client to display to the user.
     */
    description?: string | null;
    /**
     * Optional semantic category for this option (UX only).
     */
    category?: SessionConfigOptionCategory | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
} & SessionConfigOption1;
/**
 * Unique identifier for a session configuration option.
 */
export type SessionConfigId = string;
/**
 * Semantic category for a session configuration option.
 *
 * This is intended to help Clients distinguish broadly common selectors (e.g. model selector vs
 * session mode selector vs thought/reasoning level) for UX purposes (keyboard shortcuts, icons,
 * placement). It MUST NOT be required for correctness. Clients MUST handle missing or unknown
 * categories gracefully.
 *
 * Category names beginning with `_` are free for custom use, like other ACP extension methods.
 * Category names that do not begin with `_` are reserved for the ACP spec.
 */
export type SessionConfigOptionCategory = "mode" | "model" | "model_config" | "thought_level" | string;
export type SessionConfigOption1 = (SessionConfigSelect & {
    type: "select";
    [k: string]: unknown;
}) | (SessionConfigBoolean & {
    type: "boolean";
    [k: string]: unknown;
});
/**
 * Unique identifier for a session configuration option value.
 */
export type SessionConfigValueId = string;
/**
 * Possible values for a session configuration option.
 */
export type SessionConfigSelectOptions = SessionConfigSelectOption[] | SessionConfigSelectGroup[];
/**
 * Unique identifier for a session configuration option value group.
 */
export type SessionConfigGroupId = string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Whether the Agent has a session in memory, as reported by `session/status`.
 */
export type SessionStatus = "open" | "saved" | string;
/**
 * Reasons why an agent stops processing a prompt turn.
 *
 * See protocol docs: [Stop Reasons](https://agentclientprotocol.com/protocol/v1/draft/prompt-turn#stop-reasons)
 */
export type StopReason = "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled";
/**
 * Predefined error codes for common JSON-RPC and ACP-specific errors.
 *
 * Standard errors use the JSON-RPC 2.0 codes. ACP-specific errors use the JSON-RPC
 * server-error range (-32000 to -32099), and request cancellation uses -32800 from the
 * range LSP reserves (-32899 to -32800).
 */
export type ErrorCode = -32700 | -32600 | -32601 | -32602 | -32603 | -32800 | -32000 | -32002 | number;
/**
 * Different types of updates that can be sent during session processing.
 *
 * These updates provide real-time feedback about the agent's progress.
 *
 * See protocol docs: [Agent Reports Output](https://agentclientprotocol.com/protocol/v1/draft/prompt-turn#3-agent-reports-output)
 */
export type SessionUpdate = (ContentChunk & {
    sessionUpdate: "user_message_chunk";
    [k: string]: unknown;
}) | (ContentChunk & {
    sessionUpdate: "agent_message_chunk";
    [k: string]: unknown;
}) | (ContentChunk & {
    sessionUpdate: "agent_thought_chunk";
    [k: string]: unknown;
}) | (ToolCall & {
    sessionUpdate: "tool_call";
    [k: string]: unknown;
}) | (ToolCallUpdate & {
    sessionUpdate: "tool_call_update";
    [k: string]: unknown;
}) | (Plan & {
    sessionUpdate: "plan";
    [k: string]: unknown;
}) | (PlanUpdate & {
    sessionUpdate: "plan_update";
    [k: string]: unknown;
}) | (PlanRemoved & {
    sessionUpdate: "plan_removed";
    [k: string]: unknown;
}) | (AvailableCommandsUpdate & {
    sessionUpdate: "available_commands_update";
    [k: string]: unknown;
}) | (CurrentModeUpdate & {
    sessionUpdate: "current_mode_update";
    [k: string]: unknown;
}) | (ConfigOptionUpdate & {
    sessionUpdate: "config_option_update";
    [k: string]: unknown;
}) | (SessionInfoUpdate & {
    sessionUpdate: "session_info_update";
    [k: string]: unknown;
}) | (UsageUpdate & {
    sessionUpdate: "usage_update";
    [k: string]: unknown;
}) | (Notice & {
    sessionUpdate: "notice";
    [k: string]: unknown;
}) | (CompactionUpdate & {
    sessionUpdate: "compaction_update";
    [k: string]: unknown;
}) | (CompactionSummaryChunk & {
    sessionUpdate: "compaction_summary_chunk";
    [k: string]: unknown;
}) | (SubagentUpdate & {
    sessionUpdate: "subagent_update";
    [k: string]: unknown;
}) | (SessionMessage & {
    sessionUpdate: "session_message";
    [k: string]: unknown;
}) | (SessionMessageChunk & {
    sessionUpdate: "session_message_chunk";
    [k: string]: unknown;
});
/**
 * Unique identifier for a message within a session.
 */
export type MessageId = string;
/**
 * Priority levels for plan entries.
 *
 * Used to indicate the relative importance or urgency of different
 * tasks in the execution plan.
 * See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v1/draft/agent-plan#plan-entries)
 */
export type PlanEntryPriority = "high" | "medium" | "low";
/**
 * Status of a plan entry in the execution flow.
 *
 * Tracks the lifecycle of each task from planning through completion.
 * See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v1/draft/agent-plan#plan-entries)
 */
export type PlanEntryStatus = "pending" | "in_progress" | "completed";
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Updated content for a plan.
 */
export type PlanUpdateContent = (PlanItems & {
    type: "items";
    [k: string]: unknown;
}) | (PlanFile & {
    type: "file";
    [k: string]: unknown;
}) | (PlanMarkdown & {
    type: "markdown";
    [k: string]: unknown;
});
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Unique identifier for a plan within a session.
 */
export type PlanId = string;
/**
 * The input specification for a command.
 */
export type AvailableCommandInput = UnstructuredCommandInput;
/**
 * Severity hint for a session notice.
 */
export type NoticeSeverity = "info" | "warning" | "error" | string;
/**
 * Unique identifier for a context compaction within a session.
 */
export type CompactionId = string;
/**
 * Lifecycle state of a context compaction.
 */
export type CompactionStatus = "in_progress" | "completed" | "failed" | "cancelled" | string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Current foreground-work state of a reusable child session.
 *
 * Each update is a whole-object snapshot. Idle does not terminate the child.
 * The parent can message it again, transitioning it back to running.
 * Background activity may still emit other session updates while idle.
 */
export type StateUpdate = (RunningStateUpdate & {
    state: "running";
    [k: string]: unknown;
}) | (IdleStateUpdate & {
    state: "idle";
    [k: string]: unknown;
}) | (RequiresActionStateUpdate & {
    state: "requires_action";
    [k: string]: unknown;
}) | (UnknownStateUpdate & {
    state: "unknown";
    [k: string]: unknown;
}) | {
    /**
     * Unrecognized state discriminator.
     */
    state: string;
    [k: string]: unknown;
};
/**
 * **UNSTABLE**
 *
 * The child is ready to process another prompt.
 *
 * An omitted, `null`, or malformed `stopReason` means not reported.
 */
export type IdleStateUpdate = IdleStateUpdate1 & {
    /**
     * **UNSTABLE** Token usage for completed foreground work.
     *
     * Optional. Omitted or `null` means not reported.
     */
    usage?: Usage | null;
    /**
     * The _meta property is reserved by ACP for additional metadata.
     * Implementations MUST NOT make assumptions about values at these keys.
     * Optional. Omitted and `null` mean no metadata for this state snapshot.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    /**
     * Why foreground work stopped. The value selects one of this type's variants, which may add fields of their own.
     *
     * Optional. Omitted or `null` both mean the agent is not reporting a stop reason; a malformed value is treated the same way.
     *
     * See protocol docs: [Current work state](https://agentclientprotocol.com/rfds/subagents#current-work-state)
     */
    stopReason?: string | null;
    [k: string]: unknown;
};
export type IdleStateUpdate1 = {
    stopReason: "end_turn";
    [k: string]: unknown;
} | {
    stopReason: "max_tokens";
    [k: string]: unknown;
} | {
    stopReason: "max_turn_requests";
    [k: string]: unknown;
} | {
    stopReason: "refusal";
    [k: string]: unknown;
} | {
    stopReason: "cancelled";
    [k: string]: unknown;
} | (ErrorStopReason & {
    stopReason: "error";
    [k: string]: unknown;
}) | {
    /**
     * Unrecognized stop reason.
     */
    stopReason: string;
    [k: string]: unknown;
} | {
    stopReason?: null;
    [k: string]: unknown;
};
/**
 * Configuration for connecting to an MCP (Model Context Protocol) server.
 *
 * MCP servers provide tools and context that the agent can use when
 * processing prompts.
 *
 * See protocol docs: [MCP Servers](https://agentclientprotocol.com/protocol/v1/draft/session-setup#mcp-servers)
 */
export type McpServer = (McpServerHttp & {
    type: "http";
    [k: string]: unknown;
}) | (McpServerSse & {
    type: "sse";
    [k: string]: unknown;
}) | (McpServerAcp & {
    type: "acp";
    [k: string]: unknown;
}) | McpServerStdio;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * How the Agent combines a client-provided system prompt with its own instructions.
 *
 * Unknown modes are preserved so they can be stored,
 * proxied, or forwarded. An Agent MUST return an error for a mode it does not
 * support rather than treating it as `append` or `override`.
 */
export type SystemPromptMode = "append" | "override" | string;
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Which sessions `session/list` returns based on their archive state.
 *
 * Unknown values are preserved so they can be stored, proxied, or forwarded. An Agent MUST
 * return `-32602` for a value it does not support rather than treating it as `exclude`.
 */
export type SessionArchiveFilter = "exclude" | "include" | "only" | string;
/**
 * Request parameters for setting a session configuration option.
 */
export type SetSessionConfigOptionRequest = SetSessionConfigOptionRequest1 & {
    /**
     * The ID of the session to set the configuration option for.
     */
    sessionId: SessionId;
    /**
     * The ID of the configuration option to set.
     */
    configId: SessionConfigId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
};
export type SetSessionConfigOptionRequest1 = {
    type: "boolean";
    /**
     * The boolean value.
     */
    value: boolean;
    [k: string]: unknown;
} | {
    /**
     * The value ID.
     */
    value: SessionConfigValueId;
    [k: string]: unknown;
};
/**
 * A JSON-RPC response object.
 */
export type ClientResponse = {
    /**
     * The id of the request this response answers.
     */
    id: RequestId;
    /**
     * Method-specific response data.
     */
    result: WriteTextFileResponse | ReadTextFileResponse | RequestPermissionResponse | CreateTerminalResponse | TerminalOutputResponse | ReleaseTerminalResponse | WaitForTerminalExitResponse | KillTerminalResponse | CreateElicitationResponse | MessageMcpResponse | ExtResponse;
    [k: string]: unknown;
} | {
    /**
     * The id of the request this response answers.
     */
    id: RequestId;
    /**
     * Method-specific error data.
     */
    error: Error;
    [k: string]: unknown;
};
/**
 * The outcome of a permission request.
 */
export type RequestPermissionOutcome = {
    outcome: "cancelled";
    [k: string]: unknown;
} | (SelectedPermissionOutcome & {
    outcome: "selected";
    [k: string]: unknown;
});
/**
 * Response from the client to an elicitation request.
 */
export type CreateElicitationResponse = CreateElicitationResponse1 & {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
};
export type CreateElicitationResponse1 = (ElicitationAcceptAction & {
    action: "accept";
    [k: string]: unknown;
}) | {
    action: "decline";
    [k: string]: unknown;
} | {
    action: "cancel";
    [k: string]: unknown;
} | {
    /**
     * Custom or future elicitation action.
     *
     * Values beginning with `_` are reserved for implementation-specific
     * extensions. Unknown values that do not begin with `_` are reserved for
     * future ACP variants.
     */
    action: string;
    [k: string]: unknown;
};
/**
 * Allowed wire representations for `ElicitationContentValue`.
 */
export type ElicitationContentValue = string | number | boolean | string[];
/**
 * **UNSTABLE**
 *
 * The successful outer ACP `mcp/message` response carries exactly one
 * inner MCP outcome: an opaque result (including JSON null), or an MCP error.
 * Outer ACP errors are reserved for binding and runtime failures.
 *
 * Both branches require their carrier key. An error must be a non-null object.
 * Unknown outer fields are ignored. Inner result and error fields are preserved.
 * Carrier `_meta` is optional. Null or invalid values are treated as absent.
 * Senders must include exactly one outcome. Receivers prefer `result` if both are present.
 */
export type MessageMcpResponse = {
    /**
     * Required, even if JSON null.
     */
    result: {
        [k: string]: unknown;
    };
    /**
     * Optional ACP carrier metadata.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
} | {
    /**
     * Required, non-null MCP error object.
     */
    error: McpError;
    /**
     * Optional ACP carrier metadata.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
};
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for `proxy/initialize`.
 *
 * A conductor sends `proxy/initialize` instead of `initialize` to every component that has a
 * successor, which tells the component to run as a proxy. The params and the response are
 * the same as for `initialize`. A conductor sends `initialize` to the final agent.
 *
 * The params carry the protocol version the conductor selected: the client's requested
 * version, unless the conductor supports only a lower one. Before answering successfully,
 * the proxy MUST forward an `initialize` request to its successor through `proxy/successor`.
 *
 * See the [Proxy Chains RFD](https://agentclientprotocol.com/rfds/proxy-chains).
 */
export type InitializeProxyRequest = InitializeRequest;
/**
 * **UNSTABLE**
 *
 * A JSON-RPC response object.
 */
export type ProxyResponse = {
    /**
     * The id of the request this response answers.
     */
    id: RequestId;
    /**
     * Method-specific response data.
     */
    result: InitializeProxyResponse | ProxySuccessorResponse;
    [k: string]: unknown;
} | {
    /**
     * The id of the request this response answers.
     */
    id: RequestId;
    /**
     * Method-specific error data.
     */
    error: Error;
    [k: string]: unknown;
};
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response to `proxy/initialize`.
 *
 * The same as the `initialize` response. The proxy builds it from its successor's
 * `initialize` response and answers with the capabilities of the chain from itself onward.
 * It MUST NOT change `protocolVersion`.
 */
export type InitializeProxyResponse = InitializeResponse;
/**
 * A JSON-RPC request object.
 */
export interface AgentRequest {
    /**
     * The request id used to correlate the matching response.
     */
    id: RequestId;
    /**
     * The method name to invoke.
     */
    method: string;
    /**
     * Method-specific request parameters.
     */
    params?: (WriteTextFileRequest | ReadTextFileRequest | RequestPermissionRequest | CreateTerminalRequest | TerminalOutputRequest | ReleaseTerminalRequest | WaitForTerminalExitRequest | KillTerminalRequest | CreateElicitationRequest | MessageMcpRequest | ExtRequest) | null;
    [k: string]: unknown;
}
/**
 * Request to write content to a text file.
 *
 * Only available if the client supports the `fs.writeTextFile` capability.
 */
export interface WriteTextFileRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * Absolute path to the file to write.
     */
    path: string;
    /**
     * The text content to write to the file.
     */
    content: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request to read content from a text file.
 *
 * Only available if the client supports the `fs.readTextFile` capability.
 */
export interface ReadTextFileRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * Absolute path to the file to read.
     */
    path: string;
    /**
     * Line number to start reading from (1-based).
     */
    line?: number | null;
    /**
     * Maximum number of lines to read.
     */
    limit?: number | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request for user permission to execute a tool call.
 *
 * Sent when the agent needs authorization before performing a sensitive operation.
 *
 * See protocol docs: [Requesting Permission](https://agentclientprotocol.com/protocol/v1/draft/tool-calls#requesting-permission)
 */
export interface RequestPermissionRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * Details about the tool call requiring permission.
     */
    toolCall: ToolCallUpdate;
    /**
     * Available permission options for the user to choose from.
     */
    options: PermissionOption[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * An update to an existing tool call.
 *
 * Used to report progress and results as tools execute. All fields except
 * the tool call ID are optional - only changed fields need to be included.
 *
 * See protocol docs: [Updating](https://agentclientprotocol.com/protocol/v1/draft/tool-calls#updating)
 */
export interface ToolCallUpdate {
    /**
     * The ID of the tool call being updated.
     */
    toolCallId: ToolCallId;
    /**
     * Update the tool kind.
     */
    kind?: ToolKind | null;
    /**
     * Update the execution status.
     */
    status?: ToolCallStatus | null;
    /**
     * Update the human-readable title.
     */
    title?: string | null;
    /**
     * Update the programmatic name of the tool being invoked.
     *
     * This field is optional. Omitting it or sending `null` both mean that
     * the existing name is left unchanged.
     */
    name?: string | null;
    /**
     * Replace the content collection.
     */
    content?: ToolCallContent[] | null;
    /**
     * Replace the locations collection.
     */
    locations?: ToolCallLocation[] | null;
    /**
     * Update the raw input.
     */
    rawInput?: {
        [k: string]: unknown;
    };
    /**
     * Update the raw output.
     */
    rawOutput?: {
        [k: string]: unknown;
    };
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Standard content block (text, images, resources).
 */
export interface Content {
    /**
     * The actual content block.
     */
    content: ContentBlock;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Text provided to or from an LLM.
 */
export interface TextContent {
    /**
     * Optional annotations that help clients decide how to display or route this content.
     */
    annotations?: Annotations | null;
    /**
     * Text payload carried by this content block.
     */
    text: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Optional annotations for the client. The client can use annotations to inform how objects are used or displayed
 */
export interface Annotations {
    /**
     * Intended recipients for this content, such as the user or assistant.
     */
    audience?: Role[] | null;
    /**
     * Timestamp indicating when the underlying resource was last modified.
     */
    lastModified?: string | null;
    /**
     * Relative importance of this content when clients choose what to surface.
     */
    priority?: number | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * An image provided to or from an LLM.
 */
export interface ImageContent {
    /**
     * Optional annotations that help clients decide how to display or route this content.
     */
    annotations?: Annotations | null;
    /**
     * Base64-encoded media payload.
     */
    data: string;
    /**
     * MIME type describing the encoded media payload.
     */
    mimeType: string;
    /**
     * URI associated with this resource or media payload.
     */
    uri?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Audio provided to or from an LLM.
 */
export interface AudioContent {
    /**
     * Optional annotations that help clients decide how to display or route this content.
     */
    annotations?: Annotations | null;
    /**
     * Base64-encoded media payload.
     */
    data: string;
    /**
     * MIME type describing the encoded media payload.
     */
    mimeType: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A resource that the server is capable of reading, included in a prompt or tool call result.
 */
export interface ResourceLink {
    /**
     * Optional annotations that help clients decide how to display or route this content.
     */
    annotations?: Annotations | null;
    /**
     * Optional human-readable details shown with this protocol object.
     */
    description?: string | null;
    /**
     * MIME type describing the encoded media payload.
     */
    mimeType?: string | null;
    /**
     * Human-readable name shown for this protocol object.
     */
    name: string;
    /**
     * Optional size of the linked resource in bytes, if known.
     */
    size?: number | null;
    /**
     * Optional display title for end-user UI.
     */
    title?: string | null;
    /**
     * URI associated with this resource or media payload.
     */
    uri: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * The contents of a resource, embedded into a prompt or tool call result.
 */
export interface EmbeddedResource {
    /**
     * Optional annotations that help clients decide how to display or route this content.
     */
    annotations?: Annotations | null;
    /**
     * Embedded resource payload, either text or binary data.
     */
    resource: EmbeddedResourceResource;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Text-based resource contents.
 */
export interface TextResourceContents {
    /**
     * MIME type describing the encoded media payload.
     */
    mimeType?: string | null;
    /**
     * Text payload carried by this content block.
     */
    text: string;
    /**
     * URI associated with this resource or media payload.
     */
    uri: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Binary resource contents.
 */
export interface BlobResourceContents {
    /**
     * Base64-encoded bytes for a binary resource payload.
     */
    blob: string;
    /**
     * MIME type describing the encoded media payload.
     */
    mimeType?: string | null;
    /**
     * URI associated with this resource or media payload.
     */
    uri: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A diff representing file modifications.
 *
 * Shows changes to files in a format suitable for display in the client UI.
 *
 * See protocol docs: [Content](https://agentclientprotocol.com/protocol/v1/draft/tool-calls#content)
 */
export interface Diff {
    /**
     * The absolute file path being modified.
     */
    path: string;
    /**
     * The original content (omitted or `null` for new files).
     */
    oldText?: string | null;
    /**
     * The new content after modification.
     */
    newText: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Embed a terminal created with `terminal/create` by its id.
 *
 * The terminal must be added before calling `terminal/release`.
 *
 * See protocol docs: [Terminal](https://agentclientprotocol.com/protocol/v1/draft/terminals)
 */
export interface Terminal {
    /**
     * Identifier of the terminal instance to embed in the content stream.
     */
    terminalId: TerminalId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A file location being accessed or modified by a tool.
 *
 * Enables clients to implement "follow-along" features that track
 * which files the agent is working with in real-time.
 *
 * See protocol docs: [Following the Agent](https://agentclientprotocol.com/protocol/v1/draft/tool-calls#following-the-agent)
 */
export interface ToolCallLocation {
    /**
     * The absolute file path being accessed or modified.
     */
    path: string;
    /**
     * Optional 1-based line number within the file.
     */
    line?: number | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * An option presented to the user when requesting permission.
 */
export interface PermissionOption {
    /**
     * Unique identifier for this permission option.
     */
    optionId: PermissionOptionId;
    /**
     * Human-readable label to display to the user.
     */
    name: string;
    /**
     * Hint about the nature of this permission option.
     */
    kind: PermissionOptionKind;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request to create a new terminal and execute a command.
 */
export interface CreateTerminalRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * The command to execute.
     */
    command: string;
    /**
     * Array of command arguments.
     */
    args?: string[];
    /**
     * Environment variables for the command.
     */
    env?: EnvVariable[];
    /**
     * Working directory for the command. Must be an absolute path.
     */
    cwd?: string | null;
    /**
     * Maximum number of output bytes to retain.
     *
     * When the limit is exceeded, the Client truncates from the beginning of the output
     * to stay within the limit.
     *
     * The Client MUST ensure truncation happens at a character boundary to maintain valid
     * string output, even if this means the retained output is slightly less than the
     * specified limit.
     */
    outputByteLimit?: number | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * An environment variable to set when launching an MCP server.
 */
export interface EnvVariable {
    /**
     * The name of the environment variable.
     */
    name: string;
    /**
     * The value to set for the environment variable.
     */
    value: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request to get the current output and status of a terminal.
 */
export interface TerminalOutputRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * The ID of the terminal to get output from.
     */
    terminalId: TerminalId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request to release a terminal and free its resources.
 */
export interface ReleaseTerminalRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * The ID of the terminal to release.
     */
    terminalId: TerminalId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request to wait for a terminal command to exit.
 */
export interface WaitForTerminalExitRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * The ID of the terminal to wait for.
     */
    terminalId: TerminalId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request to kill a terminal without releasing it.
 */
export interface KillTerminalRequest {
    /**
     * The session ID for this request.
     */
    sessionId: SessionId;
    /**
     * The ID of the terminal to kill.
     */
    terminalId: TerminalId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Session-scoped elicitation, optionally tied to a specific tool call.
 *
 * When `toolCallId` is set, the elicitation is tied to a specific tool call.
 * This is useful when an agent receives an elicitation from an MCP server
 * during a tool call and needs to redirect it to the user.
 */
export interface ElicitationSessionScope {
    /**
     * The session this elicitation is tied to.
     */
    sessionId: SessionId;
    /**
     * Optional tool call within the session.
     *
     * Optional. Omitted and `null` are equivalent and mean the elicitation is scoped to the
     * session without a specific tool call.
     */
    toolCallId?: ToolCallId | null;
    [k: string]: unknown;
}
/**
 * Request-scoped elicitation, tied to a specific JSON-RPC request outside of a session
 * (e.g., during auth/configuration phases before any session is started).
 */
export interface ElicitationRequestScope {
    /**
     * The request this elicitation is tied to.
     */
    requestId: RequestId;
    [k: string]: unknown;
}
/**
 * Type-safe elicitation schema for requesting structured user input.
 *
 * This represents a JSON Schema object with primitive-typed properties,
 * as required by the elicitation specification.
 */
export interface ElicitationSchema {
    /**
     * Type discriminator. Always `"object"`.
     */
    type?: ElicitationSchemaType & string;
    /**
     * Optional title for the schema.
     *
     * Optional. Omitted and `null` are equivalent and mean no title is provided.
     */
    title?: string | null;
    /**
     * Property definitions (must be primitive types).
     */
    properties?: {
        [k: string]: ElicitationPropertySchema;
    };
    /**
     * List of required property names.
     *
     * Optional. Omitted and `null` are equivalent and mean no property names are required.
     */
    required?: string[] | null;
    /**
     * Optional description of what this schema represents.
     *
     * Optional. Omitted and `null` are equivalent and mean no schema description is provided.
     */
    description?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Schema for string properties in an elicitation form.
 *
 * When `enum` or `oneOf` is set, this represents a single-select enum
 * with `"type": "string"`.
 */
export interface StringPropertySchema {
    /**
     * Optional title for the property.
     *
     * Optional. Omitted and `null` are equivalent and mean no title is provided.
     */
    title?: string | null;
    /**
     * Human-readable description.
     *
     * Optional. Omitted and `null` are equivalent and mean no description is provided.
     */
    description?: string | null;
    /**
     * Minimum string length.
     *
     * Optional. Omitted and `null` are equivalent and mean there is no minimum length constraint.
     */
    minLength?: number | null;
    /**
     * Maximum string length.
     *
     * Optional. Omitted and `null` are equivalent and mean there is no maximum length constraint.
     */
    maxLength?: number | null;
    /**
     * Pattern the string must match.
     *
     * Optional. Omitted and `null` are equivalent and mean there is no pattern constraint.
     */
    pattern?: string | null;
    /**
     * String format.
     *
     * Optional. Omitted and `null` are equivalent and mean there is no format constraint.
     */
    format?: StringFormat | null;
    /**
     * Default value.
     *
     * Optional. Omitted and `null` are equivalent and mean no default value is provided.
     */
    default?: string | null;
    /**
     * Enum values for untitled single-select enums.
     * Optional. Omitted and `null` are equivalent and mean no untitled single-select choices are
     * declared by `enum`.
     */
    enum?: string[] | null;
    /**
     * Titled enum options for titled single-select enums.
     * Optional. Omitted and `null` are equivalent and mean no titled single-select choices are
     * declared by `oneOf`.
     */
    oneOf?: EnumOption[] | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A titled enum option with a const value, human-readable title, and optional description.
 */
export interface EnumOption {
    /**
     * The constant value for this option.
     */
    const: string;
    /**
     * Human-readable title for this option.
     */
    title: string;
    /**
     * Human-readable description.
     *
     * Optional. Omitted and `null` are equivalent and mean no description is provided.
     */
    description?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Schema for number (floating-point) properties in an elicitation form.
 */
export interface NumberPropertySchema {
    /**
     * Optional title for the property.
     *
     * Optional. Omitted and `null` are equivalent and mean no title is provided.
     */
    title?: string | null;
    /**
     * Human-readable description.
     *
     * Optional. Omitted and `null` are equivalent and mean no description is provided.
     */
    description?: string | null;
    /**
     * Minimum value (inclusive).
     *
     * Optional. Omitted and `null` are equivalent and mean there is no inclusive lower bound.
     */
    minimum?: number | null;
    /**
     * Maximum value (inclusive).
     *
     * Optional. Omitted and `null` are equivalent and mean there is no inclusive upper bound.
     */
    maximum?: number | null;
    /**
     * Default value.
     *
     * Optional. Omitted and `null` are equivalent and mean no default value is provided.
     */
    default?: number | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Schema for integer properties in an elicitation form.
 */
export interface IntegerPropertySchema {
    /**
     * Optional title for the property.
     *
     * Optional. Omitted and `null` are equivalent and mean no title is provided.
     */
    title?: string | null;
    /**
     * Human-readable description.
     *
     * Optional. Omitted and `null` are equivalent and mean no description is provided.
     */
    description?: string | null;
    /**
     * Minimum value (inclusive).
     *
     * Optional. Omitted and `null` are equivalent and mean there is no inclusive lower bound.
     */
    minimum?: number | null;
    /**
     * Maximum value (inclusive).
     *
     * Optional. Omitted and `null` are equivalent and mean there is no inclusive upper bound.
     */
    maximum?: number | null;
    /**
     * Default value.
     *
     * Optional. Omitted and `null` are equivalent and mean no default value is provided.
     */
    default?: number | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Schema for boolean properties in an elicitation form.
 */
export interface BooleanPropertySchema {
    /**
     * Optional title for the property.
     *
     * Optional. Omitted and `null` are equivalent and mean no title is provided.
     */
    title?: string | null;
    /**
     * Human-readable description.
     *
     * Optional. Omitted and `null` are equivalent and mean no description is provided.
     */
    description?: string | null;
    /**
     * Default value.
     *
     * Optional. Omitted and `null` are equivalent and mean no default value is provided.
     */
    default?: boolean | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Schema for multi-select (array) properties in an elicitation form.
 */
export interface MultiSelectPropertySchema {
    /**
     * Optional title for the property.
     *
     * Optional. Omitted and `null` are equivalent and mean no title is provided.
     */
    title?: string | null;
    /**
     * Human-readable description.
     *
     * Optional. Omitted and `null` are equivalent and mean no description is provided.
     */
    description?: string | null;
    /**
     * Minimum number of items to select.
     *
     * Optional. Omitted and `null` are equivalent and mean there is no minimum selection count.
     */
    minItems?: number | null;
    /**
     * Maximum number of items to select.
     *
     * Optional. Omitted and `null` are equivalent and mean there is no maximum selection count.
     */
    maxItems?: number | null;
    /**
     * The items definition describing allowed values.
     */
    items: MultiSelectItems;
    /**
     * Default selected values.
     *
     * Optional. Omitted and `null` are equivalent and mean no default selections are provided.
     */
    default?: string[] | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * String item schema for multi-select enum properties.
 */
export interface StringMultiSelectItems {
    /**
     * Allowed enum values.
     */
    enum: string[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Items definition for titled multi-select enum properties.
 */
export interface TitledMultiSelectItems {
    /**
     * Titled enum options.
     */
    anyOf: EnumOption[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for `mcp/message`.
 */
export interface MessageMcpRequest {
    /**
     * The declared ACP MCP server receiving this request.
     */
    serverId: McpServerAcpId;
    /**
     * The caller-generated identifier for the inner MCP request.
     */
    requestId: McpRequestId;
    /**
     * The inner MCP method name.
     */
    method: string;
    /**
     * Optional inner MCP params.
     *
     * If omitted or set to `null`, the inner MCP message has no params.
     */
    params?: {
        [k: string]: unknown;
    } | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Allows for sending an arbitrary request that is not part of the ACP spec.
 * Extension methods provide a way to add custom functionality while maintaining
 * protocol compatibility.
 *
 * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
 */
export interface ExtRequest {
    [k: string]: unknown;
}
/**
 * Response to the `initialize` method.
 *
 * Contains the negotiated protocol version and agent capabilities.
 *
 * See protocol docs: [Initialization](https://agentclientprotocol.com/protocol/v1/draft/initialization)
 */
export interface InitializeResponse {
    /**
     * The protocol version the client specified if supported by the agent,
     * or the latest protocol version supported by the agent.
     *
     * The client should disconnect, if it doesn't support this version.
     */
    protocolVersion: ProtocolVersion;
    /**
     * Capabilities supported by the agent.
     */
    agentCapabilities?: AgentCapabilities;
    /**
     * Authentication methods supported by the agent.
     */
    authMethods?: AuthMethod[];
    /**
     * Information about the Agent name and version sent to the Client.
     *
     * Note: in future versions of the protocol, this will be required.
     */
    agentInfo?: Implementation | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities supported by the agent.
 *
 * Advertised during initialization to inform the client about
 * available features and content types.
 *
 * See protocol docs: [Agent Capabilities](https://agentclientprotocol.com/protocol/v1/draft/initialization#agent-capabilities)
 */
export interface AgentCapabilities {
    /**
     * Whether the agent supports `session/load`.
     */
    loadSession?: boolean;
    /**
     * Prompt capabilities supported by the agent.
     */
    promptCapabilities?: PromptCapabilities;
    /**
     * MCP capabilities supported by the agent.
     */
    mcpCapabilities?: McpCapabilities;
    /**
     * Session lifecycle and prompt capabilities advertised by the agent.
     */
    sessionCapabilities?: SessionCapabilities;
    /**
     * Authentication-related capabilities supported by the agent.
     */
    auth?: AgentAuthCapabilities;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Provider configuration capabilities supported by the agent.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports provider configuration methods.
     */
    providers?: ProvidersCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Prompt capabilities supported by the agent in `session/prompt` requests.
 *
 * Baseline agent functionality requires support for `text`
 * and `resource_link` content blocks in prompt requests.
 *
 * Other variants must be explicitly opted in to.
 * Capabilities for different types of content in prompt requests.
 *
 * Indicates which content types beyond the baseline (text and resource links)
 * the agent can process.
 *
 * See protocol docs: [Prompt Capabilities](https://agentclientprotocol.com/protocol/v1/draft/initialization#prompt-capabilities)
 */
export interface PromptCapabilities {
    /**
     * Agent supports `image` content blocks.
     */
    image?: boolean;
    /**
     * Agent supports `audio` content blocks.
     */
    audio?: boolean;
    /**
     * Agent supports embedded context in `session/prompt` requests.
     *
     * When enabled, the Client is allowed to include `resource` content blocks
     * in prompt requests for pieces of context that are referenced in the message.
     */
    embeddedContext?: boolean;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * MCP capabilities supported by the agent
 */
export interface McpCapabilities {
    /**
     * Agent supports `http` MCP servers.
     */
    http?: boolean;
    /**
     * Agent supports `sse` MCP servers.
     */
    sse?: boolean;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Agent supports `acp` MCP servers.
     */
    acp?: boolean;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Session capabilities supported by the agent.
 *
 * As a baseline, all Agents **MUST** support `session/new`, `session/prompt`, `session/cancel`, and `session/update`.
 *
 * Optionally, they **MAY** support other session methods and notifications by specifying additional capabilities.
 *
 * Note: `session/load` is still handled by the top-level `loadSession` capability. This will be unified in future versions of the protocol.
 *
 * See protocol docs: [Session Capabilities](https://agentclientprotocol.com/protocol/v1/draft/initialization#session-capabilities)
 */
export interface SessionCapabilities {
    /**
     * Whether the agent supports `session/list`.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports listing sessions.
     */
    list?: SessionListCapabilities | null;
    /**
     * Whether the agent supports `session/delete`.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports deleting sessions from `session/list`.
     */
    delete?: SessionDeleteCapabilities | null;
    /**
     * Whether the agent supports `additionalDirectories` on supported session lifecycle requests.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports `additionalDirectories` on
     * supported session lifecycle requests.
     *
     * Agents that also support `session/list` may return
     * `SessionInfo.additionalDirectories` to report the complete ordered
     * additional-root list associated with a listed session.
     */
    additionalDirectories?: SessionAdditionalDirectoriesCapabilities | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the agent supports `systemPrompt` on session lifecycle requests.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports `systemPrompt` in `append` mode.
     */
    systemPrompt?: SessionSystemPromptCapabilities | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the agent supports `session/fork`.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports forking sessions.
     */
    fork?: SessionForkCapabilities | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the agent supports `session/archive` and `session/unarchive`.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports both methods, the `archived` filter on
     * `session/list`, and `SessionInfo.archived`. Agents that advertise it MUST also advertise `sessionCapabilities.list`.
     */
    archive?: SessionArchiveCapabilities | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the agent supports `session/status`.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports checking session status.
     */
    status?: SessionStatusCapabilities | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the agent supports `session/set_title`.
     *
     * Agents report titles through `session/list` and `session_info_update` without this
     * capability. It only advertises that Clients can set titles.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports setting session titles.
     */
    title?: SessionTitleCapabilities | null;
    /**
     * Whether the agent supports `session/resume`.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports resuming sessions.
     */
    resume?: SessionResumeCapabilities | null;
    /**
     * Whether the agent supports `session/close`.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports closing sessions.
     */
    close?: SessionCloseCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities for the `session/list` method.
 *
 * Supplying `{}` means the agent supports listing sessions.
 */
export interface SessionListCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities for the `session/delete` method.
 *
 * Supplying `{}` means the agent supports deleting sessions from `session/list`.
 */
export interface SessionDeleteCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities for additional session directories support.
 *
 * Supplying `{}` means the agent supports the `additionalDirectories` field on
 * supported session lifecycle requests. Agents that also support
 * `session/list` may return `SessionInfo.additionalDirectories` to report the
 * complete ordered additional-root list associated with a listed session.
 */
export interface SessionAdditionalDirectoriesCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capabilities for client-provided system prompts.
 *
 * Supplying `{}` means the agent supports `systemPrompt` on session lifecycle
 * requests in `append` mode.
 */
export interface SessionSystemPromptCapabilities {
    /**
     * Delivery modes the agent supports in addition to `append`.
     *
     * Optional. Omitted or `null` both mean the agent supports only `append`.
     */
    mode?: SessionSystemPromptModeCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * System prompt delivery modes the agent supports in addition to `append`.
 *
 * `append` has no entry because every agent advertising
 * `sessionCapabilities.systemPrompt` supports it.
 */
export interface SessionSystemPromptModeCapabilities {
    /**
     * Whether the agent supports `override` mode.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports replacing its built-in default
     * instructions with the client-provided system prompt.
     */
    override?: SessionSystemPromptOverrideCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capabilities for the `override` system prompt mode.
 *
 * Supplying `{}` means the agent supports replacing its built-in default
 * instructions with the client-provided system prompt.
 */
export interface SessionSystemPromptOverrideCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capabilities for the `session/fork` method.
 *
 * Supplying `{}` means the agent supports forking sessions.
 */
export interface SessionForkCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capabilities for `session/archive` and `session/unarchive`.
 *
 * Supplying `{}` means the agent supports both methods, the `archived` filter on
 * `session/list`, and `SessionInfo.archived`.
 */
export interface SessionArchiveCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capabilities for the `session/status` method.
 *
 * Supplying `{}` means the agent supports checking session status.
 */
export interface SessionStatusCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capabilities for Client-set session titles.
 *
 * Supplying `{}` means the agent supports `session/set_title`. Agents report titles
 * through `session/list` and `session_info_update` without this capability.
 */
export interface SessionTitleCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities for the `session/resume` method.
 *
 * Supplying `{}` means the agent supports resuming sessions.
 */
export interface SessionResumeCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities for the `session/close` method.
 *
 * Supplying `{}` means the agent supports closing sessions.
 */
export interface SessionCloseCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Authentication-related capabilities supported by the agent.
 */
export interface AgentAuthCapabilities {
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the agent supports the `auth/status` method.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports the `auth/status` method.
     */
    status?: AuthStatusCapabilities | null;
    /**
     * Whether the agent supports the logout method.
     *
     * Optional. Omitted or `null` both mean the agent does not advertise support.
     * Supplying `{}` means the agent supports the logout method.
     */
    logout?: LogoutCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Auth status capabilities supported by the agent.
 *
 * Supplying `{}` means the agent supports the `auth/status` method.
 */
export interface AuthStatusCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Logout capabilities supported by the agent.
 *
 * Supplying `{}` means the agent supports the logout method.
 */
export interface LogoutCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Provider configuration capabilities supported by the agent.
 *
 * Supplying `{}` means the agent supports provider configuration methods.
 */
export interface ProvidersCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Terminal-based authentication method.
 *
 * The client runs the configured agent program as a separate interactive
 * process for the user to authenticate via a TUI. Agents MUST advertise this
 * method only when the client enabled its terminal authentication capability.
 * A zero exit status signals success. Any other termination signals failure.
 * The client MUST NOT pass this method to `authenticate`.
 */
export interface AuthMethodTerminal {
    /**
     * Unique identifier for this authentication method.
     */
    id: AuthMethodId;
    /**
     * Human-readable name of the authentication method.
     */
    name: string;
    /**
     * Optional human-readable description of this authentication method.
     */
    description?: string | null;
    /**
     * Additional arguments to append to the configured agent invocation for terminal auth.
     */
    args?: string[];
    /**
     * Additional environment variables to set on the configured agent invocation for terminal auth.
     * These values override same-named variables in the base launch configuration.
     */
    env?: {
        [k: string]: string;
    };
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Agent handles authentication itself through `authenticate`.
 *
 * This is the default authentication method type.
 */
export interface AuthMethodAgent {
    /**
     * Unique identifier for this authentication method.
     */
    id: AuthMethodId;
    /**
     * Human-readable name of the authentication method.
     */
    name: string;
    /**
     * Optional human-readable description of this authentication method.
     */
    description?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Metadata about the implementation of the client or agent.
 * Describes the name and version of an ACP implementation, with an optional
 * title for UI representation.
 */
export interface Implementation {
    /**
     * Intended for programmatic or logical use, but can be used as a display
     * name fallback if title isn't present.
     */
    name: string;
    /**
     * Intended for UI and end-user contexts and optimized to be human-readable
     * and easily understood.
     *
     * If not provided, the name should be used for display.
     */
    title?: string | null;
    /**
     * Version of the implementation. Can be displayed to the user or used
     * for debugging or metrics purposes. (e.g. "1.0.0").
     */
    version: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to the `authenticate` method.
 */
export interface AuthenticateResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response to `providers/list`.
 */
export interface ListProvidersResponse {
    /**
     * Configurable providers with current routing info suitable for UI display.
     */
    providers: ProviderInfo[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Information about a configurable LLM provider.
 */
export interface ProviderInfo {
    /**
     * Provider identifier, for example "main" or "openai".
     */
    providerId: ProviderId;
    /**
     * Supported protocol types for this provider.
     */
    supported: LlmProtocol[];
    /**
     * Whether this provider is mandatory and cannot be disabled via `providers/disable`.
     * If true, clients must not call `providers/disable` for this provider ID.
     */
    required: boolean;
    /**
     * Current effective non-secret routing config.
     * Null or omitted means provider is disabled.
     */
    current?: ProviderCurrentConfig | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Current effective non-secret routing configuration for a provider.
 */
export interface ProviderCurrentConfig {
    /**
     * Protocol currently used by this provider.
     */
    apiType: LlmProtocol;
    /**
     * Base URL currently used by this provider.
     */
    baseUrl: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response to `providers/set`.
 */
export interface SetProviderResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response to `providers/disable`.
 */
export interface DisableProviderResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to the `logout` method.
 */
export interface LogoutResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response to the `auth/status` method.
 */
export interface AuthStatusResponse {
    /**
     * Whether the agent can start sessions without the user signing in first.
     *
     * This is the only field clients should act on. Clients MUST treat values they
     * do not recognize as `unknown`.
     */
    state: AuthState;
    /**
     * The accounts the agent has configured, for display.
     *
     * Optional. Omitted and empty are equivalent and mean no accounts are reported.
     * Agents that hold credentials for several providers or accounts SHOULD list each
     * of them and mark the ones in effect with `active`.
     */
    accounts?: AuthAccount[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * An account or credential the agent has configured, such as a signed-in user
 * account or an API key.
 *
 * All fields are display information only. Clients MUST NOT use them as stable
 * account identifiers, and SHOULD NOT log them or send them elsewhere, such as to
 * telemetry.
 */
export interface AuthAccount {
    /**
     * Human-readable name for the account, suitable for display on its own,
     * for example `Claude Max`, `OpenAI API key`, or `Vertex AI`.
     */
    label: string;
    /**
     * Whether the agent currently uses this account by default.
     *
     * Several accounts MAY be active, for example one per provider.
     *
     * Optional. Omitted and `null` are equivalent and mean the agent does not indicate whether this account is in effect.
     */
    active?: boolean | null;
    /**
     * Display name of the user, such as a username or full name.
     *
     * Optional. Omitted and `null` are equivalent and mean no name is reported.
     */
    name?: string | null;
    /**
     * Email address of the user.
     *
     * Optional. Omitted and `null` are equivalent and mean no email is reported.
     */
    email?: string | null;
    /**
     * Display name of the organization, team, or workspace the account is using.
     *
     * Optional. Omitted and `null` are equivalent and mean no organization is reported.
     */
    organization?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response from creating a new session.
 *
 * See protocol docs: [Creating a Session](https://agentclientprotocol.com/protocol/v1/draft/session-setup#creating-a-session)
 */
export interface NewSessionResponse {
    /**
     * Unique identifier for the created session.
     *
     * Used in all subsequent requests for this conversation.
     */
    sessionId: SessionId;
    /**
     * Initial mode state if supported by the Agent
     *
     * See protocol docs: [Session Modes](https://agentclientprotocol.com/protocol/v1/draft/session-modes)
     */
    modes?: SessionModeState | null;
    /**
     * Initial session configuration options if supported by the Agent.
     */
    configOptions?: SessionConfigOption[] | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * The set of modes and the one currently active.
 */
export interface SessionModeState {
    /**
     * The current mode the Agent is in.
     */
    currentModeId: SessionModeId;
    /**
     * The set of modes that the Agent can operate in
     */
    availableModes: SessionMode[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A mode the agent can operate in.
 *
 * See protocol docs: [Session Modes](https://agentclientprotocol.com/protocol/v1/draft/session-modes)
 */
export interface SessionMode {
    /**
     * Stable identifier used to refer to this protocol object in later messages.
     */
    id: SessionModeId;
    /**
     * Human-readable name shown for this protocol object.
     */
    name: string;
    /**
     * Optional human-readable details shown with this protocol object.
     */
    description?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A single-value selector (dropdown) session configuration option payload.
 */
export interface SessionConfigSelect {
    /**
     * The currently selected value.
     */
    currentValue: SessionConfigValueId;
    /**
     * The set of selectable options.
     */
    options: SessionConfigSelectOptions;
    [k: string]: unknown;
}
/**
 * A possible value for a session configuration option.
 */
export interface SessionConfigSelectOption {
    /**
     * Unique identifier for this option value.
     */
    value: SessionConfigValueId;
    /**
     * Human-readable label for this option value.
     */
    name: string;
    /**
     * Optional description for this option value.
     */
    description?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A group of possible values for a session configuration option.
 */
export interface SessionConfigSelectGroup {
    /**
     * Unique identifier for this group.
     */
    group: SessionConfigGroupId;
    /**
     * Human-readable label for this group.
     */
    name: string;
    /**
     * The set of option values in this group.
     */
    options: SessionConfigSelectOption[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A boolean on/off toggle session configuration option payload.
 */
export interface SessionConfigBoolean {
    /**
     * The current value of the boolean option.
     */
    currentValue: boolean;
    [k: string]: unknown;
}
/**
 * Response from loading an existing session.
 */
export interface LoadSessionResponse {
    /**
     * Initial mode state if supported by the Agent
     *
     * See protocol docs: [Session Modes](https://agentclientprotocol.com/protocol/v1/draft/session-modes)
     */
    modes?: SessionModeState | null;
    /**
     * Initial session configuration options if supported by the Agent.
     */
    configOptions?: SessionConfigOption[] | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response from listing sessions.
 */
export interface ListSessionsResponse {
    /**
     * Array of session information objects
     */
    sessions: SessionInfo[];
    /**
     * Opaque cursor token. If present, pass this in the next request's cursor parameter
     * to fetch the next page. If absent, there are no more results.
     */
    nextCursor?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Information about a session returned by session/list
 */
export interface SessionInfo {
    /**
     * Unique identifier for the session
     */
    sessionId: SessionId;
    /**
     * The working directory for this session. Must be an absolute path.
     */
    cwd: string;
    /**
     * Additional workspace roots reported for this session. Each path must be absolute.
     *
     * When present, this is the complete ordered additional-root list reported
     * by the Agent. Omitted and empty values are equivalent: the response
     * reports no additional roots.
     */
    additionalDirectories?: string[];
    /**
     * Human-readable title for the session
     */
    title?: string | null;
    /**
     * ISO 8601 timestamp of last activity
     */
    updatedAt?: string | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the session is archived.
     *
     * Optional. Omitted and `null` are equivalent and mean the archive state is not reported.
     * Agents that advertise the `sessionCapabilities.archive` capability MUST include it on every listed session.
     */
    archived?: boolean | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response from deleting a session.
 */
export interface DeleteSessionResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response from forking an existing session.
 */
export interface ForkSessionResponse {
    /**
     * Unique identifier for the newly created forked session.
     */
    sessionId: SessionId;
    /**
     * Initial mode state if supported by the Agent
     *
     * See protocol docs: [Session Modes](https://agentclientprotocol.com/protocol/v1/draft/session-modes)
     */
    modes?: SessionModeState | null;
    /**
     * Initial session configuration options if supported by the Agent.
     */
    configOptions?: SessionConfigOption[] | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response from archiving a session.
 */
export interface ArchiveSessionResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response from unarchiving a session.
 */
export interface UnarchiveSessionResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response from checking the status of a session.
 *
 * The result is a snapshot. A session reported `open` may be closed or evicted before
 * the Client's next request.
 */
export interface SessionStatusResponse {
    /**
     * Whether the Agent has the session in memory.
     *
     * Required. Clients MUST treat a value they do not recognize as `saved`.
     */
    status: SessionStatus;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Response from setting the title of a session.
 */
export interface SetSessionTitleResponse {
    /**
     * The title the Agent stored.
     *
     * This differs from the requested title if the Agent normalized it. Clients SHOULD
     * display this value rather than the one they sent.
     */
    title: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response from resuming an existing session.
 */
export interface ResumeSessionResponse {
    /**
     * Initial mode state if supported by the Agent
     *
     * See protocol docs: [Session Modes](https://agentclientprotocol.com/protocol/v1/draft/session-modes)
     */
    modes?: SessionModeState | null;
    /**
     * Initial session configuration options if supported by the Agent.
     */
    configOptions?: SessionConfigOption[] | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response from closing a session.
 */
export interface CloseSessionResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to `session/set_mode` method.
 */
export interface SetSessionModeResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to `session/set_config_option` method.
 */
export interface SetSessionConfigOptionResponse {
    /**
     * The full set of configuration options and their current values.
     */
    configOptions: SessionConfigOption[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response from processing a user prompt.
 *
 * See protocol docs: [Check for Completion](https://agentclientprotocol.com/protocol/v1/draft/prompt-turn#4-check-for-completion)
 */
export interface PromptResponse {
    /**
     * Indicates why the agent stopped processing the turn.
     */
    stopReason: StopReason;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Token usage for this turn (optional).
     */
    usage?: Usage | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Token usage information for a prompt turn.
 */
export interface Usage {
    /**
     * Sum of all token types across session.
     */
    totalTokens: number;
    /**
     * Total input tokens across all turns.
     */
    inputTokens: number;
    /**
     * Total output tokens across all turns.
     */
    outputTokens: number;
    /**
     * Total thought/reasoning tokens
     */
    thoughtTokens?: number | null;
    /**
     * Total cache read tokens.
     */
    cachedReadTokens?: number | null;
    /**
     * Total cache write tokens.
     */
    cachedWriteTokens?: number | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Allows for sending an arbitrary response to an extension request that is not part of the ACP spec.
 * Extension methods provide a way to add custom functionality while maintaining
 * protocol compatibility.
 *
 * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
 */
export interface ExtResponse {
    [k: string]: unknown;
}
/**
 * JSON-RPC error object.
 *
 * Represents an error that occurred during method execution, following the
 * JSON-RPC 2.0 error object specification with optional additional data.
 *
 * See protocol docs: [JSON-RPC Error Object](https://www.jsonrpc.org/specification#error_object)
 */
export interface Error {
    /**
     * A number indicating the error type that occurred.
     * This must be an integer as defined in the JSON-RPC specification.
     */
    code: ErrorCode;
    /**
     * A string providing a short description of the error.
     * The message should be limited to a concise single sentence.
     */
    message: string;
    /**
     * Optional primitive or structured value that contains additional information about the error.
     * This may include debugging information or context-specific details.
     */
    data?: {
        [k: string]: unknown;
    };
    [k: string]: unknown;
}
/**
 * A JSON-RPC notification object.
 */
export interface AgentNotification {
    /**
     * The notification method name.
     */
    method: string;
    /**
     * Method-specific notification parameters.
     */
    params?: (SessionNotification | CompleteElicitationNotification | AuthStatusUpdateNotification | ExtNotification) | null;
    [k: string]: unknown;
}
/**
 * Notification containing a session update from the agent.
 *
 * Used to stream real-time progress and results during prompt processing.
 *
 * See protocol docs: [Agent Reports Output](https://agentclientprotocol.com/protocol/v1/draft/prompt-turn#3-agent-reports-output)
 */
export interface SessionNotification {
    /**
     * The ID of the session this update pertains to.
     */
    sessionId: SessionId;
    /**
     * The actual update content.
     */
    update: SessionUpdate;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A streamed item of content
 */
export interface ContentChunk {
    /**
     * A single item of content
     */
    content: ContentBlock;
    /**
     * A unique identifier for the message this chunk belongs to.
     *
     * All chunks belonging to the same message share the same `messageId`.
     * A change in `messageId` indicates a new message has started.
     */
    messageId?: MessageId | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Represents a tool call that the language model has requested.
 *
 * Tool calls are actions that the agent executes on behalf of the language model,
 * such as reading files, executing code, or fetching data from external sources.
 *
 * See protocol docs: [Tool Calls](https://agentclientprotocol.com/protocol/v1/draft/tool-calls)
 */
export interface ToolCall {
    /**
     * Unique identifier for this tool call within the session.
     */
    toolCallId: ToolCallId;
    /**
     * Human-readable title describing what the tool is doing.
     */
    title: string;
    /**
     * Programmatic name of the tool being invoked.
     *
     * This field is optional. Omitting it or sending `null` both mean that no
     * tool name is available.
     */
    name?: string | null;
    /**
     * The category of tool being invoked.
     * Helps clients choose appropriate icons and UI treatment.
     */
    kind?: ToolKind;
    /**
     * Current execution status of the tool call.
     */
    status?: ToolCallStatus;
    /**
     * Content produced by the tool call.
     */
    content?: ToolCallContent[];
    /**
     * File locations affected by this tool call.
     * Enables "follow-along" features in clients.
     */
    locations?: ToolCallLocation[];
    /**
     * Raw input parameters sent to the tool.
     */
    rawInput?: {
        [k: string]: unknown;
    };
    /**
     * Raw output returned by the tool.
     */
    rawOutput?: {
        [k: string]: unknown;
    };
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * An execution plan for accomplishing complex tasks.
 *
 * Plans consist of multiple entries representing individual tasks or goals.
 * Agents report plans to clients to provide visibility into their execution strategy.
 * Plans can evolve during execution as the agent discovers new requirements or completes tasks.
 *
 * See protocol docs: [Agent Plan](https://agentclientprotocol.com/protocol/v1/draft/agent-plan)
 */
export interface Plan {
    /**
     * The list of tasks to be accomplished.
     *
     * When updating a plan, the agent must send a complete list of all entries
     * with their current status. The client replaces the entire plan with each update.
     */
    entries: PlanEntry[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A single entry in the execution plan.
 *
 * Represents a task or goal that the assistant intends to accomplish
 * as part of fulfilling the user's request.
 * See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v1/draft/agent-plan#plan-entries)
 */
export interface PlanEntry {
    /**
     * Human-readable description of what this task aims to accomplish.
     */
    content: string;
    /**
     * The relative importance of this task.
     * Used to indicate which tasks are most critical to the overall goal.
     */
    priority: PlanEntryPriority;
    /**
     * Current execution status of this task.
     */
    status: PlanEntryStatus;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * A content update for a plan identified by ID.
 */
export interface PlanUpdate {
    /**
     * The updated plan content.
     */
    plan: PlanUpdateContent;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * A plan represented as structured entries.
 */
export interface PlanItems {
    /**
     * The plan ID to update.
     */
    planId: PlanId;
    /**
     * The list of tasks to be accomplished.
     *
     * When updating an item-based plan, the agent must send a complete list of all entries
     * with their current status. The client replaces that plan with each update.
     */
    entries: PlanEntry[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * A plan represented by a file URI.
 */
export interface PlanFile {
    /**
     * The plan ID to update.
     */
    planId: PlanId;
    /**
     * The URI of the file containing the plan.
     */
    uri: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * A plan represented as raw markdown content.
 */
export interface PlanMarkdown {
    /**
     * The plan ID to update.
     */
    planId: PlanId;
    /**
     * Markdown content for the plan.
     */
    content: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Removal notice for a plan identified by ID.
 */
export interface PlanRemoved {
    /**
     * The plan ID to remove.
     */
    planId: PlanId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Available commands are ready or have changed
 */
export interface AvailableCommandsUpdate {
    /**
     * Commands the agent can execute
     */
    availableCommands: AvailableCommand[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Information about a command.
 */
export interface AvailableCommand {
    /**
     * Command name (e.g., `create_plan`, `research_codebase`).
     */
    name: string;
    /**
     * Human-readable description of what the command does.
     */
    description: string;
    /**
     * Input for the command if required
     */
    input?: AvailableCommandInput | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * All text that was typed after the command name is provided as input.
 */
export interface UnstructuredCommandInput {
    /**
     * A hint to display when the input hasn't been provided yet
     */
    hint: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * The current mode of the session has changed
 *
 * See protocol docs: [Session Modes](https://agentclientprotocol.com/protocol/v1/draft/session-modes)
 */
export interface CurrentModeUpdate {
    /**
     * The ID of the current mode
     */
    currentModeId: SessionModeId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Session configuration options have been updated.
 */
export interface ConfigOptionUpdate {
    /**
     * The full set of configuration options and their current values.
     */
    configOptions: SessionConfigOption[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Update to session metadata. All fields are optional to support partial updates.
 *
 * Agents send this notification to update session information like title or custom metadata.
 * Clients can use it to keep session titles and state current.
 */
export interface SessionInfoUpdate {
    /**
     * Human-readable title for the session. Set to null to clear.
     */
    title?: string | null;
    /**
     * ISO 8601 timestamp of last activity. Set to null to clear.
     */
    updatedAt?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Context window and cost update for a session.
 */
export interface UsageUpdate {
    /**
     * Tokens currently in context.
     */
    used: number;
    /**
     * Total context window size in tokens.
     */
    size: number;
    /**
     * Cumulative session cost (optional).
     */
    cost?: Cost | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Cost information for a session.
 */
export interface Cost {
    /**
     * Total cumulative cost for session.
     */
    amount: number;
    /**
     * Unit of `amount`: an ISO 4217 currency code (e.g., "USD", "EUR") for money, or another
     * unit such as "credits".
     */
    currency: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Fire-and-forget information for the user.
 *
 * Notices are live events rather than session history. Agents must not rely on
 * a notice being received, displayed, or seen by the user.
 * Agents MUST only send notices when the Client advertised
 * the `session.notices` Client capability. Otherwise, Agents may use an agent
 * message when the information should still be surfaced to the user.
 *
 * See RFD: [Session Notices](https://agentclientprotocol.com/rfds/session-notices)
 */
export interface Notice {
    /**
     * Presentation severity hint.
     */
    severity: NoticeSeverity;
    /**
     * Required non-empty plain-text title that can stand alone.
     */
    title: string;
    /**
     * Optional plain-text detail or guidance.
     *
     * Omitted and `null` are equivalent and mean no description was supplied.
     */
    description?: string | null;
    /**
     * Metadata scoped to this notice.
     *
     * Omitted and `null` are equivalent and mean no metadata was supplied.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A context compaction upsert. The first notification fixes the compaction's
 * timeline position. Later updates with the same ID patch that entity in place.
 * Agents MUST only send this update when the Client advertised
 * the `session.compaction` Client capability.
 *
 * `summary`, `error`, and `_meta` have patch semantics: omission leaves the
 * stored value unchanged, `null` clears it, and a concrete value replaces it.
 * `summary: []` also clears the summary.
 */
export interface CompactionUpdate {
    /**
     * The Agent-owned ID of this compaction, unique within the session.
     */
    compactionId: CompactionId;
    /**
     * Current lifecycle status.
     */
    status: CompactionStatus;
    /**
     * Complete replacement user-displayable summary content for the compaction.
     */
    summary?: ContentBlock[] | null;
    /**
     * Human-readable error details for the compaction.
     */
    error?: string | null;
    /**
     * Extensible metadata patch for this compaction.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * A content block appended to a compaction's summary. A first-seen ID creates
 * an in-progress compaction. Chunks append in receive order.
 * Agents MUST only send this update when the Client advertised
 * the `session.compaction` Client capability.
 */
export interface CompactionSummaryChunk {
    /**
     * ID of the compaction whose summary receives this content.
     */
    compactionId: CompactionId;
    /**
     * One content block to append.
     */
    content: ContentBlock;
    /**
     * Metadata scoped to this chunk. Omission and `null` both mean absent.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Notification that the enclosing parent session created and owns a child session.
 *
 * Later updates modify the existing association's metadata, not its ownership.
 *
 * Sent on the immediate parent session. The first update for an unknown
 * `sessionId` announces the child and MUST be sent
 * before any live child traffic or live message naming the child as sender
 * or recipient. Parents may message and reuse an announced child across
 * multiple operations.
 * Child events are delivered automatically on the same connection. No child
 * load, resume, or subscription is needed.
 *
 * Only the subagent session ID is required. Omitted patch fields keep their
 * previous values. `null` clears them. Clearing capabilities disables child
 * mutations. Clearing state leaves current activity unset/unconfirmed: it does
 * not imply idle, stop work, or create an `unknown` state snapshot. A concrete
 * state replaces the entire previous state object, not the session.
 * The title and description provide the parent's display metadata for the
 * child. They do not replace the content of individual messages or operations.
 * `cwd` and `additionalDirectories` report where the Agent placed the child.
 * While unset, each inherits the immediate parent's effective value.
 */
export interface SubagentUpdate {
    /**
     * The opaque session ID identifying the child in all ACP messages.
     */
    sessionId: SessionId;
    /**
     * The parent's human-readable display title for this child. It need not be unique.
     *
     * Omitted means unchanged. `null` clears it. If unset, the Client chooses
     * a fallback presentation.
     */
    title?: string | null;
    /**
     * The parent's human-readable description of the child's role or purpose.
     *
     * Omitted means unchanged. `null` clears it. If unset, the Client chooses
     * a fallback presentation. This is current display metadata, not the
     * history of instructions sent to the child.
     */
    description?: string | null;
    /**
     * Client-initiated session mutations permitted for this subagent session.
     *
     * Omitted means unchanged. `null` clears the capability set and disables
     * child mutations. If never supplied, no session mutations are permitted.
     * Read-only operations retain their normal protocol semantics and capability
     * requirements. A concrete object replaces the whole capability set.
     */
    capabilities?: SubagentSessionCapabilities | null;
    /**
     * Current state snapshot for the child session.
     *
     * Omitted means unchanged. `null` clears the current activity without
     * asserting idle or sending an `unknown` snapshot. A concrete state
     * replaces the previous state object wholesale. If never supplied, the
     * current activity is unset/unconfirmed.
     */
    state?: StateUpdate | null;
    /**
     * The child's working directory. Must be an absolute path.
     *
     * Optional and nullable. Omitted means unchanged. `null` clears the
     * reported value. While unset, the child inherits its immediate parent's
     * effective working directory. Clients use this value for the child's
     * root set and as the default terminal working directory.
     */
    cwd?: string | null;
    /**
     * Additional workspace roots for the child. Each path must be absolute.
     *
     * Optional and nullable. Omitted means unchanged. `null` clears the
     * reported value. While unset, the child inherits its immediate parent's
     * effective additional directories, independently of `cwd`. A concrete
     * array replaces the whole list. `[]` reports no additional directories.
     * Clients use these values for the child's root set.
     */
    additionalDirectories?: string[] | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     * Omitted means unchanged. `null` removes the metadata.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Client-initiated session mutations permitted for a specific subagent session.
 *
 * A mutation requires an explicit per-child capability. Support for the method
 * on ordinary sessions does not grant support on a child.
 */
export interface SubagentSessionCapabilities {
    /**
     * Permits the client to cancel this child's current work without ending
     * the session. Omitted or `null` means unsupported. An object (including
     * `{}`) means supported.
     */
    cancel?: SessionCancelCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capability to cancel work in a subagent session without ending that session.
 *
 * Supplying `{}` advertises support. An omitted or `null` `cancel` does not.
 */
export interface SessionCancelCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * Foreground work is in progress.
 */
export interface RunningStateUpdate {
    /**
     * The _meta property is reserved by ACP for additional metadata.
     * Implementations MUST NOT make assumptions about values at these keys.
     * Optional. Omitted and `null` mean no metadata for this state snapshot.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Details of a failure that ended a child's foreground work.
 */
export interface ErrorStopReason {
    /**
     * The failure, as a JSON-RPC error object.
     *
     * Optional. Omitted or `null` both mean the agent is not reporting failure details.
     * Agents SHOULD include it.
     */
    error?: Error | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * Foreground work is blocked on user action.
 */
export interface RequiresActionStateUpdate {
    /**
     * The _meta property is reserved by ACP for additional metadata.
     * Implementations MUST NOT make assumptions about values at these keys.
     * Optional. Omitted and `null` mean no metadata for this state snapshot.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * The Agent cannot currently determine foreground activity.
 *
 * Report this when activity becomes unobservable, not merely because the child
 * has been quiet. The Client MUST stop presenting the previous state as confirmed
 * current activity, but may retain it as last known. A later state replaces this
 * snapshot normally.
 *
 * This is not a task outcome or session closure. It does not cancel work, resolve
 * pending requests, or revoke capabilities. Capabilities are updated separately.
 */
export interface UnknownStateUpdate {
    /**
     * The _meta property is reserved by ACP for additional metadata.
     * Implementations MUST NOT make assumptions about values at these keys.
     * Optional. Omitted and `null` mean no metadata for this state snapshot.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * An upsert for an inter-session message.
 */
export interface SessionMessage {
    /**
     * Identifier of this message within the enclosing session's transcript.
     */
    messageId: MessageId;
    /**
     * The sending session.
     *
     * Omitted leaves the stored value unchanged. `null` clears it. A value replaces it.
     */
    senderSessionId?: SessionId | null;
    /**
     * The receiving session.
     *
     * Omitted leaves the stored value unchanged. `null` clears it. A value replaces it.
     */
    recipientSessionId?: SessionId | null;
    /**
     * On an incoming view, the `messageId` of the same message's outgoing view in the
     * sender's transcript.
     *
     * Omitted leaves the stored value unchanged. `null` clears it. A value replaces it. It can arrive
     * after the message starts streaming.
     */
    senderMessageId?: MessageId | null;
    /**
     * On an outgoing view, the `messageId` of the same message's incoming view in the
     * recipient's transcript.
     *
     * Omitted leaves the stored value unchanged. `null` clears it. A value replaces it. It can arrive
     * after the message starts streaming.
     */
    recipientMessageId?: MessageId | null;
    /**
     * Omitted leaves content unchanged. `null` or `[]` clears it.
     * A non-empty array replaces all content.
     */
    content?: ContentBlock[] | null;
    /**
     * Omitted leaves metadata unchanged. `null` removes it.
     *
     * Implementations MUST NOT make assumptions about values in `_meta`.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * A streamed content block of an inter-session message.
 *
 * A chunk carries only content. The message's participants and references come from
 * `session_message` upserts, which can arrive before, between, or after its chunks.
 */
export interface SessionMessageChunk {
    /**
     * Identifier of this message within the enclosing session's transcript.
     */
    messageId: MessageId;
    /**
     * A single content block appended to the message.
     */
    content: ContentBlock;
    /**
     * Optional and nullable chunk-scoped metadata. Omitted or `null` means none.
     *
     * Implementations MUST NOT make assumptions about values in `_meta`.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Notification sent by the agent when a URL-based elicitation is complete.
 */
export interface CompleteElicitationNotification {
    /**
     * The ID of the elicitation that completed.
     */
    elicitationId: ElicitationId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Notification sent by the agent when its authentication status changes.
 *
 * Carries the same fields as the `auth/status` response. Agents that advertise the
 * `auth.status` capability MAY send it at any time after `initialize`, and SHOULD only
 * send it when the reported status differs from the last one sent on the connection.
 */
export interface AuthStatusUpdateNotification {
    /**
     * Whether the agent can start sessions without the user signing in first.
     *
     * This is the only field clients should act on. Clients MUST treat values they
     * do not recognize as `unknown`.
     */
    state: AuthState;
    /**
     * The accounts the agent has configured, for display.
     *
     * Optional. Omitted and empty are equivalent and mean no accounts are reported.
     * Agents that hold credentials for several providers or accounts SHOULD list each
     * of them and mark the ones in effect with `active`.
     */
    accounts?: AuthAccount[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Allows either side to send an arbitrary notification that is not part of the ACP spec.
 * Extension notifications provide a way to send one-way messages for custom functionality
 * while maintaining protocol compatibility.
 *
 * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
 */
export interface ExtNotification {
    [k: string]: unknown;
}
/**
 * A JSON-RPC request object.
 */
export interface ClientRequest {
    /**
     * The request id used to correlate the matching response.
     */
    id: RequestId;
    /**
     * The method name to invoke.
     */
    method: string;
    /**
     * Method-specific request parameters.
     */
    params?: (InitializeRequest | AuthenticateRequest | ListProvidersRequest | SetProviderRequest | DisableProviderRequest | LogoutRequest | AuthStatusRequest | NewSessionRequest | LoadSessionRequest | ListSessionsRequest | DeleteSessionRequest | ForkSessionRequest | ArchiveSessionRequest | UnarchiveSessionRequest | SessionStatusRequest | SetSessionTitleRequest | ResumeSessionRequest | CloseSessionRequest | SetSessionModeRequest | SetSessionConfigOptionRequest | PromptRequest | ExtRequest) | null;
    [k: string]: unknown;
}
/**
 * Request parameters for the initialize method.
 *
 * Sent by the client to establish connection and negotiate capabilities.
 *
 * See protocol docs: [Initialization](https://agentclientprotocol.com/protocol/v1/draft/initialization)
 */
export interface InitializeRequest {
    /**
     * The latest protocol version supported by the client.
     */
    protocolVersion: ProtocolVersion;
    /**
     * Capabilities supported by the client.
     */
    clientCapabilities?: ClientCapabilities;
    /**
     * Information about the Client name and version sent to the Agent.
     *
     * Note: in future versions of the protocol, this will be required.
     */
    clientInfo?: Implementation | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities supported by the client.
 *
 * Advertised during initialization to inform the agent about
 * available features and methods.
 *
 * See protocol docs: [Client Capabilities](https://agentclientprotocol.com/protocol/v1/draft/initialization#client-capabilities)
 */
export interface ClientCapabilities {
    /**
     * File system capabilities supported by the client.
     * Determines which file operations the agent can request.
     */
    fs?: FileSystemCapabilities;
    /**
     * Whether the Client support all `terminal/*` methods.
     */
    terminal?: boolean;
    /**
     * Session-related capabilities supported by the client.
     *
     * Optional. Omitted or `null` both mean the client does not advertise any
     * session-related extensions.
     */
    session?: ClientSessionCapabilities | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the client understands exposed subagent sessions.
     *
     * Optional and nullable. Omitted or `null` both mean the client does not
     * advertise support.
     * Supplying `{}` means the client understands child associations, work-state
     * snapshots, session-directed messages, and restricted-session semantics.
     */
    subagents?: SubagentCapabilities | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Whether the client supports `plan_update` and `plan_removed` session updates.
     *
     * Optional. Omitted or `null` both mean the client does not advertise support.
     * Supplying `{}` means the client can receive both update types.
     */
    plan?: PlanCapabilities | null;
    /**
     * Authentication capabilities supported by the client.
     * Determines which authentication method types the agent may include
     * in its `InitializeResponse`.
     */
    auth?: AuthCapabilities;
    /**
     * Elicitation capabilities supported by the client.
     * Determines which elicitation modes the agent may use.
     *
     * Optional. Omitted or `null` both mean the client does not advertise
     * elicitation support.
     */
    elicitation?: ElicitationCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * File system capabilities that a client may support.
 *
 * See protocol docs: [FileSystem](https://agentclientprotocol.com/protocol/v1/draft/initialization#filesystem)
 */
export interface FileSystemCapabilities {
    /**
     * Whether the Client supports `fs/read_text_file` requests.
     */
    readTextFile?: boolean;
    /**
     * Whether the Client supports `fs/write_text_file` requests.
     */
    writeTextFile?: boolean;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Session-related capabilities supported by the client.
 */
export interface ClientSessionCapabilities {
    /**
     * Support for ID-addressed context compaction updates. Omitted or `null`
     * means unsupported. `{}` advertises the complete compaction contract.
     */
    compaction?: CompactionCapabilities | null;
    /**
     * Config option capabilities supported by the client.
     *
     * Omitted or `null` both mean the client does not advertise support for any
     * config option extensions.
     */
    configOptions?: SessionConfigOptionsCapabilities | null;
    /**
     * Support for live user-facing `notice` session updates.
     *
     * Optional. Omitted or `null` both mean the client does not advertise support.
     * Supplying `{}` means the client can present notices to the user.
     */
    notices?: NoticeCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Client support for ID-addressed context compaction updates.
 */
export interface CompactionCapabilities {
    [k: string]: unknown;
}
/**
 * Session configuration option capabilities supported by the client.
 */
export interface SessionConfigOptionsCapabilities {
    /**
     * Whether the client supports boolean session configuration options.
     *
     * Optional. Omitted or `null` both mean the client does not advertise support.
     * Supplying `{}` means agents may include `type: "boolean"` entries in
     * `configOptions`, and the client may send `session/set_config_option`
     * requests with `type: "boolean"` and a boolean `value`.
     */
    boolean?: BooleanConfigOptionCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Capabilities for boolean session configuration options.
 *
 * Supplying `{}` means the client supports boolean session configuration options.
 */
export interface BooleanConfigOptionCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Client support for presenting live notices to the user.
 */
export interface NoticeCapabilities {
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capability marker for exposing reusable child sessions as restricted ACP sessions.
 *
 * Supplying `{}` advertises support for child association and state updates,
 * session-directed messages, and restricted-session semantics. The client
 * must advertise this capability before the agent sends subagent updates or
 * session-directed messages.
 */
export interface SubagentCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Capabilities for receiving `plan_update` and `plan_removed` session updates.
 */
export interface PlanCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Authentication capabilities supported by the client.
 *
 * Advertised during initialization to inform the agent which authentication
 * method types the client can handle. This governs opt-in types that require
 * additional client-side support.
 */
export interface AuthCapabilities {
    /**
     * Whether the client supports `terminal` authentication methods.
     *
     * The client should set this to `true` only when it can reproduce the
     * configured agent invocation in an interactive terminal. When `true`, the
     * agent may include `terminal` entries in its authentication methods.
     */
    terminal?: boolean;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Elicitation capabilities supported by the client.
 */
export interface ElicitationCapabilities {
    /**
     * Whether the client supports form-based elicitation.
     *
     * Optional. Omitted and `null` are equivalent and mean form support is not advertised.
     * Supplying `{}` explicitly advertises form support.
     */
    form?: ElicitationFormCapabilities | null;
    /**
     * Whether the client supports URL-based elicitation.
     *
     * Optional. Omitted or `null` both mean the client does not advertise support.
     * Supplying `{}` means the client supports URL-based elicitation.
     */
    url?: ElicitationUrlCapabilities | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Form-based elicitation capabilities.
 *
 * Supplying `{}` means the client supports form-based elicitation.
 */
export interface ElicitationFormCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * URL-based elicitation capabilities.
 *
 * Supplying `{}` means the client supports URL-based elicitation.
 */
export interface ElicitationUrlCapabilities {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * Optional. Omitted and `null` are equivalent and mean no metadata.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for the authenticate method.
 *
 * Specifies which authentication method to use.
 */
export interface AuthenticateRequest {
    /**
     * The ID of the authentication method to use.
     * Must be one of the methods advertised in the initialize response.
     */
    methodId: AuthMethodId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for `providers/list`.
 */
export interface ListProvidersRequest {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for `providers/set`.
 *
 * Replaces the full configuration for one provider ID.
 */
export interface SetProviderRequest {
    /**
     * Provider ID to configure.
     */
    providerId: ProviderId;
    /**
     * Protocol type for this provider.
     */
    apiType: LlmProtocol;
    /**
     * Base URL for requests sent through this provider.
     */
    baseUrl: string;
    /**
     * Full headers map for this provider.
     * May include authorization, routing, or other integration-specific headers.
     */
    headers?: {
        [k: string]: string;
    };
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for `providers/disable`.
 */
export interface DisableProviderRequest {
    /**
     * Provider ID to disable.
     */
    providerId: ProviderId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for the logout method.
 *
 * Terminates the current authenticated session.
 */
export interface LogoutRequest {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for the `auth/status` method.
 *
 * Queries the agent's current authentication state without changing it.
 *
 * Agents MUST NOT reject it with `auth_required` (`-32000`), since Clients call it to learn
 * whether authentication is required.
 */
export interface AuthStatusRequest {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for creating a new session.
 *
 * See protocol docs: [Creating a Session](https://agentclientprotocol.com/protocol/v1/draft/session-setup#creating-a-session)
 */
export interface NewSessionRequest {
    /**
     * The working directory for this session. Must be an absolute path.
     */
    cwd: string;
    /**
     * Additional workspace roots for this session. Each path must be absolute.
     *
     * These expand the session's filesystem scope without changing `cwd`, which
     * remains the base for relative paths. When omitted or empty, no
     * additional roots are activated for the new session.
     */
    additionalDirectories?: string[];
    /**
     * List of MCP (Model Context Protocol) servers the agent should connect to.
     */
    mcpServers: McpServer[];
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * System-level instructions for the new session.
     *
     * Optional. Omitted and `null` are equivalent and mean the Agent uses its
     * own default instructions. Clients MUST only send this when the Agent
     * advertises `sessionCapabilities.systemPrompt`.
     */
    systemPrompt?: SystemPrompt | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * HTTP transport configuration for MCP.
 */
export interface McpServerHttp {
    /**
     * Human-readable name identifying this MCP server.
     */
    name: string;
    /**
     * URL to the MCP server.
     */
    url: string;
    /**
     * HTTP headers to set when making requests to the MCP server.
     */
    headers: HttpHeader[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * An HTTP header to set when making requests to the MCP server.
 */
export interface HttpHeader {
    /**
     * The name of the HTTP header.
     */
    name: string;
    /**
     * The value to set for the HTTP header.
     */
    value: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * SSE transport configuration for MCP.
 */
export interface McpServerSse {
    /**
     * Human-readable name identifying this MCP server.
     */
    name: string;
    /**
     * URL to the MCP server.
     */
    url: string;
    /**
     * HTTP headers to set when making requests to the MCP server.
     */
    headers: HttpHeader[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * ACP transport configuration for MCP.
 *
 * The MCP server is provided by an ACP component and communicates over the ACP channel
 * using `mcp/message`.
 */
export interface McpServerAcp {
    /**
     * Human-readable name identifying this MCP server.
     */
    name: string;
    /**
     * Unique identifier for this MCP server, generated by the component providing it.
     *
     * Providers MUST NOT reuse an ID for multiple ACP-transport MCP servers that are visible
     * on the same ACP connection.
     */
    serverId: McpServerAcpId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Stdio transport configuration for MCP.
 */
export interface McpServerStdio {
    /**
     * Human-readable name identifying this MCP server.
     */
    name: string;
    /**
     * Absolute path to the MCP server executable.
     */
    command: string;
    /**
     * Command-line arguments to pass to the MCP server.
     */
    args: string[];
    /**
     * Environment variables to set when launching the MCP server.
     */
    env: EnvVariable[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Client-provided system-level instructions for a session.
 *
 * Clients MUST only send this when the Agent advertises
 * `sessionCapabilities.systemPrompt`. Agents that cannot apply it, for example
 * because of an unadvertised mode or an unsupported content block type, MUST
 * return an error instead of creating, loading, resuming, or forking the
 * session.
 */
export interface SystemPrompt {
    /**
     * How the Agent combines `content` with its own instructions.
     *
     * Required. Agents MUST return an error for a mode they do not support rather than
     * treating it as `append` or `override`.
     */
    mode: SystemPromptMode;
    /**
     * The system prompt content.
     *
     * Agents advertising the capability MUST accept `text` content blocks.
     * Clients MUST NOT send other content block types until a future
     * capability allows them, and Agents MUST return an error for content
     * blocks they do not support.
     *
     * Clients MUST NOT send an empty array. Agents MAY reject one with
     * `-32602` without creating, loading, resuming, or forking the session.
     */
    content: ContentBlock[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for loading an existing session.
 *
 * Only available if the Agent supports the `loadSession` capability.
 *
 * See protocol docs: [Loading Sessions](https://agentclientprotocol.com/protocol/v1/draft/session-setup#loading-sessions)
 */
export interface LoadSessionRequest {
    /**
     * List of MCP servers to connect to for this session.
     */
    mcpServers: McpServer[];
    /**
     * The working directory for this session. Must be an absolute path.
     */
    cwd: string;
    /**
     * Additional workspace roots to activate for this session. Each path must be absolute.
     *
     * When omitted or empty, no additional roots are activated. When non-empty,
     * this is the complete resulting additional-root list for the loaded
     * session. It may differ from any previously used or reported list as long as
     * the request `cwd` matches the session's `cwd`.
     */
    additionalDirectories?: string[];
    /**
     * The ID of the session to load.
     */
    sessionId: SessionId;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * System-level instructions for the loaded session.
     *
     * Optional. Omitted and `null` are equivalent. The Agent may then keep a
     * system prompt it stored with the session or use its default instructions.
     * Clients MUST only send this when the Agent advertises
     * `sessionCapabilities.systemPrompt`, and SHOULD send the same value they used
     * when the session was created.
     */
    systemPrompt?: SystemPrompt | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for listing existing sessions.
 *
 * Only available if the Agent supports the `sessionCapabilities.list` capability.
 */
export interface ListSessionsRequest {
    /**
     * Filter sessions by working directory. Must be an absolute path.
     */
    cwd?: string | null;
    /**
     * Opaque cursor token from a previous response's nextCursor field for cursor-based pagination
     */
    cursor?: string | null;
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * Filter sessions by archive state.
     *
     * Optional. Omitted and `null` are equivalent and mean `exclude`. Only send this when
     * the Agent advertises the `sessionCapabilities.archive` capability. The filter combines with `cwd` and
     * applies before pagination. Clients keep the same value when following `nextCursor`.
     */
    archived?: SessionArchiveFilter | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for deleting an existing session from `session/list`.
 *
 * Only available if the Agent supports the `sessionCapabilities.delete` capability.
 */
export interface DeleteSessionRequest {
    /**
     * The ID of the session to delete.
     */
    sessionId: SessionId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for forking an existing session.
 *
 * Creates a new session based on the context of an existing one, allowing
 * operations like generating summaries without affecting the original session's history.
 *
 * Only available if the Agent supports the `session.fork` capability.
 */
export interface ForkSessionRequest {
    /**
     * The ID of the session to fork.
     */
    sessionId: SessionId;
    /**
     * The working directory for this session. Must be an absolute path.
     */
    cwd: string;
    /**
     * Additional workspace roots to activate for this session. Each path must be absolute.
     *
     * When omitted or empty, no additional roots are activated. When non-empty,
     * this is the complete resulting additional-root list for the forked
     * session.
     */
    additionalDirectories?: string[];
    /**
     * List of MCP servers to connect to for this session.
     */
    mcpServers?: McpServer[];
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * System-level instructions for the forked session.
     *
     * Optional. Omitted and `null` are equivalent. The Agent may then keep a
     * system prompt it stored with the source session or use its default
     * instructions. Clients MUST only send this when the Agent advertises
     * `sessionCapabilities.systemPrompt`, and SHOULD send the same value they used
     * for the source session.
     */
    systemPrompt?: SystemPrompt | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for archiving a session.
 *
 * Only available if the Agent supports the `sessionCapabilities.archive` capability.
 *
 * Archiving hides the session from default `session/list` results. It keeps the session ID
 * and saved history. If the session is active, the Agent MUST cancel any ongoing work and
 * free the session's resources as if `session/close` had been called, then archive it.
 * Archiving an archived session succeeds. A session that does not exist gets `-32002`.
 */
export interface ArchiveSessionRequest {
    /**
     * The ID of the session to archive.
     */
    sessionId: SessionId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for unarchiving a session.
 *
 * Only available if the Agent supports the `sessionCapabilities.archive` capability.
 *
 * Unarchiving returns the session to default `session/list` results with the same ID and
 * saved history. It never loads or resumes the session. Clients that want to continue an
 * archived session SHOULD unarchive it before calling `session/load` or `session/resume`.
 * Unarchiving a session that is not archived succeeds. A session that does not exist
 * gets `-32002`.
 */
export interface UnarchiveSessionRequest {
    /**
     * The ID of the session to unarchive.
     */
    sessionId: SessionId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for checking the status of a session.
 *
 * Only available if the Agent supports the `sessionCapabilities.status` capability.
 *
 * `session/status` MUST NOT have side effects. The Agent does not load, resume, create,
 * close, or change the session, and does not attach the requesting connection to it.
 * A session the Agent does not know gets `-32002` with the requested `sessionId` in `data`.
 */
export interface SessionStatusRequest {
    /**
     * The ID of the session to check.
     */
    sessionId: SessionId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Request parameters for setting the title of a session.
 *
 * Only available if the Agent supports the `sessionCapabilities.title` capability.
 *
 * The session does not need to be active on the connection. Any session the Agent would
 * return from `session/list` can be retitled. A session that does not exist gets `-32002`.
 *
 * The Agent responds only after it has stored the title. After a successful response, the
 * Agent SHOULD NOT replace the title with one it generates automatically.
 */
export interface SetSessionTitleRequest {
    /**
     * The ID of the session to retitle.
     */
    sessionId: SessionId;
    /**
     * The new title for the session.
     *
     * Required and non-null. Omission and explicit `null` are both invalid. The Agent MAY
     * normalize the title before storing it, for example by trimming whitespace or
     * truncating it. The Agent rejects a title that fails its validation, including one
     * that is empty after normalization, with `-32602`.
     */
    title: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for resuming an existing session.
 *
 * Resumes an existing session without returning previous messages (unlike `session/load`).
 * This is useful for agents that can resume sessions but don't implement full session loading.
 *
 * Only available if the Agent supports the `sessionCapabilities.resume` capability.
 */
export interface ResumeSessionRequest {
    /**
     * The ID of the session to resume.
     */
    sessionId: SessionId;
    /**
     * The working directory for this session. Must be an absolute path.
     */
    cwd: string;
    /**
     * Additional workspace roots to activate for this session. Each path must be absolute.
     *
     * When omitted or empty, no additional roots are activated. When non-empty,
     * this is the complete resulting additional-root list for the resumed
     * session. It may differ from any previously used or reported list as long as
     * the request `cwd` matches the session's `cwd`.
     */
    additionalDirectories?: string[];
    /**
     * List of MCP servers to connect to for this session.
     */
    mcpServers?: McpServer[];
    /**
     * **UNSTABLE**
     *
     * This capability is not part of the spec yet, and may be removed or changed at any point.
     *
     * System-level instructions for the resumed session.
     *
     * Optional. Omitted and `null` are equivalent. The Agent may then keep a
     * system prompt it stored with the session or use its default instructions.
     * Clients MUST only send this when the Agent advertises
     * `sessionCapabilities.systemPrompt`, and SHOULD send the same value they used
     * when the session was created.
     */
    systemPrompt?: SystemPrompt | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for closing an active session.
 *
 * If supported, the agent **must** cancel any ongoing work related to the session
 * (treat it as if `session/cancel` was called) and then free up any resources
 * associated with the session.
 *
 * Only available if the Agent supports the `sessionCapabilities.close` capability.
 */
export interface CloseSessionRequest {
    /**
     * The ID of the session to close.
     */
    sessionId: SessionId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for setting a session mode.
 */
export interface SetSessionModeRequest {
    /**
     * The ID of the session to set the mode for.
     */
    sessionId: SessionId;
    /**
     * The ID of the mode to set.
     */
    modeId: SessionModeId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Request parameters for sending a user prompt to the agent.
 *
 * Contains the user's message and any additional context.
 *
 * See protocol docs: [User Message](https://agentclientprotocol.com/protocol/v1/draft/prompt-turn#1-user-message)
 */
export interface PromptRequest {
    /**
     * The ID of the session to send this user message to
     */
    sessionId: SessionId;
    /**
     * The blocks of content that compose the user's message.
     *
     * As a baseline, the Agent MUST support `text` and `resource_link` content blocks,
     * while other variants are optionally enabled via `PromptCapabilities`.
     *
     * The Client MUST adapt its interface according to `PromptCapabilities`.
     *
     * The client MAY include referenced pieces of context as either
     * `resource` or `resource_link` content blocks.
     *
     * When available, `resource` is preferred
     * as it avoids extra round-trips and allows the message to include
     * pieces of context from sources the agent may not have access to.
     */
    prompt: ContentBlock[];
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to `fs/write_text_file`
 */
export interface WriteTextFileResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response containing the contents of a text file.
 */
export interface ReadTextFileResponse {
    /**
     * Content payload returned by this response.
     */
    content: string;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to a permission request.
 */
export interface RequestPermissionResponse {
    /**
     * The user's decision on the permission request.
     */
    outcome: RequestPermissionOutcome;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * The user selected one of the provided options.
 */
export interface SelectedPermissionOutcome {
    /**
     * The ID of the option the user selected.
     */
    optionId: PermissionOptionId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response containing the ID of the created terminal.
 */
export interface CreateTerminalResponse {
    /**
     * The unique identifier for the created terminal.
     */
    terminalId: TerminalId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response containing the terminal output and exit status.
 */
export interface TerminalOutputResponse {
    /**
     * The terminal output captured so far.
     */
    output: string;
    /**
     * Whether the output was truncated due to byte limits.
     */
    truncated: boolean;
    /**
     * Exit status if the command has completed.
     */
    exitStatus?: TerminalExitStatus | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Exit status of a terminal command.
 */
export interface TerminalExitStatus {
    /**
     * The process exit code (may be null if terminated by signal).
     */
    exitCode?: number | null;
    /**
     * The signal that terminated the process (may be null if exited normally).
     */
    signal?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to terminal/release method
 */
export interface ReleaseTerminalResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response containing the exit status of a terminal command.
 */
export interface WaitForTerminalExitResponse {
    /**
     * The process exit code (may be null if terminated by signal).
     */
    exitCode?: number | null;
    /**
     * The signal that terminated the process (may be null if exited normally).
     */
    signal?: string | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Response to `terminal/kill` method
 */
export interface KillTerminalResponse {
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * The user accepted the elicitation and provided content.
 */
export interface ElicitationAcceptAction {
    /**
     * The user-provided content, if any, as an object matching the requested schema.
     */
    content?: {
        [k: string]: ElicitationContentValue;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * An inner MCP error, distinct from an outer ACP binding or runtime error.
 *
 * `code` and `message` are required and non-null. `data` is optional.
 * Explicit `null` is preserved separately from an omitted key.
 */
export interface McpError {
    /**
     * Inner MCP error code. Never an ACP error code.
     */
    code: number;
    /**
     * Inner MCP error message.
     */
    message: string;
    /**
     * Optional error data. Explicit null is retained.
     */
    data?: {
        [k: string]: unknown;
    };
    [k: string]: unknown;
}
/**
 * A JSON-RPC notification object.
 */
export interface ClientNotification {
    /**
     * The notification method name.
     */
    method: string;
    /**
     * Method-specific notification parameters.
     */
    params?: (CancelNotification | MessageMcpNotification | ExtNotification) | null;
    [k: string]: unknown;
}
/**
 * Notification to cancel ongoing operations for a session.
 *
 * See protocol docs: [Cancellation](https://agentclientprotocol.com/protocol/v1/draft/prompt-turn#cancellation)
 */
export interface CancelNotification {
    /**
     * The ID of the session to cancel operations for.
     */
    sessionId: SessionId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Notification parameters for `mcp/message`.
 *
 * Sent by the provider to the consumer for an active request (including
 * subscription acknowledgements and updates). The outer envelope has no `id`.
 */
export interface MessageMcpNotification {
    /**
     * The declared ACP MCP server handling the associated request.
     */
    serverId: McpServerAcpId;
    /**
     * The identifier of the active inner MCP request.
     */
    requestId: McpRequestId;
    /**
     * The inner MCP method name.
     */
    method: string;
    /**
     * Optional inner MCP params.
     *
     * If omitted or set to `null`, the inner MCP message has no params.
     */
    params?: {
        [k: string]: unknown;
    } | null;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * Notification to cancel an ongoing request.
 *
 * See protocol docs: [Cancellation](https://agentclientprotocol.com/protocol/v1/draft/cancellation)
 */
export interface CancelRequestNotification {
    /**
     * The ID of the request to cancel.
     */
    requestId: RequestId;
    /**
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * A JSON-RPC request object.
 */
export interface ProxyRequest {
    /**
     * The request id used to correlate the matching response.
     */
    id: RequestId;
    /**
     * The method name to invoke.
     */
    method: string;
    /**
     * Method-specific request parameters.
     */
    params?: (InitializeProxyRequest | ProxySuccessorRequest) | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Parameters of a `proxy/successor` request.
 *
 * A proxy sends it to forward a message to its successor, and the conductor sends it to
 * deliver a message from the successor to the proxy. The envelope wraps one request: `method`
 * and `params` are the wrapped request's method and params.
 *
 * The result or error of the wrapped request is returned unchanged, as the same JSON value,
 * as the result or error of the `proxy/successor` request. Errors the conductor returns
 * itself, for example because the successor has exited, are not wrapped results.
 *
 * To cancel it, the sender sends `$/cancel_request` with the ID of this `proxy/successor`
 * request on the same connection. Cancellation is never forwarded to another hop.
 *
 * See the [Proxy Chains RFD](https://agentclientprotocol.com/rfds/proxy-chains).
 */
export interface ProxySuccessorRequest {
    /**
     * Method name of the wrapped request.
     */
    method: string;
    /**
     * Params of the wrapped request, forwarded unchanged.
     *
     * Optional. Omitted and `null` are equivalent and mean the wrapped request has no params.
     * When present, it MUST be a JSON object or array, as JSON-RPC requires.
     * The wrapped request's own `_meta` stays inside these params.
     */
    params?: {
        [k: string]: unknown;
    };
    /**
     * Metadata for the `proxy/successor` envelope itself, separate from the wrapped
     * message's `_meta`. It is hop-local: the conductor does not copy it into the message
     * it unwraps.
     *
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Result of a `proxy/successor` request: the wrapped request's result, forwarded unchanged.
 */
export interface ProxySuccessorResponse {
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * A JSON-RPC notification object.
 */
export interface ProxyNotification {
    /**
     * The notification method name.
     */
    method: string;
    /**
     * Method-specific notification parameters.
     */
    params?: ProxySuccessorNotification | null;
    [k: string]: unknown;
}
/**
 * **UNSTABLE**
 *
 * This capability is not part of the spec yet, and may be removed or changed at any point.
 *
 * Parameters of a `proxy/successor` notification.
 *
 * A proxy sends it to forward a message to its successor, and the conductor sends it to
 * deliver a message from the successor to the proxy. The envelope wraps one notification: `method`
 * and `params` are the wrapped notification's method and params.
 *
 * See the [Proxy Chains RFD](https://agentclientprotocol.com/rfds/proxy-chains).
 */
export interface ProxySuccessorNotification {
    /**
     * Method name of the wrapped notification.
     */
    method: string;
    /**
     * Params of the wrapped notification, forwarded unchanged.
     *
     * Optional. Omitted and `null` are equivalent and mean the wrapped notification has no params.
     * When present, it MUST be a JSON object or array, as JSON-RPC requires.
     * The wrapped notification's own `_meta` stays inside these params.
     */
    params?: {
        [k: string]: unknown;
    };
    /**
     * Metadata for the `proxy/successor` envelope itself, separate from the wrapped
     * message's `_meta`. It is hop-local: the conductor does not copy it into the message
     * it unwraps.
     *
     * The _meta property is reserved by ACP to allow clients and agents to attach additional
     * metadata to their interactions. Implementations MUST NOT make assumptions about values at
     * these keys.
     *
     * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/draft/extensibility)
     */
    _meta?: {
        [k: string]: unknown;
    } | null;
    [k: string]: unknown;
}
