/**
 * fast-check arbitraries and byte builders shared by the FCE Ultra tests (the codec's and the
 * decode-into ones). The byte builders use the package's encoders, whose output the codec tests
 * check against the buffer-layout oracles.
 */
import { fc } from '@fast-check/vitest';
import {
  encodeFceuServerText,
  encodeFceuTcpFrame,
  FCEU_TEXT_MAX_BYTES,
  type FceuFrameData,
  fceuServerTextSize,
} from '../src/index.js';
import { concat } from './concat.js';

/** Every command code the seed lists, written out from the seed's table. */
export const seedCommands = [
  0, 1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 30, 31, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
];

export const u32 = fc.integer({ min: 0, max: 0xffffffff });

/** Frame data: any 4 controller bytes and a command the seed defines. */
export const frameArb: fc.Arbitrary<FceuFrameData> = fc.record({
  controllers: fc.uint8Array({ minLength: 4, maxLength: 4 }),
  command: fc.constantFrom(...seedCommands),
});

/** Latin-1 text without NUL, up to 255 characters. */
export const textArb = fc
  .array(fc.integer({ min: 1, max: 255 }), { maxLength: FCEU_TEXT_MAX_BYTES - 1 })
  .map((codes) => String.fromCharCode(...codes));

/** Up to `maxLength` byte edits for {@link mutate}: (index, modulo the length; new value). */
export function editsArb(maxLength: number): fc.Arbitrary<Array<[number, number]>> {
  return fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength });
}

/** A copy of `bytes` with `edits` applied. */
export function mutate(bytes: Uint8Array, edits: Array<[number, number]>): Uint8Array {
  const out = bytes.slice();
  for (const [at, v] of edits) if (out.length > 0) out[at % out.length] = v;
  return out;
}

/** The 9-byte TCP frame packet. */
export function tcpFrame(counter: number, frame: FceuFrameData): Uint8Array {
  const b = new Uint8Array(9);
  encodeFceuTcpFrame(counter, frame, b);
  return b;
}

/** The server's TCP text message. */
export function serverText(text: string): Uint8Array {
  const b = new Uint8Array(fceuServerTextSize(text));
  encodeFceuServerText(text, b);
  return b;
}

/** One message of a server→client TCP stream: a frame or a text. */
export type ServerStreamItem = { f: FceuFrameData } | { t: string };

/** Up to 8 frames and texts in any order. */
export const serverStreamItemsArb: fc.Arbitrary<ServerStreamItem[]> = fc.array(
  fc.oneof(
    frameArb.map((f) => ({ f })),
    textArb.map((t) => ({ t })),
  ),
  { maxLength: 8 },
);

/** A chunk size for {@link readInChunks}. */
export const chunkArb = fc.integer({ min: 1, max: 16 });

/** The bytes of `items` back to back, the frame at index i with counter i. */
export function serverStream(items: readonly ServerStreamItem[]): Uint8Array {
  return concat(items.map((it, i) => ('t' in it ? serverText(it.t) : tcpFrame(i, it.f))));
}

/**
 * Feeds growing prefixes of `stream` in steps of `chunk` bytes, as a TCP reader would: after each
 * step calls `read(prefix, offset)` until it returns 0 (the message is not complete yet), moving
 * `offset` on by what it returns. Returns the bytes consumed.
 */
export function readInChunks(
  stream: Uint8Array,
  chunk: number,
  read: (prefix: Uint8Array, offset: number) => number,
): number {
  let consumed = 0;
  for (let have = 0; have < stream.length; ) {
    have = Math.min(stream.length, have + chunk);
    for (;;) {
      const n = read(stream.subarray(0, have), consumed);
      if (n === 0) break;
      consumed += n;
    }
  }
  return consumed;
}
