#include <jack/jack.h>

/* --- JACK helpers: a variadic open and libjack's message hooks, which Swift cannot use
   directly. */

/* Opens a client on the default server ($JACK_DEFAULT_SERVER, else "default") without
   starting one: a server that is not running is the caller's to report and retry. */
static inline jack_client_t *stage_jack_open(const char *name, jack_status_t *status) {
    return jack_client_open(name, JackNoStartServer, status);
}

static void stage_jack_quiet(const char *message) { (void)message; }

/* Stops libjack printing its own lines on stderr ("Cannot connect to server socket"...):
   the callers turn every failure into a typed error that says what to do. */
static inline void stage_jack_quiet_messages(void) {
    jack_set_error_function(stage_jack_quiet);
    jack_set_info_function(stage_jack_quiet);
}
