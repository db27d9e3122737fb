import Foundation
import StageCore
import StageDrivers
import StageLV2
import StageUnits
import XCTest

/// Shared pieces of the lv2 tests: the registry, rack rendering, the packages they need, and
/// a tiny plugin bundle built here from C.
enum LV2Testing {
    static var registry: UnitRegistry { UnitRegistry(StandardUnits.types + LV2Units.types) }

    static let deEss = "http://drobilla.net/plugins/mda/DeEss"
    static let detune = "http://drobilla.net/plugins/mda/Detune"
    static let fil4 = "http://gareus.org/oss/lv2/fil4#mono"

    /// Skips (with what to install) unless `uri` is installed.
    static func require(_ uri: String, package: String) throws {
        if LV2World.shared.plugin(uri) == nil {
            throw XCTSkip("\(uri) is not installed: run scripts/install-deps.sh --test (Debian's \(package))")
        }
    }

    static func temporaryDirectory(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stagerack-lv2-\(getpid())/\(name)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }

    static func plan(_ text: String, maxFrames: Int, inputChannels: Int) throws -> RenderPlan {
        let rack = try RackReader(registry: registry).read(text: text, file: "test.json")
        return try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: maxFrames, hostInputChannels: inputChannels))
    }

    /// Renders `input` through the rack in blocks of `block`; returns [left, right].
    static func render(
        _ text: String, input: [[Float]], midi: [StandardMIDIFile.TimedMessage] = [], block: Int
    ) throws -> [[Float]] {
        let p = try plan(text, maxFrames: block, inputChannels: input.count)
        let renderer = OfflineRenderer(plan: p)
        var out: [[Float]] = [[], []]
        renderer.render(
            input: AudioData(channels: input, sampleRate: 48000),
            midi: StandardMIDIFile(messages: midi, duration: midi.last?.seconds ?? 0), frames: input[0].count,
            blockSize: block
        ) { bus, n in
            for c in 0..<2 { out[c] += UnsafeBufferPointer(start: bus[c], count: n) }
        }
        return out
    }

    /// The rack reader's and compiler's messages for `text`, or [] when it compiles.
    static func errors(_ text: String) -> [String] {
        do {
            _ = try plan(text, maxFrames: 256, inputChannels: 1)
            return []
        } catch let e as RackError {
            return e.diagnostics.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    /// Runs a program; returns its exit status and standard error.
    @discardableResult
    static func run(_ tool: String, _ args: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [tool] + args
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// A bundle of test plugins built from C with gcc: `urn:stagerack:test:gain` (out = in ×
/// gain, plus 0.5 at the frame of each MIDI note-on it receives; needs urid:map),
/// `…:null` (instantiate returns NULL), `…:nonrt` (gain without lv2:hardRTCapable),
/// `…:nobinary` (its library is missing: a broken bundle). Loaded into the shared world once.
enum TestPlugins {
    static let gain = "urn:stagerack:test:gain"
    static let null = "urn:stagerack:test:null"
    static let nonRealtime = "urn:stagerack:test:nonrt"
    static let noBinary = "urn:stagerack:test:nobinary"

    nonisolated(unsafe) private static var built: String?

    static func load() throws {
        if built != nil { return }
        guard (try? LV2Testing.run("gcc", ["--version"]))?.0 == 0 else {
            throw XCTSkip("gcc is not installed: run scripts/install-deps.sh --test")
        }
        let dir = LV2Testing.temporaryDirectory("test.lv2")
        try source.write(toFile: dir + "/test.c", atomically: true, encoding: .utf8)
        try manifest.write(toFile: dir + "/manifest.ttl", atomically: true, encoding: .utf8)
        let (status, err) = try LV2Testing.run(
            "gcc", ["-shared", "-fPIC", "-O2", "-o", dir + "/test.so", dir + "/test.c"])
        guard status == 0 else { throw UnitError("gcc failed: \(err)") }
        LV2World.shared.loadBundle(path: dir)
        built = dir
    }

    static let source = """
        #include <lv2/core/lv2.h>
        #include <lv2/atom/atom.h>
        #include <lv2/atom/util.h>
        #include <lv2/urid/urid.h>
        #include <lv2/midi/midi.h>
        #include <stdlib.h>
        #include <string.h>
        typedef struct { float *gain, *in, *out; const LV2_Atom_Sequence *midi; LV2_URID midi_event; } G;
        static LV2_Handle inst(const LV2_Descriptor *d, double r, const char *b, const LV2_Feature *const *f) {
            LV2_URID_Map *map = NULL;
            for (int i = 0; f[i]; i++) if (!strcmp(f[i]->URI, LV2_URID__map)) map = f[i]->data;
            if (!map) return NULL;
            G *g = calloc(1, sizeof *g);
            g->midi_event = map->map(map->handle, LV2_MIDI__MidiEvent);
            return g;
        }
        static LV2_Handle null_inst(const LV2_Descriptor *d, double r, const char *b, const LV2_Feature *const *f) {
            return NULL;
        }
        static void conn(LV2_Handle h, uint32_t p, void *d) {
            G *g = h;
            switch (p) { case 0: g->gain = d; break; case 1: g->in = d; break; case 2: g->out = d; break;
                         case 3: g->midi = d; break; }
        }
        static void run(LV2_Handle h, uint32_t n) {
            G *g = h;
            float k = *g->gain;
            for (uint32_t i = 0; i < n; i++) g->out[i] = g->in[i] * k;
            LV2_ATOM_SEQUENCE_FOREACH(g->midi, ev) {
                const uint8_t *m = (const uint8_t *)(ev + 1);
                if (ev->body.type == g->midi_event && (m[0] & 0xF0) == 0x90 && m[2] > 0 && ev->time.frames < n)
                    g->out[ev->time.frames] += 0.5f;
            }
        }
        static void cleanup(LV2_Handle h) { free(h); }
        static const LV2_Descriptor ds[] = {
            {"urn:stagerack:test:gain", inst, conn, NULL, run, NULL, cleanup, NULL},
            {"urn:stagerack:test:null", null_inst, conn, NULL, run, NULL, cleanup, NULL},
            {"urn:stagerack:test:nonrt", inst, conn, NULL, run, NULL, cleanup, NULL},
        };
        LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t i) { return i < 3 ? &ds[i] : NULL; }
        """

    static func plugin(_ uri: String, binary: String, realtime: Bool) -> String {
        """
        <\(uri)> a lv2:Plugin ; doap:name "Test \(uri.split(separator: ":").last!)" ;
            lv2:binary <\(binary)> ; lv2:requiredFeature urid:map ;
            \(realtime ? "lv2:optionalFeature lv2:hardRTCapable ;" : "")
            lv2:port [ a lv2:InputPort, lv2:ControlPort ; lv2:index 0 ; lv2:symbol "gain" ; lv2:name "Gain" ;
                       lv2:default 1.0 ; lv2:minimum 0.0 ; lv2:maximum 2.0 ] ,
                     [ a lv2:InputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "in" ; lv2:name "In" ] ,
                     [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 2 ; lv2:symbol "out" ; lv2:name "Out" ] ,
                     [ a lv2:InputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; atom:supports midi:MidiEvent ;
                       lv2:index 3 ; lv2:symbol "midi" ; lv2:name "MIDI" ] .

        """
    }

    static var manifest: String {
        """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix atom: <http://lv2plug.in/ns/ext/atom#> .
        @prefix urid: <http://lv2plug.in/ns/ext/urid#> .
        @prefix midi: <http://lv2plug.in/ns/ext/midi#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .

        """ + plugin(gain, binary: "test.so", realtime: true) + plugin(null, binary: "test.so", realtime: true)
            + plugin(nonRealtime, binary: "test.so", realtime: false)
            + plugin(noBinary, binary: "missing.so", realtime: true)
    }
}
