#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

/* Helpers for what Swift cannot write directly: LWS_PRE (a macro), the creation info with
 * its protocol list and idle policy, header reads bounded by the buffer, the close reason,
 * the peer's address, closing another connection, the log's emit function. */

static inline size_t stage_lws_pre(void) { return LWS_PRE; }

/* One context with one vhost and one protocol: HTTP and WebSocket both reach `callback`.
 * `address`: a numeric address to bind, or NULL for every interface. `cert` and `key`:
 * PEM files for TLS (HTTPS and WSS only on the port), or NULL for plain HTTP and WS.
 * `protocols_out` holds the list to free after lws_context_destroy. */
static inline struct lws_context *stage_lws_create(const char *address, int port, int ipv6,
                                                  lws_callback_function *callback, void *user,
                                                  size_t session_size, size_t rx_buffer,
                                                  const char *cert, const char *key,
                                                  unsigned ping_secs, unsigned hangup_secs,
                                                  void **protocols_out) {
    /* The protocol list (two entries) and the idle policy, in one block freed together. */
    struct lws_protocols *protocols = calloc(1, 2 * sizeof *protocols + sizeof(lws_retry_bo_t));
    if (!protocols) return NULL;
    lws_retry_bo_t *retry = (lws_retry_bo_t *)(protocols + 2);
    retry->secs_since_valid_ping = (uint16_t)ping_secs;     /* a PING after this long idle */
    retry->secs_since_valid_hangup = (uint16_t)hangup_secs; /* hung up without a PONG by then */
    protocols[0].name = "stagerack";
    protocols[0].callback = callback;
    protocols[0].per_session_data_size = session_size;
    protocols[0].rx_buffer_size = rx_buffer;
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = port;
    info.iface = address;
    info.protocols = protocols;
    info.user = user;
    info.gid = -1;
    info.uid = -1;
    info.timeout_secs = 10;
    info.retry_and_idle_policy = retry;
    info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | (ipv6 ? 0 : LWS_SERVER_OPTION_DISABLE_IPV6);
    if (cert && key) {
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = cert;
        info.ssl_private_key_filepath = key;
    }
    struct lws_context *context = lws_create_context(&info);
    if (!context) {
        free(protocols);
        return NULL;
    }
    *protocols_out = protocols;
    return context;
}

/* A request header into dest (NUL-terminated); -1 when absent, -2 when longer than dest. */
static inline int stage_lws_header(struct lws *wsi, enum lws_token_indexes h, char *dest, int len) {
    int total = lws_hdr_total_length(wsi, h);
    if (total <= 0) return -1;
    if (total >= len) return -2;
    return lws_hdr_copy(wsi, dest, len, h);
}

/* The peer's numeric address into dest (NUL-terminated); 0, or -1 when unknown. */
static inline int stage_lws_peer(struct lws *wsi, char *dest, size_t len) {
    dest[0] = 0;
    return lws_get_peer_simple(wsi, dest, len) ? 0 : -1;
}

/* Closes `wsi` soon (from another connection's callback). */
static inline void stage_lws_kill(struct lws *wsi) { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC); }

/* Closes `wsi` after `secs` seconds unless called again (0: never). */
static inline void stage_lws_timeout(struct lws *wsi, int secs) {
    lws_set_timeout(wsi, secs > 0 ? PENDING_TIMEOUT_USER_OK : NO_PENDING_TIMEOUT, secs);
}

static inline int stage_lws_is_get(struct lws *wsi) { return lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0; }

/* Writes `len` bytes of text that start LWS_PRE bytes into `buffer`. */
static inline int stage_lws_write_text(struct lws *wsi, unsigned char *buffer, size_t len) {
    return lws_write(wsi, buffer + LWS_PRE, len, LWS_WRITE_TEXT);
}

static inline void stage_lws_close_policy(struct lws *wsi, const char *why) {
    lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)why, strlen(why));
}

/* Ends an HTTP transaction: -1 closes the connection, 0 keeps it for the next request. */
static inline int stage_lws_http_done(struct lws *wsi) { return lws_http_transaction_completed(wsi) ? -1 : 0; }
