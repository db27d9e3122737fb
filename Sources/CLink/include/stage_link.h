#ifndef STAGE_LINK_H
#define STAGE_LINK_H

// Ableton Link (Debian's ableton-link-dev, a C++ header library over standalone asio) behind
// a C interface for Swift. Link has two APIs: the app thread's (enable, peers, tempo as the
// session last said) and the audio thread's (capture and commit the session state: real-time
// safe, no lock, no allocation). Each function below names the thread it belongs to.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stage_link stage_link;

/// What the audio thread reads of the session at a block: its tempo and the beat at the
/// given host time (phase aligned with every peer to the quantum).
typedef struct {
    double tempo;
    double beat;
} stage_link_audio_state;

/// A Link instance at `bpm`, not yet enabled; NULL on failure (then `error` holds why,
/// NUL-terminated, up to `error_size` bytes). Thread: app (main).
stage_link *stage_link_create(double bpm, char *error, int error_size);

/// Joins (1) or leaves (0) the network session: Link's own thread then discovers peers by
/// multicast on UDP port 20808. 0, or -1 with `error` filled. Thread: app (main).
int stage_link_enable(stage_link *link, int enabled, char *error, int error_size);

/// Leaves the session and frees the instance. Thread: app (main), once no thread reads it.
void stage_link_destroy(stage_link *link);

/// Peers in the session other than this one, as Link's own thread last counted them.
/// Thread: any (an atomic).
int stage_link_peers(const stage_link *link);

/// Link's clock now in microseconds (CLOCK_MONOTONIC_RAW): the time base of the beats.
/// Thread: any (no lock, no allocation).
int64_t stage_link_clock_micros(const stage_link *link);

/// The session at host time `micros`: tempo, and the beat there for `quantum` beats a bar.
/// Real-time safe (`captureAudioSessionState`). Thread: audio.
stage_link_audio_state stage_link_audio_read(stage_link *link, int64_t micros, double quantum);

/// Proposes `bpm` to the session from host time `micros` on (the beat stays continuous
/// there); peers follow. Real-time safe (`commitAudioSessionState`: a triple buffer and a
/// condition variable's notify that wakes Link's thread, no lock taken, nothing allocated).
/// Thread: audio.
void stage_link_audio_propose_tempo(stage_link *link, double bpm, int64_t micros);

#ifdef __cplusplus
}
#endif

#endif
