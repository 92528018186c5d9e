// swift-tools-version:5.9
// The Swift examples of libacp: an agent (`acp-example-agent`) and a client
// (`acp-example-client`) shaped as a macOS app would use it, behind a view
// model (./run.sh), and remote ACP: a server (`acp-example-remote-server`)
// and a client reaching it by URL (`acp-example-remote-client`;
// ./run-remote.sh). They depend on the LibACP package (the repository root) by path.
import Foundation
import PackageDescription

// The LibACP package is the repository root (its manifest is there); SwiftPM
// names a path dependency after its directory, so that name is the checkout's.
let libacpRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
let libacp = libacpRoot.lastPathComponent.lowercased()

let package = Package(
    name: "LibACPExamples",
    platforms: [.macOS(.v12)],
    dependencies: [
        .package(path: libacpRoot.path),
    ],
    targets: [
        .executableTarget(
            name: "acp-example-agent",
            dependencies: [.product(name: "LibACP", package: libacp)],
            path: "Sources/ExampleAgent"
        ),
        .executableTarget(
            name: "acp-example-client",
            dependencies: [.product(name: "LibACP", package: libacp)],
            path: "Sources/ExampleClient"
        ),
        .executableTarget(
            name: "acp-example-remote-server",
            dependencies: [.product(name: "LibACP", package: libacp)],
            path: "Sources/RemoteServer"
        ),
        .executableTarget(
            name: "acp-example-remote-client",
            dependencies: [.product(name: "LibACP", package: libacp)],
            path: "Sources/RemoteClient"
        ),
    ],
    swiftLanguageVersions: [.v5]
)
