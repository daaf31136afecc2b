// Redis Cluster key routing: the CRC16 (XMODEM) of the key, or of its {hash tag}, modulo 16384 slots. Pure code,
// byte-exact with the server so that every key goes to the node that owns it.

export const SLOT_COUNT = 16384;

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as Redis Cluster uses. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc;
}

const encoder = new TextEncoder();

/**
 * The slot of a key. When the key holds `{...}` with at least one byte between the first `{` and the next `}`,
 * only those bytes are hashed (a hash tag keeps related keys on one node).
 */
export function keySlot(key: string): number {
  let bytes = encoder.encode(key);
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  return crc16(bytes) % SLOT_COUNT;
}
