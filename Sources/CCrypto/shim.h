#ifndef NOUGHTYTOURS_CCRYPTO_SHIM_H
#define NOUGHTYTOURS_CCRYPTO_SHIM_H
/* Only the EVP digest interface: SHA-1 and SHA-256 for digests and tus checksums. */
#include <openssl/evp.h>
#include <openssl/crypto.h>
#endif
