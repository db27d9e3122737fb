// The C interface of Ableton Link (stage_link.h). Thread: as each function says.
#include "stage_link.h"

#include <ableton/Link.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>

struct stage_link {
    explicit stage_link(double bpm) : link(bpm) {}
    ableton::Link link;
    /// Written by Link's own thread (its peer callback), read by any.
    std::atomic<int> peers{0};
};

static void copy_error(char *error, int size, const char *what) {
    if (error && size > 0) std::snprintf(error, (size_t)size, "%s", what);
}

extern "C" stage_link *stage_link_create(double bpm, char *error, int error_size) {
    try {
        stage_link *l = new stage_link(bpm);
        l->link.setNumPeersCallback([l](std::size_t n) { l->peers.store((int)n, std::memory_order_relaxed); });
        return l;
    } catch (const std::exception &e) {
        copy_error(error, error_size, e.what());
    } catch (...) {
        copy_error(error, error_size, "unknown error");
    }
    return nullptr;
}

extern "C" int stage_link_enable(stage_link *l, int enabled, char *error, int error_size) {
    try {
        l->link.enable(enabled != 0);
        return 0;
    } catch (const std::exception &e) {
        copy_error(error, error_size, e.what());
    } catch (...) {
        copy_error(error, error_size, "unknown error");
    }
    return -1;
}

extern "C" void stage_link_destroy(stage_link *l) {
    if (!l) return;
    try {
        l->link.setNumPeersCallback([](std::size_t) {});
        l->link.enable(false);
    } catch (...) {
    }
    delete l;
}

extern "C" int stage_link_peers(const stage_link *l) { return l->peers.load(std::memory_order_relaxed); }

extern "C" int64_t stage_link_clock_micros(const stage_link *l) { return (int64_t)l->link.clock().micros().count(); }

extern "C" stage_link_audio_state stage_link_audio_read(stage_link *l, int64_t micros, double quantum) {
    const auto state = l->link.captureAudioSessionState();
    const auto t = std::chrono::microseconds(micros);
    return stage_link_audio_state{state.tempo(), state.beatAtTime(t, quantum)};
}

extern "C" void stage_link_audio_propose_tempo(stage_link *l, double bpm, int64_t micros) {
    auto state = l->link.captureAudioSessionState();
    state.setTempo(bpm, std::chrono::microseconds(micros));
    l->link.commitAudioSessionState(state);
}
