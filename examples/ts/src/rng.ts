// A small seeded generator (SplitMix64, on bigint) for the client's own choices and for
// deriving the bots' 64-bit seeds. Seeds are uint64 on the wire, and protobuf-es gives
// 64-bit integers the type bigint: a seed is never rounded to a JavaScript number.
const MASK = (1n << 64n) - 1n;

export const UINT64_MAX = MASK;

/** Parse a uint64 seed given as text ("42", "0x2a", "18446744073709551615"); throws when it is not one. */
export function parseSeed(text: string): bigint {
  let value: bigint;
  try {
    value = BigInt(text.trim());
  } catch {
    throw new RangeError(`seed must be an integer in 0..${MASK}, got "${text}"`);
  }
  if (text.trim() === "" || value < 0n || value > MASK) {
    throw new RangeError(`seed must be an integer in 0..${MASK}, got "${text}"`);
  }
  return value;
}

export class SplitMix64 {
  private state: bigint;

  constructor(seed: bigint) {
    this.state = seed & MASK;
  }

  /** The next 64 random bits. */
  next64(): bigint {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }

  /** A float in [0, 1) from the top 53 bits. */
  random(): number {
    return Number(this.next64() >> 11n) / 2 ** 53;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.random() * n);
  }

  /** One element of a non-empty array, uniformly. */
  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("choice of an empty list");
    return items[this.below(items.length)] as T;
  }
}
