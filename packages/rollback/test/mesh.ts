import { crc32 } from '@netplay/protocol';
import type { Core } from '@netplay/state';
import {
  type Clock,
  type LinkConditions,
  type MemoryConnection,
  SimulatedNetwork,
  type Timeouts,
  type Timer,
} from '@netplay/transport';
import {
  ConnectionSet,
  CoreDriver,
  P2PSession,
  type P2PSessionOptions,
  ROLLBACK_CHANNELS,
  type SessionEndpoint,
  type SessionEventMap,
  SpectatorSession,
} from '../src/index.js';

/** Virtual ms per frame (62.5 fps keeps the clock on whole milliseconds). */
export const FRAME_MS = 16;

/** One peer of a simulated mesh. */
export interface Rig {
  readonly name: string;
  readonly player: number;
  readonly session: P2PSession;
  readonly driver: CoreDriver;
  readonly core: Core;
  readonly conns: ConnectionSet;
  readonly events: Array<{ type: keyof SessionEventMap; event: unknown }>;
  /** Frames still to skip on a time-sync recommendation. */
  wait: number;
  /** Extra frames still to run to catch up, and ticks before the next catch-up may start. */
  catchUp: number;
  cooldown: number;
  /** Frames whose final state was compared with the offline replay. */
  checked: number;
  /** Frames (from `checked`) whose state was no longer stored when it became final. */
  missing: number;
  /** Set once the rig's connections are closed (it left). */
  gone: boolean;
  /** Wall ms spent in the session and the core (when `cpuClock` is given). */
  cpuMs: number;
  /** Set while the peer is paused (its processing stops; see {@link Mesh.pause}). */
  paused: boolean;
  /** Messages and closes that arrived while paused, delivered on {@link Mesh.resume}. */
  readonly inbox: Array<() => void>;
  /** Its clock (the network's, minus the time it was paused when pauses stop its clock). */
  readonly clock: PeerClock;
}

/**
 * A peer's clock: the network's, except that while the peer is paused with `stopsClock`, it stands
 * still, and it lags the network by every such pause afterwards.
 */
export class PeerClock implements Clock {
  private lag = 0;
  private stoppedAt = -1;
  constructor(private readonly net: SimulatedNetwork) {}
  now(): number {
    return (this.stoppedAt >= 0 ? this.stoppedAt : this.net.clock.now()) - this.lag;
  }
  setTimer(delayMs: number, callback: () => void): Timer {
    return this.net.clock.setTimer(delayMs, callback);
  }
  stop(): void {
    if (this.stoppedAt < 0) this.stoppedAt = this.net.clock.now();
  }
  start(): void {
    if (this.stoppedAt < 0) return;
    this.lag += this.net.clock.now() - this.stoppedAt;
    this.stoppedAt = -1;
  }
}

/** A spectator of a mesh. */
export interface SpectatorRig {
  readonly name: string;
  readonly session: SpectatorSession;
  readonly driver: CoreDriver;
  readonly conns: ConnectionSet;
  checked: number;
}

export interface MeshOptions {
  readonly players: number;
  readonly seed: number;
  /** A core for peer `index` (−1: the offline replay and spectators). */
  readonly makeCore: (index: number) => Core;
  /** The byte every input byte of `player` at `frame` holds (before delay zero-fill). */
  readonly inputOf: (player: number, frame: number) => number;
  readonly link?: Partial<LinkConditions>;
  readonly session?: Partial<P2PSessionOptions>;
  /** Transport liveness timeouts (defaults: the transport's). */
  readonly timeouts?: Timeouts;
  /** Players whose peers start as spectators in the mesh (their slots empty). */
  readonly spectating?: readonly number[];
  /** Compare every final frame with the offline replay (default true; benches turn it off). */
  readonly verify?: boolean;
  /** Wall-clock source for {@link Rig.cpuMs} (benches only; tests leave it out). */
  readonly cpuClock?: () => number;
  /**
   * Faults (tests only): rewrites or drops (undefined) what peer `from` sends to `to`; the
   * adversary of the stall property. Without it, sessions send straight to their connections.
   */
  readonly outgoing?: (from: number, to: string, channel: string, data: Uint8Array) => Uint8Array | undefined;
}

/** Names of the mesh peers. */
export function peerName(i: number): string {
  return `p${i}`;
}

/**
 * N peers on a SimulatedNetwork, full mesh, peer 0 the host, each with a P2PSession, a
 * CoreDriver and its own core; plus an offline replay of the true inputs to compare every
 * confirmed frame against.
 */
export class Mesh {
  readonly net: SimulatedNetwork;
  readonly rigs: Rig[] = [];
  readonly spectators: SpectatorRig[] = [];
  private offline: Core;
  private offlineSums: number[] = [];
  private readonly scratch: Uint8Array;
  private readonly delay: number;
  /** The host's decisions: players leaving, spectating or playing from a frame. */
  readonly changes: Array<{ player: number; frame: number; playing: boolean }> = [];
  /** Per player: the first frame of real input after its last switch to playing. */
  private readonly realFrom = new Map<number, number>();
  /** Per peer (and spectator) name: CRC of its final state of each frame checked. */
  readonly finalCrcs = new Map<string, Map<number, number>>();
  /** Final frames whose state differed from the offline replay. */
  readonly mismatches: Array<{ peer: string; frame: number }> = [];

  constructor(readonly options: MeshOptions) {
    this.net = new SimulatedNetwork({ seed: options.seed });
    const n = options.players;
    this.delay = options.session?.inputDelay ?? 0;
    for (let i = 0; i < n; i++) {
      const core = options.makeCore(i);
      const conns = new ConnectionSet();
      const remotes = [];
      const spectating = options.spectating ?? [];
      for (let j = 0; j < n; j++)
        if (j !== i) remotes.push({ peer: peerName(j), player: j, spectating: spectating.includes(j) });
      let driver: CoreDriver | undefined;
      const clock = new PeerClock(this.net);
      const outgoing = options.outgoing;
      const send: P2PSessionOptions['send'] =
        outgoing === undefined
          ? conns.send
          : (peer, channel, data) => {
              const out = outgoing(i, peer, channel, data);
              if (out !== undefined) conns.send(peer, channel, out);
            };
      const session = new P2PSession({
        players: n,
        inputBytes: core.inputBytes,
        localPlayer: i,
        remotes,
        isHost: i === 0,
        hostPeer: peerName(0),
        clock,
        send,
        fps: 1000 / FRAME_MS,
        stateSource: (f) => driver?.stateOf(f),
        spectating: spectating.includes(i),
        ...options.session,
      });
      driver = new CoreDriver(core, session.ringFrames);
      const events: Rig['events'] = [];
      for (const type of [
        'synchronizing',
        'synchronized',
        'running',
        'interrupted',
        'resumed',
        'disconnected',
        'player-left',
        'mode-changed',
        'host-changed',
        'spectator-joined',
        'desync-detected',
        'desync-repaired',
        'wait-recommended',
        'paused',
        'protocol-error',
        'ended',
      ] as const) {
        session.on(type, (event) => events.push({ type, event }));
      }
      const rig: Rig = {
        name: peerName(i),
        player: i,
        session,
        driver,
        core,
        conns,
        events,
        wait: 0,
        catchUp: 0,
        cooldown: 0,
        checked: 0,
        missing: 0,
        gone: false,
        paused: false,
        inbox: [],
        clock,
        cpuMs: 0,
      };
      session.on('wait-recommended', ({ frames }) => {
        rig.wait = frames;
      });
      // The host's decisions (whoever is host): every peer reports the same ones.
      const note = (c: { player: number; frame: number; playing: boolean }) => {
        if (this.rigs[i]?.gone) return; // a peer that left (and lost every link) decides nothing for us
        if (!this.changes.some((d) => d.player === c.player && d.frame === c.frame && d.playing === c.playing)) {
          this.changes.push({ ...c });
          this.replayAgainFrom(c.frame);
        }
      };
      session.on('player-left', ({ player, frame }) => note({ player, frame, playing: false }));
      session.on('mode-changed', note);
      session.on('mode-changed', ({ player, frame, playing }) => {
        // A player told late that it plays again gives zeros until its next local input lands.
        if (playing && player === i) {
          this.realFrom.set(player, Math.max(frame, session.currentFrame + session.inputDelay));
          this.replayAgainFrom(frame);
        }
      });
      this.rigs.push(rig);
    }
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const { client, server } = this.net.pair(peerName(i), peerName(j), {
          channels: ROLLBACK_CHANNELS,
          ...(options.timeouts ? { timeouts: options.timeouts } : {}),
        });
        this.rigs[i]!.conns.bind(peerName(j), client, this.endpoint(this.rigs[i]!));
        this.rigs[j]!.conns.bind(peerName(i), server, this.endpoint(this.rigs[j]!));
      }
    }
    if (options.link !== undefined) {
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) if (i !== j) this.net.setLink(peerName(i), peerName(j), options.link);
    }
    this.offline = options.makeCore(-1);
    this.scratch = new Uint8Array(this.offline.inputBytes);
    this.offlineSums.push(this.stateCrc(this.offline));
  }

  /** The rig's session, or (while it is paused) a queue of what arrives for it. */
  private endpoint(rig: Rig): SessionEndpoint {
    return {
      receive: (peer, channel, data) => {
        if (!rig.paused) rig.session.receive(peer, channel, data);
        else {
          const copy = data.slice();
          rig.inbox.push(() => rig.session.receive(peer, channel, copy));
        }
      },
      disconnectPeer: (peer) => {
        if (!rig.paused) rig.session.disconnectPeer(peer);
        else rig.inbox.push(() => rig.session.disconnectPeer(peer));
      },
    };
  }

  /**
   * Pauses peer `i` like SIGSTOP: it stops stepping and processing messages (they queue; its
   * transport still acknowledges them, as a kernel buffers datagrams); with `stopsClock` its clock
   * stands still too (else it jumps ahead on {@link resume}).
   */
  pause(i: number, stopsClock: boolean): void {
    const rig = this.rigs[i]!;
    rig.paused = true;
    if (stopsClock) rig.clock.stop();
  }

  /** Wakes peer `i`: its clock runs again, and what arrived meanwhile is processed. */
  resume(i: number): void {
    const rig = this.rigs[i]!;
    if (!rig.paused) return;
    rig.paused = false;
    rig.clock.start();
    for (const deliver of rig.inbox.splice(0)) deliver();
  }

  private stateCrc(core: Core): number {
    const buf = new Uint8Array(core.stateBytes);
    const n = core.saveInto(buf);
    return crc32(buf.subarray(0, n));
  }

  /** The true input of `player` at `frame`, as every peer must end up using it. */
  trueInput(player: number, frame: number): number {
    let playing = !(this.options.spectating ?? []).includes(player);
    for (const c of this.changes) if (c.player === player && c.frame <= frame) playing = c.playing;
    if (!playing) return 0;
    const real = this.realFrom.get(player);
    if (
      real !== undefined &&
      frame < real &&
      this.changes.some((c) => c.player === player && c.playing && c.frame <= frame)
    )
      return 0;
    if (frame < this.delay) return 0;
    return this.options.inputOf(player, frame) & 0xff;
  }

  /**
   * A decision changed the true inputs from `frame` on: replay states computed past it are redone.
   * (A leaving peer may have taken frames past its leave frame as final with inputs of its own the
   * others never received, and so made the replay compute them before the decision was known.)
   */
  private replayAgainFrom(frame: number): void {
    if (this.offlineSums.length <= frame + 1) return;
    this.offline = this.options.makeCore(-1);
    this.offlineSums = [this.stateCrc(this.offline)];
    // Final states already checked against the old replay are checked again against the new one:
    // a peer still here that took a frame after `frame` as final must agree with the decision.
    const live = new Set([
      ...this.rigs.filter((r) => !r.gone).map((r) => r.name),
      ...this.spectators.map((s) => s.name),
    ]);
    for (const [name, crcs] of this.finalCrcs) {
      if (!live.has(name)) continue;
      for (const [f, crc] of crcs) {
        if (f <= frame || crc === this.offlineCrc(f)) continue;
        if (!this.mismatches.some((m) => m.peer === name && m.frame === f))
          this.mismatches.push({ peer: name, frame: f });
      }
    }
  }

  /** CRC of the offline replay's state at `frame`. */
  offlineCrc(frame: number): number {
    while (this.offlineSums.length <= frame) {
      const f = this.offlineSums.length - 1;
      for (let p = 0; p < this.options.players; p++) {
        this.scratch.fill(this.trueInput(p, f));
        this.offline.setInput(p, this.scratch);
      }
      this.offline.advance();
      this.offlineSums.push(this.stateCrc(this.offline));
    }
    return this.offlineSums[frame]!;
  }

  /** Adds a spectator connected to the host only. */
  addSpectator(name: string): SpectatorRig {
    const conns = new ConnectionSet();
    const session = new SpectatorSession({ hostPeer: peerName(0), send: conns.send });
    const driver = new CoreDriver(this.options.makeCore(-1), session.ringFrames);
    const { client, server } = this.net.pair(name, peerName(0), { channels: ROLLBACK_CHANNELS });
    conns.bind(peerName(0), client, session);
    this.rigs[0]!.conns.bind(name, server, this.rigs[0]!.session);
    const rig: SpectatorRig = { name, session, driver, conns, checked: -1 };
    this.spectators.push(rig);
    return rig;
  }

  /** Peer `i` asks the host to play (true) or spectate (false). */
  requestMode(i: number, playing: boolean): void {
    const stop = this.rigs[i]!.session.requestMode(playing);
    // The player stops at once: the replay must know before any peer confirms a later frame.
    if (stop !== undefined) {
      this.changes.push({ player: i, frame: stop, playing: false });
      this.replayAgainFrom(stop);
    }
  }

  /** Closes every connection of peer `i` (it leaves abruptly). */
  disconnect(i: number): void {
    const rig = this.rigs[i]!;
    rig.gone = true;
    for (let j = 0; j < this.rigs.length; j++) {
      if (j === i) continue;
      const c = rig.conns.get(peerName(j)) as MemoryConnection | undefined;
      c?.close('leaving');
    }
  }

  /** One frame period: every peer steps (honouring time sync), then the network runs FRAME_MS. */
  tick(): void {
    for (const rig of this.rigs) {
      if (rig.gone || rig.paused) continue;
      const s = rig.session;
      if (rig.wait > 0) {
        rig.wait--;
        s.poll();
      } else {
        // RetroArch's catch-up: run the recommended extra frames, one per tick, then let the
        // time-sync estimate settle before catching up again.
        if (rig.cooldown > 0) rig.cooldown--;
        else if (rig.catchUp === 0 && s.catchUpFrames > 0) {
          rig.catchUp = s.catchUpFrames;
          rig.cooldown = 60;
        }
        const steps = rig.catchUp > 0 ? 2 : 1;
        if (rig.catchUp > 0) rig.catchUp--;
        for (let k = 0; k < steps; k++) {
          this.scratch.fill(this.options.inputOf(rig.player, s.currentFrame + s.inputDelay) & 0xff);
          const t0 = this.options.cpuClock?.() ?? 0;
          s.addLocalInput(this.scratch);
          rig.driver.run(s.advanceFrame(), s);
          if (this.options.cpuClock) rig.cpuMs += this.options.cpuClock() - t0;
        }
      }
      this.check(rig);
    }
    for (const sp of this.spectators) {
      sp.driver.run(sp.session.advanceFrame(), sp.session);
      const cur = sp.session.currentFrame;
      if (this.options.verify !== false && cur !== undefined && cur > sp.checked) {
        const st = sp.driver.stateOf(cur);
        if (st !== undefined) {
          const crc = crc32(st);
          this.record(sp.name, cur, crc);
          if (crc !== this.offlineCrc(cur)) this.mismatches.push({ peer: sp.name, frame: cur });
        }
        sp.checked = cur;
      }
    }
    this.net.advance(FRAME_MS);
  }

  private record(name: string, frame: number, crc: number): void {
    let m = this.finalCrcs.get(name);
    if (m === undefined) {
      m = new Map();
      this.finalCrcs.set(name, m);
    }
    m.set(frame, crc);
  }

  /** Compares every newly final frame of `rig` with the offline replay. */
  private check(rig: Rig): void {
    if (this.options.verify === false) return;
    const s = rig.session;
    const upTo = Math.min(s.confirmedFrame, s.currentFrame);
    for (let f = rig.checked + 1; f <= upTo; f++) {
      const st = rig.driver.stateOf(f);
      if (st === undefined) rig.missing++;
      else {
        const crc = crc32(st);
        this.record(rig.name, f, crc);
        if (crc !== this.offlineCrc(f)) this.mismatches.push({ peer: rig.name, frame: f });
      }
      rig.checked = f;
    }
  }

  /** Ticks until every live peer has checked `frames` frames (or `maxTicks` pass); returns the ticks run. */
  runUntilConfirmed(frames: number, maxTicks: number): number {
    let ticks = 0;
    while (ticks < maxTicks && this.rigs.some((r) => !r.gone && r.checked < frames)) {
      this.tick();
      ticks++;
    }
    return ticks;
  }
}

/** Inputs that change every four frames, from a seed (so predictions are often wrong). */
export function inputPattern(seed: number): (player: number, frame: number) => number {
  return (player, frame) => {
    let h = seed ^ Math.imul(player + 1, 0x9e3779b1) ^ Math.imul((frame >> 2) + 1, 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 16), 0xc2b2ae35);
    return (h ^ (h >>> 13)) & 0xff;
  };
}
