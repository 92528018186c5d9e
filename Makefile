# The two newcomer commands (see README.md).
.PHONY: demo test lint bench

demo:
	./scripts/demo.sh

test:
	./scripts/test.sh

lint:
	cargo fmt --all --check
	cargo clippy --locked --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --locked --workspace --no-deps
	./scripts/lint-python.sh
	./scripts/check-spec.sh

# Not a newcomer command and not part of CI: the benchmark suite against the
# official SDKs (bench/README.md); prints the table.
bench:
	./bench/run.sh
