import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import type { Connection } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_SERVER_CHANNELS,
  ClientServerClient,
  ClientServerServer,
  type LockstepEvent,
  LockstepRunner,
} from '../src/index.js';
import { link, network, PATIENT } from './harness.js';
import { equalBytes, frameChecksums, frameChecksumsFrom, makeScript, playScript, type Script } from './oracle.js';

const FRAME_MS = 20;
/** Two input bytes: the generic wire layout (u32 counter + input), which a watcher can forge without the magic. */
const INPUT_BYTES = 2;
/** What watchers try to put into the game: bit 0 clear, so no generated value (they all have it set) equals it. */
const FORGED = Uint8Array.of(0xee, 0xee);

function forgedInput(counter: number): Uint8Array {
  const d = new Uint8Array(4 + INPUT_BYTES);
  new DataView(d.buffer).setUint32(0, counter);
  d.set(FORGED, 4);
  return d;
}

const linkArb = fc.record({
  latencyMs: fc.integer({ min: 0, max: 80 }),
  jitterMs: fc.integer({ min: 0, max: 30 }),
  loss: fc.double({ min: 0, max: 0.1, noNaN: true }),
  reorder: fc.double({ min: 0, max: 0.2, noNaN: true }),
  duplicate: fc.double({ min: 0, max: 0.05, noNaN: true }),
});

describe('client-server watchers (spectators)', () => {
  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      players: fc.integer({ min: 2, max: 4 }),
      link: linkArb,
      watchers: fc.array(fc.record({ atFrame: fc.integer({ min: 0, max: 300 }), link: linkArb }), {
        minLength: 1,
        maxLength: 3,
      }),
    },
    { numRuns: 10, endOnFailure: true },
  )(
    'watchers joining at any frame run the server frames from their entry, and nothing they send reaches the game',
    ({ seed, players, link: conditions, watchers }) => {
      const net = network({ seed, link: { latencyMs: 10 } });
      for (let i = 1; i < players; i++) net.setLinkBoth('p0', `p${i}`, conditions);
      const conns = Array.from({ length: players - 1 }, (_, i) => link(net, `p${i + 1}`, 'p0', CLIENT_SERVER_CHANNELS));
      net.clock.advanceTo(Math.ceil(net.now() / 1000) * 1000 + 1000);
      const t0 = net.now() + 500;
      const last = Math.max(...watchers.map((w) => w.atFrame));
      const until = t0 + (last + 300) * FRAME_MS;
      const server = new ClientServerServer({
        id: 0,
        ports: players,
        inputBytes: INPUT_BYTES,
        frameMs: FRAME_MS,
        startMs: t0,
        magic: seed,
        liveness: PATIENT,
        maxWatcherLagFrames: 1_000_000,
      });
      const served: { inputs: Uint8Array; command: number }[] = [];
      const poll = server.poll.bind(server);
      server.poll = (now: number) => {
        const r = poll(now);
        if (r) served.push({ inputs: r.inputs.slice(), command: r.command });
        return r;
      };
      const serverCore = new TestCore({ players, inputBytes: INPUT_BYTES });
      const serverSums = frameChecksums(serverCore);
      const serverRunner = new LockstepRunner({ clock: net.clock, scheduler: server, core: serverCore });
      const scripts: Script[] = Array.from({ length: players }, (_, k) =>
        makeScript(seed + k, INPUT_BYTES, FRAME_MS, t0, until),
      );
      playScript(net, serverRunner, scripts[0]!);
      for (let i = 1; i < players; i++) {
        const c = new ClientServerClient({
          id: i,
          server: 0,
          ports: players,
          inputBytes: INPUT_BYTES,
          frameMs: FRAME_MS,
          liveness: PATIENT,
        });
        const r = new LockstepRunner({
          clock: net.clock,
          scheduler: c,
          core: new TestCore({ players, inputBytes: INPUT_BYTES }),
        });
        r.addPeer(0, conns[i - 1]!.ab);
        serverRunner.addPeer(i, conns[i - 1]!.ba);
        server.addClient(i, i);
        playScript(net, r, scripts[i]!);
      }
      serverRunner.pump();
      const joined: {
        k: number;
        name: string;
        sums: { sums: bigint[]; first: number };
        scheduler: ClientServerClient;
      }[] = [];
      for (const [k, w] of watchers.entries()) {
        net.clock.setTimer(t0 + w.atFrame * FRAME_MS - net.now(), () => {
          const name = `w${k}`;
          net.setLinkBoth('p0', name, w.link);
          const { ab, ba } = link(net, name, 'p0', CLIENT_SERVER_CHANNELS);
          const id = 100 + k;
          const scheduler = new ClientServerClient({
            id,
            server: 0,
            ports: players,
            inputBytes: INPUT_BYTES,
            frameMs: FRAME_MS,
            liveness: PATIENT,
            watch: true,
          });
          const core = new TestCore({ players, inputBytes: INPUT_BYTES });
          const sums = frameChecksumsFrom(core, scheduler);
          const runner = new LockstepRunner({ clock: net.clock, scheduler, core });
          runner.addPeer(0, ab);
          serverRunner.addPeer(id, ba);
          server.addWatcher(id);
          serverRunner.pump();
          // The watcher tries to play: its own input, forged input packets, commands and chat.
          runner.setLocalInput(FORGED);
          for (let n = 0; n < 20; n++)
            net.clock.setTimer(n * 97, () => {
              if (ab.state === 'closed') return;
              ab.send('input', forgedInput(1_000_000 + n));
              ab.send('control', Uint8Array.of(1));
              ab.send('chat', Uint8Array.of(0x41, 0));
            });
          joined.push({ k, name, sums, scheduler });
        });
      }
      net.clock.advanceTo(until + 3000);
      expect(server.watcherCount).toBe(watchers.length);
      // Nothing a watcher sent reached the game: no command, no chat, and every port's input is
      // neutral or a value the test generated for that port's player.
      expect(server.chat).toEqual([]);
      for (const [f, s] of served.entries()) {
        expect(s.command, `frame ${f} command`).toBe(0);
        for (let port = 0; port < players; port++) {
          const got = s.inputs.subarray(port * INPUT_BYTES, (port + 1) * INPUT_BYTES);
          if (got.every((b) => b === 0)) continue;
          expect(
            scripts[port]!.values.some((v) => equalBytes(v, got)),
            `frame ${f} port ${port}: not a generated input`,
          ).toBe(true);
        }
      }
      // Offline replay of those inputs gives the server's states.
      const replay = new TestCore({ players, inputBytes: INPUT_BYTES });
      for (const [f, s] of served.entries()) {
        for (let port = 0; port < players; port++)
          replay.setInput(port, s.inputs.subarray(port * INPUT_BYTES, (port + 1) * INPUT_BYTES));
        replay.advance();
        expect(replay.checksum(), `replay of frame ${f}`).toBe(serverSums[f]);
      }
      // Every watcher ran the server's frames from its entry (after its join), with equal states.
      expect(joined.length).toBe(watchers.length);
      for (const w of joined) {
        expect(w.sums.first, `${w.name} entry`).toBeGreaterThanOrEqual(watchers[w.k]!.atFrame);
        expect(w.sums.sums.length, `${w.name} frames`).toBeGreaterThan(200);
        for (let i = 0; i < w.sums.sums.length; i++)
          if (w.sums.sums[i] !== serverSums[w.sums.first + i])
            expect.fail(`${w.name}: state after frame ${w.sums.first + i} differs from the server's`);
        expect(w.scheduler.finalFrame).toBe(w.scheduler.nextFrame - 1);
        expect(w.scheduler.port).toBe(-1);
      }
    },
  );

  function twoPeers(maxWatcherLagFrames: number) {
    const net = network({ seed: 5, link: { latencyMs: 10 } });
    const { ab, ba } = link(net, 'w', 'p0', CLIENT_SERVER_CHANNELS);
    const server = new ClientServerServer({
      id: 0,
      ports: 2,
      inputBytes: INPUT_BYTES,
      frameMs: FRAME_MS,
      startMs: net.now() + 100,
      liveness: PATIENT,
      maxWatcherLagFrames,
    });
    const runner = new LockstepRunner({
      clock: net.clock,
      scheduler: server,
      core: new TestCore({ players: 2, inputBytes: INPUT_BYTES }),
    });
    const events: LockstepEvent[] = [];
    return { net, ab, ba, server, runner, events };
  }

  it('drops a watcher that falls more than maxWatcherLagFrames behind, tells it, and names it in a removed event', () => {
    const { net, ab, ba, server, runner } = twoPeers(50);
    // A watcher that never reports progress (a raw connection: it reads but runs nothing).
    const got: { channel: string; data: Uint8Array }[] = [];
    ab.on('message', (m) => got.push({ channel: m.channel, data: m.data.slice() }));
    runner.addPeer(7, ba);
    server.addWatcher(7);
    runner.pump();
    net.advance(40 * FRAME_MS);
    expect(server.watcherCount).toBe(1);
    net.advance(40 * FRAME_MS);
    expect(server.watcherCount).toBe(0);
    const removed = server.events.filter((e) => e.type === 'removed');
    expect(removed).toHaveLength(1);
    expect(removed[0]).toMatchObject({ peer: 7 });
    const notice = got.find((m) => m.channel === 'control' && m.data[0] === 0x52);
    expect(notice, 'the watcher is told it was removed').toBeDefined();
    // The game goes on, and nothing more is queued for the dropped watcher.
    const frames = got.filter((m) => m.channel === 'frame').length;
    net.advance(100 * FRAME_MS);
    expect(got.filter((m) => m.channel === 'frame').length).toBeLessThanOrEqual(frames + 2);
    expect(server.nextFrame).toBeGreaterThan(150);
  });

  it('keeps a watcher that reports its progress, however long the game runs', () => {
    const { net, ab, ba, server, runner } = twoPeers(50);
    const scheduler = new ClientServerClient({
      id: 7,
      server: 0,
      ports: 2,
      inputBytes: INPUT_BYTES,
      frameMs: FRAME_MS,
      liveness: PATIENT,
      watch: true,
    });
    const core = new TestCore({ players: 2, inputBytes: INPUT_BYTES });
    const watcher = new LockstepRunner({ clock: net.clock, scheduler, core });
    watcher.addPeer(0, ab as Connection);
    runner.addPeer(7, ba);
    server.addWatcher(7);
    runner.pump();
    net.advance(1000 * FRAME_MS);
    expect(server.watcherCount).toBe(1);
    expect(server.events.filter((e) => e.type === 'removed')).toHaveLength(0);
    expect(scheduler.nextFrame).toBeGreaterThan(server.nextFrame - 10);
    expect(() => server.addWatcher(7)).toThrow(/already/);
  });
});
