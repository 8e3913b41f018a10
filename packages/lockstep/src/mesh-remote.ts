import type { MameInputState } from '@netplay/protocol';
import { DecodeError } from '@netplay/protocol';
import { PingHistory, type PingHistoryOptions } from './latency.js';
import { K_BASE, K_NOTICE, K_PACKET } from './mesh-join.js';
import { orPick, type Packet, packetTime, prune, readPacketMasks } from './mesh-packets.js';
import { Ring, readU32BE } from './pool.js';

/** What a mesh peer knows of another member: its port, input stream, departure and ping history. */
export interface Remote {
  readonly id: number;
  port: number;
  readonly history: PingHistory;
  /** Its first packet id (its incarnation's, see `INCARNATION_IDS`: a successor of a departed peer counts from a later one). */
  readonly firstId: number;
  /** Next packet id expected; -1 until a joiner learns the base. */
  expected: number;
  /** Input messages ahead of `expected` (copies), put back in id order. */
  readonly early: Map<number, Uint8Array>;
  /** The packets still needed: the last one at or before the next frame, and every later one. */
  readonly packets: Ring<Packet>;
  /** First frame this peer's input counts and is waited for. */
  activeFrom: number;
  /** After a departure (LEAVE): the first packet id that no longer counts (`Infinity` while it plays). */
  end: number;
  /** After a departure: the first frame its input is neutral and not waited for (`Infinity` while it plays). */
  cutAt: number;
  /** The next id expected on the reliable `input` channel (it delivers in order). */
  reliableNext: number;
  /**
   * Host only: copies of the packets used before their reliable copy arrived (an `input-u` copy
   * came first), in id order. A LEAVE carries them: a member may have lost the unreliable copy
   * the host forwarded, and the reliable one will never come.
   */
  readonly unconfirmed: Ring<OwnItem> | undefined;
}

/** An item of this peer's input stream, kept for late joiners (a reused ring slot). */
export interface OwnItem {
  id: number;
  time: number;
  bytes: Uint8Array;
}

/** A new remote whose packets are expected from id `expected` (-1: until a joiner learns the base). */
export function createRemote(
  id: number,
  port: number,
  activeFrom: number,
  expected: number,
  shape: { readonly ports: number; readonly packetSize: number; readonly history: PingHistoryOptions },
  isHost: boolean,
  firstId = Math.max(0, expected),
): Remote {
  const { ports, packetSize } = shape;
  return {
    id,
    port,
    history: new PingHistory(shape.history),
    firstId,
    expected,
    early: new Map(),
    packets: new Ring(() => ({ id: 0, time: 0, masks: new Uint32Array(ports) })),
    activeFrom,
    end: Infinity,
    cutAt: Infinity,
    reliableNext: expected,
    unconfirmed: isHost ? new Ring(() => ({ id: 0, time: 0, bytes: new Uint8Array(1 + packetSize) })) : undefined,
  };
}

/**
 * Takes a message of `r`'s input stream (at least 5 bytes) off channel `input` or `input-u`: a
 * base (a joiner learns where the stream starts), or a packet or join notice, which `consume`
 * gets in id order (each once; ids before the base or from a departure's `end` on never count).
 * @throws DecodeError on a bad kind or base.
 */
export function takeInput(
  r: Remote,
  channel: string,
  data: Uint8Array,
  consume: (r: Remote, data: Uint8Array) => void,
): void {
  const kind = data[0]!;
  if (kind === K_BASE) {
    if (channel !== 'input' || data.length !== 5) throw new DecodeError('bad-value', 0, 'base');
    if (r.expected >= 0) return;
    r.expected = readU32BE(data, 1);
    for (const id of [...r.early.keys()]) if (id < r.expected) r.early.delete(id);
    drain(r, consume);
    return;
  }
  const id = readU32BE(data, 1);
  if (kind !== K_PACKET && kind !== K_NOTICE) throw new DecodeError('unknown-type', 0, `input kind ${kind}`);
  if (channel === 'input' && id >= r.reliableNext) {
    // The reliable copy of `id` (so of every id before it): those copies are no longer needed.
    r.reliableNext = id + 1;
    const u = r.unconfirmed;
    if (u) while (u.length > 0 && u.at(0).id <= id) u.shift();
  }
  if (r.expected >= 0 && id < r.expected) return;
  // A departed peer's stream ends before `end` (the host's cut): later packets never count.
  if (id >= r.end) return;
  if (id === r.expected && r.early.size === 0) {
    // The steady state: the next message in order, used at once (nothing kept, nothing allocated).
    r.expected++;
    consume(r, data);
    return;
  }
  if (r.early.size > 100_000) throw new DecodeError('too-large', 0, 'too many packets ahead');
  if (!r.early.has(id)) r.early.set(id, data.slice());
  drain(r, consume);
}

function drain(r: Remote, consume: (r: Remote, data: Uint8Array) => void): void {
  if (r.expected < 0) return;
  for (;;) {
    const data = r.early.get(r.expected);
    if (!data) return;
    r.early.delete(r.expected);
    r.expected++;
    consume(r, data);
  }
}

/**
 * Adds input packet `data` (kind byte first, next in `r`'s stream) to `r`'s packets, `next` being
 * the next frame to run; the host keeps a copy if its reliable copy has not come yet.
 * @throws DecodeError on a bad shape or an input time that went back.
 */
export function addPacket(r: Remote, data: Uint8Array, ports: number, next: number): void {
  const time = packetTime(data, ports);
  const last = r.packets.last();
  // Assumption 1 of the seed: input times never go back.
  if (last && time < last.time) throw new DecodeError('bad-value', 5, 'input time went back');
  const slot = r.packets.push();
  readPacketMasks(data, ports, slot);
  slot.time = time;
  prune(r.packets, next);
  if (r.unconfirmed && slot.id >= r.reliableNext) {
    // Used before its reliable copy came: keep it for a LEAVE (slots and their bytes are reused).
    const c = r.unconfirmed.push();
    c.id = slot.id;
    c.time = time;
    if (c.bytes.length !== data.length) c.bytes = new Uint8Array(data.length);
    c.bytes.set(data);
  }
}

/**
 * The OR-merge (`mergeMameInputStates`) of frame `f` into `masks`: the most recent packet at or
 * before `f` of this peer (`own`, `undefined` before its first active frame) and of every remote
 * active at `f` (from its `activeFrom`, before its `cutAt`), on the current masks (the only field
 * a frame's inputs come from).
 */
export function mergeFrame(
  f: number,
  own: Ring<Packet> | undefined,
  remotes: readonly Remote[],
  masks: MameInputState,
): void {
  for (let p = 0; p < masks.length; p++) masks[p]!.currentMask = 0;
  if (own) orPick(own, f, masks);
  for (let i = 0; i < remotes.length; i++) {
    const r = remotes[i]!;
    if (f >= r.activeFrom && f < r.cutAt) orPick(r.packets, f, masks);
  }
}
