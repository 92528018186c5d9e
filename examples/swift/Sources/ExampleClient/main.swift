// An ACP client in Swift, shaped as a macOS app would use it: a view model
// (ChatViewModel.swift) owns the connection, renders the streamed turn, and
// exposes async `send` and `stop` for the view. Spawns the example agent
// (next to this executable) unless `-- agent command...` names another one.
//
//   acp-example-client [-- agent command...]
import Foundation
import LibACP

let args = CommandLine.arguments
let command: AgentCommand
if let dash = args.firstIndex(of: "--"), dash + 1 < args.count {
    command = AgentCommand(program: args[dash + 1], args: Array(args[(dash + 2)...]))
} else {
    let here = URL(fileURLWithPath: args[0]).deletingLastPathComponent()
    command = AgentCommand(program: here.appendingPathComponent("acp-example-agent").path)
}

let printed = Printed()
let model = ChatViewModel { state in printed.show(state) }
do {
    try await model.connect(to: command, cwd: FileManager.default.currentDirectoryPath)
    let stop = try await model.send("Hello from Swift")
    print("\nturn ended: \(stop.rawValue)")
    await model.disconnect()
} catch {
    FileHandle.standardError.write(Data("example client: \(error)\n".utf8))
    exit(1)
}

/// The "view": prints what changed since the last render.
final class Printed: @unchecked Sendable {
    private let lock = NSLock()
    private var shownChars = 0
    private var shownPlan: [String] = []
    private var shownAgent = ""

    func show(_ state: ChatViewModel.State) {
        lock.withLock {
            if state.agentName != shownAgent {
                shownAgent = state.agentName
                print("agent: \(state.agentName)")
            }
            if state.plan != shownPlan {
                shownPlan = state.plan
                print("[plan] " + state.plan.joined(separator: ", "))
            }
            let text = Array(state.transcript)
            if text.count > shownChars {
                print(String(text[shownChars...]), terminator: "")
                shownChars = text.count
                fflush(stdout)
            }
        }
    }
}
