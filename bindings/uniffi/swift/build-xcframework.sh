#!/usr/bin/env bash
# Builds LibACPFFI.xcframework for Apple platforms: the Rust library
# (static, release) for macOS (arm64 + x86_64, one universal binary), iOS
# devices and the iOS simulator (arm64 + x86_64), each with the generated
# header and module map. With the XCFramework next to this script, the root
# Package.swift uses it as a binary target instead of the Linux system
# library, so an app needs no Rust toolchain.
#
# Runs on macOS only (xcodebuild, lipo); not run by CI, which is Linux.
#   bindings/uniffi/swift/build-xcframework.sh
#
# Needs: Xcode, rustup with the targets below (the script adds them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../../.." && pwd -P)
cd "$repo"

if [ "$(uname -s)" != Darwin ]; then
  echo "build-xcframework.sh: needs macOS (xcodebuild and lipo)" >&2
  exit 2
fi

targets=(aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios)
rustup target add "${targets[@]}"
for t in "${targets[@]}"; do
  # A static library for the XCFramework (the crate's own types are cdylib
  # and lib: no staticlib in every Linux build).
  cargo rustc --locked --release -p libacp-uniffi --target "$t" --crate-type staticlib
done

# The generated sources must match the library (same crate, same bindgen).
scripts/uniffi/generate.sh --check

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
headers=$work/headers
mkdir -p "$headers"
cp "$here/Sources/LibACPFFI/include/LibACPFFI.h" "$headers/"
cp "$here/Sources/LibACPFFI/include/module.modulemap" "$headers/module.modulemap"

lib=libacp_uniffi.a
mkdir -p "$work/macos" "$work/ios-sim"
lipo -create target/aarch64-apple-darwin/release/$lib target/x86_64-apple-darwin/release/$lib \
  -output "$work/macos/$lib"
lipo -create target/aarch64-apple-ios-sim/release/$lib target/x86_64-apple-ios/release/$lib \
  -output "$work/ios-sim/$lib"

out=$here/LibACPFFI.xcframework
rm -rf "$out"
xcodebuild -create-xcframework \
  -library "$work/macos/$lib" -headers "$headers" \
  -library "target/aarch64-apple-ios/release/$lib" -headers "$headers" \
  -library "$work/ios-sim/$lib" -headers "$headers" \
  -output "$out"
echo "built $out"
