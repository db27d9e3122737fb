import CLV2Host
import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// What StageRack gives LV2 plugins, and which plugins it refuses.
///
/// Host features: `urid:map`, `urid:unmap` (one process-wide table, in C), `options`
/// (`bufsz:minBlockLength` 1, `bufsz:maxBlockLength` the engine's largest block,
/// `bufsz:sequenceSize`, `param:sampleRate`), `bufsz:boundedBlockLength`, `log` (printed
/// while instantiating, counted once rendering). Not given (a plugin that requires one is
/// refused with its name): `worker`, `state:*`, `bufsz:fixedBlockLength`,
/// `bufsz:powerOf2BlockLength`, `data-access`, `instance-access`, `uri-map`, `event`.
/// Thread: control.
enum LV2Host {
    static let supportedFeatures: Set<String> = [
        LV2URI.urid, LV2URI.unmap, LV2URI.options, LV2URI.log, LV2URI.boundedBlockLength,
        LV2URI.hardRTCapable, LV2URI.isLive, LV2URI.inPlaceBroken,
    ]

    /// Bytes of each atom port's buffer (at least; a port's `rsz:minimumSize` can ask more).
    static let atomBufferBytes = 8192

    /// Why the plugin cannot be hosted, or nil when it can.
    static func refusal(_ info: LV2PluginInfo, allowNonRealtime: Bool) -> String? {
        let missing = info.requiredFeatures.filter { !supportedFeatures.contains($0) }
        if !missing.isEmpty {
            return "\(info.uri) needs host features StageRack does not give yet: "
                + missing.joined(separator: ", ")
        }
        if let odd = info.ports.first(where: { $0.kind == .unknown(optional: false) }) {
            return "\(info.uri) has port \(odd.index) (\(odd.symbol)) of a type StageRack cannot connect"
        }
        if !info.hardRTCapable && !allowNonRealtime {
            return "\(info.uri) does not declare lv2:hardRTCapable: its run() may allocate or lock and "
                + "glitch on stage; add \"allowNonRealtime\": true to this unit to run it anyway"
        }
        return nil
    }
}

/// The features one instance is given, in memory that lives as long as the instance.
/// Thread: control (made before `instantiate`, freed after `lilv_instance_free`).
final class LV2FeatureList {
    let list: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    let log: UnsafeMutablePointer<stage_lv2_log>
    private let options: UnsafeMutablePointer<LV2_Options_Option>
    private let ints: UnsafeMutablePointer<Int32>
    private let rate: UnsafeMutablePointer<Float>
    private let owned: UnsafeMutablePointer<LV2_Feature>
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(pluginName: String, sampleRate: Double, maxFrames: Int, sequenceBytes: Int) {
        log = .allocate(capacity: 1)
        stage_lv2_log_init(log, "lv2 \(pluginName)")
        ints = .allocate(capacity: 3)
        ints[0] = 1
        ints[1] = Int32(maxFrames)
        ints[2] = Int32(sequenceBytes)
        rate = .allocate(capacity: 1)
        rate.initialize(to: Float(sampleRate))
        let intType = stage_lv2_map(LV2URI.atomInt)
        let floatType = stage_lv2_map(LV2URI.atomFloat)
        func option(_ key: String, _ type: UInt32, _ size: Int, _ value: UnsafeRawPointer?) -> LV2_Options_Option {
            LV2_Options_Option(
                context: LV2_OPTIONS_INSTANCE, subject: 0, key: stage_lv2_map(key), size: UInt32(size), type: type,
                value: value)
        }
        options = .allocate(capacity: 5)
        options[0] = option(LV2URI.minBlockLength, intType, 4, ints)
        options[1] = option(LV2URI.maxBlockLength, intType, 4, ints + 1)
        options[2] = option(LV2URI.sequenceSize, intType, 4, ints + 2)
        options[3] = option(LV2URI.sampleRate, floatType, 4, rate)
        options[4] = LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0, size: 0, type: 0, value: nil)
        owned = .allocate(capacity: 2)
        let optionsURI = strdup(LV2URI.options)!
        let boundedURI = strdup(LV2URI.boundedBlockLength)!
        strings = [optionsURI, boundedURI]
        owned[0] = LV2_Feature(URI: optionsURI, data: UnsafeMutableRawPointer(options))
        owned[1] = LV2_Feature(URI: boundedURI, data: nil)
        list = .allocate(capacity: 6)
        list[0] = stage_lv2_urid_map_feature()
        list[1] = stage_lv2_urid_unmap_feature()
        list[2] = UnsafePointer(owned)
        list[3] = UnsafePointer(owned + 1)
        list[4] = (UnsafeRawPointer(log) + MemoryLayout<stage_lv2_log>.offset(of: \.feature)!)
            .assumingMemoryBound(to: LV2_Feature.self)
        list[5] = nil
    }

    deinit {
        list.deallocate()
        owned.deallocate()
        options.deallocate()
        ints.deallocate()
        rate.deallocate()
        log.deallocate()
        for s in strings { free(s) }
    }
}
