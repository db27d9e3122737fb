import StageService
import XCTest

/// Log lines: one per event, level prefix, journald priorities, no escapes off a terminal.
final class LogFormatTests: XCTestCase {
    func testPlainLinesHaveTheLevelPrefixAndNoEscapes() {
        let f = LogFormat(journal: false, colour: false)
        XCTAssertEqual(f.format(.info, "rack x.json: 4 units"), "info: rack x.json: 4 units\n")
        XCTAssertEqual(f.format(.warning, "a\nb\n"), "warning: a\nwarning: b\n", "one log line per line of the message")
        XCTAssertEqual(f.format(.error, "bad \u{1B}[31mname"), "error: bad ?[31mname\n", "control characters never reach a pipe")
        XCTAssertFalse(f.format(.error, "x").contains("\u{1B}"))
    }

    func testJournalLinesCarryTheSyslogPriority() {
        let f = LogFormat(journal: true, colour: false)
        XCTAssertEqual(f.format(.error, "x"), "<3>error: x\n")
        XCTAssertEqual(f.format(.warning, "x\ny"), "<4>warning: x\n<4>warning: y\n")
        XCTAssertEqual(f.format(.info, "x"), "<6>info: x\n")
        XCTAssertEqual(f.format(.status, "load 3%"), "<6>status: load 3%\n")
    }

    func testColourOnlyMarksTheLevel() {
        let f = LogFormat(journal: false, colour: true)
        XCTAssertEqual(f.format(.error, "x"), "\u{1B}[1;31merror:\u{1B}[0m x\n")
        XCTAssertEqual(f.format(.info, "x"), "info: x\n")
    }

    func testDetectionOnAPipeAndAJournalStream() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        let plain = LogFormat.detect(environment: ["TERM": "xterm"], fd: fds[1])
        XCTAssertEqual(plain, LogFormat(journal: false, colour: false), "a pipe gets no colours")
        var st = stat()
        XCTAssertEqual(fstat(fds[1], &st), 0)
        let stream = "\(st.st_dev):\(st.st_ino)"
        XCTAssertTrue(LogFormat.detect(environment: ["JOURNAL_STREAM": stream], fd: fds[1]).journal)
        XCTAssertFalse(LogFormat.detect(environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino + 1)"], fd: fds[1]).journal,
                       "a JOURNAL_STREAM inherited by a child whose stderr goes elsewhere is ignored")
        XCTAssertFalse(LogFormat.detect(environment: ["JOURNAL_STREAM": "junk"], fd: fds[1]).journal)
    }
}
