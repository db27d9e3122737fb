/* Libraries StageRack loads when a feature first needs them (dlopen), not at start-up:
 * a rack that plays a synth through ALSA pays nothing for the web remote's TLS stack, LV2
 * hosting or OSC. Each `stage_load_X` opens its library once (pthread_once; later calls
 * return the first answer), resolves every function StageRack calls, and returns 0, or -1
 * with a sentence for the user in `error` (which library, the apt package, the files tried).
 * The functions themselves keep their names and the libraries' own prototypes (forwarders in
 * this target, one file per library), so the Swift call sites do not change; calling one
 * before its library is loaded is a programming error that aborts naming the function.
 * Thread: any, but call it where the feature starts (a control or main thread): opening a
 * library reads files. Nothing on the render thread loads a library. */
#ifndef STAGE_LOAD_ON_USE_H
#define STAGE_LOAD_ON_USE_H

#include <stddef.h>

/* libwebsockets (and with it OpenSSL): the web remote. */
int stage_load_websockets(char *error, size_t size);
/* OpenSSL's libcrypto: the sync layer's HMAC-SHA256, constant-time compare, random ids. */
int stage_load_crypto(char *error, size_t size);
/* liblo: OSC messages (the OSC remote and sync between boxes). */
int stage_load_liblo(char *error, size_t size);
/* lilv (and serd, sord, sratom): LV2 plugins. */
int stage_load_lilv(char *error, size_t size);
/* FFTW (single precision): the feedback unit's spectrum. */
int stage_load_fftw(char *error, size_t size);
/* librubberband: the player's transposed backing tracks. */
int stage_load_rubberband(char *error, size_t size);

#endif
