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

bench: build
	$(SWIFT) build -c release --product stagerack-bench
	.build/release/stagerack-bench

clean:
	rm -rf .build $(OUT)
