/*
 * trawl's native signature check for x402 payments: Keccak-256 and Ethereum's ecrecover, so a
 * paid scrape does not spend most of its time in JavaScript BigInt arithmetic. Loaded through
 * bun:ffi by src/payment/native.ts; every input is a fixed-size buffer the caller allocates.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../vendor/secp256k1/include/secp256k1.h"
#include "../vendor/secp256k1/include/secp256k1_recovery.h"

#define TRAWL_EXPORT __attribute__((visibility("default")))

/* Keccak-f[1600] with Ethereum's Keccak-256 padding (0x01, not SHA-3's 0x06). */
static const uint64_t keccak_rc[24] = {
  0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
  0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
  0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
  0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
  0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
  0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};
static const int keccak_rotc[24] = { 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44 };
static const int keccak_piln[24] = { 10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1 };

#define ROTL64(x, n) (((x) << (n)) | ((x) >> (64 - (n))))

static void keccak_f(uint64_t st[25]) {
  uint64_t bc[5], t;
  int round, i, j;
  for (round = 0; round < 24; round++) {
    for (i = 0; i < 5; i++) bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
    for (i = 0; i < 5; i++) {
      t = bc[(i + 4) % 5] ^ ROTL64(bc[(i + 1) % 5], 1);
      for (j = 0; j < 25; j += 5) st[j + i] ^= t;
    }
    t = st[1];
    for (i = 0; i < 24; i++) {
      j = keccak_piln[i];
      bc[0] = st[j];
      st[j] = ROTL64(t, keccak_rotc[i]);
      t = bc[0];
    }
    for (j = 0; j < 25; j += 5) {
      for (i = 0; i < 5; i++) bc[i] = st[j + i];
      for (i = 0; i < 5; i++) st[j + i] ^= (~bc[(i + 1) % 5]) & bc[(i + 2) % 5];
    }
    st[0] ^= keccak_rc[round];
  }
}

/* Lanes are little-endian whatever the machine, so bytes are absorbed one at a time. */
static void keccak_absorb_byte(uint64_t st[25], size_t at, uint8_t byte) {
  st[at / 8] ^= (uint64_t)byte << (8 * (at % 8));
}

TRAWL_EXPORT void trawl_keccak256(const uint8_t *in, uint32_t len, uint8_t *out) {
  enum { RATE = 136 };
  uint64_t st[25];
  size_t at = 0, i;
  memset(st, 0, sizeof st);
  for (i = 0; i < len; i++) {
    keccak_absorb_byte(st, at++, in[i]);
    if (at == RATE) {
      keccak_f(st);
      at = 0;
    }
  }
  keccak_absorb_byte(st, at, 0x01);
  keccak_absorb_byte(st, RATE - 1, 0x80);
  keccak_f(st);
  for (i = 0; i < 32; i++) out[i] = (uint8_t)(st[i / 8] >> (8 * (i % 8)));
}

/*
 * The address that signed `digest` with r‖s (`sig`, 64 bytes) and recovery id `recid` (0 or 1),
 * written to `address` (20 bytes): what the EVM's ecrecover returns. 1 on success; 0 when the
 * signature names no key (r or s out of range, r not an x coordinate), and `address` is untouched.
 * Low-s is the caller's rule (ecrecover itself does not enforce it).
 */
TRAWL_EXPORT int trawl_ecrecover(const uint8_t *digest, const uint8_t *sig, int32_t recid, uint8_t *address) {
  secp256k1_ecdsa_recoverable_signature parsed;
  secp256k1_pubkey key;
  uint8_t raw[65], hash[32];
  size_t len = sizeof raw;
  if (recid != 0 && recid != 1) return 0;
  if (!secp256k1_ecdsa_recoverable_signature_parse_compact(secp256k1_context_static, &parsed, sig, recid)) return 0;
  if (!secp256k1_ecdsa_recover(secp256k1_context_static, &key, &parsed, digest)) return 0;
  secp256k1_ec_pubkey_serialize(secp256k1_context_static, raw, &len, &key, SECP256K1_EC_UNCOMPRESSED);
  trawl_keccak256(raw + 1, 64, hash);
  memcpy(address, hash + 12, 20);
  return 1;
}
