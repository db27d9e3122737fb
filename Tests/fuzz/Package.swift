// swift-tools-version:6.0
// Coverage-guided fuzz targets (libFuzzer), kept out of the main package: they are built
// with `-sanitize=fuzzer,address` by Tests/fuzz/run.sh (`make fuzz`). The modules under
// test are the project's own sources, linked here (Sources/* are symlinks to ../../Sources).
import PackageDescription

let package = Package(
    name: "StageRackFuzz",
    targets: [
        .systemLibrary(name: "CALSA", pkgConfig: "alsa"),
        .systemLibrary(name: "CFluidSynth", pkgConfig: "fluidsynth"),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile"),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate"),
        .systemLibrary(name: "CLiblo"),
        .systemLibrary(name: "CLilv"),
        .systemLibrary(name: "CFFTW"),
        .systemLibrary(name: "CCrypto"),
        .target(name: "CLoadOnUse"),
        .target(name: "CLV2Host"),
        .target(name: "CStageShim", linkerSettings: [.linkedLibrary("asound")]),
        .target(name: "StageCore"),
        .target(name: "CFuzzDriver"),
        .target(name: "StageUnits", dependencies: ["StageCore", "CFFTW", "CLoadOnUse"]),
        .target(name: "StageSynth", dependencies: ["StageCore", "CFluidSynth"]),
        .target(name: "StageControl", dependencies: ["StageCore"]),
        .target(name: "StageDrivers", dependencies: ["StageCore", "StageControl", "CALSA", "CSndFile", "CSampleRate", "CStageShim"]),
        .target(name: "StageService", dependencies: ["StageCore"]),
        .target(name: "StageRemote", dependencies: ["StageCore", "StageControl"]),
        .target(name: "StageOSC", dependencies: ["StageCore", "StageRemote", "StageService", "CLiblo", "CLoadOnUse"]),
        .target(name: "StageLV2", dependencies: ["StageCore", "CLilv", "CLV2Host", "CLoadOnUse"]),
        .target(name: "StageSync", dependencies: ["StageCore", "StageControl", "StageService", "StageRemote", "StageOSC", "CCrypto", "CLoadOnUse"]),

        // (a) the JSON5 reader, rack and setlist validation, the graph and the MIDI mappings,
        // lv2 units (installed plugins instantiated, their presets and state restored).
        .executableTarget(name: "fuzz-rack", dependencies: ["CFuzzDriver", "StageCore", "StageUnits", "StageSynth", "StageLV2"]),
        // (b) the Standard MIDI File reader.
        .executableTarget(name: "fuzz-midi-file", dependencies: ["CFuzzDriver", "StageCore"]),
        // (c) the MIDI byte parser, and what it parses through a rack's mappings.
        .executableTarget(name: "fuzz-midi-bytes", dependencies: ["CFuzzDriver", "StageCore", "StageUnits"]),
        // (d) audio-file input through libsndfile (and the resampler).
        .executableTarget(name: "fuzz-audio-file", dependencies: ["CFuzzDriver", "StageCore", "StageDrivers"]),
        // (e) the remote: OSC datagrams through liblo and the address space, the page's JSON.
        .executableTarget(name: "fuzz-remote", dependencies: ["CFuzzDriver", "StageCore", "StageUnits", "StageOSC", "StageRemote"]),
        // (f) the sync port between boxes: datagrams, signatures, payloads.
        .executableTarget(name: "fuzz-sync", dependencies: ["CFuzzDriver", "StageOSC", "StageSync"]),
    ],
    swiftLanguageModes: [.v6]
)
