import Foundation
import InteropSupport
import LibACP

// libacp-swift-interop-agent: serves the interop agent on stdin/stdout,
// driven by the official SDKs' interop clients (tests/interop/README.md) and
// by libacp-swift-interop-client. It exits 0 once its stdin closes, even
// with requests still in flight (they get no answer); logs go to stderr.

let agent = InteropAgent()
let connection: AgentConnection
do {
    connection = try AgentConnection.serveStdio(agent)
} catch {
    log("cannot serve on stdio: \(error)")
    exit(1)
}
agent.connection.fulfil(connection)
// Until stdin closes and everything was written.
await connection.terminated()
exit(0)
