import StageCore
import StageSynth
import StageTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Finding, loading and sharing SoundFonts; the errors a performer sees.
final class SoundFontTests: XCTestCase {
    private var temporary: String = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/stagesynth-test-XXXXXX".utf8CString)
        // The name is read inside the closure: mkdtemp returns the buffer's own pointer, which
        // must not outlive it (Swift 6.0.3's runtime trapped on the copy made after it).
        let dir: String? = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        temporary = try XCTUnwrap(dir)
    }

    override func tearDownWithError() throws {
        _ = system("rm -rf '\(temporary)'")
    }

    private func write(_ path: String, _ bytes: [UInt8]) {
        let f = fopen(path, "wb")!
        _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, bytes.count, f) }
        fclose(f)
    }

    private func copy(_ from: String, _ to: String) {
        XCTAssertEqual(system("cp '\(from)' '\(to)'"), 0)
    }

    func testMissingSoundFontNamesEveryPlaceSearched() throws {
        let search = SoundFontSearch(
            rackDirectory: temporary, environment: ["STAGERACK_SOUNDFONTS": temporary + "/extra", "HOME": temporary],
            executablePath: "/nonexistent/bin/stagerack", currentDirectory: temporary)
        XCTAssertEqual(mkdir(temporary + "/extra", 0o755), 0)
        XCTAssertThrowsError(try search.resolve("NoSuchFont.sf2")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("\"NoSuchFont.sf2\" not found"), text)
            for place in [
                temporary + "/NoSuchFont.sf2", temporary + "/extra/NoSuchFont.sf2", "/usr/share/sounds/sf2/NoSuchFont.sf2",
                "/usr/share/soundfonts/NoSuchFont.sf2", temporary + "/.local/share/soundfonts/NoSuchFont.sf2",
            ] {
                XCTAssertTrue(text.contains(place), "names \(place): \(text)")
            }
            XCTAssertTrue(text.contains("STAGERACK_SOUNDFONTS"), text)
        }
    }

    func testMissingSoundFontFailsMakeWithTheSameMessage() throws {
        XCTAssertThrowsError(
            try SynthUnitType().make(
                SynthTest.settings(#"{"soundfont": "NoSuchFont.sf2"}"#, rackDirectory: temporary),
                UnitBuildContext(sampleRate: 48000, hostInputChannels: 1))
        ) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains(temporary + "/NoSuchFont.sf2"), text)
            XCTAssertTrue(text.contains("/usr/share/sounds/sf2/NoSuchFont.sf2"), text)
        }
    }

    func testCorruptSoundFontIsAClearError() throws {
        let junk = temporary + "/junk.sf2"
        write(junk, Array("this is not a soundfont at all".utf8))
        XCTAssertThrowsError(try SoundFontLibrary().load(path: junk)) { error in
            XCTAssertTrue("\(error)".contains(junk), "\(error)")
            XCTAssertTrue("\(error)".contains("not a SoundFont"), "\(error)")
        }
        // A RIFF sfbk header with the rest missing.
        let truncated = temporary + "/truncated.sf2"
        write(truncated, Array("RIFF".utf8) + [200, 0, 0, 0] + Array("sfbkLIST".utf8) + [4, 0, 0, 0])
        XCTAssertThrowsError(try SoundFontLibrary().load(path: truncated)) { error in
            XCTAssertTrue("\(error)".contains(truncated), "\(error)")
            XCTAssertTrue("\(error)".contains("truncated"), "\(error)")
        }
        // A real font cut in half.
        try SynthTest.requireTimGM()
        let half = temporary + "/half.sf2"
        XCTAssertEqual(system("head -c 3000000 '\(SynthTest.timGM)' > '\(half)'"), 0)
        XCTAssertThrowsError(try SoundFontLibrary().load(path: half)) { error in
            XCTAssertTrue("\(error)".contains("truncated"), "\(error)")
        }
        // Structurally sound but with a broken preset table: FluidSynth's parser refuses it.
        let broken = temporary + "/broken.sf2"
        var bytes = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("sfbk".utf8)
        for list in ["INFO", "sdta", "pdta"] {
            bytes += Array("LIST".utf8) + [4, 0, 0, 0] + Array(list.utf8)
        }
        let size = bytes.count - 8
        bytes[4] = UInt8(size & 255)
        bytes[5] = UInt8(size >> 8)
        write(broken, bytes)
        XCTAssertThrowsError(try SoundFontLibrary().load(path: broken)) { error in
            XCTAssertTrue("\(error)".contains(broken), "\(error)")
            XCTAssertTrue("\(error)".contains("fluid_synth_sfload failed"), "\(error)")
        }
    }

    func testNameFoundInTheRackFolderFirstAndWithoutExtension() throws {
        try SynthTest.requireTimGM()
        copy(SynthTest.timGM, temporary + "/MyPiano.sf2")
        let search = SoundFontSearch(rackDirectory: temporary)
        XCTAssertEqual(try search.resolve("MyPiano.sf2").path, temporary + "/MyPiano.sf2")
        XCTAssertEqual(try search.resolve("MyPiano").path, temporary + "/MyPiano.sf2")
        // Installed fonts are found by name.
        XCTAssertEqual(try search.resolve("TimGM6mb.sf2").path, SynthTest.timGM)
        // A relative path is taken from the rack's folder.
        XCTAssertEqual(mkdir(temporary + "/fonts", 0o755), 0)
        copy(SynthTest.timGM, temporary + "/fonts/Other.sf2")
        XCTAssertEqual(try search.resolve("fonts/Other.sf2").path, temporary + "/fonts/Other.sf2")
        XCTAssertEqual(try search.resolve(temporary + "/fonts/Other.sf2").path, temporary + "/fonts/Other.sf2")
    }

    func testEnvironmentFolderAndXDGDataHome() throws {
        try SynthTest.requireTimGM()
        XCTAssertEqual(mkdir(temporary + "/env", 0o755), 0)
        XCTAssertEqual(mkdir(temporary + "/xdg", 0o755), 0)
        XCTAssertEqual(mkdir(temporary + "/xdg/soundfonts", 0o755), 0)
        copy(SynthTest.timGM, temporary + "/env/A.sf2")
        copy(SynthTest.timGM, temporary + "/xdg/soundfonts/B.sf2")
        let search = SoundFontSearch(
            rackDirectory: "", environment: ["STAGERACK_SOUNDFONTS": temporary + "/env", "XDG_DATA_HOME": temporary + "/xdg"],
            executablePath: "", currentDirectory: "/")
        XCTAssertEqual(try search.resolve("A.sf2").path, temporary + "/env/A.sf2")
        XCTAssertEqual(try search.resolve("B.sf2").path, temporary + "/xdg/soundfonts/B.sf2")
    }

    func testRepositorySoundfontsFolderIsFoundFromTheExecutableAndBesideTheRack() throws {
        let repo = temporary + "/repo"
        XCTAssertEqual(mkdir(repo, 0o755), 0)
        XCTAssertEqual(mkdir(repo + "/soundfonts", 0o755), 0)
        XCTAssertEqual(mkdir(repo + "/racks", 0o755), 0)
        write(repo + "/Package.swift", Array("// swift-tools-version:6.0\n".utf8))
        write(repo + "/soundfonts/stagerack-basic.sf2", Array("RIFF".utf8))
        let fromExe = SoundFontSearch(
            rackDirectory: "", environment: [:], executablePath: repo + "/.build/release/stagerack", currentDirectory: "/")
        XCTAssertTrue(fromExe.directories.contains(repo + "/soundfonts"), "\(fromExe.directories)")
        let besideTheRack = SoundFontSearch(
            rackDirectory: repo + "/racks", environment: [:], executablePath: "/nonexistent/x", currentDirectory: "/")
        XCTAssertEqual(try besideTheRack.resolve("stagerack-basic.sf2").path, repo + "/soundfonts/stagerack-basic.sf2")
    }

    /// Issue 14: a font named by file name was found or not depending on the working
    /// directory, and the places searched showed the rack's folder as a relative name.
    func testTheSameFontIsFoundFromAnyWorkingDirectoryAndPathsAreAbsolute() throws {
        let repo = temporary + "/repo"
        let elsewhere = temporary + "/elsewhere"
        for d in [repo, repo + "/soundfonts", repo + "/.build", repo + "/.build/release", elsewhere, elsewhere + "/gig"] {
            XCTAssertEqual(mkdir(d, 0o755), 0, d)
        }
        write(repo + "/Package.swift", Array("//\n".utf8))
        write(repo + "/soundfonts/stagerack-basic.sf2", Array("RIFF".utf8))
        let exe = repo + "/.build/release/stagerack"
        // A rack outside the checkout, named relative to where the command runs.
        for cwd in [repo, elsewhere, "/"] {
            let rackDir = cwd == elsewhere ? "gig" : elsewhere + "/gig"
            let search = SoundFontSearch(rackDirectory: rackDir, environment: [:], executablePath: exe, currentDirectory: cwd)
            XCTAssertEqual(try search.resolve("stagerack-basic.sf2").path, repo + "/soundfonts/stagerack-basic.sf2", "from \(cwd)")
            XCTAssertThrowsError(try search.resolve("NoSuchFont.sf2")) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(elsewhere + "/gig/NoSuchFont.sf2"), "the rack's folder, absolute: \(text)")
                XCTAssertTrue(text.contains(repo + "/soundfonts/NoSuchFont.sf2"), "the binary's project: \(text)")
                XCTAssertFalse(text.contains("Searched: gig/"), text)
            }
        }
        // Installed: the share folder beside the binary's bin/ is searched, and named when missing.
        let installed = SoundFontSearch(
            rackDirectory: elsewhere + "/gig", environment: [:], executablePath: temporary + "/usr/bin/stagerack",
            currentDirectory: "/")
        XCTAssertThrowsError(try installed.resolve("NoSuchFont.sf2")) { error in
            XCTAssertTrue("\(error)".contains(self.temporary + "/usr/share/stagerack/soundfonts/NoSuchFont.sf2"), "\(error)")
        }
    }

    func testDefaultPrefersAGeneralMIDIFontAndSaysWhich() throws {
        try SynthTest.requireTimGM()
        let choice = try SoundFontSearch(rackDirectory: "").resolve(nil)
        XCTAssertTrue(choice.reason.hasPrefix("default: General MIDI font"), choice.reason)
        XCTAssertTrue(choice.path.hasSuffix("FluidR3_GM.sf2") || choice.path.hasSuffix("TimGM6mb.sf2"), choice.path)
        // With no GM font anywhere, the bundled one is the default.
        let repo = temporary + "/repo"
        XCTAssertEqual(mkdir(repo, 0o755), 0)
        XCTAssertEqual(mkdir(repo + "/soundfonts", 0o755), 0)
        write(repo + "/Package.swift", Array("//\n".utf8))
        write(repo + "/soundfonts/stagerack-basic.sf2", Array("RIFF".utf8))
        let isolated = SoundFontSearch(
            rackDirectory: repo + "/soundfonts", environment: [:], executablePath: "", currentDirectory: "/")
        if access("/usr/share/sounds/sf2/FluidR3_GM.sf2", F_OK) != 0 && access(SynthTest.timGM, F_OK) != 0 {
            XCTAssertEqual(try isolated.resolve(nil).path, repo + "/soundfonts/stagerack-basic.sf2")
        }
    }

    func testUnitReportsWhichFontItPicked() throws {
        try SynthTest.requireTimGM()
        let unit = try SynthUnitType().makeSynth(SynthTest.settings("{}"))
        XCTAssertTrue(unit.soundFontDescription.contains(unit.soundFont.path), unit.soundFontDescription)
        XCTAssertTrue(unit.soundFontDescription.contains("default"), unit.soundFontDescription)
    }

    func testLibrarySharesALoadedFontBetweenUnits() throws {
        try SynthTest.requireTimGM()
        let library = SoundFontLibrary()
        let type = SynthUnitType(library: library)
        let a = try type.makeSynth(SynthTest.settings(#"{"soundfont": "TimGM6mb.sf2"}"#))
        let b = try type.makeSynth(SynthTest.settings(#"{"soundfont": "\#(SynthTest.timGM)", "program": 40}"#))
        XCTAssertTrue(a.soundFont === b.soundFont, "one font in memory")
        XCTAssertEqual(library.fileLoads, 1)
        // Both play, each with its own program.
        for unit in [a, b] {
            try unit.prepare(PrepareSpec(sampleRate: 48000, maxFrames: 64, inputChannels: [], outputChannels: [2]))
        }
        XCTAssertGreaterThan(a.soundFont.loadSeconds, 0)
        XCTAssertGreaterThan(a.soundFont.presets.count, 100, "TimGM6mb is a full GM set")
    }

    func testUnitsSharingAFontPlayOnWhenOneGoesAway() throws {
        try SynthTest.requireTimGM()
        let library = SoundFontLibrary()
        let type = SynthUnitType(library: library)
        var piano: UnitHarness? = try UnitHarness(type: type, settings: ["soundfont": .string("TimGM6mb"), "program": .number(0)])
        let violin = try UnitHarness(type: type, settings: ["soundfont": .string("TimGM6mb"), "program": .number(40)])
        XCTAssertEqual(library.fileLoads, 1)
        XCTAssertEqual(library.loaded.count, 1)
        let a = SynthTest.renderNote(piano!, key: 60, hold: 0.5)
        let b = SynthTest.renderNote(violin, key: 60, hold: 0.5)
        XCTAssertGreaterThan(Measure.rms(a), 1e-3)
        XCTAssertGreaterThan(Measure.rms(b), 1e-3)
        let c4 = 261.626
        let pa = SpectrumMeasure.harmonicProfile(a[9600..<24000], fundamental: c4)
        let pb = SpectrumMeasure.harmonicProfile(b[9600..<24000], fundamental: c4)
        XCTAssertGreaterThan(SpectrumMeasure.profileDistance(pa, pb), 6, "each unit keeps its own program")
        // The piano unit goes away mid-note; the violin unit (same font) plays on, and can
        // be prepared again.
        piano!.send(.noteOn(channel: 0, note: 64, velocity: 100))
        _ = piano!.render(frames: 4800)
        piano = nil
        let again = SynthTest.renderNote(violin, key: 67, hold: 0.5)
        XCTAssertGreaterThan(Measure.rms(again), 1e-3)
        try violin.unit.prepare(PrepareSpec(sampleRate: 44100, maxFrames: 256, inputChannels: [], outputChannels: [2]))
        XCTAssertEqual(library.loaded.count, 1)
    }

    func testFontIsFreedWhenNoUnitUsesItAndReloadedWhenChanged() throws {
        try SynthTest.requireTimGM()
        let library = SoundFontLibrary()
        let path = temporary + "/Copy.sf2"
        copy(SynthTest.timGM, path)
        do {
            let f = try library.load(path: path)
            XCTAssertEqual(library.loaded.count, 1)
            XCTAssertEqual(f.path, path)
        }
        XCTAssertEqual(library.loaded.count, 0, "held weakly")
        let kept = try library.load(path: path)
        library.keep(kept)
        XCTAssertTrue(try library.load(path: path) === kept)
        XCTAssertEqual(library.fileLoads, 2)
        // A changed file is read again.
        XCTAssertEqual(system("touch -d '2001-01-01' '\(path)'"), 0)
        XCTAssertFalse(try library.load(path: path) === kept)
        XCTAssertEqual(library.fileLoads, 3)
    }

    func testMissingPresetIsAClearError() throws {
        try SynthTest.requireTimGM()
        XCTAssertThrowsError(try SynthUnitType().makeSynth(SynthTest.settings(#"{"bank": 77, "program": 3}"#))) { error in
            XCTAssertTrue("\(error)".contains("no preset at bank 77 program 3"), "\(error)")
        }
    }

    func testFluidSynthLogIsCapturedNotPrinted() throws {
        try SynthTest.requireTimGM()
        _ = FluidSynthLog.drain()
        // A program the font lacks makes FluidSynth warn (on the render thread).
        let h = try SynthTest.harness()
        h.send(.controlChange(channel: 0, controller: 0, value: 99), atFrame: 0)
        h.send(.programChange(channel: 0, program: 5), atFrame: 0)
        _ = h.render(frames: 64)
        let log = FluidSynthLog.drain().messages
        XCTAssertTrue(log.contains { $0.level == 2 && $0.text.contains("Instrument not found") }, "\(log)")
    }
}
