import { SESSION_CHANNELS } from '@netplay/session';
import {
  type Clock,
  type Connection,
  DEFAULT_ADMISSION_LIMITS,
  type Listener,
  TransportError,
} from '@netplay/transport';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import { connectNode, listen as listenWs } from '@netplay/transport-ws/server';
import { CliError, ExitCode } from './exit-codes.js';

/** The transports the CLI speaks. */
export const TRANSPORTS = ['udp', 'ws'] as const;
/** One of {@link TRANSPORTS}. */
export type TransportName = (typeof TRANSPORTS)[number];

/** The default port of `netplay host`. */
export const DEFAULT_PORT = 7845;

/** A listener and the port it got. */
export interface BoundListener {
  readonly listener: Listener;
  readonly port: number;
}

/** Spectators a CLI host admits (the session host's default). */
export const MAX_SPECTATORS = 8;

/**
 * Transport connections a CLI host's listener takes: every admitted client (`players - 1` and
 * `maxSpectators`), plus the session host's cap on connections still in the session handshake
 * (`maxPending`, default 64), plus a margin of 8 for connections the host is closing. The
 * session host evicts the oldest pending connection past `maxPending`, so half-open connections
 * can never fill the transport's slots and lock a player out.
 */
export function listenerSlots(
  players: number,
  maxSpectators = MAX_SPECTATORS,
  maxPending = DEFAULT_ADMISSION_LIMITS.maxPending,
): number {
  return players - 1 + maxSpectators + maxPending + 8;
}

function isAddressInUse(e: unknown): boolean {
  for (let c: unknown = e; c !== undefined && c !== null; c = (c as { cause?: unknown }).cause) {
    if ((c as { code?: unknown }).code === 'EADDRINUSE') return true;
    if (String((c as Error).message ?? '').includes('EADDRINUSE')) return true;
  }
  return false;
}

/**
 * Listens for session connections (declaring `SESSION_CHANNELS`), at most `maxConnections`
 * (default {@link listenerSlots} of 2 players).
 * @throws CliError `Network`: "port N is busy" on EADDRINUSE, or the transport's message.
 */
export async function listenSession(
  transport: TransportName,
  host: string,
  port: number,
  clock: Clock,
  maxConnections = listenerSlots(2),
): Promise<BoundListener> {
  try {
    if (transport === 'udp') {
      const l = await listenUdp({ channels: SESSION_CHANNELS, host, port, clock, maxConnections });
      return { listener: l, port: l.port };
    }
    const l = await listenWs({ channels: SESSION_CHANNELS, host, port, maxConnections });
    return { listener: l, port: l.port };
  } catch (e) {
    if (isAddressInUse(e))
      throw new CliError(ExitCode.Network, `port ${port} is busy (EADDRINUSE): is another host running? Try --port`);
    if (e instanceof TransportError)
      throw new CliError(ExitCode.Network, `cannot listen on ${host}:${port}: ${e.message}`);
    throw e;
  }
}

/** Parses `HOST:PORT` (`[v6]:PORT` for IPv6). */
export function parseAddress(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || !(port >= 1 && port <= 65535))
    throw new CliError(ExitCode.Usage, `expected HOST:PORT (e.g. 127.0.0.1:${DEFAULT_PORT}), got "${text}"`);
  return { host: (m[1] ?? m[2])!, port };
}

/**
 * Opens a session connection to a host.
 * @throws CliError `Network` when the host cannot be reached or refuses the transport connection.
 */
export async function connectSession(
  transport: TransportName,
  host: string,
  port: number,
  clock: Clock,
): Promise<Connection> {
  const where = `${host}:${port}`;
  try {
    if (transport === 'udp') return await connectUdp({ channels: SESSION_CHANNELS, host, port, clock });
    const url = `ws://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const conn = connectNode(url, { channels: SESSION_CHANNELS });
    await new Promise<void>((resolve, reject) => {
      if (conn.state === 'open') return resolve();
      const offOpen = conn.on('open', () => {
        offOpen();
        offClose();
        resolve();
      });
      const offClose = conn.on('close', ({ reason }) => {
        offOpen();
        offClose();
        reject(new TransportError('refused', reason || 'connection refused'));
      });
    });
    return conn;
  } catch (e) {
    if (e instanceof TransportError) {
      const why = e.code === 'timeout' ? 'no answer (is the host running, and is it the right transport?)' : e.message;
      throw new CliError(
        e.code === 'refused' && /full/i.test(e.message) ? ExitCode.Full : ExitCode.Network,
        `cannot connect to ${where}: ${why}`,
      );
    }
    throw e;
  }
}
