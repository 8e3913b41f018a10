import { type ChannelSpec, type Clock, Prng, SimulatedNetwork, type SimulatedNetworkOptions } from '@netplay/transport';
import { resolveConfig, type UdpConfigOptions } from '../src/config.js';
import { type DropCounters, newDropCounters } from '../src/counters.js';
import { UdpPeer } from '../src/peer.js';
import { type ServerOptions, UdpServerCore } from '../src/server.js';

/** The sans-I/O UDP core wired onto a SimulatedNetwork: one server, any number of clients. */
export class SimUdp {
  readonly net: SimulatedNetwork;
  readonly server: UdpServerCore;
  readonly clients = new Map<string, UdpPeer>();
  readonly clientDrops = new Map<string, DropCounters>();
  /** Every datagram the server sent, with its destination. */
  readonly serverSent: Array<{ to: string; bytes: number }> = [];
  private readonly prng: Prng;

  constructor(
    readonly channels: readonly ChannelSpec[],
    options: {
      seed: number;
      link?: SimulatedNetworkOptions['link'];
      config?: UdpConfigOptions;
      server?: ServerOptions;
    },
  ) {
    this.net = new SimulatedNetwork({ seed: options.seed, ...(options.link ? { link: options.link } : {}) });
    this.prng = new Prng(options.seed ^ 0x5a5a5a5a);
    const random = (n: number) => this.prng.fill(new Uint8Array(n));
    const clock = this.net.clock;
    this.server = new UdpServerCore(
      {
        clock,
        random,
        defer: (fn) => clock.setTimer(0, fn),
        output: (d, to) => {
          this.serverSent.push({ to, bytes: d.length });
          const copy = d.slice(); // lent for the call only
          this.net.transmit('server', to, d.length, () => this.clients.get(to)?.input(copy));
        },
      },
      resolveConfig(options.config),
      channels,
      'server',
      options.server,
    );
    this.config = options.config;
  }

  private readonly config: UdpConfigOptions | undefined;

  /** Starts a client at endpoint `name` (handshake runs as time advances). */
  connect(
    name: string,
    config: UdpConfigOptions | undefined = this.config,
    channels = this.channels,
    clock: Clock = this.net.clock,
  ): UdpPeer {
    const drops = newDropCounters();
    const peer = UdpPeer.client(
      {
        clock,
        drops,
        defer: (fn) => clock.setTimer(0, fn),
        random: (n) => this.prng.fill(new Uint8Array(n)),
        output: (d) => {
          const copy = d.slice(); // lent for the call only
          this.net.transmit(name, 'server', d.length, () => this.server.input(copy, name));
        },
      },
      resolveConfig(config),
      channels,
      'server',
    );
    this.clients.set(name, peer);
    this.clientDrops.set(name, drops);
    return peer;
  }

  /** Connects `name` and runs until both ends are open; returns both. */
  pair(name = 'client', config?: UdpConfigOptions, clock?: Clock): { client: UdpPeer; server: UdpPeer } {
    const client = this.connect(name, config, this.channels, clock);
    const limit = (config?.timeouts?.connectMs ?? 5000) + 5000;
    // The server announces a session once it hears the client on it (one round trip after ACCEPT).
    const announced = () => {
      const s = this.server.session(name);
      return s !== undefined && this.server.connections.includes(s);
    };
    this.net.runUntil(() => client.state !== 'connecting' && announced(), limit);
    const server = this.server.session(name);
    if (client.state !== 'open' || !server || !announced()) {
      throw new Error(`handshake of ${name} failed (${client.state})`);
    }
    return { client, server };
  }
}
