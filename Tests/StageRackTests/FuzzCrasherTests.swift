import Foundation
import StageCore
import StageDrivers
import StageSynth
import StageUnits
import XCTest

/// Every input the fuzzers (Tests/fuzz/run.sh) found to crash or hang is kept under
/// Tests/Fixtures/fuzz/crashers/TARGET/ and goes through the same code here: each must
/// now give a value or an error. Files listed in crashers/OPEN wait for a fix on another
/// branch and are skipped (with their names printed).
final class FuzzCrasherTests: XCTestCase {
    static let folder = Fixtures.path("fuzz/crashers")

    static var open: Set<String> {
        let text = (try? String(contentsOfFile: folder + "/OPEN", encoding: .utf8)) ?? ""
        return Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: " ").first.map(String.init) })
    }

    func crashers(_ target: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(Self.folder)/\(target)")) ?? []
        let open = Self.open
        for name in names where open.contains("\(target)/\(name)") { print("skipped (fix pending): \(target)/\(name)") }
        return names.filter { !open.contains("\(target)/\($0)") }.sorted().map { "\(Self.folder)/\(target)/\($0)" }
    }

    func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    func testRackCrashers() throws {
        let registry = UnitRegistry(StandardUnits.types + SynthUnits.types)
        for path in crashers("rack") {
            let text = String(decoding: try bytes(path), as: UTF8.self)
            _ = try? SetlistReader.read(text: text, file: "s.json")
            guard let rack = try? RackReader(registry: registry).read(text: text, file: "r.json") else { continue }
            let compiler = GraphCompiler(registry: registry)
            if compiler.check(rack).isEmpty, !rack.units.contains(where: { $0.type == "synth" }),
                let plan = try? compiler.compile(rack, options: GraphCompiler.Options(maxFrames: 64))
            {
                let mapper = MIDIMapper(plan: plan, presetsByDefault: true)
                for value in [0, 64, 127] {
                    for controller in 0..<128 {
                        mapper.handle(.controlChange(channel: 0, controller: controller, value: value)) { _ in }
                    }
                }
            }
        }
    }

    func testMIDIFileCrashers() throws {
        for path in crashers("midi-file") {
            guard let file = try? StandardMIDIFile(bytes: try bytes(path)) else { continue }
            XCTAssertTrue(file.duration.isFinite && file.duration >= 0, "\(path): duration \(file.duration)")
            XCTAssertTrue(file.messages.allSatisfy { $0.seconds.isFinite && $0.seconds >= 0 }, path)
        }
    }

    func testMIDIByteCrashers() throws {
        for path in crashers("midi-bytes") {
            var parser = MIDIByteParser()
            var count = 0
            parser.feed(try bytes(path)) { _ in count += 1 }
            XCTAssertGreaterThanOrEqual(count, 0)
        }
    }

    func testAudioFileCrashers() throws {
        for path in crashers("audio-file") {
            guard let audio = try? AudioData.read(path: path) else { continue }
            XCTAssertTrue(audio.sampleRate.isFinite && audio.sampleRate > 0, path)
            _ = try? audio.resampled(to: 48000)
        }
    }
}
