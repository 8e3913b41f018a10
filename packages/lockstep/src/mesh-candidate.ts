import { DecodeError } from '@netplay/protocol';
import { encodeAddressed, encodeHelloPort, J_HELLO } from './mesh-join.js';
import type { Envelope } from './types.js';

/** A candidate's hello: `1, u32 id, address`, or asking for a port `7, u32 id, u8 port, address`. */
export function candidateHello(id: number, address: string, port: number | undefined): Uint8Array {
  return port === undefined ? encodeAddressed(J_HELLO, id, address) : encodeHelloPort(id, port, address);
}

/** A message that reached a candidate before its acceptance (a copy). */
export interface EarlyMessage {
  readonly from: number;
  readonly channel: string;
  readonly data: Uint8Array;
}

/** Input messages a candidate keeps before its acceptance, at most. */
const MAX_EARLY = 100_000;

/**
 * A mesh candidate's side of joining: its hello to the host (repeated every second until an
 * answer) and the input messages that reach it before its acceptance (channels are not ordered
 * between each other), kept to be replayed once it is a member.
 */
export class MeshCandidacy {
  private hello: Uint8Array | undefined;
  private nextHelloAt = -Infinity;
  private early: EarlyMessage[] = [];

  /** `hello`: the encoded hello of a candidate; `undefined` for a member. */
  constructor(hello: Uint8Array | undefined) {
    this.hello = hello;
  }

  /** Whether the candidate still waits for the host's answer. */
  get waiting(): boolean {
    return this.hello !== undefined;
  }

  /** When the next hello is due (`Infinity`: none). */
  get wakeAt(): number {
    return this.hello ? this.nextHelloAt : Infinity;
  }

  /** Sends the hello to `host` if it is due. */
  tick(now: number, host: number, outbox: Envelope[]): void {
    if (this.hello && now >= this.nextHelloAt) {
      this.nextHelloAt = now + 1000;
      outbox.push({ to: host, channel: 'join', data: this.hello });
    }
  }

  /** Keeps a copy of an input message that came before the acceptance. @throws DecodeError past the cap. */
  keep(from: number, channel: string, data: Uint8Array): void {
    if (this.early.length >= MAX_EARLY) throw new DecodeError('too-large', 0, 'too many inputs before acceptance');
    this.early.push({ from, channel, data: data.slice() });
  }

  /** The host answered: no more hellos; returns the messages kept (to replay once a member). */
  answered(): EarlyMessage[] {
    this.hello = undefined;
    const early = this.early;
    this.early = [];
    return early;
  }
}
