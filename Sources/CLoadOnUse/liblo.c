/* liblo, opened when OSC or sync starts (stage_load_liblo, from OSCPacket): the remote's
 * OSC messages are encoded and decoded by it. The functions StageRack calls, with the
 * header's prototypes. */
#include <lo/lo.h>

#include "load_on_use.h"
#include "loader.h"

#define LIBLO(F, V)                                                                               \
    F(char *, lo_get_path, (void *data, ssize_t size), (data, size))                              \
    F(int, lo_message_add_false, (lo_message m), (m))                                             \
    F(int, lo_message_add_float, (lo_message m, float a), (m, a))                                 \
    F(int, lo_message_add_int32, (lo_message m, int32_t a), (m, a))                               \
    F(int, lo_message_add_string, (lo_message m, const char *a), (m, a))                          \
    F(int, lo_message_add_true, (lo_message m), (m))                                              \
    F(lo_message, lo_message_deserialise, (void *data, size_t size, int *result), (data, size, result)) \
    V(lo_message_free, (lo_message m), (m))                                                       \
    F(int, lo_message_get_argc, (lo_message m), (m))                                              \
    F(lo_arg **, lo_message_get_argv, (lo_message m), (m))                                        \
    F(char *, lo_message_get_types, (lo_message m), (m))                                          \
    F(size_t, lo_message_length, (lo_message m, const char *path), (m, path))                     \
    F(lo_message, lo_message_new, (void), ())                                                     \
    F(void *, lo_message_serialise, (lo_message m, const char *path, void *to, size_t *size),     \
      (m, path, to, size))

STAGE_LIBRARY(liblo, LIBLO, "liblo", "OSC (the remote, sync between boxes)", "liblo7", "liblo.so.7")
