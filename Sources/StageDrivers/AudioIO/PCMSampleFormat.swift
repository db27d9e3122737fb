import CALSA
import StageCore

/// The sample formats StageRack speaks to ALSA, in order of preference, with conversion
/// to and from the engine's Float. Thread: any (conversions are allocation-free).
public enum PCMSampleFormat: String, CaseIterable, Sendable {
    case float = "FLOAT_LE"
    case s32 = "S32_LE"
    case s24 = "S24_LE"  // 24 bits in the low bytes of 32
    case s24packed = "S24_3LE"
    case s16 = "S16_LE"

    public var alsaFormat: snd_pcm_format_t {
        switch self {
        case .float: return SND_PCM_FORMAT_FLOAT_LE
        case .s32: return SND_PCM_FORMAT_S32_LE
        case .s24: return SND_PCM_FORMAT_S24_LE
        case .s24packed: return SND_PCM_FORMAT_S24_3LE
        case .s16: return SND_PCM_FORMAT_S16_LE
        }
    }

    public var bytesPerSample: Int {
        switch self {
        case .float, .s32, .s24: return 4
        case .s24packed: return 3
        case .s16: return 2
        }
    }

    /// Converts interleaved device samples into non-interleaved floats (channels beyond
    /// `bus` are skipped; missing ones are zero). Thread: render.
    @inline(__always)
    public func decode(
        _ raw: UnsafeRawPointer, deviceChannels: Int, frames: Int, into bus: AudioBus
    ) {
        let n = min(deviceChannels, bus.channelCount)
        for c in 0..<bus.channelCount where c >= n { bus[c].update(repeating: 0, count: frames) }
        switch self {
        case .float:
            let p = raw.assumingMemoryBound(to: Float.self)
            for c in 0..<n {
                let out = bus[c]
                for f in 0..<frames { out[f] = p[f * deviceChannels + c] }
            }
        case .s32:
            let p = raw.assumingMemoryBound(to: Int32.self)
            for c in 0..<n {
                let out = bus[c]
                for f in 0..<frames { out[f] = Float(Int32(littleEndian: p[f * deviceChannels + c])) * (1 / 2_147_483_648) }
            }
        case .s24:
            let p = raw.assumingMemoryBound(to: Int32.self)
            for c in 0..<n {
                let out = bus[c]
                for f in 0..<frames {
                    let v = (Int32(littleEndian: p[f * deviceChannels + c]) << 8) >> 8  // sign-extend 24 bits
                    out[f] = Float(v) * (1 / 8_388_608)
                }
            }
        case .s24packed:
            let p = raw.assumingMemoryBound(to: UInt8.self)
            for c in 0..<n {
                let out = bus[c]
                for f in 0..<frames {
                    let b = p + (f * deviceChannels + c) * 3
                    let v = ((Int32(b[0]) | Int32(b[1]) << 8 | Int32(b[2]) << 16) << 8) >> 8
                    out[f] = Float(v) * (1 / 8_388_608)
                }
            }
        case .s16:
            let p = raw.assumingMemoryBound(to: Int16.self)
            for c in 0..<n {
                let out = bus[c]
                for f in 0..<frames { out[f] = Float(Int16(littleEndian: p[f * deviceChannels + c])) * (1 / 32768) }
            }
        }
    }

    /// Converts non-interleaved floats into interleaved device samples, clipping to full
    /// scale and rounding; device channels beyond the bus get silence. Thread: render.
    @inline(__always)
    public func encode(
        _ bus: AudioBus, frames: Int, into raw: UnsafeMutableRawPointer, deviceChannels: Int
    ) {
        for c in 0..<deviceChannels {
            let source: UnsafeMutablePointer<Float>? = c < bus.channelCount ? bus[c] : nil
            switch self {
            case .float:
                let p = raw.assumingMemoryBound(to: Float.self)
                for f in 0..<frames { p[f * deviceChannels + c] = source?[f] ?? 0 }
            case .s32:
                let p = raw.assumingMemoryBound(to: Int32.self)
                for f in 0..<frames {
                    let x = Double(min(max(source?[f] ?? 0, -1), 1)) * 2_147_483_648
                    p[f * deviceChannels + c] = Int32(clamping: Int64(x.rounded())).littleEndian
                }
            case .s24:
                let p = raw.assumingMemoryBound(to: Int32.self)
                for f in 0..<frames {
                    let x = (min(max(source?[f] ?? 0, -1), 1) * 8_388_608).rounded()
                    p[f * deviceChannels + c] = Int32(min(max(x, -8_388_608), 8_388_607)).littleEndian
                }
            case .s24packed:
                let p = raw.assumingMemoryBound(to: UInt8.self)
                for f in 0..<frames {
                    let x = (min(max(source?[f] ?? 0, -1), 1) * 8_388_608).rounded()
                    let v = Int32(min(max(x, -8_388_608), 8_388_607))
                    let b = p + (f * deviceChannels + c) * 3
                    b[0] = UInt8(truncatingIfNeeded: v)
                    b[1] = UInt8(truncatingIfNeeded: v >> 8)
                    b[2] = UInt8(truncatingIfNeeded: v >> 16)
                }
            case .s16:
                let p = raw.assumingMemoryBound(to: Int16.self)
                for f in 0..<frames {
                    let x = (min(max(source?[f] ?? 0, -1), 1) * 32768).rounded()
                    p[f * deviceChannels + c] = Int16(min(max(x, -32768), 32767)).littleEndian
                }
            }
        }
    }
}

