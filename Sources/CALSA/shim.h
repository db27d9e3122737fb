#include <alsa/asoundlib.h>

/* --- MIDI (sequencer) helpers: macros and a variadic handler Swift cannot use directly. */

/* Sends `ev` from our port `port` to its subscribers, now (not through a queue). */
static inline void stage_seq_ev_to_subscribers(snd_seq_event_t *ev, int port) {
    snd_seq_ev_set_source(ev, port);
    snd_seq_ev_set_subs(ev);
    snd_seq_ev_set_direct(ev);
}

static void stage_alsa_quiet_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/* Stops alsa-lib printing its own error lines on stderr: the callers turn every error
   into a typed error that names the failing function. */
static inline void stage_alsa_quiet_errors(void) {
    snd_lib_error_set_handler(stage_alsa_quiet_handler);
}
