// alsa-lib prints its own error lines on stderr ("ALSA lib pcm.c:2666:(...) Unknown PCM x")
// through a variadic handler, which Swift cannot implement. This one formats the message
// and hands it to a plain callback, so the app can log it as one journald-friendly line
// (or drop it). Thread: whichever thread alsa-lib reports on; the callback decides.
#include "stage_shim.h"
#include <alsa/asoundlib.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static stage_alsa_error_callback stage_alsa_callback;

static void stage_alsa_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    stage_alsa_error_callback cb = stage_alsa_callback;
    if (!cb) return;
    // alsa-lib often returns -errno right after reporting: whatever the callback does
    // (isatty, write) must not change it.
    int saved = errno;
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    cb(file ? file : "", line, function ? function : "", err, message);
    errno = saved;
}

void stage_alsa_route_errors(stage_alsa_error_callback callback) {
    stage_alsa_callback = callback;
    snd_lib_error_set_handler(stage_alsa_handler);
}
