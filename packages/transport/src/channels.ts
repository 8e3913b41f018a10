import type { ChannelSpec, ConnectionLimits, ConnectionState } from './contract.js';
import { MAX_CLOSE_REASON_BYTES } from './contract.js';
import { TransportError } from './errors.js';

/**
 * The checks every `Connection.send` makes first, as the contract words them: throws
 * `TransportError` `closed` after close, `unknown-channel` for a name not in `byName`, `too-large`
 * past the channel kind's limit; returns the channel's state otherwise. Allocates nothing.
 */
export function checkSend<
  C extends {
    /** The channel's declaration: its `kind` picks which of `limits`' sizes applies. */
    readonly spec: ChannelSpec;
  },
>(state: ConnectionState, byName: ReadonlyMap<string, C>, channel: string, bytes: number, limits: ConnectionLimits): C {
  if (state === 'closed') throw new TransportError('closed', 'the connection is closed');
  const ch = byName.get(channel);
  if (!ch) throw new TransportError('unknown-channel', `no channel named "${channel}"`);
  const max = ch.spec.kind === 'reliable' ? limits.maxMessageBytes : limits.maxUnreliableBytes;
  if (bytes > max) throw new TransportError('too-large', `${bytes} bytes exceed the ${ch.spec.kind} limit of ${max}`);
  return ch;
}

/** Most channels one connection may declare. */
export const MAX_CHANNELS = 64;

/**
 * Checks a channel list (1–{@link MAX_CHANNELS} channels, names 1–64 characters, unique, kinds
 * `reliable`/`unreliable`) and returns a frozen copy. Throws `TransportError('invalid-argument')`.
 */
export function validateChannels(channels: readonly ChannelSpec[]): readonly ChannelSpec[] {
  if (channels.length < 1 || channels.length > MAX_CHANNELS) {
    throw new TransportError('invalid-argument', `a connection needs 1 to ${MAX_CHANNELS} channels`);
  }
  const seen = new Set<string>();
  const out: ChannelSpec[] = [];
  for (const c of channels) {
    if (typeof c.name !== 'string' || c.name.length < 1 || c.name.length > 64) {
      throw new TransportError('invalid-argument', 'channel names are 1 to 64 characters');
    }
    if (seen.has(c.name)) throw new TransportError('invalid-argument', `duplicate channel name "${c.name}"`);
    if (c.kind !== 'reliable' && c.kind !== 'unreliable') {
      throw new TransportError('invalid-argument', `channel "${c.name}" has an unknown kind`);
    }
    seen.add(c.name);
    out.push(Object.freeze({ name: c.name, kind: c.kind }));
  }
  return Object.freeze(out);
}

/** Whether two channel lists are the same (names, kinds and order). */
export function sameChannels(a: readonly ChannelSpec[], b: readonly ChannelSpec[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.name !== b[i]!.name || a[i]!.kind !== b[i]!.kind) return false;
  }
  return true;
}

/**
 * A stable text form of a channel list (`r:name,u:name,...`), for handshakes that compare the
 * lists of both ends by hash.
 */
export function channelSignature(channels: readonly ChannelSpec[]): string {
  return channels.map((c) => `${c.kind === 'reliable' ? 'r' : 'u'}:${c.name}`).join(',');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * The UTF-8 bytes of a close reason, cut to at most {@link MAX_CLOSE_REASON_BYTES} bytes without
 * splitting a character. Every transport uses it, so peers see the same text.
 */
export function encodeCloseReason(reason: string): Uint8Array {
  const bytes = encoder.encode(reason);
  if (bytes.length <= MAX_CLOSE_REASON_BYTES) return bytes;
  let end = MAX_CLOSE_REASON_BYTES;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.slice(0, end);
}

/** `reason` as the peer will see it: {@link encodeCloseReason} decoded again. */
export function truncateCloseReason(reason: string): string {
  return decoder.decode(encodeCloseReason(reason));
}

/** Decodes close-reason bytes received from a peer (invalid UTF-8 becomes U+FFFD). */
export function decodeCloseReason(bytes: Uint8Array): string {
  return decoder.decode(bytes.subarray(0, MAX_CLOSE_REASON_BYTES));
}
