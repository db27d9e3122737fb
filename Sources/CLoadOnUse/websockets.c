/* libwebsockets, opened when the web remote starts (stage_load_websockets): it brings
 * OpenSSL (libssl, libcrypto) and libcap, ~7.5 M instructions of symbol lookup at start-up
 * that a rack without the remote never needs. The functions StageRack calls, with the
 * header's prototypes (loader.h generates the forwarders). */
#include <libwebsockets.h>

#include "load_on_use.h"
#include "loader.h"

#define WEBSOCKETS(F, V)                                                                          \
    F(int, lws_callback_http_dummy,                                                               \
      (struct lws * wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len),     \
      (wsi, reason, user, in, len))                                                               \
    F(int, lws_callback_on_writable, (struct lws * wsi), (wsi))                                   \
    V(lws_cancel_service, (struct lws_context * context), (context))                              \
    V(lws_close_reason, (struct lws * wsi, enum lws_close_status status, unsigned char *buf, size_t len), \
      (wsi, status, buf, len))                                                                    \
    V(lws_context_destroy, (struct lws_context * context), (context))                             \
    F(void *, lws_context_user, (struct lws_context * context), (context))                        \
    F(struct lws_context *, lws_create_context, (const struct lws_context_creation_info *info), (info)) \
    F(int, lws_frame_is_binary, (struct lws * wsi), (wsi))                                        \
    F(struct lws_context *, lws_get_context, (const struct lws *wsi), (wsi))                      \
    F(const char *, lws_get_peer_simple, (struct lws * wsi, char *name, size_t namelen), (wsi, name, namelen)) \
    F(int, lws_hdr_copy, (struct lws * wsi, char *dest, int len, enum lws_token_indexes h), (wsi, dest, len, h)) \
    F(int, lws_hdr_total_length, (struct lws * wsi, enum lws_token_indexes h), (wsi, h))          \
    F(int, lws_http_transaction_completed, (struct lws * wsi), (wsi))                             \
    F(int, lws_is_final_fragment, (struct lws * wsi), (wsi))                                      \
    F(size_t, lws_remaining_packet_payload, (struct lws * wsi), (wsi))                            \
    F(int, lws_return_http_status, (struct lws * wsi, unsigned int code, const char *html_body),  \
      (wsi, code, html_body))                                                                     \
    F(int, lws_serve_http_file,                                                                   \
      (struct lws * wsi, const char *file, const char *content_type, const char *other_headers,  \
       int other_headers_len),                                                                    \
      (wsi, file, content_type, other_headers, other_headers_len))                                \
    F(int, lws_service, (struct lws_context * context, int timeout_ms), (context, timeout_ms))    \
    V(lws_set_log_level, (int level, void (*log_emit_function)(int level, const char *line)),     \
      (level, log_emit_function))                                                                 \
    V(lws_set_timeout, (struct lws * wsi, enum pending_timeout reason, int secs), (wsi, reason, secs)) \
    F(int, lws_write, (struct lws * wsi, unsigned char *buf, size_t len, enum lws_write_protocol protocol), \
      (wsi, buf, len, protocol))

STAGE_LIBRARY(websockets, WEBSOCKETS, "libwebsockets", "the web remote",
              "libwebsockets17 on Debian 12, libwebsockets19t64 on Debian 13",
              "libwebsockets.so.19", "libwebsockets.so.18", "libwebsockets.so.17")
