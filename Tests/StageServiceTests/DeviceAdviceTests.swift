import StageService
import XCTest

/// What `play` says when a sound device does not open: what is wrong, and what to do.
final class DeviceAdviceTests: XCTestCase {
    func problem(_ device: String, code: Int32, cards: [String], wait: Double? = 0, function: String = "snd_pcm_open")
        -> DeviceProblem
    {
        DeviceProblem(
            device: device, role: "playback", function: function, code: code,
            technical: "\(device): \(function) failed: (\(code))", cards: cards, deviceWait: wait)
    }

    func testNoSoundCardAtAllSaysSoAndWhatToDo() {
        let (error, hints) = DeviceAdvice.explain(problem("default", code: -2, cards: []))
        XCTAssertTrue(error.contains("cannot open the playback device \"default\": this machine has no sound card"), error)
        XCTAssertTrue(error.contains("default: snd_pcm_open failed"), "ALSA's own words stay, for engineers: \(error)")
        XCTAssertTrue(hints.contains { $0.contains("stagerack devices") }, "\(hints)")
        XCTAssertTrue(hints.contains { $0.contains("--device-wait") && $0.contains("forever") }, "\(hints)")
        XCTAssertTrue(hints.contains { $0.contains("--playback null --capture null") && $0.contains("file plugin") }, "\(hints)")
    }

    func testAMissingUSBInterfaceIsNamedWithTheCardsThereAre() {
        let (error, hints) = DeviceAdvice.explain(problem("hw:CARD=USB,DEV=0", code: -19, cards: ["PCH", "Loopback"]))
        XCTAssertTrue(error.contains("there is no sound card \"USB\" (this machine has \"PCH\", \"Loopback\")"), error)
        XCTAssertTrue(hints.contains { $0.contains("--device-wait") }, "\(hints)")
        let byNumber = DeviceAdvice.explain(problem("plughw:1,0", code: -2, cards: ["PCH"])).error
        XCTAssertTrue(byNumber.contains("there is no sound card \"1\""), byNumber)
        var second = problem("hw:2,0", code: -19, cards: ["PCH", "USB"])
        second.cardNumbers = [0, 2]
        XCTAssertTrue(DeviceAdvice.explain(second).error.contains("the device is not there"), "card 2 exists: \(DeviceAdvice.explain(second).error)")
        let none = DeviceAdvice.explain(problem("hw:CARD=USB,DEV=0", code: -19, cards: [])).error
        XCTAssertTrue(none.contains("this machine has no sound card"), none)
    }

    func testAnUnknownNameIsNotCalledAMissingCard() {
        let (error, _) = DeviceAdvice.explain(problem("no_such_pcm", code: -2, cards: ["PCH"]))
        XCTAssertTrue(error.contains("ALSA has no device of that name (this machine has \"PCH\")"), error)
    }

    func testWaitingIsNotSuggestedWhenAlreadyWaiting() {
        let (_, hints) = DeviceAdvice.explain(problem("hw:CARD=USB,DEV=0", code: -19, cards: [], wait: 30))
        XCTAssertFalse(hints.contains { $0.contains("--device-wait") }, "it waited 30 s already: \(hints)")
    }

    func testADeviceThatIsThereButRefusesIsNotAnAbsence() {
        let busy = problem("hw:CARD=PCH,DEV=0", code: -16, cards: ["PCH"])
        XCTAssertFalse(DeviceAdvice.isAbsence(busy))
        XCTAssertTrue(DeviceAdvice.explain(busy).error.contains("in use by another program"))
        let rate = problem("hw:CARD=PCH,DEV=0", code: -22, cards: ["PCH"], function: "snd_pcm_hw_params_set_rate (96000 Hz not offered)")
        XCTAssertFalse(DeviceAdvice.isAbsence(rate))
        XCTAssertTrue(DeviceAdvice.explain(rate).hints.contains { $0.contains("plughw") })
    }
}
