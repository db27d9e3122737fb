#!/usr/bin/env bash
# Installs what StageRack needs from Debian packages (Debian 12 and 13, Raspberry Pi OS),
# and Swift itself from apt (swiftlang) where the system packages it.
# Only missing packages are installed; run as root or with sudo available.
# Usage: scripts/install-deps.sh [--test|--arm64]   (--test adds what the test suite needs;
# --arm64 adds what make check-arm64 needs on an x86_64 host: the emulation tools, and the
# GM font and LV2 plugins the host renders the demos with)
set -euo pipefail

packages=(
  pkg-config
  libasound2-dev      # ALSA: live audio and the MIDI sequencer
  libfluidsynth-dev   # the synth unit
  # play --driver jack: libjack from jackd2 (also PipeWire's JACK). In the same apt-get
  # command as libfluidsynth-dev, which takes it as its alternative to jackd1's libjack-dev
  # (Debian 12 pulls that one): apt swaps them and keeps libfluidsynth-dev in one run.
  libjack-jackd2-dev
  libsndfile1-dev     # every audio file read and written
  libsamplerate0-dev  # resampling input files
  librubberband-dev   # the player's transpose: backing tracks pitch-shifted on its disk thread
  alsa-utils          # aplay/arecord/aconnect, for devices and tests
  liblo-dev           # OSC control (play --osc)
  libwebsockets-dev   # the web page: HTTP and WebSocket (play --web)
  liblilv-dev         # the lv2 unit: LV2 plugins hosted through lilv
  lv2-dev             # LV2's headers (urid, atom, options, buf-size, log)
  ableton-link-dev    # Ableton Link (play --link): C++ headers, with libasio-dev
  g++                 # ... compiled as C++ (Sources/CLink): the C++ standard library's headers
  libfftw3-dev        # the feedback unit's spectrum: FFTW3 in single precision (libfftw3f)
  libssl-dev          # sync between boxes: HMAC-SHA256 of the messages (OpenSSL's libcrypto)
)
if [[ "${1:-}" == "--arm64" ]]; then
  # make check-arm64 (scripts/check-arm64.sh): the trixie arm64 root made natively with
  # mmdebstrap and run by qemu-aarch64-static under proot (no binfmt_misc needed); sox compares
  # the demos, gcc builds the seccomp launcher (scripts/arm64/proot-launch.c), rsync syncs the
  # source into the root, binutils' readelf checks the segments.
  packages+=(mmdebstrap proot qemu-user-static rsync sox gcc binutils file curl x42-plugins mda-lv2 timgm6mb-soundfont)
  # make deb ARCH=arm64: the debug info split, Depends and lintian run natively
  packages+=(binutils-aarch64-linux-gnu dpkg-dev lintian)
fi
if [[ "${1:-}" == "--test" ]]; then
  packages+=(
    timgm6mb-soundfont  # a General MIDI SoundFont for the synth tests
    python3             # test material generators
    tmux                # the --meters view tested on a real terminal
    sox                 # rendered WAV headers checked with sox --i
    systemd             # systemd-analyze verify of packaging/stagerack.service
    espeak-ng           # real speech for the harmony/tune tests and benchmarks
    valgrind            # callgrind instruction counts in Benchmarks/*/run.sh
    liblo-tools         # oscsend/oscdump: the OSC tests
    iproute2            # ip: loopback up in the Link test's own network namespace
    openssl             # the self-signed certificate of the TLS test (Tests/remote/tls_test.py)
    chromium            # the browser test of the web page (make remote-test)
    chromium-driver     # ... driven by Selenium
    lilv-utils          # lv2ls, lv2apply (the lv2 unit's reference), lv2bench
    mda-lv2             # LV2 plugins needing no features (DeEss, Detune) for the lv2 tests
    x42-plugins         # LV2 plugins with atom ports (fil4 EQ) for the lv2 tests
    gcc                 # builds the lv2 tests' plugin that fails to instantiate
    fluidsynth          # the peer CLI in Benchmarks/render (and Benchmarks/synth)
    valgrind            # callgrind instruction counts in Benchmarks/render
    jackd2              # a real JACK server (dummy driver), jack_bufsize, for Tests/jack
    python3-jack-client # the second JACK client that measures StageRack in Tests/jack
    ableton-link-utils  # LinkHut, Ableton's own Link peer (on the JACK dummy server) in Tests/cli/link.sh
  )
  # The C shims built for aarch64 (scripts/check-aarch64.sh), and run under qemu.
  if [[ $(dpkg --print-architecture) == amd64 ]]; then
    packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
  fi
fi

# PyPI packages the tests use as clients (never linked into the binary): the remote's
# WebSocket client, the browser driver and Pillow for its screenshot (Tests/remote);
# pyloudnorm (EBU R128 / ITU-R BS.1770-4, with numpy and scipy) for Tests/loudness.
install_pypi() {
  [[ "${1:-}" == "--test" ]] || return 0
  local want=(websockets selenium pillow pyloudnorm)
  python3 -c "import websockets, selenium, PIL, pyloudnorm" 2>/dev/null && return 0
  python3 -m pip install --quiet "${want[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "${want[@]}"
}

# Swift itself: when no `swift` is on PATH, Debian 13 "trixie" and Raspberry Pi OS trixie
# package it (`swiftlang`, 6.0.x, ~400 MB); anywhere else say where to get it.
# Debian's swiftlang links /usr/bin/swift only through a debconf answer; its compiler is
# /usr/libexec/swift/bin/swift either way, so that is looked for too.
swift_from_apt=""
if ! command -v swift >/dev/null && [[ ! -x /usr/libexec/swift/bin/swift ]]; then
  candidate=$(apt-cache policy swiftlang 2>/dev/null | awk '/Candidate:/ { print $2 }')
  if [[ -z $candidate || $candidate == "(none)" ]] && [[ $(id -u) -eq 0 ]] && grep -qs 'trixie' /etc/os-release; then
    apt-get update -qq >&2 || true   # a fresh root may not have read the archive's lists yet
    candidate=$(apt-cache policy swiftlang 2>/dev/null | awk '/Candidate:/ { print $2 }')
  fi
  if [[ -n $candidate && $candidate != "(none)" ]]; then
    echo "no swift found: installing Debian's swiftlang $candidate from apt (~400 MB; about 2.5 GB installed)" >&2
    packages+=(swiftlang)
    swift_from_apt=$candidate
  else
    . /etc/os-release 2>/dev/null || true
    echo "no swift found, and this system's apt offers no swiftlang (${PRETTY_NAME:-unknown system}, $(dpkg --print-architecture 2>/dev/null || uname -m))." >&2
    echo "Get Swift 6 from https://www.swift.org/install/linux/ (the tarball for your distribution and" >&2
    echo "architecture, unpacked into /opt/swift, then export PATH=\$PATH:/opt/swift/usr/bin), or move to" >&2
    echo "Debian 13 / Raspberry Pi OS trixie, where 'apt install swiftlang' does it. Then run this again." >&2
    exit 1
  fi
fi

missing=()
for p in "${packages[@]}"; do
  # Not `dpkg-query | grep -q`: grep leaving early can kill the writer (SIGPIPE) under pipefail.
  if [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  install_pypi "${1:-}"
  exit 0
fi

echo "installing: ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
if [[ -n $swift_from_apt ]] && ! command -v swift >/dev/null; then
  echo "swiftlang $swift_from_apt installed: its compiler is /usr/libexec/swift/bin/swift (/usr/bin/swift is linked" >&2
  echo "by 'dpkg-reconfigure swiftlang'); make finds it there." >&2
fi
install_pypi "${1:-}"
