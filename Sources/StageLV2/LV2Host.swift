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
/// while instantiating, counted once rendering), `worker:schedule` (`LV2Worker`: a worker
/// thread per instance), `state:mapPath` and `state:freePath` (paths stay absolute). Not
/// given (a plugin that requires one is refused with its name): `state:threadSafeRestore`
/// (state is restored only before the first render), `bufsz:fixedBlockLength`,
/// `bufsz:powerOf2BlockLength`, `data-access`, `instance-access`, `uri-map`, `event`.
/// Thread: control.
enum LV2Host {
    static let supportedFeatures: Set<String> = [
        LV2URI.urid, LV2URI.unmap, LV2URI.options, LV2URI.log, LV2URI.boundedBlockLength,
        LV2URI.hardRTCapable, LV2URI.isLive, LV2URI.inPlaceBroken, LV2URI.workerSchedule, LV2URI.mapPath,
        LV2URI.freePath,
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
    /// The features given to the plugin's state `save` and `restore`: URID map and unmap,
    /// `state:mapPath`, `state:freePath`, log (no worker: restore is not thread-safe here).
    let stateList: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    let log: UnsafeMutablePointer<stage_lv2_log>
    private let options: UnsafeMutablePointer<LV2_Options_Option>
    private let ints: UnsafeMutablePointer<Int32>
    private let rate: UnsafeMutablePointer<Float>
    private let owned: UnsafeMutablePointer<LV2_Feature>
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(
        pluginName: String, sampleRate: Double, maxFrames: Int, sequenceBytes: Int,
        worker: UnsafePointer<LV2_Feature>? = nil
    ) {
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
        var all: [UnsafePointer<LV2_Feature>?] = [
            stage_lv2_urid_map_feature(), stage_lv2_urid_unmap_feature(), UnsafePointer(owned),
            UnsafePointer(owned + 1),
            (UnsafeRawPointer(log) + MemoryLayout<stage_lv2_log>.offset(of: \.feature)!)
                .assumingMemoryBound(to: LV2_Feature.self),
            stage_lv2_map_path_feature(), stage_lv2_free_path_feature(),
        ]
        let forState = all + [nil]
        stateList = .allocate(capacity: forState.count)
        stateList.initialize(from: forState, count: forState.count)
        if let worker { all.append(worker) }
        all.append(nil)
        list = .allocate(capacity: all.count)
        list.initialize(from: all, count: all.count)
    }

    deinit {
        list.deallocate()
        stateList.deallocate()
        owned.deallocate()
        options.deallocate()
        ints.deallocate()
        rate.deallocate()
        log.deallocate()
        for s in strings { free(s) }
    }
}
