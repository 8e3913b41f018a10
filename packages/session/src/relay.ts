import { CONTROL_CHANNEL, INPUT_CHANNEL } from '@netplay/rollback';
import { RELAY_CONTROL_CHANNEL, RELAY_INPUT_CHANNEL } from './channels.js';

/** The relay channel that carries a rollback channel's messages. */
export function relayChannelOf(channel: string): string {
  return channel === INPUT_CHANNEL ? RELAY_INPUT_CHANNEL : RELAY_CONTROL_CHANNEL;
}

/** The rollback channel a relay channel carries, or undefined for other channels. */
export function rollbackChannelOf(channel: string): typeof INPUT_CHANNEL | typeof CONTROL_CHANNEL | undefined {
  if (channel === RELAY_INPUT_CHANNEL) return INPUT_CHANNEL;
  if (channel === RELAY_CONTROL_CHANNEL) return CONTROL_CHANNEL;
  return undefined;
}

/**
 * Frames relayed messages (u8 slot + payload, or u8 slot + u8 channel index + payload for the
 * lockstep P2P modes) in one reusable buffer: transports copy what they are given, so nothing is
 * allocated per message once the buffer is large enough.
 */
export class RelayFramer {
  private buf = new Uint8Array(256);

  /** `[slot][payload]` (rollback relay); valid until the next call. */
  frame(slot: number, payload: Uint8Array): Uint8Array {
    const b = this.reserve(payload.length + 1);
    b[0] = slot;
    b.set(payload, 1);
    return b.subarray(0, payload.length + 1);
  }

  /** `[slot][channelIndex][payload]` (routed lockstep P2P messages); valid until the next call. */
  frameRouted(slot: number, channelIndex: number, payload: Uint8Array): Uint8Array {
    const b = this.reserve(payload.length + 2);
    b[0] = slot;
    b[1] = channelIndex;
    b.set(payload, 2);
    return b.subarray(0, payload.length + 2);
  }

  private reserve(n: number): Uint8Array {
    if (n > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < n) size *= 2;
      this.buf = new Uint8Array(size);
    }
    return this.buf;
  }
}
