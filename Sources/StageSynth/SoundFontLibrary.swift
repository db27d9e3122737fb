import CFluidSynth
import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One preset of a SoundFont.
public struct SoundFontPreset: Sendable, Equatable, CustomStringConvertible {
    public var bank: Int
    public var program: Int
    public var name: String
    public var description: String { "\(bank):\(program) \(name)" }
}

/// A SoundFont loaded into memory once and shared by every synth unit that plays it.
///
/// FluidSynth cannot load a font without a synthesizer, so the font lives in a small private
/// "holder" synth (polyphony 1, never rendered) that owns it; each unit's synth borrows the
/// same `fluid_sfont_t` with `fluid_synth_add_sfont` and hands it back with
/// `fluid_synth_remove_sfont` before it is deleted. Sample data is therefore in memory once,
/// however many units and racks play the font. The font is freed when the last unit using it
/// goes away (the library holds it weakly).
///
/// FluidSynth counts sample references with plain integers that voices update on the render
/// thread: units sharing a font must render on one thread (the engine's render thread), or
/// in turn. Thread: control (creation, destruction); the properties are immutable.
public final class SoundFont: @unchecked Sendable, CustomStringConvertible {
    /// The canonical path of the file.
    public let path: String
    /// Wall-clock seconds the load took (reading and parsing the file, sample data included).
    public let loadSeconds: Double
    /// CPU seconds (user + sys) of the loading thread.
    public let loadCPUSeconds: Double
    /// What FluidSynth logged while loading (warnings about the file).
    public let warnings: [String]
    /// Every preset, in the font's order.
    public let presets: [SoundFontPreset]
    let identity: FileIdentity
    let holderSettings: OpaquePointer
    let holder: OpaquePointer
    /// The loaded font (`fluid_sfont_t *`), owned by `holder`.
    let sfont: OpaquePointer

    /// The file name without folders.
    public var name: String { path.split(separator: "/").last.map(String.init) ?? path }
    public var description: String { path }

    /// Loads the file at `path` (canonical). Thread: control.
    init(path: String, identity: FileIdentity) throws {
        FluidSynthLog.install()
        try SoundFont.checkHeader(path)
        let logStart = FluidSynthLog.position
        let wall0 = Clock.wall()
        let cpu0 = Clock.threadCPU()
        holderSettings = try Fluid.newSettings(sampleRate: 48000, polyphony: 1)
        guard let h = new_fluid_synth(holderSettings) else {
            delete_fluid_settings(holderSettings)
            throw UnitError("synth: new_fluid_synth failed while loading \(path)")
        }
        holder = h
        let id = fluid_synth_sfload(h, path, 0)
        let said = FluidSynthLog.messages(since: logStart)
        guard id != FLUID_FAILED, let f = fluid_synth_get_sfont_by_id(h, id) else {
            delete_fluid_synth(h)
            delete_fluid_settings(holderSettings)
            let detail = said.filter { $0.level <= 1 }.map(\.text)
            throw UnitError(
                "synth: cannot load SoundFont \(path): fluid_synth_sfload failed"
                    + (detail.isEmpty ? " (corrupt or unsupported file)" : ": " + detail.joined(separator: "; ")))
        }
        sfont = f
        loadSeconds = Clock.wall() - wall0
        loadCPUSeconds = Clock.threadCPU() - cpu0
        warnings = said.filter { $0.level <= 2 }.map(\.description)
        self.path = path
        self.identity = identity
        var list: [SoundFontPreset] = []
        fluid_sfont_iteration_start(f)
        while let p = fluid_sfont_iteration_next(f) {
            let name = fluid_preset_get_name(p).map { String(cString: $0) } ?? ""
            list.append(
                SoundFontPreset(
                    bank: Int(fluid_preset_get_banknum(p)), program: Int(fluid_preset_get_num(p)), name: name))
        }
        presets = list
        if list.isEmpty {
            delete_fluid_synth(h)
            delete_fluid_settings(holderSettings)
            throw UnitError("synth: SoundFont \(path) has no presets")
        }
    }

    deinit {
        delete_fluid_synth(holder)
        delete_fluid_settings(holderSettings)
    }

    /// The preset at `bank`:`program`, if the font has one.
    public func preset(bank: Int, program: Int) -> SoundFontPreset? {
        presets.first { $0.bank == bank && $0.program == program }
    }

    /// Refuses files that are not SoundFonts, or whose RIFF structure is cut short, with a
    /// message that names the file (FluidSynth's own parser says less, and after it fails
    /// FluidSynth hands the file to libinstpatch, which prints GLib criticals to stderr).
    /// Accepts `sfbk` (SF2, compressed SF3) with its INFO, sdta and pdta lists, and DLS.
    /// Thread: control.
    static func checkHeader(_ path: String) throws {
        guard let f = fopen(path, "rb") else {
            throw UnitError("synth: cannot open SoundFont \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(f) }
        func fail(_ why: String) -> UnitError { UnitError("synth: cannot load SoundFont \(path): \(why)") }
        fseek(f, 0, SEEK_END)
        let fileSize = Int(ftell(f))
        fseek(f, 0, SEEK_SET)
        var header = [UInt8](repeating: 0, count: 12)
        let n = fread(&header, 1, 12, f)
        let tag = { (b: ArraySlice<UInt8>) in String(decoding: b, as: UTF8.self) }
        let le32 = { (b: ArraySlice<UInt8>) in b.reversed().reduce(0) { $0 << 8 | Int($1) } }
        guard n == 12, tag(header[0..<4]) == "RIFF", ["sfbk", "DLS "].contains(tag(header[8..<12])) else {
            throw fail("not a SoundFont (expected a RIFF \"sfbk\" file)")
        }
        let riffEnd = 8 + le32(header[4..<8])
        if riffEnd > fileSize {
            throw fail("truncated: its header announces \(counted(Int(riffEnd), "byte")), the file has \(fileSize)")
        }
        guard tag(header[8..<12]) == "sfbk" else { return }
        var lists: Set<String> = []
        var offset = 12
        var chunk = [UInt8](repeating: 0, count: 12)
        while offset + 8 <= riffEnd {
            fseek(f, offset, SEEK_SET)
            guard fread(&chunk, 1, 12, f) >= 8 else { break }
            let size = le32(chunk[4..<8])
            if offset + 8 + size > riffEnd { throw fail("truncated or corrupt: chunk \"\(tag(chunk[0..<4]))\" at byte \(offset) runs past the end") }
            if tag(chunk[0..<4]) == "LIST" { lists.insert(tag(chunk[8..<12])) }
            offset += 8 + size + (size & 1)
        }
        let missing = ["INFO", "sdta", "pdta"].filter { !lists.contains($0) }
        if !missing.isEmpty { throw fail("corrupt: no \(missing.joined(separator: ", ")) section") }
    }
}

/// Identity of a file's contents on disk: a changed file is loaded again.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64
    var modifiedNanoseconds: Int64

    init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modified = Int64(st.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(st.st_mtim.tv_nsec)
    }
}

enum Clock {
    static func wall() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }
    static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }
}

/// Loads SoundFonts once and shares them, by canonical path, among synth units and racks:
/// a rack that names a font another rack (or unit) already plays gets the loaded font, not a
/// second copy. It also caches how `soundfont` settings resolved (name → path).
///
/// Fonts are held weakly: one is freed when no unit uses it any more, unless `keep(_:)`
/// pinned it. A file that changed on disk since it was loaded is loaded again (units already
/// playing the old one keep it). Thread: control (loading may take a second for a large
/// font); the lock only guards the tables.
public final class SoundFontLibrary: @unchecked Sendable {
    /// The library synth units use unless given another.
    public static let shared = SoundFontLibrary()

    private struct WeakFont {
        weak var font: SoundFont?
    }

    private struct State {
        var fonts: [String: WeakFont] = [:]
        var pinned: [String: SoundFont] = [:]
        var resolved: [String: SoundFontChoice] = [:]
        var fileLoads = 0
    }

    private let state = Locked(State())

    public init() {}

    /// How many times a file was actually read (the rest were shared). Thread: any.
    public var fileLoads: Int { state.withLock { $0.fileLoads } }

    /// The fonts in memory now. Thread: any.
    public var loaded: [SoundFont] { state.withLock { $0.fonts.values.compactMap(\.font) } }

    /// Keeps `font` in memory even when no unit uses it (for quick rack switches).
    public func keep(_ font: SoundFont) { state.withLock { $0.pinned[font.path] = font } }

    /// Resolves a `soundfont` setting (nil: the default) against `search` and loads the font,
    /// sharing one already in memory. Thread: control.
    public func load(setting: String?, search: SoundFontSearch) throws -> (font: SoundFont, choice: SoundFontChoice) {
        let key = "\(search.rackDirectory)\u{0}\(setting ?? "")"
        let cached = state.withLock { $0.resolved[key] }
        let choice: SoundFontChoice
        if let cached, SoundFontSearch.isFile(cached.path) {
            choice = cached
        } else {
            choice = try search.resolve(setting)
            state.withLock { $0.resolved[key] = choice }
        }
        return (try load(path: choice.path), choice)
    }

    /// Loads the font at `path`, or returns the one already loaded from that file.
    /// Thread: control.
    public func load(path: String) throws -> SoundFont {
        let canonical = Self.canonicalPath(path)
        guard let identity = FileIdentity(path: canonical) else {
            throw UnitError("synth: SoundFont \(path) not found")
        }
        // Loading happens under the lock so that two loads of one file never overlap.
        return try state.withLock { s in
            if let f = s.fonts[canonical]?.font, f.identity == identity { return f }
            let f = try SoundFont(path: canonical, identity: identity)
            s.fileLoads += 1
            s.fonts[canonical] = WeakFont(font: f)
            if s.pinned[canonical] != nil { s.pinned[canonical] = f }
            s.fonts = s.fonts.filter { $0.value.font != nil }
            return f
        }
    }

    static func canonicalPath(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }
}
