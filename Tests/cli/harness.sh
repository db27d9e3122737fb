# Shared by the CLI test scripts (sourced): the binary, a work folder removed at exit, and
# `check NAME COMMAND...`, which passes when COMMAND succeeds and shows the tail of its
# output when it fails. `finish` prints the last line, "N passed, N failed", and its status.
BIN=${STAGERACK:-.build/release/stagerack}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
check() {
  local name=$1
  shift
  if "$@" >"$WORK/check.log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    sed 's/^/     /' "$WORK/check.log" | tail -20
  fi
}
finish() {
  echo "$passed passed, $failed failed"
  test "$failed" -eq 0
}
