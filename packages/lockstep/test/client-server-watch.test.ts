import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { type Connection, Prng } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_SERVER_CHANNELS,
  ClientServerClient,
  ClientServerServer,
  type LockstepEvent,
  LockstepRunner,
  runFrame,
  WatcherStream,
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
      // The server's core tracks its pages (the runner hands the dirty pages to the late-join delta) or not.
      trackPages: fc.constantFrom(undefined, 256),
    },
    { numRuns: 10, endOnFailure: true },
  )(
    'watchers joining at any frame run the server frames from their entry, and nothing they send reaches the game',
    ({ seed, players, link: conditions, watchers, trackPages }) => {
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
        pageSize: 256,
      });
      const served: { inputs: Uint8Array; command: number }[] = [];
      const poll = server.poll.bind(server);
      server.poll = (now: number) => {
        const r = poll(now);
        if (r) served.push({ inputs: r.inputs.slice(), command: r.command });
        return r;
      };
      const serverCore = new TestCore({ players, inputBytes: INPUT_BYTES, ...(trackPages ? { trackPages } : {}) });
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

describe('WatcherStream (a P2P host streaming its frames)', () => {
  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      ports: fc.integer({ min: 2, max: 8 }),
      inputBytes: fc.constantFrom(1, 2),
      link: linkArb,
      joins: fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 3 }),
      trackPages: fc.constantFrom(undefined, 256),
    },
    { numRuns: 10, endOnFailure: true },
  )(
    'watchers added at any frame run the frames the host ran from their entry, with the host states',
    ({ seed, ports, inputBytes, link: conditions, joins, trackPages }) => {
      const net = network({ seed, link: conditions });
      const host = new TestCore({ players: ports, inputBytes, ...(trackPages ? { trackPages } : {}) });
      const initial = new Uint8Array(host.stateBytes);
      host.saveInto(initial);
      const stream = new WatcherStream({
        ports,
        inputBytes,
        initialState: initial,
        pageSize: 256,
        maxWatcherLagFrames: 1_000_000,
      });
      const hostSums: bigint[] = [];
      const conns = new Map<number, Connection>();
      const watchers: { id: number; at: number; sums: { sums: bigint[]; first: number } }[] = [];
      const send = () => {
        while (stream.outbox.length > 0) {
          const e = stream.outbox.pop()!;
          conns.get(e.to)?.send(e.channel, e.data);
        }
      };
      const mark = host.pageTracker?.checkpoint() ?? -1;
      const rng = new Prng(seed);
      const inputs = new Uint8Array(ports * inputBytes);
      const total = Math.max(...joins) + 300;
      for (let f = 0; f < total; f++) {
        for (const [k, at] of joins.entries()) {
          if (at !== f) continue;
          const id = 10 + k;
          const { ab, ba } = link(net, `w${k}`, 'host', CLIENT_SERVER_CHANNELS);
          conns.set(id, ba);
          ba.on('message', (m) => stream.receive(id, m.channel, m.data));
          const scheduler = new ClientServerClient({
            id,
            server: 0,
            ports,
            inputBytes,
            frameMs: FRAME_MS,
            liveness: PATIENT,
            watch: true,
          });
          const core = new TestCore({ players: ports, inputBytes });
          const sums = frameChecksumsFrom(core, scheduler);
          new LockstepRunner({ clock: net.clock, scheduler, core, peers: new Map([[0, ab]]) });
          const state = new Uint8Array(host.stateBytes);
          host.saveInto(state);
          stream.addWatcher(id, f, state, host.pageTracker?.since(mark));
          watchers.push({ id, at: f, sums });
        }
        if (rng.int(0, 4) === 0) for (let i = 0; i < inputs.length; i++) inputs[i] = rng.int(0, 256);
        runFrame(host, inputs, 0);
        hostSums.push(host.checksum());
        expect(stream.frameRan(f, inputs)).toEqual([]);
        send();
        net.advance(FRAME_MS);
      }
      net.advance(10_000);
      for (const w of watchers) {
        expect(w.sums.first, `w${w.id} entry`).toBe(w.at);
        expect(w.sums.sums.length, `w${w.id} frames`).toBe(total - w.at);
        for (let i = 0; i < w.sums.sums.length; i++)
          if (w.sums.sums[i] !== hostSums[w.at + i]) expect.fail(`w${w.id}: frame ${w.at + i} differs from the host's`);
      }
      expect(stream.count).toBe(joins.length);
    },
  );

  it('drops a watcher that stops reporting, and keeps one that reports', () => {
    const core = new TestCore({ players: 2, inputBytes: 1 });
    const initial = new Uint8Array(core.stateBytes);
    core.saveInto(initial);
    const stream = new WatcherStream({ ports: 2, inputBytes: 1, initialState: initial, maxWatcherLagFrames: 20 });
    stream.addWatcher(1, 0, initial);
    stream.addWatcher(2, 0, initial);
    const progress = new Uint8Array(5);
    progress[0] = 0x53;
    const dropped: number[] = [];
    for (let f = 0; f < 100; f++) {
      new DataView(progress.buffer).setUint32(1, f);
      expect(stream.receive(2, 'control', progress)).toBe(true);
      dropped.push(...stream.frameRan(f, Uint8Array.of(1, 2)));
      stream.outbox.length = 0;
    }
    expect(dropped).toEqual([1]);
    expect(stream.count).toBe(1);
    // A progress report beyond what was streamed is not one.
    new DataView(progress.buffer).setUint32(1, 500);
    expect(stream.receive(2, 'control', progress)).toBe(false);
  });
});
