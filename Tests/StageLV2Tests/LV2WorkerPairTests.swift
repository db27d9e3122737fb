import Foundation
import StageCore
import StageLV2
import StageTestSupport
import StageUnits
import XCTest

/// The worker's thread pair under load, with a plugin built here from C
/// (`urn:stagerack:test:worker`): every run() schedules work numbered 1, 2, 3…; work()
/// (worker thread) sleeps a little now and then and answers with the number; work_response()
/// (render thread) checks the answers arrive in order, none lost, none twice. Its output
/// frame 0 is the last answer, frame 1 the answers out of order, frame 2 the end_run calls.
/// `make tsan` runs it under the thread sanitizer.
final class LV2WorkerPairTests: XCTestCase {
    static let uri = "urn:stagerack:test:worker"
    nonisolated(unsafe) private static var built = false

    static func load() throws {
        if built { return }
        guard (try? LV2Testing.run("gcc", ["--version"]))?.0 == 0 else {
            throw XCTSkip("gcc is not installed: run scripts/install-deps.sh --test")
        }
        let dir = LV2Testing.temporaryDirectory("worker.lv2")
        try source.write(toFile: dir + "/worker.c", atomically: true, encoding: .utf8)
        try manifest.write(toFile: dir + "/manifest.ttl", atomically: true, encoding: .utf8)
        let (status, err) = try LV2Testing.run("gcc", ["-shared", "-fPIC", "-O2", "-o", dir + "/worker.so", dir + "/worker.c"])
        guard status == 0 else { throw UnitError("gcc failed: \(err)") }
        LV2World.shared.loadBundle(path: dir)
        built = true
    }

    /// 3,000 blocks rendered on a thread of their own while the worker answers: every
    /// request answered, in order, and `end_run` after every run.
    func testEveryRequestIsAnsweredInOrder() throws {
        try Self.load()
        let h = try UnitHarness(type: LV2UnitType(), settings: ["plugin": .string(Self.uri)], maxFrames: 64)
        let unit = try XCTUnwrap(h.unit as? LV2Unit)
        let blocks = 3000
        nonisolated(unsafe) var last: (answer: Float, disorder: Float, endRuns: Float) = (0, 0, 0)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let harness = h
        let thread = Thread {
            for b in 0..<blocks + 3000 {
                harness.renderBlock(frames: 64)
                let out = harness.outputs[0][0]
                last = (out[0], out[1], out[2])
                if b >= blocks && last.answer >= Float(blocks) { break }
                if b % 64 == 0 || b >= blocks { usleep(b >= blocks ? 1000 : 200) }
            }
            done.signal()
        }
        thread.start()
        done.wait()
        let counts = try XCTUnwrap(unit.workerCounts)
        print("lv2 worker pair: \(counts.works) works, \(counts.responses) responses, last answer \(last.answer)")
        XCTAssertEqual(last.disorder, 0, "answers out of order or lost")
        XCTAssertGreaterThanOrEqual(last.answer, Float(blocks), "the answers kept up")
        XCTAssertEqual(counts.dropped, 0)
        XCTAssertGreaterThanOrEqual(counts.responses, UInt64(blocks))
        XCTAssertGreaterThanOrEqual(last.endRuns, Float(blocks), "end_run after every run")
    }

    /// Offline (`realTime: false`) the work runs at once and its answer is delivered after
    /// the same run(): block k sees exactly k − 1 answers, whatever the threads do.
    func testOfflineWorkIsAnsweredWithinItsBlock() throws {
        try Self.load()
        let rack = """
            { "format": 2, "units": { "w": { "type": "lv2", "plugin": "\(Self.uri)" }, "out": { "type": "output" } },
              "connections": [ "w -> out" ] }
            """
        let registry = LV2Testing.registry
        let plan = try GraphCompiler(registry: registry).compile(
            try RackReader(registry: registry).read(text: rack, file: "test.json"),
            options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 64, hostInputChannels: 1, realTime: false))
        let u = try XCTUnwrap(plan.unitIDs.firstIndex(of: "w"))
        let step = try XCTUnwrap(plan.steps.first { $0.unit == u })
        let engine = RenderEngine(plan: plan)
        for k in 1...500 {
            engine.render(frameCount: 64)
            XCTAssertEqual(step.outputs[0][0][0], Float(k - 1), "block \(k)")
            if step.outputs[0][0][0] != Float(k - 1) { break }
        }
        XCTAssertEqual(step.outputs[0][0][1], 0, "in order")
    }

    static let source = """
        #include <lv2/core/lv2.h>
        #include <lv2/worker/worker.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>
        typedef struct { float *out; LV2_Worker_Schedule *schedule; unsigned next, answered, disorder, end_runs; } W;
        static LV2_Handle inst(const LV2_Descriptor *d, double r, const char *b, const LV2_Feature *const *f) {
            LV2_Worker_Schedule *s = NULL;
            for (int i = 0; f[i]; i++) if (!strcmp(f[i]->URI, LV2_WORKER__schedule)) s = f[i]->data;
            if (!s) return NULL;
            W *w = calloc(1, sizeof *w);
            w->schedule = s;
            return w;
        }
        static void conn(LV2_Handle h, uint32_t p, void *d) { if (p == 0) ((W *)h)->out = d; }
        static void run(LV2_Handle h, uint32_t n) {
            W *w = h;
            unsigned k = ++w->next;
            w->schedule->schedule_work(w->schedule->handle, sizeof k, &k);
            for (uint32_t i = 0; i < n; i++) w->out[i] = 0;
            if (n > 2) { w->out[0] = (float)w->answered; w->out[1] = (float)w->disorder; w->out[2] = (float)w->end_runs; }
        }
        static LV2_Worker_Status work(LV2_Handle h, LV2_Worker_Respond_Function respond, LV2_Worker_Respond_Handle rh,
                                      uint32_t size, const void *data) {
            unsigned k;
            if (size != sizeof k) return LV2_WORKER_ERR_UNKNOWN;
            memcpy(&k, data, sizeof k);
            if (k % 97 == 0) usleep(300);
            return respond(rh, sizeof k, &k);
        }
        static LV2_Worker_Status response(LV2_Handle h, uint32_t size, const void *data) {
            W *w = h;
            unsigned k;
            memcpy(&k, data, sizeof k);
            if (k != w->answered + 1) w->disorder++;
            w->answered = k;
            return LV2_WORKER_SUCCESS;
        }
        static LV2_Worker_Status end_run(LV2_Handle h) { ((W *)h)->end_runs++; return LV2_WORKER_SUCCESS; }
        static const void *ext(const char *uri) {
            static const LV2_Worker_Interface iface = {work, response, end_run};
            return strcmp(uri, LV2_WORKER__interface) ? NULL : &iface;
        }
        static void cleanup(LV2_Handle h) { free(h); }
        static const LV2_Descriptor d = {"urn:stagerack:test:worker", inst, conn, NULL, run, NULL, cleanup, ext};
        LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t i) { return i == 0 ? &d : NULL; }
        """

    static let manifest = """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix work: <http://lv2plug.in/ns/ext/worker#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        <urn:stagerack:test:worker> a lv2:Plugin ; doap:name "Test worker" ; lv2:binary <worker.so> ;
            lv2:requiredFeature work:schedule ; lv2:optionalFeature lv2:hardRTCapable ;
            lv2:extensionData work:interface ;
            lv2:port [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 0 ; lv2:symbol "out" ; lv2:name "Out" ] .

        """
}
