import { ByteReader, DecodeError } from '@netplay/protocol';

/** Host → members on `sched`: `0x11, u16 candidate, u8 port, u32 from` (its events count from `from`). */
export const X_ADMIT = 0x11;
/** Host → candidate on `sched`: `0x12, u8 port, u32 from, u32 sync, u32 host next, u16 n, (u16 id, u8 port)*n, inputs, delta`. */
export const X_WELCOME = 0x12;
/** Candidate → host on `sched`: `0x13, u16 id, u8 port`. */
export const X_JOIN = 0x13;
/** Host → members on `sched`: `0x14, u16 leaver, u32 from (first frame without it), u8 port (255: none)`. */
export const X_LEAVE = 0x14;

/** Whether `data` (on `sched`) is one of the late-join and departure messages (0x11–0x14). */
export function isJoinMessage(data: Uint8Array): boolean {
  return data.length > 0 && data[0]! >= X_ADMIT && data[0]! <= X_LEAVE;
}

/** A candidate's join request. */
export function encodeJoinRequest(id: number, port: number): Uint8Array {
  const m = new Uint8Array(4);
  m[0] = X_JOIN;
  m[1] = id >>> 8;
  m[2] = id;
  m[3] = port & 0xff;
  return m;
}

/** The host's admission of `cand` on `port`, its events counting from frame `from`. */
export function encodeAdmit(cand: number, port: number, from: number): Uint8Array {
  const admitMsg = new Uint8Array(8);
  admitMsg[0] = X_ADMIT;
  const av = new DataView(admitMsg.buffer);
  av.setUint16(1, cand);
  admitMsg[3] = port;
  av.setUint32(4, from);
  return admitMsg;
}

/** What a welcome carries. */
export interface Welcome {
  readonly port: number;
  readonly from: number;
  readonly sync: number;
  readonly hostNext: number;
  readonly members: readonly { readonly id: number; readonly port: number }[];
  /** The port inputs in force at the start of `sync`. */
  readonly inputs: Uint8Array;
  /** The page delta of the state at the start of `sync` against the power-on state. */
  readonly delta: Uint8Array;
}

/** The host's welcome of a candidate. */
export function encodeWelcome(m: Welcome): Uint8Array {
  const { members, inputs, delta } = m;
  const head = 16 + 3 * members.length + inputs.length;
  const w = new Uint8Array(head + delta.length);
  const wv = new DataView(w.buffer);
  w[0] = X_WELCOME;
  w[1] = m.port;
  wv.setUint32(2, m.from);
  wv.setUint32(6, m.sync);
  wv.setUint32(10, m.hostNext);
  wv.setUint16(14, members.length);
  members.forEach((x, i) => {
    wv.setUint16(16 + 3 * i, x.id);
    w[18 + 3 * i] = x.port;
  });
  w.set(inputs, 16 + 3 * members.length);
  w.set(delta, head);
  return w;
}

/** Reads a welcome after its type byte (`inputsLength`: every port's input bytes); views into `r`'s bytes. @throws DecodeError */
export function readWelcome(r: ByteReader, inputsLength: number): Welcome {
  const port = r.u8('port');
  const from = r.u32('from');
  const sync = r.u32('sync');
  const hostNext = r.u32('hostNext');
  const count = r.u16('members');
  r.need(count * 3, 'members');
  const members: { id: number; port: number }[] = [];
  for (let i = 0; i < count; i++) members.push({ id: r.u16('member'), port: r.u8('port') });
  const inputs = r.bytesView(inputsLength, 'inputs');
  return { port, from, sync, hostNext, members, inputs, delta: r.bytesView(r.remaining, 'delta') };
}

/** The host's departure notice: `leaver`'s events count before frame `from`, `port` neutral from it (-1: none). */
export function encodeLeave(leaver: number, from: number, port: number): Uint8Array {
  const msg = new Uint8Array(8);
  msg[0] = X_LEAVE;
  const dv = new DataView(msg.buffer);
  dv.setUint16(1, leaver);
  dv.setUint32(3, from);
  msg[7] = port >= 0 ? port : 255;
  return msg;
}

/** A late-join or departure message, read (see {@link readJoinMessage}). */
export type JoinMessage =
  | { readonly type: typeof X_JOIN; readonly cand: number; readonly port: number }
  | { readonly type: typeof X_ADMIT; readonly cand: number; readonly port: number; readonly from: number }
  | { readonly type: typeof X_WELCOME; readonly welcome: Welcome }
  | { readonly type: typeof X_LEAVE; readonly leaver: number; readonly from: number; readonly port: number };

/** Reads one of the messages {@link isJoinMessage} names (`inputsLength`: a welcome's inputs). @throws DecodeError */
export function readJoinMessage(data: Uint8Array, inputsLength: number): JoinMessage {
  const r = new ByteReader(data);
  const type = r.u8('type');
  if (type === X_JOIN) {
    const m = { type, cand: r.u16('candidate'), port: r.u8('port') } as const;
    r.expectEnd('join');
    return m;
  }
  if (type === X_ADMIT) {
    const m = { type, cand: r.u16('candidate'), port: r.u8('port'), from: r.u32('from') } as const;
    r.expectEnd('admit');
    return m;
  }
  if (type === X_WELCOME) return { type, welcome: readWelcome(r, inputsLength) };
  if (type === X_LEAVE) {
    const m = { type, leaver: r.u16('leaver'), from: r.u32('from'), port: r.u8('port') } as const;
    r.expectEnd('leave');
    return m;
  }
  throw new DecodeError('unknown-type', 0, `join message ${type}`);
}
