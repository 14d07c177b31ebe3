#ifndef NOUGHTYTOURS_CCRYPTO_SHIM_H
#define NOUGHTYTOURS_CCRYPTO_SHIM_H
/* EVP digests (SHA-1, SHA-256: digests and tus checksums), HMAC-SHA256 (webhook signatures),
   AES-256-GCM (webhook secrets at rest) and random bytes. */
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif
