import CSndFile
import Foundation
import StageCore
import StagePlayer
import XCTest

/// MP3 through Debian's libsndfile (1.2, built with mpg123 and LAME): a file written by
/// libsndfile itself plays through the player at its level and pitch (MP3 is lossy: the
/// test measures, it does not compare samples).
final class PlayerMP3Tests: XCTestCase {
    func testAnMP3FileWrittenByLibsndfilePlaysAtItsLevelAndPitch() throws {
        let path = TrackFiles.folder() + "/tone.mp3"
        let rate = 44100
        let tone = (0..<(rate * 2)).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
        guard let f = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw XCTSkip("this libsndfile cannot write MP3: \(String(cString: sf_strerror(nil)))")
        }
        XCTAssertEqual(sf_writef_float(f, tone, sf_count_t(tone.count)), sf_count_t(tone.count))
        sf_close(f)

        let out = try PlayerRacks.render(
            PlayerRacks.text(file: path, settings: #""startOnLoad": true"#), frames: 48000 * 2, block: 128)
        // The middle second (clear of the encoder's delay and the end), at 48 kHz.
        let middle = Array(out[0][24000..<72000])
        let rms = (middle.reduce(0) { $0 + $1 * $1 } / Float(middle.count)).squareRoot()
        let expected: Float = 0.5 / Float(2).squareRoot()
        XCTAssertEqual(20 * log10(rms / expected), 0, accuracy: 0.3, "level within 0.3 dB of the file's")
        var crossings = 0
        for i in 1..<middle.count where middle[i - 1] < 0 && middle[i] >= 0 { crossings += 1 }
        XCTAssertEqual(crossings, 440, accuracy: 1, "440 Hz (resampled 44.1 → 48 kHz)")
        print("player: MP3 (libsndfile \(String(cString: sf_version_string()))): level \(20 * log10(rms / expected)) dB, \(crossings) Hz")
    }
}
