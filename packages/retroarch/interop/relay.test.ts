/**
 * The spectator-relay use case (with `RetroArchSessionRelay`): our client spectates a real RetroArch host (with one of our clients
 * playing on it), and our host relays that session, frame by frame as opaque bytes, to a real
 * RetroArch client that joins it as a spectator.
 */
import type { Server } from 'node:net';
import { RetroArchCommand } from '@netplay/protocol';
import { afterEach, expect, it } from 'vitest';
import { type RetroArchHostEvent, type RetroArchRelayAttachment, RetroArchSessionRelay } from '../src/index.js';
import { connectRetroArch, listenRetroArchHost, type RetroArchConnection } from '../src/node.js';
import { type RetroArchProcess, startClient, startHost, until, waitForPort } from './harness.js';

const procs: RetroArchProcess[] = [];
const conns: RetroArchConnection[] = [];
let server: Server | undefined;
afterEach(async () => {
  for (const c of conns.splice(0)) c.socket.destroy();
  for (const p of procs.splice(0)) await p.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

it('relays a live RetroArch session to a real RetroArch spectator', async () => {
  const upstream = 56016;
  const relayPort = 56017;
  procs.push(await startHost(upstream, { nick: 'rahost', checkFrames: 60 }));
  const player = await connectRetroArch({ port: upstream, nick: 'player' });
  conns.push(player);
  await until(() => player.client.state === 'spectating', 15_000, 'player SYNC');
  player.client.setInput([1 << 8]);
  player.client.play();
  await until(() => player.client.state === 'playing', 10_000, 'player MODE');

  const relay = new RetroArchSessionRelay();
  let attachment: RetroArchRelayAttachment | undefined;
  const events: RetroArchHostEvent[] = [];
  const source = await connectRetroArch({
    port: upstream,
    nick: 'relay',
    onRawFrame: (command, bytes) => relay.onUpstream(command, bytes),
  });
  conns.push(source);
  await until(() => source.client.state === 'spectating', 15_000, 'relay SYNC');
  const info = source.client.session?.hostInfo;
  if (info === undefined) throw new Error('no INFO');
  server = await listenRetroArchHost({
    port: relayPort,
    // The relayed session: client 0 (the upstream host) plays device 0, our player device 1; the
    // spectator gets a client number nobody upstream uses.
    host: () => ({
      nick: 'relay-host',
      info,
      clientNumber: 31,
      deviceClients: [1, 1 << player.client.clientNumber],
    }),
    frame: () => relay.hostFrame,
    onEvent: (c, e) => {
      events.push(e);
      if (e.type === 'joined') {
        attachment = relay.attach(c, c.host.frame);
        source.client.requestSavestate();
      }
    },
  });
  await waitForPort(relayPort);
  const spectator = startClient(relayPort, { nick: 'raspec', extra: ['netplay_start_as_spectator = "true"'] });
  procs.push(spectator);
  await until(() => events.some((e) => e.type === 'joined'), 20_000, 'the spectator to join');
  await until(() => (attachment?.inputs ?? 0) >= 600, 30_000, '600 relayed INPUT frames');
  expect(events.some((e) => e.type === 'closed')).toBe(false);
  // The fresh savestate reached the spectator, and so did the upstream host's CRCs, without the
  // spectator asking for another savestate (which it does when a CRC does not match its state).
  expect(attachment?.others[RetroArchCommand.LoadSavestate]).toBe(1);
  expect(attachment?.others[RetroArchCommand.Crc]).toBeGreaterThanOrEqual(5);
  const fromSpectator = events.flatMap((e) => (e.type === 'relay' ? [e.command] : []));
  expect(fromSpectator).not.toContain(RetroArchCommand.RequestSavestate);
  expect(spectator.log()).toMatch(/\[Netplay\] Connected to: "relay-host"/);
  expect(spectator.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
});
