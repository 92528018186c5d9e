# The two newcomer commands (see README.md).
.PHONY: demo test lint

demo:
	./scripts/demo.sh

test:
	./scripts/test.sh

lint:
	cargo fmt --all --check
	cargo clippy --locked --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --locked --workspace --no-deps
