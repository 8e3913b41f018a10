import { type ByteReader, DecodeError } from '@netplay/protocol';
import type { MeshMember } from './mesh-options.js';
import { u32msg } from './mesh-packets.js';
import type { Ring } from './pool.js';

/** The mesh's input-stream kinds (first byte on `input` / `input-u`) and join messages (on `join`). */

/** An input packet: `1`, then the MAMEHub packet (seed 000). */
export const K_PACKET = 1;
/** A join notice in the host's stream: `2, u32 id, u32 candidate, u8 port, u32 activeFrom, u32 sync, u32 firstId`. */
export const K_NOTICE = 2;
/** Where a stream starts for a joiner: `3, u32 first id`. */
export const K_BASE = 3;
/** Candidate → host: `1, u32 id, address (UTF-8)`. */
export const J_HELLO = 1;
/** Host → members: `2, u32 candidate, address`: connect to it, then report. */
export const J_CANDIDATE = 2;
/** Member → host: `3, u32 candidate, u8 ok`. */
export const J_REPORT = 3;
/** Host → candidate: `4, u32 port, u32 activeFrom, u32 sync, u32 host frame, u32 firstId, u32 n, (u32 id, u32 port, u32 firstId)*n, delta`. */
export const J_ACCEPTED = 4;
/** Host → candidate (and members when they were asked): `5, u32 candidate`. */
export const J_REJECT = 5;
/**
 * Host → members: `6, u32 leaver, u32 end (first packet id ignored), u32 cutAt (first neutral frame)`,
 * then zero or more of the leaver's packets (kind byte included) the host got only unreliably.
 */
export const J_LEAVE = 6;
/** Candidate → host, asking for a port: `7, u32 id, u8 port, address (UTF-8)`. */
export const J_HELLO_PORT = 7;

/**
 * Packet ids per incarnation of a peer id: a peer admitted under the id of a departed one (its
 * successor) numbers its packets from the next multiple of this (`firstId`), so that late copies
 * of the departed peer's packets (ids below it) never count as the successor's. 256 incarnations
 * of an id, 2^24 packets each (77 hours at 60 frames a second).
 */
export const INCARNATION_IDS = 0x100_0000;

/** The first packet id of the incarnation after the one whose first id was `firstId` (`undefined`: none left). */
export function nextIncarnation(firstId: number): number | undefined {
  const next = (Math.floor(firstId / INCARNATION_IDS) + 1) * INCARNATION_IDS;
  return next > 0xffff_ffff ? undefined : next;
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

/** A hello or candidate message: `type, u32 id, address`. */
export function encodeAddressed(type: typeof J_HELLO | typeof J_CANDIDATE, id: number, address: string): Uint8Array {
  const a = utf8.encode(address);
  const msg = new Uint8Array(5 + a.length);
  msg.set(u32msg(type, id));
  msg.set(a, 5);
  return msg;
}

/** A hello asking for `port`: `7, u32 id, u8 port, address`. */
export function encodeHelloPort(id: number, port: number, address: string): Uint8Array {
  const a = utf8.encode(address);
  const msg = new Uint8Array(6 + a.length);
  msg.set(u32msg(J_HELLO_PORT, id));
  msg[5] = port;
  msg.set(a, 6);
  return msg;
}

/** Reads a hello's or candidate's id, the port asked for (`withPort`: a {@link J_HELLO_PORT}) and address (after the type byte). */
export function readAddressed(r: ByteReader, withPort = false): { id: number; port?: number; address: string } {
  const id = r.u32('candidate');
  const port = withPort ? r.u8('port') : undefined;
  const address = utf8d.decode(r.bytesView(r.remaining, 'address'));
  return port === undefined ? { id, address } : { id, port, address };
}

/** A member's report on candidate `cand`. */
export function encodeReport(cand: number, ok: boolean): Uint8Array {
  const msg = new Uint8Array(6);
  msg[0] = J_REPORT;
  new DataView(msg.buffer).setUint32(1, cand);
  msg[5] = ok ? 1 : 0;
  return msg;
}

/** A join notice of the host's input stream. */
export interface Notice {
  readonly cand: number;
  readonly port: number;
  readonly activeFrom: number;
  readonly sync: number;
  /** The candidate's first packet id (0, or its incarnation's: see {@link INCARNATION_IDS}). */
  readonly firstId: number;
}

/** The notice with packet id `id`. */
export function encodeNotice(id: number, n: Notice): Uint8Array {
  const bytes = new Uint8Array(22);
  const dv = new DataView(bytes.buffer);
  bytes[0] = K_NOTICE;
  dv.setUint32(1, id);
  dv.setUint32(5, n.cand);
  bytes[9] = n.port;
  dv.setUint32(10, n.activeFrom);
  dv.setUint32(14, n.sync);
  dv.setUint32(18, n.firstId);
  return bytes;
}

/** Reads a join notice. @throws DecodeError when `data` is not 22 bytes. */
export function decodeNotice(data: Uint8Array): Notice {
  if (data.length !== 22) throw new DecodeError('bad-length', 0, 'notice');
  const dv = new DataView(data.buffer, data.byteOffset, data.length);
  const n = { cand: dv.getUint32(5), port: data[9]!, activeFrom: dv.getUint32(10), sync: dv.getUint32(14) };
  return { ...n, firstId: dv.getUint32(18) };
}

/** A member as an acceptance lists it: with the first packet id of its incarnation. */
export interface AcceptedMember extends MeshMember {
  readonly firstId: number;
}

/** What an acceptance carries. */
export interface Accepted {
  readonly port: number;
  readonly activeFrom: number;
  /** The frame the state is of (the candidate runs from there). */
  readonly sync: number;
  /** The host's next frame (the candidate runs behind it by as many frames). */
  readonly hostFrame: number;
  /** The candidate's first packet id (see {@link INCARNATION_IDS}). */
  readonly firstId: number;
  readonly members: readonly AcceptedMember[];
  /** The page delta of the state at the start of `sync` against the power-on state. */
  readonly delta: Uint8Array;
}

/** The host's acceptance of a candidate (on `join`). */
export function encodeAccepted(m: Accepted): Uint8Array {
  const { members, delta } = m;
  const head = 25 + 12 * members.length;
  const acc = new Uint8Array(head + delta.length);
  const av = new DataView(acc.buffer);
  acc[0] = J_ACCEPTED;
  av.setUint32(1, m.port);
  av.setUint32(5, m.activeFrom);
  av.setUint32(9, m.sync);
  av.setUint32(13, m.hostFrame);
  av.setUint32(17, m.firstId);
  av.setUint32(21, members.length);
  members.forEach((x, i) => {
    av.setUint32(25 + 12 * i, x.id);
    av.setUint32(29 + 12 * i, x.port);
    av.setUint32(33 + 12 * i, x.firstId);
  });
  acc.set(delta, head);
  return acc;
}

/** Reads an acceptance after its type byte (the delta is a view into the message). */
export function readAccepted(r: ByteReader): Accepted {
  const port = r.u32('port');
  const activeFrom = r.u32('activeFrom');
  const sync = r.u32('sync');
  const hostFrame = r.u32('hostFrame');
  const firstId = r.u32('firstId');
  const count = r.u32('members');
  r.need(count * 12, 'members');
  const members: AcceptedMember[] = [];
  for (let i = 0; i < count; i++) members.push({ id: r.u32('member'), port: r.u32('port'), firstId: r.u32('firstId') });
  return { port, activeFrom, sync, hostFrame, firstId, members, delta: r.bytesView(r.remaining, 'delta') };
}

/** A LEAVE with the leaver's packets in `tail` (each `each` bytes). */
export function encodeLeave(
  leaver: number,
  end: number,
  cutAt: number,
  tail: Ring<{ bytes: Uint8Array }>,
  each: number,
): Uint8Array {
  const msg = new Uint8Array(13 + tail.length * each);
  const dv = new DataView(msg.buffer);
  msg[0] = J_LEAVE;
  dv.setUint32(1, leaver);
  dv.setUint32(5, end);
  dv.setUint32(9, cutAt);
  for (let i = 0; i < tail.length; i++) msg.set(tail.at(i).bytes, 13 + i * each);
  return msg;
}

/**
 * Reads a LEAVE after its type byte (`data` the whole message): the leaver, `end`, `cutAt` and
 * its packets (views, each `each` bytes, kind byte included).
 * @throws DecodeError on a length that is not a whole number of packets or a packet of another kind.
 */
export function readLeave(
  r: ByteReader,
  data: Uint8Array,
  each: number,
): { leaver: number; end: number; cutAt: number; packets: Uint8Array[] } {
  const leaver = r.u32('leaver');
  const end = r.u32('end');
  const cutAt = r.u32('cutAt');
  if (r.remaining % each !== 0) throw new DecodeError('bad-length', 13, 'leave packets');
  const packets: Uint8Array[] = [];
  for (let at = 13; at < data.length; at += each) {
    if (data[at] !== K_PACKET) throw new DecodeError('bad-value', at, 'leave packet kind');
    packets.push(data.subarray(at, at + each));
  }
  return { leaver, end, cutAt, packets };
}
