/**
 * The spectator-relay use case: our client spectates a real RetroArch host (with one of our clients
 * playing on it), and our host relays that session, frame by frame as opaque bytes, to a real
 * RetroArch client that joins it as a spectator.
 */
import type { Server } from 'node:net';
import { RetroArchCommand } from '@netplay/protocol';
import { afterEach, expect, it } from 'vitest';
import type { RetroArchHostEvent } from '../src/index.js';
import {
  connectRetroArch,
  listenRetroArchHost,
  type RetroArchConnection,
  type RetroArchHostSocket,
} from '../src/node.js';
import { type RetroArchProcess, startClient, startHost, until, waitForPort } from './harness.js';

const procs: RetroArchProcess[] = [];
const conns: RetroArchConnection[] = [];
let server: Server | undefined;
afterEach(async () => {
  for (const c of conns.splice(0)) c.socket.destroy();
  for (const p of procs.splice(0)) await p.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

/**
 * Relays the upstream session to a spectator that joins mid-session. RetroArch needs every
 * client's INPUT in order from the SYNC frame F (else "input out of order") and a LOAD_SAVESTATE
 * exactly when its host-frame count reaches the savestate's frame (else "state load out of
 * order"). So F is the frame after the upstream host's (client 0) newest INPUT; client 0's frames,
 * NOINPUT, CRC and the savestate requested at the join are relayed live, in upstream order; other
 * clients' INPUT, which the upstream host forwards as soon as it arrives (players run ahead), is
 * relayed in order from F out of a buffer of recent frames kept per client.
 */
class Resequencer {
  downstream: RetroArchHostSocket | undefined;
  inputs = 0;
  hostNext = 0;
  readonly others: Record<number, number> = {};
  private readonly recent = new Map<number, Map<number, Uint8Array>>();
  private next: Map<number, number> | undefined;
  private from = 0;

  /** The downstream client was synchronised at frame `from`. */
  start(from: number): void {
    this.from = from;
    this.next = new Map();
    for (const c of this.recent.keys()) this.pumpClient(c);
  }

  onUpstream(command: number, bytes: Uint8Array): void {
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (command === RetroArchCommand.Input) {
      const frame = v.getUint32(8);
      const client = v.getUint32(12) & 0xffff;
      if (client === 0) this.hostNext = frame + 1;
      let m = this.recent.get(client);
      if (m === undefined) {
        m = new Map();
        this.recent.set(client, m);
      }
      m.set(frame, bytes.slice());
      m.delete(frame - 600);
      this.pumpClient(client);
      return;
    }
    const d = this.downstream;
    if (d === undefined || this.next === undefined) return;
    if (
      command === RetroArchCommand.LoadSavestate ||
      command === RetroArchCommand.Crc ||
      command === RetroArchCommand.NoInput
    ) {
      if (v.getUint32(8) >= this.from) {
        d.relay(bytes);
        this.others[command] = (this.others[command] ?? 0) + 1;
      }
    }
  }

  private pumpClient(client: number): void {
    const d = this.downstream;
    const next = this.next;
    const m = this.recent.get(client);
    if (d === undefined || next === undefined || m === undefined) return;
    let f = next.get(client) ?? this.from;
    for (let b = m.get(f); b !== undefined; b = m.get(f)) {
      d.relay(b);
      this.inputs++;
      f++;
    }
    next.set(client, f);
  }
}

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

  const relay = new Resequencer();
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
    frame: () => relay.hostNext,
    onEvent: (c, e) => {
      relay.downstream = c;
      events.push(e);
      if (e.type === 'joined') {
        relay.start(c.host.frame);
        source.client.requestSavestate();
      }
    },
  });
  await waitForPort(relayPort);
  const spectator = startClient(relayPort, { nick: 'raspec', extra: ['netplay_start_as_spectator = "true"'] });
  procs.push(spectator);
  await until(() => events.some((e) => e.type === 'joined'), 20_000, 'the spectator to join');
  await until(() => relay.inputs >= 600, 30_000, '600 relayed INPUT frames');
  expect(events.some((e) => e.type === 'closed')).toBe(false);
  // The fresh savestate reached the spectator, and so did the upstream host's CRCs, without the
  // spectator asking for another savestate (which it does when a CRC does not match its state).
  expect(relay.others[RetroArchCommand.LoadSavestate]).toBe(1);
  expect(relay.others[RetroArchCommand.Crc]).toBeGreaterThanOrEqual(5);
  const fromSpectator = events.flatMap((e) => (e.type === 'relay' ? [e.command] : []));
  expect(fromSpectator).not.toContain(RetroArchCommand.RequestSavestate);
  expect(spectator.log()).toMatch(/\[Netplay\] Connected to: "relay-host"/);
  expect(spectator.log()).not.toMatch(/\[ERROR\] \[Netplay\]/);
});
