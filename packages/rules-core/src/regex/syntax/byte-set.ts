/**
 * A set of bytes (0-255) as a 256-bit bitmap: what every byte-consuming regex construct
 * (literal, `.`, class, `\d`...) compiles to once case folding has been applied.
 */
export class ByteSet {
  private readonly words = new Uint32Array(8);

  static of(...bytes: number[]): ByteSet {
    const set = new ByteSet();
    for (const b of bytes) set.addRange(b, b);
    return set;
  }

  static range(lo: number, hi: number): ByteSet {
    const set = new ByteSet();
    set.addRange(lo, hi);
    return set;
  }

  /** Builds a set from `[lo, hi, lo, hi, ...]` pairs. */
  static ranges(pairs: readonly number[]): ByteSet {
    const set = new ByteSet();
    for (let i = 0; i + 1 < pairs.length; i += 2)
      set.addRange(pairs[i] as number, pairs[i + 1] as number);
    return set;
  }

  has(byte: number): boolean {
    return ((this.words[byte >>> 5] as number) & (1 << (byte & 31))) !== 0;
  }

  addRange(lo: number, hi: number): this {
    for (let b = lo; b <= hi; b++)
      this.words[b >>> 5] = (this.words[b >>> 5] as number) | (1 << (b & 31));
    return this;
  }

  addSet(other: ByteSet): this {
    for (let i = 0; i < 8; i++)
      this.words[i] = (this.words[i] as number) | (other.words[i] as number);
    return this;
  }

  negated(): ByteSet {
    const out = new ByteSet();
    for (let i = 0; i < 8; i++) out.words[i] = ~(this.words[i] as number);
    return out;
  }

  /** Adds the other ASCII case of every ASCII letter in the set (sregex's `i`: ASCII only). */
  caseFolded(): ByteSet {
    const out = new ByteSet().addSet(this);
    for (let b = 0x41; b <= 0x5a; b++) {
      if (this.has(b)) out.addRange(b + 32, b + 32);
      if (this.has(b + 32)) out.addRange(b, b);
    }
    return out;
  }

  isEmpty(): boolean {
    return this.words.every((w) => w === 0);
  }

  size(): number {
    let n = 0;
    for (let b = 0; b < 256; b++) if (this.has(b)) n++;
    return n;
  }

  /** The set as sorted, maximal, inclusive `[lo, hi]` ranges. */
  toRanges(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let b = 0;
    while (b < 256) {
      if (!this.has(b)) {
        b++;
        continue;
      }
      const lo = b;
      while (b < 256 && this.has(b)) b++;
      out.push([lo, b - 1]);
    }
    return out;
  }

  equals(other: ByteSet): boolean {
    for (let i = 0; i < 8; i++) if (this.words[i] !== other.words[i]) return false;
    return true;
  }
}

/** `\w`: ASCII word bytes, as used by `\w`, `\b` and `\B`. */
export function isWordByte(b: number): boolean {
  return (
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f
  );
}
