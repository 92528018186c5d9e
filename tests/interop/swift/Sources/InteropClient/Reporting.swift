import Foundation
import LibACP

// How the checks say what they saw: failures as one readable reason, values
// as JSON text.

/// A check that did not hold; its description is the `FAIL:` reason.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Throws `CheckFailure(message)` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw CheckFailure(message()) }
}

/// A string as JSON text (`null` for none).
func show(_ text: String?) -> String {
    text.map { JSONValue.string($0).jsonText } ?? "null"
}

/// Strings as a JSON array.
func show(_ texts: [String?]) -> String {
    JSONValue.array(texts.map { $0.map(JSONValue.string) ?? .null }).jsonText
}

/// Any Codable value (a model) as compact JSON text.
func show<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "\(value)" }
    return String(decoding: data, as: UTF8.self)
}

extension SessionUpdate {
    /// The variant's name on the wire (its `sessionUpdate` member).
    var kind: String {
        switch self {
        case .userMessageChunk: return "user_message_chunk"
        case .agentMessageChunk: return "agent_message_chunk"
        case .agentThoughtChunk: return "agent_thought_chunk"
        case .toolCall: return "tool_call"
        case .toolCallUpdate: return "tool_call_update"
        case .plan: return "plan"
        case .availableCommandsUpdate: return "available_commands_update"
        case .currentModeUpdate: return "current_mode_update"
        case .configOptionUpdate: return "config_option_update"
        case .sessionInfoUpdate: return "session_info_update"
        case .usageUpdate: return "usage_update"
        case .notice: return "notice"
        case .compactionUpdate: return "compaction_update"
        case .compactionSummaryChunk: return "compaction_summary_chunk"
        case .planUpdate: return "plan_update"
        case .planRemoved: return "plan_removed"
        case .subagentUpdate: return "subagent_update"
        case .sessionMessage: return "session_message"
        case .sessionMessageChunk: return "session_message_chunk"
        case .unrecognized(let raw): return raw["sessionUpdate"]?.stringValue ?? "?"
        }
    }

    /// The text of a message chunk whose content is text; `nil` otherwise.
    var text: String? {
        switch self {
        case .userMessageChunk(let chunk), .agentMessageChunk(let chunk), .agentThoughtChunk(let chunk):
            if case .text(let content) = chunk.content { return content.text }
            return nil
        default:
            return nil
        }
    }

    /// The kind and, for a text chunk, its text: `agent_message_chunk "chunk 0"`.
    var summary: String {
        text.map { "\(kind) \(show($0))" } ?? kind
    }
}

/// A failure as one readable reason.
func explain(_ error: Error) -> String {
    switch error {
    case let failure as CheckFailure:
        return failure.description
    case AcpError.Rpc(let code, let detail, let data):
        return "agent answered error \(code) \(show(detail))" + (data.map { " data \($0)" } ?? "")
    case let error as AcpError:
        // The case and its fields, e.g. Closed(detail: "...").
        return "\(error)"
    default:
        return "\(type(of: error)): \(error)"
    }
}
