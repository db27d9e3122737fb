#!/usr/bin/env bash
# scripts/deb/man-page.sh BINARY OUT.1: the manual page stagerack(1), made by Debian's help2man
# from the binary's own --help and --version, with every command's --help as a COMMANDS
# section (so the page says what `stagerack COMMAND --help` says, and never drifts from it).
set -euo pipefail
bin=${1:?usage: scripts/deb/man-page.sh BINARY OUT.1}
out=${2:?usage: scripts/deb/man-page.sh BINARY OUT.1}
command -v help2man >/dev/null || { echo "man page: help2man is missing: apt-get install help2man" >&2; exit 2; }
include=$(mktemp); trap 'rm -f "$include"' EXIT
commands=$("$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[[ -n $commands ]] || { echo "man page: no commands in '$bin --help'" >&2; exit 1; }
{
  echo "[COMMANDS]"
  for c in $commands; do
    echo ".SS $c"
    echo ".nf"
    # Lines that start with a dot or a quote would be read as roff requests: escaped.
    "$bin" "$c" --help 2>&1 | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    echo ".fi"
  done
  echo "[SEE ALSO]"
  echo "The rack format, the units and the examples: /usr/share/stagerack/racks/README.md"
  echo "(or racks/README.md in the source); the project's README.md."
} > "$include"
help2man --locale=C.UTF-8 --no-info --no-discard-stderr --section=1 --name="a live performance rack for singers on Linux" \
  --include="$include" --output="$out" "$bin"
