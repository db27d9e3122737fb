// swift-tools-version:6.0
// StageRack: a live performance rack for Linux. See README.md.
import PackageDescription

// Swift's dynamic exclusivity checks (`swift_beginAccess`, ~5,500 instructions a 256-frame
// block of the default rack: 1.8 % of the render) are off in the render path's modules: the
// engine and the units touch their state from one thread at a time by construction (every
// queue has one producer and one consumer, checked). `make tsan` builds with them on
// (STAGERACK_EXCLUSIVITY_CHECKS=1), so the tests that run there still prove it.
let renderPathSettings: [SwiftSetting] =
    Context.environment["STAGERACK_EXCLUSIVITY_CHECKS"] == "1" ? [] : [.unsafeFlags(["-enforce-exclusivity=unchecked"])]

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
        // Headers only, no pkg-config (its flags would link the library): these six are
        // opened when a feature first needs them (CLoadOnUse), not at start-up.
        .systemLibrary(name: "CRubberBand", providers: [.apt(["librubberband-dev"])]),
        .systemLibrary(name: "CLiblo", providers: [.apt(["liblo-dev"])]),
        .systemLibrary(name: "CWebSockets", providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CLilv", providers: [.apt(["liblilv-dev", "lv2-dev"])]),
        .systemLibrary(name: "CFFTW", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CCrypto", providers: [.apt(["libssl-dev"])]),
        // The libraries above opened with dlopen when a feature starts (the web remote, sync,
        // OSC, LV2, the feedback unit, a player's transpose): their functions under their own names, forwarded through dlsym'd pointers.
        // Start-up then binds none of their symbols (libcrypto alone has 4,191).
        .target(name: "CLoadOnUse"),
        // The LV2 host features in C (the log feature is variadic) and atom-sequence helpers.
        .target(name: "CLV2Host"),
        // Tiny C helpers Swift cannot express: flush-to-zero, CPU time, alsa-lib's variadic
        // error handler.
        .target(name: "CStageShim", linkerSettings: [.linkedLibrary("asound")]),
        // Ableton Link (Debian's ableton-link-dev: C++ headers over standalone asio) behind a
        // C interface: the one C++ target.
        .target(
            name: "CLink", cxxSettings: [.define("LINK_PLATFORM_LINUX", to: "1")],
            // libatomic: trixie's Link 3.1 asks `__atomic_is_lock_free` at run time (a query
            // only: no atomic it uses goes through libatomic's locks).
            linkerSettings: [.linkedLibrary("stdc++"), .linkedLibrary("pthread"), .linkedLibrary("atomic")]),

        // Core: pure Swift, no C. Unit contract, parameters, graph compiler, render engine,
        // queues, MIDI types and mapping, rack files and their validation.
        .target(name: "StageCore", swiftSettings: renderPathSettings),
        // Units: Swift DSP on the Core contract (the feedback unit's spectrum through FFTW).
        .target(name: "StageUnits", dependencies: ["StageCore", "CFFTW", "CLoadOnUse"], swiftSettings: renderPathSettings),
        // Synth: the FluidSynth generator unit.
        .target(name: "StageSynth", dependencies: ["StageCore", "CFluidSynth"]),
        // LV2: installed LV2 plugins as units, hosted through lilv.
        .target(name: "StageLV2", dependencies: ["StageCore", "CLilv", "CLV2Host", "CLoadOnUse"]),
        // Control: what is not real time and not I/O: rack and setlist files, the one rack
        // loader, the preset switcher (the control thread), the MIDI router (the MIDI thread's
        // work once a message is decoded). Pure Swift.
        .target(name: "StageControl", dependencies: ["StageCore"]),
        // Drivers, grouped by what they are: AudioIO (ALSA PCM, drift, latency), MIDIIO (the
        // ALSA sequencer, a pipe), Files (audio files through libsndfile and libsamplerate,
        // the offline renderer, the show recorder), Soundcheck (the guided soundcheck).
        .target(name: "StageDrivers", dependencies: ["StageCore", "StageControl", "CALSA", "CSndFile", "CSampleRate", "CStageShim"]),

        // JACK: `play --driver jack`, StageRack as a JACK client (libjack from jackd2).
        .target(name: "StageJack", dependencies: ["StageCore", "StageDrivers", "CJack", "CStageShim"]),

        // Player: the `player` unit (backing tracks streamed from disk: libsndfile, libsamplerate;
        // transposed on the disk thread by librubberband).
        .target(name: "StagePlayer", dependencies: ["StageCore", "CSndFile", "CSampleRate", "CRubberBand", "CLoadOnUse"]),

        // Service: the app's settings (config file < environment < flags), waiting for devices,
        // journald-friendly log lines, the --meters view, the install plan. Pure Swift.
        .target(name: "StageService", dependencies: ["StageCore"]),
        // Remote: the parameter state the control thread owns (MIDI, OSC and the web page
        // change and observe it), the servers' commands and what they show. Pure Swift.
        .target(name: "StageRemote", dependencies: ["StageCore", "StageControl"]),
        // Link: the rack's tempo and beat grid shared with a band's other programs (Ableton
        // Link), read on the render thread; the session joined and watched on the main thread.
        .target(name: "StageLink", dependencies: ["StageCore", "CLink"], swiftSettings: renderPathSettings),
        // OSC: the remote's address space on UDP, messages through liblo.
        .target(name: "StageOSC", dependencies: ["StageCore", "StageRemote", "StageService", "CLiblo", "CLoadOnUse"]),
        // Sync: a band's boxes in step (one leads, the others follow its songs), signed OSC
        // messages between them (HMAC-SHA256 through OpenSSL's libcrypto).
        .target(name: "StageSync", dependencies: ["StageCore", "StageControl", "StageService", "StageRemote", "StageOSC", "CCrypto", "CLoadOnUse"]),
        // Web: the page and its WebSocket, through libwebsockets, on a thread of its own.
        .target(name: "StageWeb", dependencies: ["StageCore", "StageRemote", "StageService", "CWebSockets", "CLoadOnUse"]),

        // App: the `stagerack` command.
        .executableTarget(
            name: "stagerack",
            dependencies: ["StageCore", "StageUnits", "StageSynth", "StageLV2", "StageControl", "StageDrivers", "StageService", "CStageShim", "StagePlayer", "StageRemote", "StageOSC", "StageWeb", "StageLink", "StageJack", "StageSync"]),

        // Benchmarks and the release-build allocation check (never shipped).
        .target(name: "CAllocCounter"),
        .executableTarget(
            name: "stagerack-bench",
            dependencies: ["StageCore", "StageUnits", "StageSynth", "StageLV2", "StageControl", "StageDrivers", "CAllocCounter", "CStageShim"]),

        // Measurements shared by the tests (levels, frequencies, onsets).
        .target(name: "StageTestSupport"),

        .testTarget(name: "StageCoreTests", dependencies: ["StageCore", "StageControl", "StageTestSupport"]),
        .testTarget(name: "StageUnitsTests", dependencies: ["StageCore", "StageUnits", "StageTestSupport", "CAllocCounter"]),
        // Whole-rack tests: rack files and their errors, offline renders, allocation counts.
        .testTarget(
            name: "StageRackTests",
            dependencies: ["StageCore", "StageControl", "StageUnits", "StageSynth", "StageDrivers", "StageTestSupport", "CAllocCounter", "StagePlayer"]),
        // The lv2 unit against lv2apply, x42 fil4's response, bad plugins, allocations.
        .testTarget(
            name: "StageLV2Tests",
            dependencies: ["StageCore", "StageControl", "StageUnits", "StageLV2", "StageDrivers", "StageTestSupport", "CAllocCounter"]),
        .testTarget(
            name: "StageSynthTests", dependencies: ["StageCore", "StageSynth", "StageTestSupport", "CAllocCounter"]),
        // The service: settings precedence, device wait, log format, meters, install plan, and
        // the `stagerack` binary itself (play through alsa-lib's file plugin, install-service,
        // the systemd unit through systemd-analyze, the C shims for aarch64).
        .testTarget(name: "StageServiceTests", dependencies: ["StageCore", "StageControl", "StageService", "StageDrivers"]),
        // The player unit: streaming, transport, loops, underruns (files made by the tests);
        // the rack's tempo sources (song, taps, clock, a shared Link session).
        .testTarget(
            name: "StagePlayerTests",
            dependencies: ["StageCore", "StageControl", "StagePlayer", "StageUnits", "StageDrivers", "StageTestSupport", "CAllocCounter", "CSndFile", "StageLink"]),
        // The remote: parameter state, commands, MIDI and remote changes meeting on the
        // control thread.
        .testTarget(
            name: "StageRemoteTests", dependencies: ["StageCore", "StageControl", "StageUnits", "StageDrivers", "StageRemote", "StageOSC", "StageService", "StageTestSupport"]),
        // Sync between boxes: signatures, messages, the replay window.
        .testTarget(name: "StageSyncTests", dependencies: ["StageSync", "StageOSC"]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
