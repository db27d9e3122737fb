// alsa-lib prints its own error lines on stderr ("ALSA lib pcm.c:2666:(...) Unknown PCM x")
// through a variadic handler, which Swift cannot implement. This one formats the message
// and hands it to a plain callback, so the app can log it as one journald-friendly line
// (or drop it). Thread: whichever thread alsa-lib reports on; the callback decides.
#include "stage_shim.h"
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

static stage_alsa_error_callback stage_alsa_callback;

static void stage_alsa_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    stage_alsa_error_callback cb = stage_alsa_callback;
    if (!cb) return;
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    cb(file ? file : "", line, function ? function : "", err, message);
}

void stage_alsa_route_errors(stage_alsa_error_callback callback) {
    stage_alsa_callback = callback;
    snd_lib_error_set_handler(stage_alsa_handler);
}
