import { checkRoomId, type JoinInfo, LobbyError, type RoomInfo } from '@netplay/lobby';
import type { Clock, Connection } from '@netplay/transport';
import { CliError, ExitCode } from './exit-codes.js';
import { lobbyClient, lobbyFailure, udpEndpoint } from './lobby.js';
import { connectSession, type TransportName, type WebRtcTarget } from './net.js';

/** One way to reach a host: what `join` prints for it, and how it connects. */
export interface JoinTarget {
  /** Where, for the output (`127.0.0.1:7845`, `room "r" of ws://…`, `room ID via the relay ws://…`). */
  readonly label: string;
  /** Opens the session connection. @throws CliError `Network`, `Full`. */
  connect(nick: string): Promise<Connection>;
}

/** A direct (or WebRTC) target, as `join HOST:PORT` and `join --transport webrtc` use. */
export function directTarget(
  transport: TransportName,
  address: string,
  port: number,
  clock: Clock,
  webrtc: WebRtcTarget | undefined,
): JoinTarget {
  return {
    label: webrtc !== undefined ? `room "${webrtc.room}" of ${webrtc.signal}` : `${address}:${port}`,
    connect: (nick) => connectSession(transport, address, port, clock, webrtc && { ...webrtc, nick }),
  };
}

/** Looks a room up on the lobby (its join info). @throws CliError `Usage` (a malformed id), `NoRoom`, `Network`. */
export async function lookUpRoom(lobby: string, id: string): Promise<JoinInfo> {
  try {
    checkRoomId(id);
  } catch (e) {
    if (e instanceof LobbyError) throw new CliError(ExitCode.Usage, `ROOM: ${e.message}, got "${id.slice(0, 80)}"`);
    throw e;
  }
  try {
    return await lobbyClient(lobby).join(id);
  } catch (e) {
    throw lobbyFailure(e, lobby, `room ${id}`);
  }
}

/**
 * The ways to reach a lobby room, best first: the lobby's signaling (a WebRTC room); else its relay
 * (unless `direct`: UDP through the relay's room port for a UDP host, then WebSocket through the
 * relay), then the host's own addresses in the order announced.
 * @throws CliError `Network` when there is none.
 */
export function lobbyTargets(
  info: JoinInfo,
  options: { direct: boolean; clock: Clock; ice?: readonly string[] },
): JoinTarget[] {
  const { room } = info;
  const { clock } = options;
  const id = room.id;
  if (info.signaling !== undefined) {
    const s = info.signaling;
    const webrtc: WebRtcTarget = { signal: s.url, room: s.room, ...(options.ice ? { ice: options.ice } : {}) };
    return [
      {
        label: `room ${id} (WebRTC through ${s.url})`,
        connect: (nick) => connectSession('webrtc', '', 0, clock, { ...webrtc, nick, to: s.peer }),
      },
    ];
  }
  const targets: JoinTarget[] = [];
  const hostUdp = room.endpoints.some((e) => e.kind === 'udp');
  if (info.relay !== undefined && !options.direct) {
    const udp = info.relay.udp !== undefined ? udpEndpoint(info.relay.udp) : undefined;
    if (udp !== undefined && hostUdp)
      targets.push({
        label: `room ${id} via the relay ${info.relay.udp}`,
        connect: () => connectSession('udp', udp.host, udp.port, clock),
      });
    const url = info.relay.url;
    targets.push({
      label: `room ${id} via the relay ${url.replace(/\?.*$/, '')}`,
      connect: () => connectSession('ws', '', 0, clock, undefined, url),
    });
  }
  for (const e of room.endpoints) {
    if (e.kind === 'udp') {
      const a = udpEndpoint(e.url);
      if (a !== undefined)
        targets.push({ label: `room ${id} at ${e.url}`, connect: () => connectSession('udp', a.host, a.port, clock) });
    } else if (e.kind === 'ws')
      targets.push({
        label: `room ${id} at ${e.url}`,
        connect: () => connectSession('ws', '', 0, clock, undefined, e.url),
      });
  }
  if (targets.length === 0)
    throw new CliError(
      ExitCode.Network,
      `room ${id} offers no way in${options.direct ? ' without the relay (no direct address: leave out --direct)' : ' (no address, relay or signaling)'}`,
    );
  return targets;
}

/** One line on the room `join --lobby` found. */
export function roomFoundLine(lobby: string, room: RoomInfo): string {
  return (
    `lobby: room ${room.id} "${room.name}" on ${lobby}: ${room.game} (${room.core}), ${room.mode}, ` +
    `${room.players}/${room.slots} players, password ${room.hasPassword ? 'yes' : 'no'}`
  );
}
