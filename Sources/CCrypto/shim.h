/* OpenSSL's libcrypto (Debian's libssl-dev): HMAC-SHA256 and a constant-time compare for
   the sync messages between boxes (StageSync). */
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
