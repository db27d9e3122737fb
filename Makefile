# StageRack: `make run` sets up everything and runs the default rack; `make test` runs every test.
SWIFT ?= swift
BIN := .build/release/stagerack
RACK ?= racks/default.json
OUT ?= out

.PHONY: all deps test-deps build run test unit-tests bench clean

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	$(SWIFT) build -c release --product stagerack

# The main job: renders the default rack's built-in demo to a file (live audio comes
# with `stagerack play`; until then, and on machines with no sound card, this is it).
run: build
	@mkdir -p $(OUT)
	$(BIN) render $(RACK) --demo --output $(OUT)/default-demo.wav
	@echo "wrote $(OUT)/default-demo.wav (play it with: aplay $(OUT)/default-demo.wav)"

# Every test, in release builds (DSP tests measure real signals; allocation counts are
# only meaningful in release).
test: test-deps
	$(SWIFT) test -c release

bench: build
	$(SWIFT) build -c release --product stagerack-bench
	.build/release/stagerack-bench

clean:
	rm -rf .build $(OUT)
