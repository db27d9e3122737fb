import CALSA
import StageCore

/// What a PCM device agreed to.
public struct PCMConfiguration: Sendable, Equatable, CustomStringConvertible {
    public var device: String
    public var isCapture: Bool
    public var format: PCMSampleFormat
    public var interleaved: Bool
    public var channels: Int
    public var sampleRate: Int
    public var periodFrames: Int
    public var periods: Int
    public var bufferFrames: Int { periodFrames * periods }

    public var description: String {
        "\(device) (\(isCapture ? "capture" : "playback")): \(format.rawValue) \(interleaved ? "interleaved" : "non-interleaved"), "
            + "\(channels) ch, \(sampleRate) Hz, \(periodFrames)×\(periods) frames"
    }
}

/// What the caller asks of a PCM device.
public struct PCMRequest: Sendable {
    public var device: String
    public var isCapture: Bool
    public var sampleRate: Int
    public var channels: Int
    public var periodFrames: Int
    public var periods: Int
    /// nil: the best the device offers (float, then S32, S24, S16).
    public var format: PCMSampleFormat?

    public init(device: String, isCapture: Bool, sampleRate: Int, channels: Int, periodFrames: Int, periods: Int,
                format: PCMSampleFormat? = nil) {
        self.device = device
        self.isCapture = isCapture
        self.sampleRate = sampleRate
        self.channels = channels
        self.periodFrames = periodFrames
        self.periods = periods
        self.format = format
    }
}

/// One open ALSA PCM stream (playback or capture), configured, with a conversion buffer.
///
/// Thread: opened and closed on the control thread; `read`/`write`/`recover` on the audio
/// thread, where they never allocate.
public final class PCMStream: @unchecked Sendable {
    public let configuration: PCMConfiguration
    let pcm: OpaquePointer
    /// One period of device-format samples (interleaved) or one buffer per channel.
    let raw: UnsafeMutableRawPointer
    let channelBuffers: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let bytesPerFrame: Int
    /// `snd_pcm_status` read into here each period (allocated once).
    let status: OpaquePointer
    /// Frames read or written since the last `prepare` (the application's position).
    var transferred = 0

    /// Opens and configures `request.device`, or throws naming what failed and, for rates
    /// and formats, what the device offers.
    public init(_ request: PCMRequest) throws(ALSAError) {
        var handle: OpaquePointer?
        let stream = request.isCapture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        try alsa("snd_pcm_open", request.device, snd_pcm_open(&handle, request.device, stream, 0))
        pcm = handle!
        do {
            configuration = try Self.configure(pcm, request)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        let c = configuration
        bytesPerFrame = c.format.bytesPerSample * c.channels
        raw = .allocate(byteCount: max(c.periodFrames * bytesPerFrame, 16), alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: max(c.periodFrames * bytesPerFrame, 16))
        channelBuffers = .allocate(capacity: c.channels)
        let perChannel = c.periodFrames * c.format.bytesPerSample
        for ch in 0..<c.channels { channelBuffers[ch] = raw + ch * perChannel }
        var s: OpaquePointer?
        snd_pcm_status_malloc(&s)
        status = s!
    }

    deinit {
        snd_pcm_close(pcm)
        snd_pcm_status_free(status)
        raw.deallocate()
        channelBuffers.deallocate()
    }

    static func configure(_ pcm: OpaquePointer, _ r: PCMRequest) throws(ALSAError) -> PCMConfiguration {
        let dev = r.device
        var hwp: OpaquePointer?
        try alsa("snd_pcm_hw_params_malloc", dev, snd_pcm_hw_params_malloc(&hwp))
        defer { snd_pcm_hw_params_free(hwp) }
        let hw = hwp!
        try alsa("snd_pcm_hw_params_any", dev, snd_pcm_hw_params_any(pcm, hw))
        var interleaved = true
        if snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED) < 0 {
            try alsa("snd_pcm_hw_params_set_access", dev, snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_NONINTERLEAVED))
            interleaved = false
        }
        let candidates = r.format.map { [$0] } ?? PCMSampleFormat.allCases
        guard let format = candidates.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0.alsaFormat) == 0 }) else {
            let offered = PCMSampleFormat.allCases.filter { snd_pcm_hw_params_test_format(pcm, hw, $0.alsaFormat) == 0 }
            throw ALSAError(
                function: "snd_pcm_hw_params_set_format (\(candidates.map(\.rawValue).joined(separator: ", ")) not offered; "
                    + "the device offers \(offered.isEmpty ? "none of FLOAT_LE/S32_LE/S24_LE/S24_3LE/S16_LE" : offered.map(\.rawValue).joined(separator: ", ")))",
                device: dev, code: -22)
        }
        try alsa("snd_pcm_hw_params_set_format", dev, snd_pcm_hw_params_set_format(pcm, hw, format.alsaFormat))
        var channels = UInt32(r.channels)
        try alsa("snd_pcm_hw_params_set_channels_near", dev, snd_pcm_hw_params_set_channels_near(pcm, hw, &channels))
        _ = snd_pcm_hw_params_set_rate_resample(pcm, hw, 0)
        if snd_pcm_hw_params_set_rate(pcm, hw, UInt32(r.sampleRate), 0) < 0 {
            var lo: UInt32 = 0
            var hi: UInt32 = 0
            var dir: Int32 = 0
            _ = snd_pcm_hw_params_get_rate_min(hw, &lo, &dir)
            _ = snd_pcm_hw_params_get_rate_max(hw, &hi, &dir)
            throw ALSAError(
                function: "snd_pcm_hw_params_set_rate (\(r.sampleRate) Hz not offered; the device offers \(lo)…\(hi) Hz)",
                device: dev, code: -22)
        }
        var period = snd_pcm_uframes_t(r.periodFrames)
        var dir: Int32 = 0
        try alsa("snd_pcm_hw_params_set_period_size_near", dev, snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir))
        var periods = UInt32(r.periods)
        dir = 0
        try alsa("snd_pcm_hw_params_set_periods_near", dev, snd_pcm_hw_params_set_periods_near(pcm, hw, &periods, &dir))
        try alsa("snd_pcm_hw_params", dev, snd_pcm_hw_params(pcm, hw))
        var actualPeriod: snd_pcm_uframes_t = 0
        _ = snd_pcm_hw_params_get_period_size(hw, &actualPeriod, &dir)
        var buffer: snd_pcm_uframes_t = 0
        _ = snd_pcm_hw_params_get_buffer_size(hw, &buffer)

        var swp: OpaquePointer?
        try alsa("snd_pcm_sw_params_malloc", dev, snd_pcm_sw_params_malloc(&swp))
        defer { snd_pcm_sw_params_free(swp) }
        let sw = swp!
        try alsa("snd_pcm_sw_params_current", dev, snd_pcm_sw_params_current(pcm, sw))
        // Start explicitly (or through the link), never by threshold: a capture threshold
        // of the whole buffer never starts on a real card (ALSA-TESTING.md).
        var boundary: snd_pcm_uframes_t = 0
        try alsa("snd_pcm_sw_params_get_boundary", dev, snd_pcm_sw_params_get_boundary(sw, &boundary))
        let threshold = r.isCapture ? 1 : boundary  // playback never starts by itself from the pre-fill
        try alsa("snd_pcm_sw_params_set_start_threshold", dev, snd_pcm_sw_params_set_start_threshold(pcm, sw, threshold))
        try alsa("snd_pcm_sw_params_set_avail_min", dev, snd_pcm_sw_params_set_avail_min(pcm, sw, actualPeriod))
        // Timestamps of each position update, on CLOCK_MONOTONIC (lost-frame detection).
        _ = snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE)
        _ = snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC)
        try alsa("snd_pcm_sw_params", dev, snd_pcm_sw_params(pcm, sw))
        return PCMConfiguration(
            device: dev, isCapture: r.isCapture, format: format, interleaved: interleaved, channels: Int(channels),
            sampleRate: r.sampleRate, periodFrames: Int(actualPeriod), periods: Int(buffer / max(actualPeriod, 1)))
    }

    /// Prepares the stream for (re)starting. Thread: audio.
    public func prepare() throws(ALSAError) {
        try alsa("snd_pcm_prepare", configuration.device, snd_pcm_prepare(pcm))
        transferred = 0
    }

    /// The device's timestamp of its last position update and that position (frames it
    /// has captured or played since the stream was prepared), from `snd_pcm_status`
    /// (htstamp and avail); nil when ALSA gives no status. Thread: audio (no allocation).
    public func timestampedPosition() -> (nanoseconds: UInt64, position: Int)? {
        guard snd_pcm_status(pcm, status) == 0 else { return nil }
        var ts = timespec()
        snd_pcm_status_get_htstamp(status, &ts)
        guard ts.tv_sec > 0 || ts.tv_nsec > 0 else { return nil }
        let avail = Int(snd_pcm_status_get_avail(status))
        let position = configuration.isCapture ? transferred + avail : transferred - (configuration.bufferFrames - avail)
        return (UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec), position)
    }

    /// Starts the stream (and any stream linked to it). Thread: audio.
    public func start() throws(ALSAError) {
        try alsa("snd_pcm_start", configuration.device, snd_pcm_start(pcm))
    }

    /// Plays out what is buffered, then stops. Thread: audio or control.
    public func drain() { snd_pcm_drain(pcm) }

    /// Stops at once, dropping pending frames. Thread: audio or control.
    public func drop() { snd_pcm_drop(pcm) }

    /// Links this stream with `other` so they start and stop together; false if the
    /// devices cannot be linked (then start them one after the other).
    public func link(_ other: PCMStream) -> Bool { snd_pcm_link(pcm, other.pcm) == 0 }

    public func unlink() { snd_pcm_unlink(pcm) }

    /// Reads `frames` ≤ one period into `bus`. Thread: audio.
    public func read(into bus: AudioBus, frames: Int) throws(ALSAError) {
        try transfer(frames: frames)
        decode(into: bus, frames: frames)
    }

    /// Writes `frames` ≤ one period from `bus`. Thread: audio.
    public func write(from bus: AudioBus, frames: Int) throws(ALSAError) {
        encode(from: bus, frames: frames)
        try transfer(frames: frames)
    }

    /// Writes `frames` of silence. Thread: audio.
    public func writeSilence(frames: Int) throws(ALSAError) {
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: frames * bytesPerFrame)
        try transfer(frames: frames)
    }

    /// Moves `frames` between the device and `raw` (in for capture, out for playback),
    /// retrying short transfers. Thread: audio.
    private func transfer(frames: Int) throws(ALSAError) {
        let capture = configuration.isCapture
        let interleaved = configuration.interleaved
        var done = 0
        while done < frames {
            let left = snd_pcm_uframes_t(frames - done)
            let n: Int
            if interleaved {
                let p = raw + done * bytesPerFrame
                n = capture ? snd_pcm_readi(pcm, p, left) : snd_pcm_writei(pcm, p, left)
            } else {
                offsetChannelPointers(by: done)
                n = capture ? snd_pcm_readn(pcm, channelBuffers, left) : snd_pcm_writen(pcm, channelBuffers, left)
                offsetChannelPointers(by: -done)
            }
            if n == -Int(EAGAIN_) { continue }
            if n < 0 {
                let function = capture ? (interleaved ? "snd_pcm_readi" : "snd_pcm_readn") : (interleaved ? "snd_pcm_writei" : "snd_pcm_writen")
                throw ALSAError(function: function, device: configuration.device, code: Int32(n))
            }
            done += n
        }
        transferred += frames
    }

    private func offsetChannelPointers(by frames: Int) {
        let bytes = frames * configuration.format.bytesPerSample
        for c in 0..<configuration.channels { channelBuffers[c] = channelBuffers[c]! + bytes }
    }

    private func decode(into bus: AudioBus, frames: Int) {
        let c = configuration
        if c.interleaved {
            c.format.decode(UnsafeRawPointer(raw), deviceChannels: c.channels, frames: frames, into: bus)
        } else {
            for ch in 0..<bus.channelCount {
                if ch < c.channels {
                    c.format.decode(UnsafeRawPointer(channelBuffers[ch]!), deviceChannels: 1, frames: frames,
                                    into: AudioBus(channelPointers: bus.channelPointers + ch, channelCount: 1))
                } else {
                    bus[ch].update(repeating: 0, count: frames)
                }
            }
        }
    }

    private func encode(from bus: AudioBus, frames: Int) {
        let c = configuration
        if c.interleaved {
            c.format.encode(bus, frames: frames, into: raw, deviceChannels: c.channels)
        } else {
            for ch in 0..<c.channels {
                let one = ch < bus.channelCount
                    ? AudioBus(channelPointers: bus.channelPointers + ch, channelCount: 1)
                    : AudioBus(channelPointers: bus.channelPointers, channelCount: 0)
                c.format.encode(one, frames: frames, into: channelBuffers[ch]!, deviceChannels: 1)
            }
        }
    }

    /// Frames waiting (capture) or free (playback), or the error. Thread: audio.
    /// False when the device's chain of plugins ends in alsa-lib's `null` plugin (`null`
    /// itself, or a `file` or `plug` over it): it takes and gives frames at once, with no
    /// clock behind it. A `file` plugin over real hardware keeps its slave's time.
    public var keepsTime: Bool {
        snd_pcm_type(pcm) != SND_PCM_TYPE_NULL && !dumpText.contains("Null PCM")
    }

    /// alsa-lib's description of the PCM and its slaves (`snd_pcm_dump`).
    var dumpText: String {
        var out: OpaquePointer?
        guard snd_output_buffer_open(&out) == 0, let out else { return "" }
        defer { snd_output_close(out) }
        snd_pcm_dump(pcm, out)
        var text: UnsafeMutablePointer<CChar>?
        let n = snd_output_buffer_string(out, &text)
        guard n > 0, let text else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: n), as: UTF8.self)
    }

    public func available() -> Int { Int(snd_pcm_avail_update(pcm)) }

    /// Brings the stream back after an xrun or a suspend. Thread: audio.
    public func recover(_ error: ALSAError) throws(ALSAError) {
        try alsa("snd_pcm_recover", configuration.device, snd_pcm_recover(pcm, error.code, 1))
    }
}
