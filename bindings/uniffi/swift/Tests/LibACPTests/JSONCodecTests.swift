import Foundation
import XCTest
@testable import LibACP

/// libacp's JSON path (JSONCodec.swift) reads and writes what Foundation's
/// JSONDecoder and JSONEncoder (`.sortedKeys`, `.withoutEscapingSlashes`)
/// did, and fails with the same errors.
final class JSONCodecTests: XCTestCase {
    private static let foundation: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    private func foundationText<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try Self.foundation.encode(value), as: UTF8.self)
    }

    func testStringsWithEveryKindOfEscapeRoundTripAsFoundationWritesThem() throws {
        let texts = [
            "", "plain", #""q" \ "#, "a/b", "line\nbreak\ttab\r\u{8}\u{c}", "\u{1}\u{1f}\u{7f}",
            "é ü 漢字 😀", String(repeating: #""q" \ "#, count: 5000),
        ]
        for text in texts {
            let value = JSONValue.object(["text": .string(text), "k": ["n": 1, "x": 1.5, "t": true, "z": nil]])
            XCTAssertEqual(value.jsonText, try foundationText(value), text)
            XCTAssertEqual(try JSONValue.parse(value.jsonText), value, text)
            XCTAssertEqual(try JSONValue.parse(try foundationText(value)), value, text)
        }
    }

    func testEscapesReadAsJSONDecoderReadsThem() throws {
        let text = #"["\u00e9\ud83d\ude00\/\"\\\b\f\n\r\t\u0041", "x", 1.0, -0, 1e2, 2.5, -12345678901234567890, 9223372036854775807]"#
        let mine = try JSONValue.parse(text)
        let theirs = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        XCTAssertEqual(mine[0], theirs[0])
        XCTAssertEqual(mine[0], "é😀/\"\\\u{8}\u{c}\n\r\tA")
        XCTAssertEqual(mine[2], 1)
        XCTAssertEqual(mine[4], 100)
        XCTAssertEqual(mine[5], 2.5)
        XCTAssertEqual(mine[6]?.doubleValue, -12345678901234567890)
        XCTAssertEqual(mine[7], .int(Int64.max))
    }

    func testModelsEncodeToFoundationsText() throws {
        let values: [any Encodable] = [
            SessionNotification(sessionId: "s1", update: .agentMessageChunk(ContentChunk(content: .text(TextContent(text: "hi \"there\""))))),
            PromptRequest(sessionId: "s", prompt: [.text(TextContent(text: "a")), .resource(EmbeddedResource(resource: ["uri": "file:///x", "text": "y"]))]),
            InitializeRequest(protocolVersion: 1, clientCapabilities: ClientCapabilities(fs: FileSystemCapabilities(readTextFile: true, writeTextFile: true))),
            WriteTextFileRequest(sessionId: "s", path: "/a/b", content: "x\ny", meta: ["z": 1, "a": [1, 2.25]], extra: ["Zed": "upper", "_x": "under"]),
        ]
        for value in values {
            XCTAssertEqual(try JSON.encode(value), try foundationText(value))
        }
    }

    func testDecodingErrorsNameTheMemberAsBefore() {
        func detail<T: Decodable>(_ type: T.Type, _ text: String) -> String {
            do {
                _ = try JSON.decode(T.self, text, params: true)
                return "decoded"
            } catch let e as AcpError {
                guard e.code == -32602, case .string(let detail)? = e.data else { return "\(e)" }
                return detail
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(detail(ReadTextFileRequest.self, #"{"path":"/a"}"#), "ReadTextFileRequest: missing /sessionId")
        XCTAssertEqual(detail(ReadTextFileRequest.self, #"{"sessionId":"s","path":3}"#), "ReadTextFileRequest: /path is not String")
        XCTAssertEqual(detail(ReadTextFileRequest.self, #"{"sessionId":"s","path":null}"#), "ReadTextFileRequest: /path is null, String expected")
        XCTAssertEqual(detail(ReadTextFileRequest.self, #"{"sessionId":"s","path":"/a","line":1.5}"#).hasPrefix("ReadTextFileRequest: /line: "), true)
        XCTAssertEqual(detail(PromptRequest.self, #"{"sessionId":"s","prompt":[{"type":"text"}]}"#), "PromptRequest: missing /prompt/0/text")
        XCTAssertTrue(detail(ReadTextFileRequest.self, "{").hasPrefix("ReadTextFileRequest: /: "))
    }

    func testMalformedAndTooDeepTextIsRefused() {
        for text in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "tru", "\"\u{1}\"", "\"abc", "[1] 2", "\"\\x\""] {
            XCTAssertThrowsError(try JSONValue.parse(text), text)
        }
        XCTAssertThrowsError(try JSONValue.parse(#""\ud800""#))
        XCTAssertThrowsError(try JSONValue.parse(String(repeating: "[", count: 100_000)))
        XCTAssertNoThrow(try JSONValue.parse(String(repeating: "[", count: 500) + String(repeating: "]", count: 500)))
    }
}
