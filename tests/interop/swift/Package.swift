// swift-tools-version:5.9
// libacp's Swift interop peers (tests/interop/README.md): an agent and a
// client on the Swift binding's typed API, run against the official ACP
// SDKs' peers by ./run.py.
//
//   libacp-swift-interop-agent   serves ACP on stdio (the README's prompt
//                                command vocabulary)
//   libacp-swift-interop-client  runs the README's check sequence against an
//                                agent it spawns (`-- AGENT...`) or reaches
//                                over inherited descriptors (`--fds R W`)
//
// On Linux the Rust library comes from the linker search path (see the
// LibACP manifest at the repository root); run.py builds with
//   swift build --package-path tests/interop/swift \
//     -Xlinker -L<repo>/target/release -Xlinker -rpath -Xlinker <repo>/target/release
import Foundation
import PackageDescription

// The LibACP package is the repository root (its manifest is there); SwiftPM
// names a path dependency after its directory, so that name is the checkout's.
let libacpRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let libacp = libacpRoot.lastPathComponent.lowercased()

let package = Package(
    name: "LibACPInterop",
    platforms: [.macOS(.v12)],
    products: [
        .executable(name: "libacp-swift-interop-agent", targets: ["InteropAgent"]),
        .executable(name: "libacp-swift-interop-client", targets: ["InteropClient"]),
    ],
    dependencies: [
        .package(path: libacpRoot.path),
    ],
    targets: [
        // What both peers share: a lock box, a once-set value, stderr logging.
        .target(name: "InteropSupport"),
        .executableTarget(
            name: "InteropAgent",
            dependencies: ["InteropSupport", .product(name: "LibACP", package: libacp)]
        ),
        .executableTarget(
            name: "InteropClient",
            dependencies: ["InteropSupport", .product(name: "LibACP", package: libacp)]
        ),
    ],
    swiftLanguageVersions: [.v5]
)
