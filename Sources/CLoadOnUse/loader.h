/* The machinery behind load_on_use.h (private to this target): one library described by its
 * sonames and the functions StageRack calls, opened once, and the forwarders generated from
 * one list per library (an X-macro), so a function is named once and nothing is copied.
 *
 * A library file writes its list as
 *     #define LIST(F, V) F(ret, name, (params), (args)) V(name, (params), (args)) ...
 * (F for a function that returns a value, V for one that returns void) and then
 *     STAGE_LIBRARY(id, LIST, "name", "the feature", "apt packages", "libX.so.N", ...)
 * which defines, for each function: a pointer of the header's own type, a forwarder with the
 * header's name and prototype (the compiler checks it against the real declaration), and its
 * entry in the table dlsym fills; then `stage_load_id`.
 *
 * The forwarders are hidden where the header gives no visibility of its own (OpenSSL, liblo,
 * FFTW, rubberband): the binary exports its symbols (backtraces), and an exported `HMAC`
 * would be what libssl's own calls into libcrypto find first. lilv's and libwebsockets'
 * headers declare theirs default: only those libraries call themselves through them, and
 * only once loaded. */
#ifndef STAGE_LOADER_H
#define STAGE_LOADER_H

#include <pthread.h>
#include <stddef.h>

/* One function to resolve: its name and where its address goes. */
typedef struct {
    const char *name;
    void **slot;
} StageSymbol;

/* One library: its name, what needs it, how to install it, the files to try (newest soname first,
 * NULL-terminated), its functions; and, once opened, the outcome. Thread: written once
 * inside pthread_once, read after it. */
typedef struct {
    const char *name;
    const char *feature;
    const char *package;
    const char *const *sonames;
    const StageSymbol *symbols;
    size_t count;
    int failed;
    char message[1024];
} StageLibrary;

/* Opens `library` (the first soname that opens with every function) and fills the slots;
 * on failure leaves every slot NULL and writes `message`. Called once per library. */
void stage_library_open(StageLibrary *library);

/* 0, or -1 with the library's message copied into `error`. */
int stage_library_result(const StageLibrary *library, char *error, size_t size);

/* A forwarder called before its library was loaded: a programming error (the feature's
 * start must call stage_load_X first). Prints the function's name and aborts. */
_Noreturn void stage_library_not_loaded(const char *function);

#define STAGE_POINTER_F(ret, name, params, args) static __typeof__(&name) stage_real_##name;
#define STAGE_POINTER_V(name, params, args) static __typeof__(&name) stage_real_##name;

#define STAGE_FORWARD_F(ret, name, params, args)                                      \
    ret name params {                                                                 \
        if (__builtin_expect(stage_real_##name == NULL, 0)) stage_library_not_loaded(#name); \
        return stage_real_##name args;                                                \
    }
#define STAGE_FORWARD_V(name, params, args)                                           \
    void name params {                                                                \
        if (__builtin_expect(stage_real_##name == NULL, 0)) stage_library_not_loaded(#name); \
        stage_real_##name args;                                                       \
    }

#define STAGE_SYMBOL_F(ret, name, params, args) {#name, (void **)&stage_real_##name},
#define STAGE_SYMBOL_V(name, params, args) {#name, (void **)&stage_real_##name},

#define STAGE_LIBRARY(id, LIST, name_, feature_, package_, ...)                              \
    LIST(STAGE_POINTER_F, STAGE_POINTER_V)                                            \
    _Pragma("GCC visibility push(hidden)")                                            \
    LIST(STAGE_FORWARD_F, STAGE_FORWARD_V)                                            \
    _Pragma("GCC visibility pop")                                                     \
    static const StageSymbol stage_symbols_##id[] = {LIST(STAGE_SYMBOL_F, STAGE_SYMBOL_V)}; \
    static const char *const stage_sonames_##id[] = {__VA_ARGS__, NULL};              \
    static StageLibrary stage_library_##id = {                                        \
        .name = name_, .feature = feature_, .package = package_, .sonames = stage_sonames_##id,      \
        .symbols = stage_symbols_##id,                                                \
        .count = sizeof stage_symbols_##id / sizeof stage_symbols_##id[0]};           \
    static pthread_once_t stage_once_##id = PTHREAD_ONCE_INIT;                        \
    static void stage_open_##id(void) { stage_library_open(&stage_library_##id); }    \
    int stage_load_##id(char *error, size_t size) {                                   \
        pthread_once(&stage_once_##id, stage_open_##id);                              \
        return stage_library_result(&stage_library_##id, error, size);               \
    }

#endif
