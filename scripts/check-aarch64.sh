#!/usr/bin/env bash
# Proves the C part of StageRack builds for AArch64 (Raspberry Pi OS 64-bit) on an x86_64
# machine, and runs the flush-to-zero shim under qemu-aarch64 when it is installed.
#
# What it checks, with Debian's gcc-aarch64-linux-gnu (-Wall -Wextra -Werror):
#   1. every .c file of the C targets (Sources/C*/**.c) compiles for aarch64;
#   2. every module-map shim header (Sources/C*/shim.h) compiles for aarch64 against the
#      library headers (ALSA, FluidSynth, libsndfile, libsamplerate, lilv, LV2: taken from the host's
#      /usr/include after the cross sysroot; they hold no architecture-specific code);
#   3. the flush-to-zero shim links and, under qemu-aarch64 (package qemu-user), really
#      flushes subnormals through FPCR.FZ (and natively through MXCSR FTZ/DAZ on x86_64).
# What it cannot check: the Swift code (no Swift SDK for aarch64 here) and real hardware.
#
# Usage: scripts/check-aarch64.sh [--install]   (--install: apt-get the cross tools if missing)
# Exit status 0 when everything ran and passed, 77 when the cross compiler is missing.
set -uo pipefail
cd "$(dirname "$0")/.."

CC=aarch64-linux-gnu-gcc
if ! command -v "$CC" >/dev/null; then
  if [[ "${1:-}" == "--install" ]]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >&2 || exit 1
  else
    echo "skip: $CC not found (apt-get install gcc-aarch64-linux-gnu, or run with --install)"
    exit 77
  fi
fi

out=.build/aarch64-check
mkdir -p "$out"
passed=0
failed=0
check() { # name, command...
  local name=$1; shift
  if "$@" 2>"$out/last.err"; then
    echo "ok: $name"; passed=$((passed + 1))
  else
    echo "FAIL: $name"; sed 's/^/    /' "$out/last.err"; failed=$((failed + 1))
  fi
}
FLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -idirafter /usr/include)
# lilv's headers live in their own folders (pkg-config lilv-0), after the host's /usr/include too.
for dir in /usr/include/lilv-0 /usr/include/serd-0 /usr/include/sord-0 /usr/include/sratom-0; do
  FLAGS+=(-idirafter "$dir")
done

# libwebsockets' headers include OpenSSL's, whose configuration header sits in the host's
# multiarch folder; x86_64 and aarch64 are both LP64 little-endian, so its settings are the
# same for both.
host_multiarch=/usr/include/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)

# 1. The C targets' sources (CLoadOnUse's forwarders include the libraries' headers, OpenSSL's too).
while IFS= read -r src; do
  target=$(echo "$src" | cut -d/ -f2)
  check "$src compiles for aarch64" "$CC" "${FLAGS[@]}" -idirafter "$host_multiarch" -I "Sources/$target/include" -c "$src" -o "$out/$(basename "$src" .c).o"
done < <(find Sources -path 'Sources/C*' -name '*.c' | sort)

# 2. The module-map shim headers.
while IFS= read -r hdr; do
  printf '#include "%s"\nint stage_check_unused;\n' "$PWD/$hdr" > "$out/shim-check.c"
  check "$hdr compiles for aarch64" "$CC" "${FLAGS[@]}" -idirafter "$host_multiarch" -Wno-unused-function -c "$out/shim-check.c" -o "$out/shim-check.o"
done < <(find Sources -path 'Sources/C*' -name 'shim.h' | sort)

# 3. flush-to-zero at run time.
check "FTZ check links for aarch64" "$CC" -std=gnu11 -O2 -Wall -Werror -I Sources/CStageShim/include \
  scripts/aarch64/ftz_check.c Sources/CStageShim/stage_shim.c -o "$out/ftz_check-aarch64"
if command -v gcc >/dev/null && [[ $(uname -m) != aarch64 ]]; then
  check "FTZ check on this machine ($(uname -m))" bash -c "gcc -std=gnu11 -O2 -I Sources/CStageShim/include \
    scripts/aarch64/ftz_check.c Sources/CStageShim/stage_shim.c -o $out/ftz_check-native && $out/ftz_check-native"
fi
if [[ $(uname -m) == aarch64 ]]; then
  check "FTZ check on this aarch64 machine (FPCR.FZ)" "$out/ftz_check-aarch64"
elif command -v qemu-aarch64 >/dev/null; then
  check "FTZ check under qemu-aarch64 (FPCR.FZ)" qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/ftz_check-aarch64"
else
  echo "skip: qemu-aarch64 not found (apt-get install qemu-user): the AArch64 FTZ branch was compiled, not run"
fi

file "$out/ftz_check-aarch64" 2>/dev/null | sed 's/^/  /' || true
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
