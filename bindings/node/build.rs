//! Sets the linker flags a Node addon needs (napi_* symbols resolved from
//! the node binary at load time).

fn main() {
    napi_build::setup();
}
