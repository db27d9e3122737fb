/* OpenSSL's libcrypto, opened when sync starts (stage_load_crypto, from SyncKey): 4,191
 * symbol relocations bound at once (the library is linked -z now), a rack without sync never
 * needs them. The functions StageRack calls, with the header's prototypes. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "load_on_use.h"
#include "loader.h"

#define CRYPTO(F, V)                                                                              \
    F(unsigned char *, HMAC,                                                                      \
      (const EVP_MD *evp_md, const void *key, int key_len, const unsigned char *data, size_t data_len, \
       unsigned char *md, unsigned int *md_len),                                                  \
      (evp_md, key, key_len, data, data_len, md, md_len))                                         \
    F(const EVP_MD *, EVP_sha256, (void), ())                                                     \
    F(int, CRYPTO_memcmp, (const void *in_a, const void *in_b, size_t len), (in_a, in_b, len))    \
    F(int, RAND_bytes, (unsigned char *buf, int num), (buf, num))

STAGE_LIBRARY(crypto, CRYPTO, "OpenSSL's libcrypto", "sync between boxes",
              "libssl3 on Debian 12, libssl3t64 on Debian 13", "libcrypto.so.3")
