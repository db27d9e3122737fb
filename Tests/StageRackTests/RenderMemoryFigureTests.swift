import Foundation
import XCTest

/// `render`'s printed peak memory is its own: Linux keeps getrusage's ru_maxrss across
/// execve and records there the high-water mark of the memory the exec replaces, which for a
/// program started by Foundation's Process is the parent's (under `swift test` a render
/// reported 37–50 MB instead of its 28.7). `ProcessUsage` reads VmHWM instead.
final class RenderMemoryFigureTests: XCTestCase {
    func testThePrintedPeakMemoryIsNotTheParents() throws {
        let dir = NSTemporaryDirectory() + "stagerack-memory-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rack = dir + "/mic.json"
        try #"{ "format": 2, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }"#
            .write(toFile: rack, atomically: true, encoding: .utf8)
        let input = dir + "/in.wav"
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        sox.arguments = ["-n", "-r", "48000", "-c", "1", "-b", "32", "-e", "floating-point", input, "synth", "2", "sine", "440"]
        try sox.run()
        sox.waitUntilExit()
        XCTAssertEqual(sox.terminationStatus, 0, "sox failed (scripts/install-deps.sh --test installs it)")

        // This process's resident memory goes 256 MB up (touched), then the render starts.
        let size = 256 << 20
        let big = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
        memset(big, 1, size)
        defer { big.deallocate() }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let render = Process()
        render.executableURL = exe.appendingPathComponent("stagerack")
        render.arguments = ["render", rack, "--input", input, "--output", dir + "/out.w64"]
        let err = Pipe()
        render.standardError = err
        render.standardOutput = FileHandle.nullDevice
        try render.run()
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        render.waitUntilExit()
        XCTAssertEqual(render.terminationStatus, 0, log)
        let range = try XCTUnwrap(log.range(of: #"memory [0-9.]+ MB"#, options: .regularExpression), log)
        let peak = try XCTUnwrap(Double(log[range].dropFirst("memory ".count).dropLast(" MB".count)))
        print("render's own peak memory, started from a 256 MB parent: \(peak) MB")
        XCTAssertLessThan(peak, 100, "the parent's memory counted as the render's")
    }
}
