import { type Announcement, type JoinInfo, LobbyError, parseAnnounce, type RoomAnnounce } from '@netplay/lobby';
import { hostThroughRelay, type RelayHost } from '@netplay/lobby/node';
import type { Clock, Timer } from '@netplay/transport';
import { friendAddresses, hostPort, type Interfaces, isLoopback, isPrivateAddress } from './addresses.js';
import { CliError, ExitCode } from './exit-codes.js';
import { lobbyClient, lobbyFailure } from './lobby.js';

/** `host --relay` (on), `--no-relay` (off), or neither (auto: when no address of this machine is public). */
export type RelayChoice = 'auto' | 'on' | 'off';

/** How long `host` waits for the relay to confirm its registration. */
export const RELAY_REGISTER_TIMEOUT_MS = 5000;

/**
 * A room announced on a lobby by `netplay host --lobby`: heartbeats run until {@link close}; the
 * player count follows the game ({@link setPlayers}); {@link relay} registers with the lobby's relay.
 */
export class LobbyRoom {
  private relayHost: RelayHost | undefined;
  private closing = false;
  /** Called when the relay drops this host's registration (not when {@link close} ends it). */
  onRelayLost: ((why: string) => void) | undefined;

  private constructor(
    /** The lobby's base URL. */
    readonly url: string,
    private readonly announcement: Announcement,
    private body: RoomAnnounce,
  ) {}

  /**
   * Announces `body` on the lobby at `url`.
   * @throws CliError `Usage` for a field the lobby would refuse (e.g. a name over 64 characters),
   * `Network` when the lobby cannot be reached or refuses.
   */
  static async announce(url: string, body: RoomAnnounce): Promise<LobbyRoom> {
    try {
      parseAnnounce(body);
    } catch (e) {
      if (e instanceof LobbyError) throw new CliError(ExitCode.Usage, `cannot announce this room: ${e.message}`);
      throw e;
    }
    try {
      return new LobbyRoom(url, await lobbyClient(url).announce(body), body);
    } catch (e) {
      throw lobbyFailure(e, url, 'announce');
    }
  }

  /** The room's id on the lobby. */
  get id(): string {
    return this.announcement.id;
  }

  /** What is announced now. */
  get announced(): RoomAnnounce {
    return this.body;
  }

  /** Heartbeats refused or lost in a row (0 when the last one worked). */
  get failures(): number {
    return this.announcement.failures;
  }

  /** Announces a new player count (at once, then with every heartbeat). */
  setPlayers(players: number): void {
    const n = Math.max(0, Math.min(this.body.slots, players));
    if (n === this.body.players) return;
    this.body = { ...this.body, players: n };
    void this.announcement.update(this.body);
  }

  /**
   * Registers with the lobby's relay (its WebSocket relay at the lobby's own URL): every client
   * the relay announces is bridged to `target` (the host's netplay-ws listener) and, with
   * `udpTarget`, UDP clients of the room's relay port to the host's transport-udp listener. Then
   * heartbeats at once so the room lists `relay`.
   * @throws CliError `Network` when the lobby offers no relay or refuses the registration.
   */
  async relay(target: string, udpTarget: { host: string; port: number } | undefined, clock: Clock): Promise<RelayHost> {
    const relayUrl = this.url.replace(/^http/, 'ws');
    const relay = hostThroughRelay({
      relayUrl,
      room: this.id,
      token: this.announcement.token,
      target,
      ...(udpTarget !== undefined ? { udpTarget } : {}),
    });
    this.relayHost = relay;
    let timer: Timer | undefined;
    try {
      await Promise.race([
        relay.registered,
        new Promise<never>((_, reject) => {
          timer = clock.setTimer(RELAY_REGISTER_TIMEOUT_MS, () =>
            reject(new LobbyError('timeout', `no answer within ${RELAY_REGISTER_TIMEOUT_MS} ms`)),
          );
        }),
      ]);
    } catch (e) {
      relay.close();
      this.relayHost = undefined;
      throw new CliError(
        ExitCode.Network,
        `the lobby ${this.url} did not take this host on its relay (${relayUrl}/relay/host): ${(e as Error).message}`,
      );
    } finally {
      timer?.cancel();
    }
    relay.onClose = (code, reason) => {
      if (!this.closing) this.onRelayLost?.(`${code}${reason ? ` ${reason}` : ''}`);
    };
    await this.announcement.update(this.body);
    return relay;
  }

  /** The join info the lobby gives joiners of this room (what `netplay join --lobby` will use). */
  async joinInfo(): Promise<JoinInfo> {
    try {
      return await lobbyClient(this.url).join(this.id);
    } catch (e) {
      throw lobbyFailure(e, this.url, 'join info');
    }
  }

  /** Leaves the relay and removes the room from the lobby (errors ignored). */
  async close(): Promise<void> {
    this.closing = true;
    this.relayHost?.close();
    this.relayHost = undefined;
    await this.announcement.close();
  }
}

/** The endpoints a udp/ws host announces: one per address a friend can use (at most 8), else the bind address. */
export function directEndpoints(
  transport: 'udp' | 'ws',
  bind: string,
  port: number,
  interfaces?: Interfaces,
): RoomAnnounce['endpoints'] {
  const addresses = friendAddresses(bind, interfaces).map((a) => a.address);
  if (addresses.length === 0) addresses.push(bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind);
  return addresses.slice(0, 8).map((a) => ({ kind: transport, url: `${transport}://${hostPort(a, port)}` }));
}

/** Where this host's own listener is reached from this machine (for the relay bridge). */
export function localTarget(bind: string): string {
  return bind === '0.0.0.0' || bind === '::' || isLoopback(bind) ? '127.0.0.1' : bind;
}

/** Whether the relay is used: on, off, or (auto) when no address of `bind` is public. */
export function wantsRelay(choice: RelayChoice, bind: string, interfaces?: Interfaces): boolean {
  if (choice !== 'auto') return choice === 'on';
  return !friendAddresses(bind, interfaces).some((a) => !isPrivateAddress(a.address));
}

/**
 * The lines on whether joiners can reach this host: a public address (direct), private ones only
 * (NAT: the relay, or port forwarding), or loopback only.
 */
export function reachabilityLines(
  transport: 'udp' | 'ws',
  bind: string,
  port: number,
  relayed: boolean,
  interfaces?: Interfaces,
): string[] {
  const addresses = friendAddresses(bind, interfaces).map((a) => a.address);
  const open = addresses.filter((a) => !isPrivateAddress(a));
  const protocol = transport === 'ws' ? 'TCP' : 'UDP';
  const relayLine = relayed
    ? "joiners from elsewhere come through the lobby's relay (no port forwarding needed)"
    : `joiners from elsewhere cannot: forward ${protocol} port ${port} on your router, or host with --relay`;
  if (open.length > 0)
    return [
      `reachable: public address ${open.join(', ')}: joiners on the internet connect directly unless a firewall ` +
        `blocks ${protocol} port ${port}${relayed ? " (the lobby's relay is there too)" : ''}`,
    ];
  if (addresses.length === 0)
    return [`not reachable from other machines: bound to ${bind} (only this machine joins directly); ${relayLine}`];
  return [
    `not reachable from the internet: this machine's addresses are private (${addresses.join(', ')}: behind NAT); ` +
      `joiners on your network connect directly; ${relayLine}`,
  ];
}

/** What the lobby's join info tells joiners, as one line. */
export function joinInfoLine(info: JoinInfo): string {
  if (info.signaling !== undefined)
    return (
      `lobby: joiners meet this host through the lobby's signaling (${info.signaling.url}, room ` +
      `${info.signaling.room}) and connect peer to peer`
    );
  const direct = info.room.endpoints.flatMap((e) => (e.kind === 'webrtc' ? [] : [e.url]));
  if (info.relay !== undefined)
    return (
      `lobby: joiners connect through the relay (${[info.relay.url, ...(info.relay.udp ? [info.relay.udp] : [])].join(', ')})` +
      `${direct.length > 0 ? `, or directly with --direct (${direct.join(', ')})` : ''}`
    );
  return `lobby: joiners connect directly (${direct.join(', ')})`;
}
