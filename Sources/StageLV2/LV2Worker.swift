import CLV2Host
import StageCore

/// The `worker:schedule` feature of one plugin instance, in C (`lv2_worker.h`): work the
/// plugin schedules on the render thread runs on a worker thread of its own, and its
/// responses are delivered on the render thread after `run`.
///
/// Queues (single producer, single consumer; byte rings allocated once):
/// - requests: producer the render thread (the plugin's `schedule_work` in `run` or
///   `work_response`; before the first render, the control thread restoring state),
///   consumer the worker thread (`stagerack-lv2w`; the control thread in `settle`).
/// - responses: producer the worker thread, consumer the render thread (`deliver`; the
///   control thread in `settle`).
///
/// Offline renders use the synchronous worker: the work runs at once on the render thread
/// (nothing is real time there) and the output does not depend on thread timing.
/// Thread: control (made, started, settled, freed); `deliver` on the render thread.
final class LV2Worker {
    let raw: UnsafeMutablePointer<stage_lv2_worker>
    private var initialized = false

    /// Bytes of each ring; a request or response larger than this is dropped (counted).
    static let ringBytes = 65536

    init() throws {
        raw = .allocate(capacity: 1)
        guard stage_lv2_worker_init(raw, UInt32(Self.ringBytes)) != 0 else {
            raw.deallocate()
            throw UnitError("lv2: out of memory for the worker's queues")
        }
        initialized = true
    }

    deinit {
        if initialized { stage_lv2_worker_destroy(raw) }
        raw.deallocate()
    }

    /// The `worker:schedule` feature, valid as long as the worker lives.
    var feature: UnsafePointer<LV2_Feature> {
        UnsafePointer(UnsafeMutableRawPointer(raw).advanced(by: MemoryLayout<stage_lv2_worker>.offset(of: \.feature)!)
            .assumingMemoryBound(to: LV2_Feature.self))
    }

    /// Connects the plugin's `worker:interface` once it is instantiated. Thread: control.
    func attach(_ interface: UnsafePointer<LV2_Worker_Interface>, instance: LV2_Handle?) {
        stage_lv2_worker_attach(raw, interface, instance)
    }

    /// Runs work queued while restoring state and delivers its answers, before the first
    /// render (see `stage_lv2_worker_settle`). Thread: control, nothing rendering.
    @discardableResult
    func settle() -> Int { Int(stage_lv2_worker_settle(raw, 32)) }

    /// Starts the worker thread (real time) or the synchronous worker (offline). Thread: control.
    func start(realTime: Bool) throws {
        guard stage_lv2_worker_start(raw, realTime ? 0 : 1) != 0 else {
            throw UnitError("lv2: could not start the plugin's worker thread")
        }
    }

    /// Delivers waiting responses and calls `end_run`. No allocation, no lock. Thread: render.
    @inline(__always)
    func deliver() { _ = stage_lv2_worker_deliver(raw) }

    /// Stops the worker thread. Thread: control.
    func stop() { stage_lv2_worker_stop(raw) }

    /// Work the plugin's `work` has done, responses delivered, messages dropped. Thread: any.
    var worksDone: UInt64 { stage_lv2_worker_works_done(raw) }
    var responsesDelivered: UInt64 { stage_lv2_worker_responses_delivered(raw) }
    var dropped: UInt64 { stage_lv2_worker_dropped(raw) }
}
