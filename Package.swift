// swift-tools-version:5.9
// The Swift package of libacp: the product `LibACP` (the UniFFI-generated
// bindings plus the Swift layer: async/await connection, Codable ACP models),
// over the Rust library `libacp_uniffi`. Its sources are in
// bindings/uniffi/swift; the manifest is at the repository root so that an
// app adds the package by the repository's URL, and so that its identity
// (the repository's name) differs from packages that depend on it by path
// (examples/swift, tests/interop/swift: SwiftPM names a path package after
// its directory).
//
// Where the Rust library comes from:
//  * macOS/iOS apps: `LibACPFFI.xcframework` in bindings/uniffi/swift, built
//    by `bindings/uniffi/swift/build-xcframework.sh` (a binary target);
//  * Linux (and macOS without the XCFramework): the system library target
//    `bindings/uniffi/swift/Sources/LibACPFFI/include` (the generated header
//    and module map), linked
//    against `libacp_uniffi` from the search path given at build time:
//    `swift build -Xlinker -L<dir> -Xlinker -rpath -Xlinker <dir>`, where <dir>
//    holds `libacp_uniffi.so` (`cargo build --release -p libacp-uniffi`).
//
// The package builds in the Swift 5 language mode (Swift 6's strict
// concurrency checking rejects the generated bindings' callback glue).
import Foundation
import PackageDescription

let packageDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
let swiftDir = "bindings/uniffi/swift"
let xcframework = swiftDir + "/LibACPFFI.xcframework"
let useXCFramework = FileManager.default.fileExists(atPath: packageDir + "/" + xcframework)

let ffi: Target = useXCFramework
    ? .binaryTarget(name: "LibACPFFI", path: xcframework)
    : .systemLibrary(name: "LibACPFFI", path: swiftDir + "/Sources/LibACPFFI/include")

let package = Package(
    name: "LibACP",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .library(name: "LibACP", targets: ["LibACP"]),
    ],
    targets: [
        ffi,
        .target(
            name: "LibACP",
            dependencies: ["LibACPFFI"],
            path: swiftDir + "/Sources/LibACP",
            linkerSettings: useXCFramework ? [] : [.linkedLibrary("acp_uniffi")]
        ),
        .testTarget(name: "LibACPTests", dependencies: ["LibACP"], path: swiftDir + "/Tests/LibACPTests"),
    ],
    swiftLanguageVersions: [.v5]
)
