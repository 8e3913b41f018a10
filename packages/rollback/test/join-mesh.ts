import { crc32 } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import {
  type LinkConditions,
  type MemoryConnection,
  type MemoryListener,
  SimulatedNetwork,
  type Unsubscribe,
} from '@netplay/transport';
import {
  ConnectionSet,
  CoreDriver,
  decodeWelcome,
  P2PSession,
  type PlayerAdmission,
  ROLLBACK_CHANNELS,
  SpectatorSession,
} from '../src/index.js';
import { FRAME_MS } from './mesh.js';

/** Transport timeouts of the join mesh (a killed peer's links close after 1.5 s). */
const TIMEOUTS = { interruptMs: 500, disconnectMs: 1500, connectMs: 5000 };

/** One incarnation of a player (a peer id in a slot, from its entry frame). */
export interface JoinRig {
  readonly id: string;
  readonly slot: number;
  /** Index in {@link JoinMesh.incarnations}: its inputs are keyed by it. */
  readonly key: number;
  readonly address: string;
  readonly session: P2PSession;
  readonly driver: CoreDriver;
  readonly conns: ConnectionSet;
  readonly listener: MemoryListener;
  /** Unbinds of its connections, by remote peer id. */
  readonly unbind: Map<string, Unsubscribe>;
  /** The state frame and entry frame (undefined: it played from the start). */
  readonly admission: PlayerAdmission | undefined;
  gone: boolean;
  wait: number;
  catchUp: number;
  cooldown: number;
  /** Its final states: frame → CRC. */
  readonly finals: Map<number, number>;
  checked: number;
  /** Final frames whose state was no longer stored. */
  missing: number;
  readonly ends: Array<{ reason: string; frame: number }>;
  readonly errors: Error[];
}

/** An incarnation as the test generated it: real input from `from` (its entry), until the leave the host decides. */
export interface Incarnation {
  readonly slot: number;
  readonly id: string;
  from: number;
}

export interface JoinMeshOptions {
  readonly seed: number;
  readonly players: number;
  /** Slots played from the start (0, the host, always). */
  readonly initial: number;
  readonly link: Partial<LinkConditions>;
  readonly delay: number;
  readonly maxPrediction: number;
  /** The byte of every input byte of incarnation `key` at `frame`. */
  readonly inputOf: (key: number, frame: number) => number;
  /** Break on purpose (tests only): applied to every admission before the joiner starts. */
  readonly tamper?: (a: PlayerAdmission) => PlayerAdmission;
}

/**
 * Rollback players entering and leaving a running game on a SimulatedNetwork: peer 0 hosts; each
 * incarnation has its own address and connects to every live peer when admitted; a leave closes its
 * links (`close`) or cuts them (`kill`: the transport times out). Every final state of every peer
 * is kept, to compare with an offline replay of the generated inputs at the end.
 */
export class JoinMesh {
  readonly net: SimulatedNetwork;
  readonly rigs: JoinRig[] = [];
  readonly incarnations: Incarnation[] = [];
  readonly spectators: Array<{
    name: string;
    session: SpectatorSession;
    driver: CoreDriver;
    finals: Map<number, number>;
  }> = [];
  /** Decisions the host reported: `player-left` and `player-entered`. */
  readonly left = new Map<number, number[]>();
  private readonly scratch = new Uint8Array(2);
  private addressCount = 0;

  constructor(readonly options: JoinMeshOptions) {
    this.net = new SimulatedNetwork({ seed: options.seed });
    this.net.setDefaultLink(options.link);
    for (let s = 0; s < options.initial; s++) this.incarnations.push({ slot: s, id: `p${s}`, from: options.delay });
    const remotes = Array.from({ length: options.initial }, (_, s) => ({ peer: `p${s}`, player: s }));
    for (let s = 0; s < options.initial; s++)
      this.addRig(
        `p${s}`,
        s,
        s,
        remotes.filter((r) => r.player !== s),
        undefined,
      );
    for (let i = 0; i < this.rigs.length; i++)
      for (let j = i + 1; j < this.rigs.length; j++) this.link(this.rigs[i]!, this.rigs[j]!);
  }

  /** The peer that hosts now (the first one, or the successor the others elected). */
  get host(): JoinRig {
    return this.currentHost() ?? this.rigs[0]!;
  }

  /** The live peer that hosts now, if any. */
  currentHost(): JoinRig | undefined {
    return this.rigs.find((r) => !r.gone && r.session.isHost && r.ends.length === 0);
  }

  live(): JoinRig[] {
    return this.rigs.filter((r) => !r.gone);
  }

  private addRig(
    id: string,
    slot: number,
    key: number,
    remotes: Array<{ peer: string; player: number }>,
    admission: PlayerAdmission | undefined,
  ): JoinRig {
    const conns = new ConnectionSet();
    const address = `${id}@${this.addressCount++}`;
    const listener = this.net.listen(address, { channels: ROLLBACK_CHANNELS, timeouts: TIMEOUTS, maxConnections: 64 });
    let driver: CoreDriver | undefined;
    const core = new TestCore({ players: this.options.players, inputBytes: 2 });
    const session = new P2PSession({
      players: this.options.players,
      inputBytes: 2,
      localPlayer: slot,
      remotes,
      isHost: slot === 0 && admission === undefined,
      hostPeer: this.rigs.length === 0 ? 'p0' : this.host.id,
      clock: this.net.clock,
      send: conns.send,
      fps: 1000 / FRAME_MS,
      inputDelay: this.options.delay,
      maxPrediction: this.options.maxPrediction,
      checksumInterval: 30,
      disconnectMs: 1500,
      interruptMs: 500,
      stateSource: (f) => driver?.stateOf(f),
      ...(admission !== undefined ? { join: { welcome: admission.welcome, state: admission.state } } : {}),
    });
    driver = new CoreDriver(core, session.ringFrames);
    const rig: JoinRig = {
      id,
      slot,
      key,
      address,
      session,
      driver,
      conns,
      listener,
      unbind: new Map(),
      admission,
      gone: false,
      wait: 0,
      catchUp: 0,
      cooldown: 0,
      finals: new Map(),
      checked: admission?.frame !== undefined ? admission.frame - 1 : -1,
      missing: 0,
      ends: [],
      errors: [],
    };
    session.on('wait-recommended', ({ frames }) => {
      rig.wait = frames;
    });
    session.on('ended', (e) => rig.ends.push(e));
    session.on('protocol-error', ({ error }) => {
      // Bytes of a newcomer reaching a peer before the host's ENTER: dropped, as they must be.
      if (!/unknown peer/.test(error.message)) rig.errors.push(error);
    });
    // Whoever decides (the first host, or a successor), every peer reports the same decisions.
    session.on('player-left', ({ player, frame }) => {
      // A peer that left (its session still hears its links close) decides nothing for the others.
      if (this.rigs.find((r) => r.session === session)?.gone !== false) return;
      const list = this.left.get(player) ?? [];
      if (list.includes(frame)) return;
      list.push(frame);
      list.sort((a, b) => a - b);
      this.left.set(player, list);
    });
    listener.on('connection', (c) => {
      const from = this.rigs.find((r) => r.address === c.remoteAddress);
      if (from === undefined || rig.gone) c.close('unknown');
      else this.bind(rig, from.id, c as MemoryConnection);
    });
    this.rigs.push(rig);
    return rig;
  }

  private bind(rig: JoinRig, peer: string, c: MemoryConnection): void {
    rig.unbind.get(peer)?.();
    rig.unbind.set(peer, rig.conns.bind(peer, c, rig.session));
  }

  /** Connects `a` to `b` (a is the client). */
  private link(a: JoinRig, b: JoinRig): void {
    const c = this.net.connect(a.address, b.address, { channels: ROLLBACK_CHANNELS, timeouts: TIMEOUTS });
    this.bind(a, b.id, c);
  }

  /** The rig playing `slot` now, if any. */
  inSlot(slot: number): JoinRig | undefined {
    return this.rigs.find((r) => !r.gone && r.slot === slot);
  }

  /** The player of `slot` leaves: `close` (its links close) or `kill` (cut; the transport times out). */
  drop(slot: number, how: 'close' | 'kill'): void {
    const rig = this.inSlot(slot);
    if (rig === undefined) return;
    rig.gone = true;
    const links = this.rigs.map((o) => rig.conns.get(o.id) as MemoryConnection | undefined);
    // A leaving process stops its session first: it takes no part in what its departure causes.
    for (const off of rig.unbind.values()) off();
    rig.unbind.clear();
    this.rigs.forEach((other, i) => {
      if (other === rig) return;
      if (how === 'kill') {
        this.net.cut(rig.address, other.address);
        this.net.cut(other.address, rig.address);
      } else links[i]?.close('leaving');
    });
  }

  /**
   * The host admits `id` into `slot`; on success the joiner starts from the state it was given and
   * connects to every live peer. Returns false when the host cannot decide it now.
   */
  admit(id: string, slot: number, leadFrames: number): boolean {
    if (this.inSlot(slot) !== undefined) return false;
    const host = this.currentHost();
    if (host === undefined) return false;
    const raw = host.session.admitPlayer(id, slot, leadFrames);
    if (raw === undefined) return false;
    // The previous incarnation's links are over (its leave is decided): their late closes must not
    // reach the sessions, where the id now names the new incarnation.
    for (const r of this.rigs) {
      r.unbind.get(id)?.();
      r.unbind.delete(id);
    }
    const a = this.options.tamper?.(raw) ?? raw;
    const key = this.incarnations.length;
    this.incarnations.push({ slot, id, from: a.entryFrame });
    // Its remotes: the latest incarnation of every slot that plays or enters (a killed one the host
    // has not noticed yet included).
    const remotes: Array<{ peer: string; player: number }> = [];
    for (const [p, status] of decodeWelcome(a.welcome).slots.entries()) {
      if (status.kind === 'gone' || p === slot) continue;
      const latest = this.rigs.filter((r) => r.slot === p).at(-1);
      if (latest !== undefined) remotes.push({ peer: latest.id, player: p });
    }
    const rig = this.addRig(id, slot, key, remotes, a);
    for (const other of this.live()) if (other !== rig) this.link(rig, other);
    return true;
  }

  /** A spectator of the host. */
  addSpectator(name: string): void {
    const conns = new ConnectionSet();
    const session = new SpectatorSession({ hostPeer: 'p0', send: conns.send });
    const driver = new CoreDriver(new TestCore({ players: this.options.players, inputBytes: 2 }), session.ringFrames);
    const address = `${name}@${this.addressCount++}`;
    const c = this.net.connect(address, this.host.address, { channels: ROLLBACK_CHANNELS, timeouts: TIMEOUTS });
    conns.bind('p0', c, session);
    this.spectators.push({ name, session, driver, finals: new Map() });
  }

  /** One frame period for every live peer and spectator, then the network runs a frame. */
  tick(): void {
    for (const rig of this.rigs) {
      if (rig.gone) continue;
      const s = rig.session;
      if (rig.wait > 0) {
        rig.wait--;
        s.poll();
      } else {
        if (rig.cooldown > 0) rig.cooldown--;
        else if (rig.catchUp === 0 && s.catchUpFrames > 0) {
          rig.catchUp = s.catchUpFrames;
          rig.cooldown = 30;
        }
        const steps = rig.catchUp > 0 ? 2 : 1;
        if (rig.catchUp > 0) rig.catchUp--;
        for (let k = 0; k < steps; k++) {
          this.scratch.fill(this.options.inputOf(rig.key, s.currentFrame + s.inputDelay));
          s.addLocalInput(this.scratch);
          rig.driver.run(s.advanceFrame(), s);
        }
      }
      const upTo = Math.min(s.confirmedFrame, s.currentFrame);
      for (let f = rig.checked + 1; f <= upTo; f++) {
        const st = rig.driver.stateOf(f);
        // A joiner's state frame is final before its first frame ran (and loaded the state).
        if (st === undefined && s.currentFrame <= f) break;
        if (st !== undefined) rig.finals.set(f, crc32(st));
        else rig.missing++;
        rig.checked = f;
      }
    }
    for (const sp of this.spectators) {
      sp.driver.run(sp.session.advanceFrame(), sp.session);
      const cur = sp.session.currentFrame;
      const st = cur === undefined ? undefined : sp.driver.stateOf(cur);
      if (cur !== undefined && st !== undefined) sp.finals.set(cur, crc32(st));
    }
    this.net.advance(FRAME_MS);
  }

  /**
   * The offline replay of the generated inputs up to `frames`: slot p at frame f reads the input of
   * the incarnation that entered it last at or before f (from its entry), unless the host removed
   * that incarnation at or before f (then neutral). Returns the CRC of every frame's state.
   */
  replay(frames: number): number[] {
    const core = new TestCore({ players: this.options.players, inputBytes: 2 });
    const buf = new Uint8Array(core.stateBytes);
    const crcOf = () => crc32(buf.subarray(0, core.saveInto(buf)));
    const out = [crcOf()];
    // Per slot: its incarnations in order, each with the frame the host removed it at (if it did).
    const bySlot = new Map<number, Array<{ key: number; from: number; to: number }>>();
    const leftAt = new Map([...this.left].map(([p, fs]) => [p, [...fs]]));
    this.incarnations.forEach((inc, key) => {
      const list = bySlot.get(inc.slot) ?? [];
      bySlot.set(inc.slot, list);
      list.push({ key, from: inc.from, to: Number.POSITIVE_INFINITY });
    });
    for (const [slot, list] of bySlot) {
      const fs = leftAt.get(slot) ?? [];
      list.forEach((inc, i) => {
        const next = list[i + 1];
        // The removal of this incarnation: the first leave frame after its entry (before the next one).
        const to = fs.find((f) => f >= inc.from - (i === 0 ? this.options.delay : 0));
        if (to !== undefined && (next === undefined || to <= next.from)) inc.to = to;
        else if (next !== undefined) inc.to = next.from;
      });
    }
    const scratch = new Uint8Array(2);
    for (let f = 0; f < frames; f++) {
      for (let p = 0; p < this.options.players; p++) {
        const inc = bySlot.get(p)?.find((x) => f >= x.from && f < x.to);
        scratch.fill(inc === undefined ? 0 : this.options.inputOf(inc.key, f));
        core.setInput(p, scratch);
      }
      core.advance();
      out.push(crcOf());
    }
    return out;
  }
}
