// swift-tools-version:6.0
// StageRack: a live performance rack for Linux. See README.md.
import PackageDescription

let package = Package(
    name: "StageRack",
    products: [
        .executable(name: "stagerack", targets: ["stagerack"]),
    ],
    targets: [
        // C libraries from Debian packages, each wrapped in exactly one Swift layer.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CFluidSynth", pkgConfig: "fluidsynth", providers: [.apt(["libfluidsynth-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev", "lv2-dev"])]),
        // The LV2 host features in C (the log feature is variadic) and atom-sequence helpers.
        .target(name: "CLV2Host"),
        // Tiny C helpers Swift cannot express: flush-to-zero, CPU time, alsa-lib's variadic
        // error handler.
        .target(name: "CStageShim", linkerSettings: [.linkedLibrary("asound")]),

        // Core: pure Swift, no C. Unit contract, parameters, graph compiler, render engine,
        // queues, MIDI types and mapping, rack files and their validation.
        .target(name: "StageCore"),
        // Units: pure Swift DSP on the Core contract.
        .target(name: "StageUnits", dependencies: ["StageCore"]),
        // Synth: the FluidSynth generator unit.
        .target(name: "StageSynth", dependencies: ["StageCore", "CFluidSynth"]),
        // LV2: installed LV2 plugins as units, hosted through lilv.
        .target(name: "StageLV2", dependencies: ["StageCore", "CLilv", "CLV2Host"]),
        // Drivers: ALSA live audio, audio files (libsndfile, libsamplerate), the offline renderer.
        .target(name: "StageDrivers", dependencies: ["StageCore", "CALSA", "CSndFile", "CSampleRate", "CStageShim"]),

        // Player: the `player` unit (backing tracks streamed from disk: libsndfile, libsamplerate).
        .target(name: "StagePlayer", dependencies: ["StageCore", "CSndFile", "CSampleRate"]),

        // Service: the app's settings (config file < environment < flags), waiting for devices,
        // journald-friendly log lines, the --meters view, the install plan. Pure Swift.
        .target(name: "StageService", dependencies: ["StageCore"]),

        // App: the `stagerack` command.
        .executableTarget(
            name: "stagerack",
            dependencies: ["StageCore", "StageUnits", "StageSynth", "StageLV2", "StageDrivers", "StageService", "CStageShim", "StagePlayer"]),

        // Benchmarks and the release-build allocation check (never shipped).
        .target(name: "CAllocCounter"),
        .executableTarget(
            name: "stagerack-bench",
            dependencies: ["StageCore", "StageUnits", "StageSynth", "StageLV2", "StageDrivers", "CAllocCounter", "CStageShim"]),

        // Measurements shared by the tests (levels, frequencies, onsets).
        .target(name: "StageTestSupport"),

        .testTarget(name: "StageCoreTests", dependencies: ["StageCore", "StageTestSupport"]),
        .testTarget(name: "StageUnitsTests", dependencies: ["StageCore", "StageUnits", "StageTestSupport", "CAllocCounter"]),
        // Whole-rack tests: rack files and their errors, offline renders, allocation counts.
        .testTarget(
            name: "StageRackTests",
            dependencies: ["StageCore", "StageUnits", "StageSynth", "StageDrivers", "StageTestSupport", "CAllocCounter", "StagePlayer"]),
        // The lv2 unit against lv2apply, x42 fil4's response, bad plugins, allocations.
        .testTarget(
            name: "StageLV2Tests",
            dependencies: ["StageCore", "StageUnits", "StageLV2", "StageDrivers", "StageTestSupport", "CAllocCounter"]),
        .testTarget(
            name: "StageSynthTests", dependencies: ["StageCore", "StageSynth", "StageTestSupport", "CAllocCounter"]),
        // The service: settings precedence, device wait, log format, meters, install plan, and
        // the `stagerack` binary itself (play through alsa-lib's file plugin, install-service,
        // the systemd unit through systemd-analyze, the C shims for aarch64).
        .testTarget(name: "StageServiceTests", dependencies: ["StageCore", "StageService", "StageDrivers"]),
        // The player unit: streaming, transport, loops, underruns (files made by the tests).
        .testTarget(
            name: "StagePlayerTests",
            dependencies: ["StageCore", "StagePlayer", "StageUnits", "StageDrivers", "StageTestSupport", "CAllocCounter", "CSndFile"]),
    ],
    swiftLanguageModes: [.v6]
)
