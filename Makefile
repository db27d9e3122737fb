# StageRack: `make run` sets up everything and runs the default rack; `make test` runs every test.
# Debian's swiftlang (Debian 13, Pi OS trixie) links /usr/bin/swift only on a debconf answer:
# its compiler in /usr/libexec/swift/bin is used when no swift is on PATH (looked up when used,
# so after `deps` has installed it).
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /usr/libexec/swift/bin/swift)
BIN := .build/release/stagerack
RACK ?= racks/default.json
OUT ?= out

PREFIX ?= /usr/local

.PHONY: all deps test-deps build run test e2e fuzz unit-tests tsan bench bench-engine bench-render clean install install-dry-run check-aarch64
.PHONY: remote-test loudness-test
.PHONY: bench-remote bench-link bench-jack bench-memory bench-startup
.PHONY: drift-test bench-drift jack-test
.PHONY: check-trixie check-arm64 deb deb-test installed-binary

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	$(SWIFT) build -c release --product stagerack

# The main job: the default rack live when there is a sound card, else its built-in demo
# rendered to out/default-demo.wav.
run: build
	@BIN=$(BIN) RACK=$(RACK) OUT=$(OUT) scripts/run-default.sh

# Every test, in release builds (DSP tests measure real signals; allocation counts are
# only meaningful in release).
test: test-deps
	$(SWIFT) test -c release
	$(SWIFT) build -c release --product stagerack
	Tests/cli/run.sh
	Tests/cli/live-path.sh
	Tests/cli/link.sh
	Tests/cli/sync.sh
	Tests/cli/latency.sh
	Tests/cli/feedback.sh
	@# The C shims for aarch64 when the cross compiler is there (install-deps --test installs it
	@# on amd64); without it, one line says why it was skipped (exit 77).
	scripts/check-aarch64.sh || test $$? -eq 77
	$(MAKE) docs-test
	$(MAKE) loudness-test
	$(MAKE) remote-test
	$(MAKE) drift-test
	$(MAKE) jack-test
	$(MAKE) tsan
	$(MAKE) fuzz
	$(MAKE) e2e

# The remote against the real `play` on loopback ports (Tests/remote): OSC (address
# space, errors, subscriptions, allowed networks, a bounded random sender). Prints its time.
remote-test: build
	Tests/remote/run.sh

# play --driver jack against real jackd servers (dummy driver, names of their own): a tone
# through the rack measured by a second JACK client, ports and patterns, the buffer size
# followed, no server, a server that goes away (Tests/jack); then netjack2: the rack's outputs
# at a second jackd over the network (two network namespaces of its own, root). Prints its
# time (~15 s + ~8 s).
jack-test: build
	Tests/jack/run.sh
	Tests/jack/netjack.sh

# Drift compensation over an hour of audio rendered fast (simulated capture clock 100 ppm
# fast: latency within ±1 ms, no ring underrun or overrun, THD+N < -90 dB). Prints its time.
drift-test:
	@start=$$(date +%s); \
	STAGERACK_DRIFT_SECONDS=3600 $(SWIFT) test -c release --filter 'DriftCompensationTests.testCaptureHundredPPMFastHoldsTheLatency'; \
	rc=$$?; echo "make drift-test: $$(( $$(date +%s) - start )) s"; exit $$rc

# The drift compensator's cost: callgrind instructions per frame for each libsamplerate
# quality against a plain copy (Benchmarks/drift).
bench-drift:
	$(SWIFT) build -c release --product stagerack-bench
	Benchmarks/drift/run.sh

# Level-matched presets (Tests/loudness): every shipped rack's EBU R128 loudness (pyloudnorm)
# within 1 LU of vocal-clean on the demo and on espeak-ng speech, and no rack in the output
# limiter on the demo. Prints its time.
loudness-test: build
	@start=$$(date +%s); \
	STAGERACK=$(BIN) Tests/loudness/run.py; \
	rc=$$?; echo "make loudness-test: $$(( $$(date +%s) - start )) s"; exit $$rc

# The READMEs are code: their rack examples validate, their commands run (Tests/docs/run.py).
docs-test:
	Tests/docs/run.py

# The live path under the thread sanitizer, in a build of its own (.build/tsan) where a
# queue used by a second producer or consumer thread traps: the live stress test (20 s)
# and the queue, player and live-path tests, the player unit's disk thread, the show
# recorder's and the remote's threads, the LV2 worker's thread pair; Swift's exclusivity
# checks on (the release build turns them off in StageCore and StageUnits: Package.swift).
# Suppressions: Tests/tsan.supp (C libraries only).
TSAN_TESTS := LV2WorkerPairTests|CaptureThreadTests|LV2WorkerTests|LiveStressTests|LivePathTests|SPSCQueueTests|RackPlayerTests|PresetSwitchingTests|SwitchReleaseTests|PlayerSwitchTests|PlayerStreamingTests|PlayerPlaybackTests|ShowRecorderTests|RemoteThreadsTests
tsan:
	@start=$$(date +%s); \
	STAGERACK_EXCLUSIVITY_CHECKS=1 $(SWIFT) build -c release --build-tests --sanitize=thread -Xswiftc -DSTAGERACK_QUEUE_OWNER_TRAPS --scratch-path .build/tsan \
	&& STAGERACK_EXCLUSIVITY_CHECKS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/Tests/tsan.supp" STAGERACK_STRESS_SECONDS=20 \
	  $(SWIFT) test -c release --skip-build --sanitize=thread -Xswiftc -DSTAGERACK_QUEUE_OWNER_TRAPS --scratch-path .build/tsan \
	  --filter '$(TSAN_TESTS)'; \
	rc=$$?; echo "make tsan: $$(( $$(date +%s) - start )) s"; exit $$rc

# End-to-end on a real Linux kernel in qemu (snd-aloop sound card, snd-virmidi ports):
# the live scenario, the MIDI layer, and live MIDI timing (a report). A VM that cannot boot
# is a failure.
e2e:
	Tests/e2e/all.sh

# Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of the rack/setlist reader, the
# MIDI file reader, the MIDI byte parser and audio-file input: FUZZ_SECONDS (20) each.
fuzz:
	SWIFT=$(SWIFT) Tests/fuzz/run.sh

# The service (run as root): binary, racks, SoundFonts, /etc/stagerack/stagerack.json, the
# systemd unit, the stagerack user; enables it. RACK=... picks the rack it plays.
# The binary `make install` installs: the Swift runtime and Foundation linked in statically
# where the toolchain can (swift.org's), so the service needs no toolchain at run time and
# `play` keeps 6.6 MB less resident (Benchmarks/memory/README.md); a toolchain that cannot
# (Debian's swiftlang) installs the dynamic build and says so. Its own build directory, so
# the everyday builds stay dynamic (and are not rebuilt by it).
INSTALL_BIN := .build/install/stagerack
installed-binary: deps
	@scripts/build-installed.sh "$(SWIFT)" $(INSTALL_BIN)

install: installed-binary
	$(INSTALL_BIN) install-service --prefix $(PREFIX) --rack $(RACK) $(INSTALL_FLAGS)

install-dry-run: installed-binary
	$(INSTALL_BIN) install-service --prefix $(PREFIX) --rack $(RACK) --dry-run $(INSTALL_FLAGS)

# Built and tested with Debian 13's own Swift (swiftlang 6.0.x) in a Debian 13 root made with
# mmdebstrap (cached under .build/trixie-build; the first run downloads ~600 MB): the release
# build, the unit tests, every shipped rack's demo compared with this machine's build. As root.
# TRIXIE_TESTS=none skips the unit tests, or names a --filter. Prints each step's time.
check-trixie: build
	scripts/check-trixie.sh

# arm64 (Raspberry Pi OS trixie 64-bit), built and run under emulation on x86_64 with no
# binfmt_misc: a trixie arm64 root unpacked by mmdebstrap (cached under .build/arm64-root, ~2 min,
# 3.5 GB) run by qemu-aarch64-static under proot; the release build with Debian's swiftlang
# (35-60 min the first time, incremental afterwards), no RWX segment, every shipped rack
# validated, every demo rendered there and compared with this machine's build, the
# flush-to-zero shim run. Not part of `make test` (its time). As root; prints each step's time.
# `scripts/install-deps.sh --arm64` installs its tools. ARM64_TESTS='FILTER' adds unit tests.
check-arm64: build
	scripts/check-arm64.sh

# The Debian package, built in the Debian 13 root with Debian's swiftlang (as root):
# out/deb/stagerack_VERSION_ARCH.deb and its -dbgsym, lintian without errors
# (out/deb/lintian.txt). deb-test also installs, runs and purges it in a fresh Debian 13.
# ARCH=arm64 (on amd64): built in the emulated arm64 root of check-arm64 (the same build),
# Depends from dpkg-shlibdeps over that root's libraries, this machine's lintian; deb-test
# ARCH=arm64 installs it with apt in a bare arm64 trixie, every step under emulation.
deb:
	scripts/make-deb.sh

deb-test:
	scripts/make-deb.sh --test

# The C shims cross-compiled for aarch64 (and the FTZ shim run under qemu-aarch64); part of
# `make test`, skipped there with one line when aarch64-linux-gnu-gcc is missing.
check-aarch64:
	scripts/check-aarch64.sh

bench: build
	$(SWIFT) build -c release --product stagerack-bench
	.build/release/stagerack-bench

# the engine's own cost in callgrind instructions: the engine pass minus the same units run
# alone, at 16 and 64 frames (Benchmarks/engine).
bench-engine:
	$(SWIFT) build -c release --product stagerack-bench
	STAGERACK_BENCH=.build/release/stagerack-bench Benchmarks/engine/run.sh

# render against sox and the fluidsynth CLI, callgrind instructions and peak RSS (Benchmarks/render).
bench-render: build
	STAGERACK=$(BIN) Benchmarks/render/run.sh

# play's peak RSS against the fluidsynth CLI on the same font and song (Benchmarks/memory).
bench-memory: build
	STAGERACK=$(BIN) Benchmarks/memory/run.sh

# start-up to the first block against the fluidsynth CLI, callgrind instructions (Benchmarks/startup):
# the installed binary (`make installed-binary`), else the dynamic build.
bench-startup: build
	Benchmarks/startup/run.sh

# the render path's callgrind instructions with eight WebSocket meter clients vs none (Benchmarks/remote).
bench-remote: build
	STAGERACK=$(BIN) Benchmarks/remote/run.sh

# The render path's callgrind instructions with `play --link` (a shared Ableton Link
# session) vs without (Benchmarks/link).
bench-link: build
	STAGERACK=$(BIN) Benchmarks/link/run.sh

# The JACK backend's per-period cost (client thread and jackd, dummy driver) against the
# ALSA backend's (null devices), callgrind instructions side by side (Benchmarks/jack).
bench-jack: build
	STAGERACK=$(BIN) Benchmarks/jack/run.sh

clean:
	rm -rf .build $(OUT)
