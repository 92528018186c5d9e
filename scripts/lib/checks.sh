# Counted checks for the per-language test scripts (sourced, not run).
# Set LANGUAGE_NAME ("Python", "Node", ...) before sourcing.
#
#   fail MESSAGE          a setup step failed: prints "<L>: 0 passed, 1 failed", exits 1
#   check NAME CMD...     runs one check, counted as 1 passed or 1 failed
#   report PASSED FAILED  adds the checks' counts, lists the failed checks and
#                         prints "<L>: N passed, M failed"; returns 1 if any failed

checks_passed=0
checks_failed=0
failed_checks=()

fail() {
  echo "$1" >&2
  echo "$LANGUAGE_NAME: 0 passed, 1 failed"
  exit 1
}

check() {
  local name=$1
  shift
  echo "== $LANGUAGE_NAME: $name"
  if "$@"; then
    checks_passed=$((checks_passed + 1))
    echo "ok: $name"
  else
    checks_failed=$((checks_failed + 1))
    failed_checks+=("$name")
    echo "FAILED: $name"
  fi
}

report() {
  local passed=$(($1 + checks_passed))
  local failed=$(($2 + checks_failed))
  echo
  for name in ${failed_checks[@]+"${failed_checks[@]}"}; do
    echo "failed check: $name"
  done
  echo "$LANGUAGE_NAME: ${passed} passed, ${failed} failed"
  [ "$failed" -eq 0 ]
}
