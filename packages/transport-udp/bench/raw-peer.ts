/**
 * A raw UDP peer for the hostile benchmarks: it completes the cookie handshake on its own socket
 * and then sends hand-built DATA datagrams (fragments of messages it never finishes, or packed
 * unreliable messages as fast as it can). Not a bench file itself.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { ChannelSpec } from '@netplay/transport';
import { fragmentSize, resolveConfig } from '../src/config.js';
import { channelHash } from '../src/peer-io.js';
import {
  COOKIE_BYTES,
  DATA_HEADER_BYTES,
  FrameType,
  HELLO_BYTES,
  PacketType,
  PROTOCOL_MAGIC,
  putU16,
  putU32,
  seal,
  u32,
} from '../src/wire.js';

function waitFor(s: Socket, type: number, ms: number): Promise<Uint8Array | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      s.off('message', on);
      resolve(null);
    }, ms);
    const on = (m: Buffer) => {
      if (m[8] !== type) return;
      clearTimeout(timer);
      s.off('message', on);
      resolve(new Uint8Array(m));
    };
    s.on('message', on);
  });
}

/** A handshaken raw peer: its socket and session id (0 if the handshake failed). */
export interface RawPeer {
  readonly socket: Socket;
  readonly session: number;
  readonly port: number;
}

/** Binds a socket on `source` and completes the handshake with the listener on 127.0.0.1:`port`. */
export async function rawConnect(
  channels: readonly ChannelSpec[],
  port: number,
  nonce: number,
  source = '127.0.0.1',
): Promise<RawPeer> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, source, () => r()));
  socket.on('message', () => {});
  const hash = channelHash(channels);
  const d = new Uint8Array(HELLO_BYTES);
  d[8] = PacketType.Hello;
  putU32(d, 9, PROTOCOL_MAGIC);
  putU32(d, 13, nonce);
  putU32(d, 17, hash);
  seal(d);
  const challenge = waitFor(socket, PacketType.Challenge, 1000);
  socket.send(d, port, '127.0.0.1');
  const c = await challenge;
  if (!c) return { socket, session: 0, port };
  d.fill(0);
  d[8] = PacketType.Connect;
  putU32(d, 9, PROTOCOL_MAGIC);
  putU32(d, 13, nonce);
  d.set(c.subarray(17, 21 + COOKIE_BYTES), 17);
  putU32(d, 21 + COOKIE_BYTES, hash);
  seal(d);
  const accept = waitFor(socket, PacketType.Accept, 1000);
  socket.send(d, port, '127.0.0.1');
  const a = await accept;
  return { socket, session: a ? u32(a, 4) : 0, port };
}

const FRAG = fragmentSize(resolveConfig());

/** A DATA datagram with fragment `idx` of message `msgSeq` on channel `channel`, announced as `msgLen` bytes. */
export function fragmentDatagram(
  session: number,
  packetSeq: number,
  channel: number,
  msgSeq: number,
  msgLen: number,
  idx: number,
): Uint8Array {
  const frag = FRAG;
  const d = new Uint8Array(DATA_HEADER_BYTES + 16 + frag);
  putU32(d, 4, session);
  d[8] = PacketType.Data;
  putU32(d, 9, packetSeq);
  const o = DATA_HEADER_BYTES;
  d[o] = FrameType.Fragment;
  d[o + 1] = channel;
  putU32(d, o + 2, msgSeq);
  putU32(d, o + 6, msgLen);
  putU32(d, o + 10, idx);
  putU16(d, o + 14, frag);
  seal(d);
  return d;
}

/** Unreliable messages of `size` bytes per datagram of at most `mtu` bytes. */
export const packed = (size: number, mtu = 1200) => Math.floor((mtu - DATA_HEADER_BYTES) / (8 + size));

/**
 * Fills `d` (a DATA datagram of `session`) with `count` unreliable messages of `size` bytes on
 * channel `channel`, numbered from `seq`, and seals it; returns the next sequence number.
 */
export function packUnreliable(
  d: Uint8Array,
  session: number,
  channel: number,
  seq: number,
  count: number,
  size: number,
): number {
  putU32(d, 4, session);
  d[8] = PacketType.Data;
  let o = DATA_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    d[o] = FrameType.Unreliable;
    d[o + 1] = channel;
    putU32(d, o + 2, seq++);
    putU16(d, o + 6, size);
    o += 8 + size;
  }
  seal(d, o);
  return seq;
}
