import type { Connection } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import { connectWebRtcNode, listenSignaling, listenWebRtcNode, NodeRTCPeerConnection, nodeRtc } from '../src/server.js';
import { lateOpenRtc } from './link-shim.js';

const CHANNELS = [
  { name: 'control', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

let rooms = 0;

/**
 * A host and a guest where one side's data channels (not the control channel) report open
 * `delayMs` after the control channel: messages either end sends at once, before or right after
 * `open`, must all arrive (issue 17's CI flake: a session HELLO queued before open was sent on a
 * channel not flagged open yet, dropped without a word, and the host refused the guest 5 s later).
 */
async function lateChannels(side: 'client' | 'server', delayMs: number) {
  const server = await listenSignaling({ rateLimits: false });
  cleanup.push(() => server.close());
  const base = nodeRtc({ bindAddress: '127.0.0.1' });
  const late = {
    ...base,
    RTCPeerConnection: lateOpenRtc(NodeRTCPeerConnection, (l) => l.startsWith('np-') && l !== 'np-control', delayMs),
  };
  const room = `late-${process.pid}-${rooms++}`;
  const listener = await listenWebRtcNode({
    signaling: { url: server.url, room, peer: 'host' },
    channels: CHANNELS,
    rtc: side === 'server' ? late : base,
  });
  cleanup.push(() => listener.close());
  const atHost: string[] = [];
  let host: Connection | undefined;
  listener.on('connection', (c) => {
    host = c;
    c.on('message', ({ data }) => atHost.push(new TextDecoder().decode(data)));
    // The host answers at once, as a session host does.
    c.send('control', new TextEncoder().encode('welcome'));
  });
  const client = connectWebRtcNode({
    signaling: { url: server.url, room, peer: 'guest' },
    to: 'host',
    channels: CHANNELS,
    rtc: side === 'client' ? late : base,
  });
  cleanup.push(() => client.close());
  const atClient: string[] = [];
  client.on('message', ({ data }) => atClient.push(new TextDecoder().decode(data)));
  // Queued before open (a session client's HELLO), then sent the moment it opens.
  client.send('control', new TextEncoder().encode('hello'));
  client.on('open', () => client.send('control', new TextEncoder().encode('info')));
  expect(
    await pollUntil(() => atHost.length >= 2 && atClient.length >= 1, 5000),
    `host got ${atHost}, client got ${atClient}`,
  ).toBe(true);
  expect(atHost).toEqual(['hello', 'info']);
  expect(atClient).toEqual(['welcome']);
  expect(host?.state).toBe('open');
  expect(client.state).toBe('open');
}

describe('data channels that report open after the control channel', () => {
  it('on the guest: what it queued before open and sends at open arrives', async () => {
    await lateChannels('client', 300);
  });

  it('on the host: what it sends on accept arrives', async () => {
    await lateChannels('server', 300);
  });
});
