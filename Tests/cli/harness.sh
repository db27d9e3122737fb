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
# `wait_for_line FILE REGEX [SECONDS]`: waits (polling every 20 ms, 20 s by default) until a
# line of FILE matches the extended REGEX; false, with the file's tail, if none does in time.
# What a test waits for is what it means (the ready line, the reload done), never a time.
wait_for_line() {
  local file=$1 regex=$2 seconds=${3:-20}
  local deadline=$(($(date +%s%N) + seconds * 1000000000))
  until grep -Eq -- "$regex" "$file" 2>/dev/null; do
    if (($(date +%s%N) > deadline)); then
      echo "waited ${seconds} s for a line matching /$regex/ in $(basename "$file"):"
      tail -10 "$file" 2>/dev/null | sed 's/^/  /'
      return 1
    fi
    sleep 0.02
  done
}
