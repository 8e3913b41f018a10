import { TestCore } from '@netplay/state/testing';
import { type LinkConditions, Prng, SimulatedNetwork } from '@netplay/transport';
import { newDropCounters, resolveConfig, UdpPeer, UdpServerCore } from '@netplay/transport-udp';
import { ConnectionSet, CoreDriver, P2PSession, type P2PSessionOptions, ROLLBACK_CHANNELS } from '../src/index.js';
import { type InputPattern, patternInput } from './ggpo-model.js';

/** Virtual ms per frame (62.5 fps: whole milliseconds). */
export const UDP_FRAME_MS = 16;

/**
 * A full mesh of rollback sessions over @netplay/transport-udp's sans-I/O core on a
 * SimulatedNetwork: for every pair i < j, player j's client connects to player i's listener. Every
 * datagram any peer outputs is counted (its UDP payload: transport header, frames and session
 * messages), per sending player: these are the bytes on the wire.
 */
export class UdpMesh {
  readonly net: SimulatedNetwork;
  readonly sessions: P2PSession[] = [];
  readonly drivers: CoreDriver[] = [];
  /** Per player: datagrams and UDP payload bytes it sent. */
  readonly sentDatagrams: number[];
  readonly sentBytes: number[];
  private readonly servers: UdpServerCore[] = [];
  private readonly scratch: Uint8Array;
  /** Per player: frames still to skip on a time-sync recommendation. */
  private readonly wait: number[] = [];

  constructor(
    readonly players: number,
    readonly pattern: InputPattern,
    seed: number,
    link: Partial<LinkConditions>,
    session: Partial<P2PSessionOptions> = {},
    readonly inputBytes = 2,
  ) {
    this.net = new SimulatedNetwork({ seed });
    const prng = new Prng(seed ^ 0x1234);
    const random = (n: number) => prng.fill(new Uint8Array(n));
    const clock = this.net.clock;
    const config = resolveConfig({ rateLimits: false });
    this.sentDatagrams = new Array(players).fill(0);
    this.sentBytes = new Array(players).fill(0);
    this.wait.push(...new Array(players).fill(0));
    this.scratch = new Uint8Array(inputBytes);
    const conns: ConnectionSet[] = [];
    const clients = new Map<string, UdpPeer>();
    for (let i = 0; i < players; i++) {
      conns.push(new ConnectionSet());
      const me = i;
      this.servers.push(
        new UdpServerCore(
          {
            clock,
            random,
            defer: (fn) => clock.setTimer(0, fn),
            output: (d, to) => {
              this.sentDatagrams[me]!++;
              this.sentBytes[me]! += d.length;
              const copy = d.slice();
              this.net.transmit(`s${me}`, to, d.length, () => clients.get(to)?.input(copy));
            },
          },
          config,
          ROLLBACK_CHANNELS,
          `s${i}`,
        ),
      );
    }
    for (let i = 0; i < players; i++) {
      const remotes = [];
      for (let j = 0; j < players; j++) if (j !== i) remotes.push({ peer: `p${j}`, player: j });
      let driver: CoreDriver | undefined;
      const s = new P2PSession({
        players,
        inputBytes,
        localPlayer: i,
        remotes,
        isHost: i === 0,
        hostPeer: 'p0',
        clock,
        send: conns[i]!.send,
        fps: 1000 / UDP_FRAME_MS,
        stateSource: (f) => driver?.stateOf(f),
        ...session,
      });
      driver = new CoreDriver(new TestCore({ players, inputBytes }), s.ringFrames);
      // Time sync: skip the frames the session recommends (as an application would).
      s.on('wait-recommended', ({ frames }) => {
        this.wait[i] = frames;
      });
      this.sessions.push(s);
      this.drivers.push(driver);
    }
    if (link !== undefined) this.net.setDefaultLink(link);
    for (let i = 0; i < players; i++) {
      for (let j = i + 1; j < players; j++) {
        const name = `c${j}>${i}`;
        const me = j;
        const client = UdpPeer.client(
          {
            clock,
            random,
            drops: newDropCounters(),
            defer: (fn) => clock.setTimer(0, fn),
            output: (d) => {
              this.sentDatagrams[me]!++;
              this.sentBytes[me]! += d.length;
              const copy = d.slice();
              this.net.transmit(name, `s${i}`, d.length, () => this.servers[i]!.input(copy, name));
            },
          },
          config,
          ROLLBACK_CHANNELS,
          `s${i}`,
        );
        clients.set(name, client);
        conns[j]!.bind(`p${i}`, client, this.sessions[j]!);
      }
    }
    // Every client opens and every listener announces it (one round trip after ACCEPT).
    const announced = () => {
      for (let i = 0; i < players; i++)
        for (let j = i + 1; j < players; j++) {
          const s = this.servers[i]!.session(`c${j}>${i}`);
          if (s === undefined || !this.servers[i]!.connections.includes(s)) return false;
        }
      return true;
    };
    this.net.runUntil(announced, 20_000);
    if (!announced()) throw new Error('UDP mesh: handshakes did not complete');
    for (let i = 0; i < players; i++)
      for (let j = i + 1; j < players; j++)
        conns[i]!.bind(`p${j}`, this.servers[i]!.session(`c${j}>${i}`)!, this.sessions[i]!);
  }

  /** One frame period: every peer adds its input and steps (skipping frames on a wait recommendation), then time moves on. */
  tick(): void {
    for (let i = 0; i < this.players; i++) {
      const s = this.sessions[i]!;
      if (this.wait[i]! > 0) {
        this.wait[i]!--;
        s.poll();
        continue;
      }
      const f = s.currentFrame + s.inputDelay;
      for (let k = 0; k < this.inputBytes; k++) this.scratch[k] = patternInput(this.pattern, 7, i, f, k);
      s.addLocalInput(this.scratch);
      this.drivers[i]!.run(s.advanceFrame(), s);
    }
    this.net.advance(UDP_FRAME_MS);
  }

  /** Zeroes the byte counters (after a warm-up). */
  resetCounters(): void {
    this.sentDatagrams.fill(0);
    this.sentBytes.fill(0);
  }
}
