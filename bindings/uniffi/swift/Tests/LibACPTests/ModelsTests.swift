import Foundation
import XCTest
@testable import LibACP

/// The generated models (Models.swift, from the ACP v1 schema by
/// scripts/swift/gen_models.py, drift-checked by scripts/test-swift.sh).
final class ModelsTests: XCTestCase {
    private func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ text: String) throws -> T {
        let value = try JSON.decode(T.self, text, params: true)
        let again = try JSON.decode(T.self, try JSON.encode(value), params: true)
        XCTAssertEqual(value, again)
        // Nothing is lost: the re-encoded JSON equals the original.
        XCTAssertEqual(try JSONValue.parse(try JSON.encode(value)), try JSONValue.parse(text))
        return value
    }

    func testTaggedUnionsDecodeByTheirTagAndKeepUnknownVariants() throws {
        let chunk = try roundTrip(SessionUpdate.self, #"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}"#)
        guard case .agentMessageChunk(let c) = chunk, case .text(let t) = c.content else { return XCTFail("\(chunk)") }
        XCTAssertEqual(t.text, "hi")
        XCTAssertTrue(c.extra.isEmpty, "the tag is not kept as an unknown member")

        let future = try roundTrip(SessionUpdate.self, #"{"sessionUpdate":"from_the_future","x":[1,2]}"#)
        guard case .unrecognized(let raw) = future else { return XCTFail("\(future)") }
        XCTAssertEqual(raw["x"], [1, 2])

        let tool = try roundTrip(
            SessionUpdate.self,
            #"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":"read","status":"pending","_meta":{"a":1}}"#)
        guard case .toolCall(let call) = tool else { return XCTFail("\(tool)") }
        XCTAssertEqual(call.toolCallId, "t1")
        XCTAssertEqual(call.kind, .read)
        XCTAssertEqual(call.meta, ["a": 1])
    }

    func testStringEnumsKeepValuesFromNewerPeers() throws {
        let known = try roundTrip(PromptResponse.self, #"{"stopReason":"end_turn"}"#)
        XCTAssertEqual(known.stopReason, .endTurn)
        let newer = try roundTrip(PromptResponse.self, #"{"stopReason":"paused"}"#)
        XCTAssertEqual(newer.stopReason, .unrecognized("paused"))
        // An open enum of the schema (a catch-all string) is an enum too.
        let auth = try roundTrip(AuthStatusResponse.self, #"{"state":"expired","accounts":[{"label":"a"}]}"#)
        XCTAssertEqual(auth.state, .unrecognized("expired"))
        XCTAssertEqual(try roundTrip(AuthStatusResponse.self, #"{"state":"not_required"}"#).state, .notRequired)
    }

    /// A member the schema lets a reader drop when it does not decode
    /// (`x-deserialize-default-on-error`) does not fail its message: it is
    /// `nil`, and kept in `extra` as it came.
    func testAMalformedLenientMemberIsKeptNotFatal() throws {
        let r = try roundTrip(PromptResponse.self, #"{"stopReason":"end_turn","usage":{"x":1}}"#)
        XCTAssertNil(r.usage)
        XCTAssertEqual(r.extra["usage"], ["x": 1])
        let good = try roundTrip(PromptResponse.self, #"{"stopReason":"end_turn","usage":{"totalTokens":3,"inputTokens":1,"outputTokens":2}}"#)
        XCTAssertEqual(good.usage?.totalTokens, 3)
        XCTAssertNil(good.extra["usage"])
    }

    /// A method's result that is one of several objects (`mcp/message`'s
    /// `{"result": ...}` or `{"error": ...}`) is one struct; a `null` result
    /// stays distinct from an absent one.
    func testAnUntaggedResultKeepsNullApartFromAbsent() throws {
        let null = try roundTrip(MessageMcpResponse.self, #"{"result":null}"#)
        XCTAssertEqual(null.result, .null)
        XCTAssertNil(null.error)
        let failed = try roundTrip(MessageMcpResponse.self, #"{"error":{"code":-1,"message":"m","data":null}}"#)
        XCTAssertNil(failed.result)
        XCTAssertEqual(failed.error?.code, -1)
        XCTAssertEqual(failed.error?.data, .null)
    }

    func testUnknownMembersAreKeptAndReencoded() throws {
        let r = try roundTrip(NewSessionRequest.self, #"{"cwd":"/w","mcpServers":[],"vendorThing":{"deep":[true,null]}}"#)
        XCTAssertEqual(r.extra["vendorThing"], ["deep": [true, nil]])
    }

    func testMissingRequiredMembersAreInvalidParamsNamingTheMember() {
        XCTAssertThrowsError(try JSON.decode(PromptRequest.self, #"{"prompt":[]}"#, params: true)) { error in
            guard let e = error as? AcpError, e.code == -32602, case .string(let detail)? = e.data else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(detail.contains("sessionId"), detail)
        }
    }

    func testEveryObjectModelNamesExactlyTheSchemasMembers() throws {
        // The generator is checked for drift; this checks its output against
        // the schema itself, for the types the typed API uses.
        let schema = try JSONValue.parse(
            String(contentsOf: repo.appendingPathComponent("spec/ts-sdk-2.4.0/v1/schema.unstable.json")))
        let models: [String: Set<String>] = [
            "InitializeRequest": InitializeRequest.knownKeys,
            "InitializeResponse": InitializeResponse.knownKeys,
            "NewSessionRequest": NewSessionRequest.knownKeys,
            "PromptRequest": PromptRequest.knownKeys,
            "PromptResponse": PromptResponse.knownKeys,
            "SessionNotification": SessionNotification.knownKeys,
            "RequestPermissionRequest": RequestPermissionRequest.knownKeys,
            "ToolCallUpdate": ToolCallUpdate.knownKeys,
            "ReadTextFileRequest": ReadTextFileRequest.knownKeys,
            "CreateTerminalRequest": CreateTerminalRequest.knownKeys,
            "AgentCapabilities": AgentCapabilities.knownKeys,
            "ClientCapabilities": ClientCapabilities.knownKeys,
            "SessionCapabilities": SessionCapabilities.knownKeys,
            "ForkSessionRequest": ForkSessionRequest.knownKeys,
            "SetProviderRequest": SetProviderRequest.knownKeys,
            "MessageMcpRequest": MessageMcpRequest.knownKeys,
            "AuthStatusResponse": AuthStatusResponse.knownKeys,
        ]
        for (name, keys) in models {
            let properties = schema["$defs"]?[name]?["properties"]?.objectValue ?? [:]
            XCTAssertFalse(properties.isEmpty, name)
            XCTAssertEqual(keys, Set(properties.keys), name)
        }
    }
}
