// Which node holds a key: the CRC-32 (IEEE) of the key modulo the number of nodes, over the node list in the
// order given. That is the reference's memcache client's server selection, so a deployment moving over keeps its
// counters on the same nodes, and every instance with the same list picks the same node. Pure code.

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
    table[i] = crc >>> 0;
  }
  return table;
})();

const encoder = new TextEncoder();

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of encoder.encode(text)) crc = (crc >>> 8) ^ TABLE[(crc ^ byte) & 0xff];
  return (crc ^ 0xffffffff) >>> 0;
}

/** The node for `key` among `nodes` (at least one). */
export function pickNode<T>(key: string, nodes: readonly T[]): T {
  if (nodes.length === 1) return nodes[0];
  return nodes[crc32(key) % nodes.length];
}
