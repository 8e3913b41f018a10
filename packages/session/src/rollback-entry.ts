import { DecodeError } from '@netplay/protocol';

/** Type byte of ENTRY (host → a rollback player entering a running game; session protocol 4). */
export const ROLLBACK_ENTRY_TYPE = 11;

/** The parts of ENTRY. */
export interface RollbackEntryMessage {
  /** The player's SYNC (as `encodeSync` makes it: the power-on state, packed; frame = the state frame). */
  readonly sync: Uint8Array;
  /** @netplay/rollback's WELCOME (the host scheduler's admission). */
  readonly welcome: Uint8Array;
  /** The state of the welcome's frame: a page delta against the power-on state, deflated (layout hash 0). */
  readonly delta: Uint8Array;
}

/** Largest WELCOME (16 players). */
const MAX_WELCOME_BYTES = 12 + 5 * 16;

/** ENTRY: `u8 11, u32 n, n bytes SYNC, u8 m, m bytes WELCOME, u32 k, k bytes page delta`. */
export function encodeRollbackEntry(m: RollbackEntryMessage): Uint8Array {
  const b = new Uint8Array(1 + 4 + m.sync.length + 1 + m.welcome.length + 4 + m.delta.length);
  const v = new DataView(b.buffer);
  let o = 0;
  b[o++] = ROLLBACK_ENTRY_TYPE;
  v.setUint32(o, m.sync.length);
  b.set(m.sync, o + 4);
  o += 4 + m.sync.length;
  b[o++] = m.welcome.length;
  b.set(m.welcome, o);
  o += m.welcome.length;
  v.setUint32(o, m.delta.length);
  b.set(m.delta, o + 4);
  return b;
}

/** Decodes ENTRY (views into `b`). @throws DecodeError for a wrong type, a length past the end, or bytes left over. */
export function decodeRollbackEntry(b: Uint8Array): RollbackEntryMessage {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const need = (o: number, n: number, what: string) => {
    if (o + n > b.length)
      throw new DecodeError('truncated', o, `ENTRY ${what} needs ${n} bytes at ${o}, has ${b.length - o}`);
  };
  if (b[0] !== ROLLBACK_ENTRY_TYPE) throw new DecodeError('unknown-type', 0, `ENTRY expected, got type ${b[0]}`);
  need(1, 4, 'SYNC length');
  const n = v.getUint32(1);
  need(5, n, 'SYNC');
  const sync = b.subarray(5, 5 + n);
  let o = 5 + n;
  need(o, 1, 'WELCOME length');
  const m = b[o++]!;
  if (m > MAX_WELCOME_BYTES) throw new DecodeError('bad-value', o - 1, `WELCOME of ${m} bytes`);
  need(o, m, 'WELCOME');
  const welcome = b.subarray(o, o + m);
  o += m;
  need(o, 4, 'delta length');
  const k = v.getUint32(o);
  o += 4;
  need(o, k, 'delta');
  if (o + k !== b.length) throw new DecodeError('bad-value', o + k, `${b.length - o - k} bytes after ENTRY`);
  return { sync, welcome, delta: b.subarray(o, o + k) };
}
