// swift-tools-version:5.9
// The bench client and agent on libacp's Swift binding (bench/README.md):
//   bench-swift client WORKLOAD [ARGS] --fds R W     (bench/swift/client.py starts it)
//   bench-swift agent
// Built in release by bench/run.sh through scripts/swift/run.sh.
import Foundation
import PackageDescription

// The LibACP package is the repository root; SwiftPM names a path
// dependency after its directory.
let libacpRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
let libacp = libacpRoot.lastPathComponent.lowercased()

let package = Package(
    name: "LibACPBench",
    platforms: [.macOS(.v12)],
    dependencies: [.package(path: libacpRoot.path)],
    targets: [
        .executableTarget(
            name: "bench-swift",
            dependencies: [.product(name: "LibACP", package: libacp)],
            path: "Sources/BenchSwift"
        ),
    ],
    swiftLanguageVersions: [.v5]
)
