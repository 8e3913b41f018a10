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
  DATA_MARK,
  encodeDataPacket,
  encodeFragmentFrame,
  FrameType,
  HELLO_BYTES,
  PacketType,
  PROTOCOL_MAGIC,
  putFrameStart,
  putU32,
  putVarint,
  seal,
  UNRELIABLE_HEADER_BYTES,
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
  return encodeDataPacket(session, encodeFragmentFrame(channel, msgSeq, msgLen, idx, frag, new Uint8Array(frag)), {
    seq: packetSeq,
  });
}

/** Unreliable messages of `size` bytes per datagram of at most `mtu` bytes. */
export const packed = (size: number, mtu = 1200) => Math.floor((mtu - 3) / (UNRELIABLE_HEADER_BYTES + size));

/**
 * Fills `d` (a DATA datagram of `session`, wire version 2: untracked, no CRC) with `count`
 * unreliable messages of `size` bytes on channel `channel`, numbered from `seq`; returns the next
 * sequence number. The datagram is `d[0, 3 + count × (frame header + size))`.
 */
export function packUnreliable(
  d: Uint8Array,
  session: number,
  channel: number,
  seq: number,
  count: number,
  size: number,
): number {
  d[0] = DATA_MARK;
  d[1] = session >>> 8;
  d[2] = session;
  let o = 3;
  for (let i = 0; i < count; i++) {
    o = putFrameStart(d, o, FrameType.Unreliable, channel);
    d[o] = seq >>> 8;
    d[o + 1] = seq;
    seq++;
    o = putVarint(d, o + 2, size) + size;
  }
  return seq;
}
