import { fc, test } from '@fast-check/vitest';
import { FceuCommand } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import { Prng } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { CLIENT_SERVER_CHANNELS, ClientServerClient, ClientServerServer, LockstepRunner } from '../src/index.js';
import { expectDeterministic, link, network, PATIENT, type SimPeer, scriptInputs } from './harness.js';
import {
  equalBytes,
  expectEveryFrame,
  frameChecksums,
  frameChecksumsFrom,
  inForce,
  makeScript,
  playScript,
  replayGenerated,
  type Script,
  scriptValue,
} from './oracle.js';

const FRAME_MS = 20;

interface CsSession {
  net: ReturnType<typeof network>;
  peers: SimPeer<TestCore>[];
  server: ClientServerServer;
  clients: ClientServerClient[];
}

function csSession(
  seed: number,
  players: number,
  inputBytes: number,
  linkFor: (client: number) => Parameters<ReturnType<typeof network>['setLinkBoth']>[2],
  /** Peers present from the start (server included; default all). */
  present = players,
): CsSession {
  const net = network({ seed, link: { latencyMs: 10 } });
  const names = Array.from({ length: players }, (_, i) => `p${i}`);
  for (let i = 1; i < present; i++) net.setLinkBoth('p0', names[i]!, linkFor(i));
  const peers: SimPeer<TestCore>[] = [];
  const serverCore = new TestCore({ players, inputBytes });
  const conns = [];
  for (let i = 1; i < present; i++) conns.push(link(net, names[i]!, 'p0', CLIENT_SERVER_CHANNELS));
  net.clock.advanceTo(Math.ceil(net.now() / 1000) * 1000 + 1000);
  // Frame 0 is due once every client is connected and has its init.
  const t0 = net.now() + 500;
  const srv = new ClientServerServer({
    id: 0,
    ports: players,
    inputBytes,
    frameMs: FRAME_MS,
    startMs: t0,
    magic: seed,
    liveness: PATIENT,
  });
  const serverRunner = new LockstepRunner({ clock: net.clock, scheduler: srv, core: serverCore, log: true });
  peers.push({ name: 'p0', scheduler: srv, core: serverCore, runner: serverRunner });
  const clients: ClientServerClient[] = [];
  for (let i = 1; i < present; i++) {
    const c = new ClientServerClient({
      id: i,
      server: 0,
      ports: players,
      inputBytes,
      frameMs: FRAME_MS,
      liveness: PATIENT,
    });
    const core = new TestCore({ players, inputBytes });
    const runner = new LockstepRunner({ clock: net.clock, scheduler: c, core, log: true });
    runner.addPeer(0, conns[i - 1]!.ab);
    serverRunner.addPeer(i, conns[i - 1]!.ba);
    srv.addClient(i, i);
    clients.push(c);
    peers.push({ name: names[i]!, scheduler: c, core, runner });
  }
  serverRunner.pump();
  return { net, peers, server: srv, clients };
}

/** A server frame as `poll` returned it, with the time it ran: the stamp of every input it collated. */
interface Served {
  frame: number;
  at: number;
  inputs: Uint8Array;
  command: number;
}

/** Records every frame the server releases (its public return of `poll`). */
function recordServed(server: ClientServerServer): Served[] {
  const served: Served[] = [];
  const poll = server.poll.bind(server);
  server.poll = (now: number) => {
    const r = poll(now);
    if (r) served.push({ frame: r.frame, at: now, inputs: r.inputs.slice(), command: r.command });
    return r;
  };
  return served;
}

/**
 * Which generated input each port got on each server frame, checked against seed 002's rule: the
 * server's own input is the one in force when the frame runs; a client's is one it generated
 * before the frame ran, never an older one than the previous frame's, and never one superseded
 * more than STALE_MS before (the client sends its latest input on every change and after every
 * frame; a server ignoring inputs leaves the port neutral and breaks this bound). Returns the
 * GENERATED inputs of every frame.
 */
function deriveInputs(
  served: readonly Served[],
  scripts: readonly Script[],
  players: number,
  inputBytes: number,
): Uint8Array[] {
  const STALE_MS = 2000;
  const expected: Uint8Array[] = [];
  const at = new Array<number>(players).fill(-1);
  for (const f of served) {
    const inputs = new Uint8Array(players * inputBytes);
    for (let port = 0; port < players; port++) {
      const script = scripts[port]!;
      const got = f.inputs.subarray(port * inputBytes, (port + 1) * inputBytes);
      let k: number;
      if (port === 0) k = inForce(script, f.at);
      else {
        // The lowest generated input in bounds with these bytes (values may repeat: the lowest
        // keeps every later candidate open).
        k = -2;
        for (let i = Math.max(at[port]!, -1); i <= inForce(script, f.at); i++) {
          const newer = script.times[i + 1];
          if (newer !== undefined && newer < f.at - STALE_MS) continue;
          if (equalBytes(scriptValue(script, i, inputBytes), got)) {
            k = i;
            break;
          }
        }
        if (k === -2)
          expect.fail(`frame ${f.frame} (at ${f.at}): port ${port} has no generated input within the rule's bounds`);
      }
      at[port] = k;
      inputs.set(scriptValue(script, k, inputBytes), port * inputBytes);
    }
    expected.push(inputs);
  }
  return expected;
}

describe('client-server (seed 002)', () => {
  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      players: fc.integer({ min: 2, max: 4 }),
      inputBytes: fc.constantFrom(1, 2),
      links: fc.array(
        fc.record({
          latencyMs: fc.integer({ min: 0, max: 80 }),
          jitterMs: fc.integer({ min: 0, max: 30 }),
          loss: fc.double({ min: 0, max: 0.2, noNaN: true }),
          duplicate: fc.double({ min: 0, max: 0.1, noNaN: true }),
          reorder: fc.double({ min: 0, max: 0.2, noNaN: true }),
        }),
        { minLength: 3, maxLength: 3 },
      ),
      commands: fc.array(fc.tuple(fc.integer({ min: 0, max: 250 }), fc.constantFrom(30, 31, 19, 1)), { maxLength: 4 }),
    },
    { numRuns: 25, endOnFailure: true },
  )(
    'every peer, after every frame, matches an offline replay of the generated inputs at their stamped frames',
    ({ seed, players, inputBytes, links, commands }) => {
      const s = csSession(seed, players, inputBytes, (i) => links[i - 1]!);
      const t0 = s.net.now() + 500;
      const durationMs = 300 * FRAME_MS;
      const scripts = s.peers.map((_, k) => makeScript(seed + k, inputBytes, FRAME_MS, t0, t0 + durationMs));
      const sums = s.peers.map((p) => frameChecksums(p.core));
      for (const [k, p] of s.peers.entries()) playScript(s.net, p.runner, scripts[k]!);
      const served = recordServed(s.server);
      const requested: { at: number; code: number }[] = [];
      for (const [frame, code] of commands) {
        s.net.clock.setTimer(500 + frame * FRAME_MS, () => {
          requested.push({ at: s.net.now(), code });
          const c = s.clients[frame % s.clients.length]!;
          if (frame % 2) c.requestCommand(code);
          else s.server.command(code);
          for (const p of s.peers) p.runner.pump();
        });
      }
      // Inputs stop after `durationMs`; five more seconds let clients behind a retransmission catch up.
      s.net.advance(500 + durationMs + 5000);
      for (const p of s.peers) p.runner.stop();
      // The server never waits: it ran every frame due.
      expect(served.length).toBe(Math.floor((durationMs + 5000) / FRAME_MS) + 1);
      const expected = deriveInputs(served, scripts, players, inputBytes);
      // Commands: each generated one applies once, on a frame that ran after it was requested.
      const applied = served.filter((f) => f.command !== 0);
      expect(applied.map((f) => f.command).sort()).toEqual(requested.map((r) => r.code).sort());
      for (const f of applied)
        expect(
          requested.some((r) => r.code === f.command && r.at <= f.at),
          `command at frame ${f.frame}`,
        ).toBe(true);
      const replay = replayGenerated(
        new TestCore({ players, inputBytes }),
        served.length,
        (f) => expected[f]!,
        (f) => served[f]!.command,
      );
      expectEveryFrame(
        s.peers.map((p, k) => ({ name: p.name, sums: sums[k]! })),
        replay,
        100,
      );
    },
  );

  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      players: fc.integer({ min: 2, max: 4 }),
      inputBytes: fc.constantFrom(1, 2),
      joinAtFrame: fc.integer({ min: 1, max: 300 }),
      link: fc.record({
        latencyMs: fc.integer({ min: 0, max: 80 }),
        jitterMs: fc.integer({ min: 0, max: 30 }),
        loss: fc.double({ min: 0, max: 0.2, noNaN: true }),
        reorder: fc.double({ min: 0, max: 0.2, noNaN: true }),
      }),
    },
    { numRuns: 15, endOnFailure: true },
  )(
    'a client joining late gets the state as a page delta, and every peer matches a replay of the generated inputs',
    ({ seed, players, inputBytes, joinAtFrame, link: conditions }) => {
      // Every port but the last is taken from the start; the last player joins at `joinAtFrame`.
      const s = csSession(seed, players, inputBytes, () => conditions, players - 1);
      const t0 = s.net.now() + 500;
      const until = t0 + (joinAtFrame + 300) * FRAME_MS;
      const joinAt = t0 + joinAtFrame * FRAME_MS;
      // The joiner's script is made once its link is up (see below).
      const scripts = Array.from({ length: players - 1 }, (_, k) =>
        makeScript(seed + k, inputBytes, FRAME_MS, t0, until),
      );
      const sums = s.peers.map((p) => ({ sums: frameChecksums(p.core), first: 0 }));
      const served = recordServed(s.server);
      for (const [k, p] of s.peers.entries()) playScript(s.net, p.runner, scripts[k]!);
      s.net.clock.advanceTo(joinAt);
      const late = `p${players - 1}`;
      s.net.setLinkBoth('p0', late, conditions);
      const { ab, ba } = link(s.net, late, 'p0', CLIENT_SERVER_CHANNELS);
      // Its inputs start once it is linked (a script starting before would fire late: see `playScript`).
      scripts.push(makeScript(seed + players - 1, inputBytes, FRAME_MS, s.net.now(), until));
      const c = new ClientServerClient({
        id: players - 1,
        server: 0,
        ports: players,
        inputBytes,
        frameMs: FRAME_MS,
        liveness: PATIENT,
      });
      const core = new TestCore({ players, inputBytes });
      const joinerSums = frameChecksumsFrom(core, c);
      const runner = new LockstepRunner({ clock: s.net.clock, scheduler: c, core, log: true });
      runner.addPeer(0, ab);
      s.peers[0]!.runner.addPeer(players - 1, ba);
      s.server.addClient(players - 1, players - 1);
      s.peers[0]!.runner.pump();
      playScript(s.net, runner, scripts[players - 1]!);
      s.net.clock.advanceTo(until + 3000);
      const expected = deriveInputs(served, scripts, players, inputBytes);
      const replay = replayGenerated(
        new TestCore({ players, inputBytes }),
        served.length,
        (f) => expected[f]!,
        (f) => served[f]!.command,
      );
      expectEveryFrame(
        [...s.peers.map((p, k) => ({ name: p.name, ...sums[k]! })), { name: late, ...joinerSums }],
        replay,
        100,
      );
      const joiner = { name: late, scheduler: c, core, runner };
      // It started after frame 0, from the server's state, and its input reached the game.
      expect(runner.log[0]!.frame).toBeGreaterThan(0);
      expect(runner.report().latencySamples).toBeGreaterThan(0);
      expectDeterministic([...s.peers, joiner], () => new TestCore({ players, inputBytes }), 100);
    },
  );

  it('applies commands on the same frame everywhere and relays chat', () => {
    const s = csSession(7, 3, 1, () => ({ latencyMs: 15, jitterMs: 5 }));
    s.net.advance(500 + 10 * FRAME_MS);
    s.clients[0]!.requestCommand(FceuCommand.VsInsertCoin);
    s.clients[1]!.say('hello');
    s.server.command(FceuCommand.Reset);
    s.server.say('hi all');
    for (const p of s.peers) p.runner.pump();
    s.net.advance(20 * FRAME_MS);
    const withCommands = s.peers.map((p) =>
      p.runner.log.filter((f) => f.command !== 0).map((f) => [f.frame, f.command]),
    );
    expect(withCommands[0]!.length).toBe(2);
    for (const w of withCommands) expect(w).toEqual(withCommands[0]);
    expect(s.clients[0]!.chat).toEqual(['0: hi all', '2: hello']);
    expect(s.clients[1]!.chat).toEqual(s.clients[0]!.chat);
    expect(s.server.chat.map((c) => c.text)).toEqual(['0: hi all', '2: hello']);
    expectDeterministic(s.peers, () => new TestCore({ players: 3, inputBytes: 1 }), 25);
  });

  it('a remote player sees about the round trip to the server, the server player about nothing', () => {
    const s = csSession(3, 3, 1, (i) => ({ latencyMs: i === 1 ? 20 : 60 }));
    const t0 = s.net.now() + 500;
    const prng = new Prng(9);
    for (const [k, p] of s.peers.entries())
      scriptInputs(s.net, p.runner, 1, prng.nextU32() + k, FRAME_MS, t0, t0 + 4000, 6);
    s.net.advance(4700);
    const [srv, c20, c60] = s.peers.map((p) => p.runner.report());
    // Input made at t is applied on a server frame that starts after t + one-way, then reaches the client one-way later.
    for (const r of [srv!, c20!, c60!]) expect(r.latencySamples).toBeGreaterThan(20);
    expect(srv!.meanLatencyMs).toBeLessThanOrEqual(FRAME_MS);
    expect(c20!.meanLatencyMs).toBeGreaterThanOrEqual(40);
    expect(c20!.meanLatencyMs).toBeLessThanOrEqual(40 + FRAME_MS);
    expect(c60!.meanLatencyMs).toBeGreaterThanOrEqual(120);
    expect(c60!.meanLatencyMs).toBeLessThanOrEqual(120 + FRAME_MS);
  });
});
