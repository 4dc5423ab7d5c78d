// A small seeded generator (SplitMix64, on BigInt) for the client's own choices and for
// deriving the bots' 64-bit seeds. Seeds are uint64 on the wire; JavaScript numbers hold
// only 53 bits, so seeds stay BigInt here and travel as decimal strings.
const MASK = (1n << 64n) - 1n;

export const UINT64_MAX = MASK;

/** Parse a uint64 seed given as text ("42", "0x2a", "18446744073709551615"); throws when out of range. */
export function parseSeed(text) {
  const value = BigInt(String(text).trim());
  if (value < 0n || value > MASK) throw new RangeError(`seed must be in 0..${MASK}, got ${text}`);
  return value;
}

export class SplitMix64 {
  constructor(seed) {
    this.state = BigInt(seed) & MASK;
  }

  /** The next 64 random bits, as a BigInt. */
  next64() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }

  /** A float in [0, 1) from the top 53 bits. */
  random() {
    return Number(this.next64() >> 11n) / 2 ** 53;
  }

  /** An integer in [0, n). */
  below(n) {
    return Math.floor(this.random() * n);
  }

  /** One element of a non-empty array, uniformly. */
  choice(items) {
    return items[this.below(items.length)];
  }
}
