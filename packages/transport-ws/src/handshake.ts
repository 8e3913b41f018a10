import { type ChannelSpec, type ConnectionLimits, channelSignature, sameChannels } from '@netplay/transport';
import { type Hello, PROTOCOL_VERSION } from './frame.js';

/**
 * The server's rule for a client's HELLO: why it is refused (another protocol version, another
 * channel list), or `undefined` to accept it.
 */
export function helloRefusal(hello: Hello, channels: readonly ChannelSpec[]): string | undefined {
  if (hello.version !== PROTOCOL_VERSION) {
    return `unsupported netplay-ws version ${hello.version} (server speaks ${PROTOCOL_VERSION})`;
  }
  if (!sameChannels(hello.channels, channels)) return `channel mismatch: server has ${channelSignature(channels)}`;
  return undefined;
}

/** The limits both ends agreed on in the handshake: the smaller of each. */
export function agreedLimits(ours: ConnectionLimits, peerMax: number, peerMaxUnreliable: number): ConnectionLimits {
  return Object.freeze({
    maxMessageBytes: Math.min(ours.maxMessageBytes, peerMax),
    maxUnreliableBytes: Math.min(ours.maxUnreliableBytes, peerMaxUnreliable),
  });
}
