/** out[i - start] = a[i] ^ b[i] for i in [start, end). Word-wise when the three are aligned alike. */
export function xorRange(a: Uint8Array, b: Uint8Array, start: number, end: number, out: Uint8Array): void {
  let i = start;
  const aligned =
    ((a.byteOffset + start) & 3) === 0 && ((b.byteOffset + start) & 3) === 0 && (out.byteOffset & 3) === 0;
  if (aligned && end - start >= 64) {
    const words = (end - start) >>> 2;
    const wa = new Int32Array(a.buffer, a.byteOffset + start, words);
    const wb = new Int32Array(b.buffer, b.byteOffset + start, words);
    const wo = new Int32Array(out.buffer, out.byteOffset, words);
    for (let k = 0; k < words; k++) wo[k] = wa[k]! ^ wb[k]!;
    i = start + words * 4;
  }
  for (; i < end; i++) out[i - start] = a[i]! ^ b[i]!;
}

/** Int32 views of a base and a state for word compares, or undefined when either is unaligned. */
export function wordViews(
  base: Uint8Array,
  current: Uint8Array,
): { readonly wa: Int32Array; readonly wb: Int32Array } | undefined {
  if ((base.byteOffset & 3) !== 0 || (current.byteOffset & 3) !== 0) return undefined;
  return {
    wa: new Int32Array(base.buffer, base.byteOffset, base.length >>> 2),
    wb: new Int32Array(current.buffer, current.byteOffset, current.length >>> 2),
  };
}

/** True when bytes [start, end) of `a` and `b` are equal, reading `a` as zero past its end. */
export function sameRange(
  a: Uint8Array,
  b: Uint8Array,
  start: number,
  end: number,
  wa: Int32Array | undefined,
  wb: Int32Array | undefined,
): boolean {
  if (wa !== undefined && wb !== undefined && end <= a.length && (start & 3) === 0 && (end & 3) === 0)
    return sameWords(wa, wb, start >>> 2, end >>> 2);
  for (let i = start; i < end; i++) if ((i < a.length ? a[i]! : 0) !== b[i]) return false;
  return true;
}

/**
 * The uncompressed body of a page delta: the `count` page indexes of `changed` (u32 little-endian,
 * increasing), then each of those pages of `current` XOR the same page of `base` (read as zeros
 * past its end; the last page may be short).
 */
export function pageDeltaBody(
  base: Uint8Array,
  current: Uint8Array,
  pageSize: number,
  changed: Uint32Array,
  count: number,
): Uint8Array<ArrayBuffer> {
  const n = current.length;
  let changedBytes = 0;
  for (let k = 0; k < count; k++) {
    const start = changed[k]! * pageSize;
    changedBytes += Math.min(n, start + pageSize) - start;
  }
  const body = new Uint8Array(count * 4 + changedBytes);
  const dv = new DataView(body.buffer);
  let o = count * 4;
  const common = Math.min(n, base.length);
  for (let k = 0; k < count; k++) {
    const p = changed[k]!;
    dv.setUint32(k * 4, p, true);
    const start = p * pageSize;
    const end = Math.min(n, start + pageSize);
    const out = body.subarray(o, o + (end - start));
    xorRange(base, current, start, Math.min(end, common), out);
    for (let i = Math.max(start, common); i < end; i++) out[i - start] = current[i]!;
    o += end - start;
  }
  return body;
}

/** True when words [k, e) of `wa` and `wb` are equal: eight words per step (about 2× a plain loop). */
function sameWords(wa: Int32Array, wb: Int32Array, k: number, e: number): boolean {
  for (; k + 8 <= e; k += 8) {
    if (
      ((wa[k]! ^ wb[k]!) |
        (wa[k + 1]! ^ wb[k + 1]!) |
        (wa[k + 2]! ^ wb[k + 2]!) |
        (wa[k + 3]! ^ wb[k + 3]!) |
        (wa[k + 4]! ^ wb[k + 4]!) |
        (wa[k + 5]! ^ wb[k + 5]!) |
        (wa[k + 6]! ^ wb[k + 6]!) |
        (wa[k + 7]! ^ wb[k + 7]!)) !==
      0
    )
      return false;
  }
  for (; k < e; k++) if (wa[k] !== wb[k]) return false;
  return true;
}

/**
 * Compares bytes `[start, end)` of two states (both hold the range): true when equal. The
 * default is a JavaScript word compare; `nodeRangeCompare()` from `@netplay/state/node` uses
 * native `memcmp` (`Buffer.compare`), several times faster.
 */
export type RangeCompare = (a: Uint8Array, b: Uint8Array, start: number, end: number) => boolean;
