/**
 * A RetroArch 1.14 tunnel relay ("custom MITM server") on `node:net`, speaking the protocol of
 * `tunnel-protocol.ts`; see {@link listenRetroArchTunnel}.
 */
import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  AdmissionGate,
  addressKey,
  DEFAULT_ADMISSION_LIMITS,
  Emitter,
  RateBudget,
  type RateLimits,
  validateRateLimits,
} from '@netplay/transport';
import { RetroArchTunnelError, type RetroArchTunnelErrorCode } from './tunnel-errors.js';
import {
  DEFAULT_TUNNEL_HOST_RATE_LIMITS,
  DEFAULT_TUNNEL_SESSION_RATE_LIMITS,
  type ListenRetroArchTunnelOptions,
  type RetroArchTunnel,
  type RetroArchTunnelEvents,
} from './tunnel-options.js';
import {
  decodeTunnelMessage,
  encodeTunnelMessage,
  isZeroTunnelId,
  TUNNEL_ID_BYTES,
  TUNNEL_MESSAGE_BYTES,
  TUNNEL_OUTDATED_REPLY,
  tunnelAddressBytes,
  tunnelIdHex,
} from './tunnel-protocol.js';

type Role = 'pending' | 'host' | 'client' | 'link' | 'closed';

interface Conn {
  readonly socket: Socket;
  readonly address: string;
  readonly remote: string;
  role: Role;
  /** Bytes of a tunnel message not complete yet (pending and host connections). */
  head: Uint8Array;
  headLen: number;
  session?: Session;
  /** Client id (client and link roles). */
  client?: string;
  peer?: Conn;
  early: Buffer[];
  earlyBytes: number;
  since: number;
  copied: number;
  budget?: RateBudget;
}

interface Session {
  readonly id: string;
  readonly host: Conn;
  readonly clients: Map<string, Conn>;
  heardAt: number;
  pings: number;
  budget: RateBudget | undefined;
  bytesToHost: number;
  bytesToClients: number;
  open: boolean;
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be an integer ≥ 1, got ${v}`);
  return v;
}

function positive(name: string, v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) throw new RangeError(`${name} must be a positive number, got ${v}`);
  return v;
}

/**
 * Starts a RetroArch tunnel relay: RetroArch 1.14 hosts configured with
 * `netplay_use_mitm_server = "true"`, `netplay_mitm_server = "custom"` and
 * `netplay_custom_mitm_server = "ADDRESS|PORT"` get a session here, and clients join them with
 * `RATS` + the session id (our client: `connectRetroArch({ relay, session })`). Resolves once
 * listening. Every socket is capped (see the options); a refused or misbehaving one is closed
 * with a {@link RetroArchTunnelError} in the events.
 * @throws RangeError (rejects) for a limit out of range.
 */
export function listenRetroArchTunnel(options: ListenRetroArchTunnelOptions): Promise<RetroArchTunnel> {
  let gate: AdmissionGate<Conn>;
  let cfg: {
    maxConnections: number;
    maxSessions: number;
    maxSessionsPerAddress: number;
    maxClientsPerSession: number;
    linkTimeoutMs: number;
    pingIntervalMs: number;
    maxUnansweredPings: number;
    maxPendingBytes: number;
    maxBufferedBytes: number;
  };
  let hostLimits: RateLimits | false;
  let sessionLimits: RateLimits | false;
  try {
    gate = new AdmissionGate<Conn>({ ...DEFAULT_ADMISSION_LIMITS, pendingTimeoutMs: 10_000, ...options.admission });
    cfg = {
      maxConnections: positiveInt('maxConnections', options.maxConnections ?? 1024),
      maxSessions: positiveInt('maxSessions', options.maxSessions ?? 128),
      maxSessionsPerAddress: positiveInt('maxSessionsPerAddress', options.maxSessionsPerAddress ?? 4),
      maxClientsPerSession: positiveInt('maxClientsPerSession', options.maxClientsPerSession ?? 16),
      linkTimeoutMs: positive('linkTimeoutMs', options.linkTimeoutMs ?? 30_000),
      pingIntervalMs: positive('pingIntervalMs', options.pingIntervalMs ?? 60_000),
      maxUnansweredPings: positiveInt('maxUnansweredPings', options.maxUnansweredPings ?? 3),
      maxPendingBytes: positiveInt('maxPendingBytes', options.maxPendingBytes ?? 65_536),
      maxBufferedBytes: positiveInt('maxBufferedBytes', options.maxBufferedBytes ?? 1024 * 1024),
    };
    hostLimits =
      options.hostRateLimits === false
        ? false
        : validateRateLimits(options.hostRateLimits ?? DEFAULT_TUNNEL_HOST_RATE_LIMITS);
    sessionLimits =
      options.sessionRateLimits === false
        ? false
        : validateRateLimits(options.sessionRateLimits ?? DEFAULT_TUNNEL_SESSION_RATE_LIMITS);
  } catch (e) {
    return Promise.reject(e);
  }
  const emitter = new Emitter<RetroArchTunnelEvents>();
  const log = options.log;
  const emit = <K extends keyof RetroArchTunnelEvents>(type: K, event: RetroArchTunnelEvents[K]): void => {
    log?.(`tunnel ${String(type)} ${JSON.stringify(event, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`);
    try {
      emitter.emit(type, event);
    } catch {
      // A throwing handler must not break the relay.
    }
  };
  const randomId = options.randomId ?? (() => randomBytes(TUNNEL_ID_BYTES));
  const conns = new Set<Conn>();
  /** Sessions and clients by id (one namespace, as in libretro's relay). */
  const ids = new Map<string, Session | Conn>();
  const sessions = new Map<string, Session>();
  const sessionsPerAddress = new Map<string, number>();
  const errors: Partial<Record<RetroArchTunnelErrorCode, number>> = {};
  const totals = { sessionsCreated: 0, linksMade: 0, bytesToHosts: 0, bytesToClients: 0 };

  const newId = (): { hex: string; bytes: Uint8Array } => {
    for (;;) {
      const bytes = randomId();
      if (bytes.length !== TUNNEL_ID_BYTES) throw new RangeError(`randomId must give ${TUNNEL_ID_BYTES} bytes`);
      const hex = tunnelIdHex(bytes);
      if (!isZeroTunnelId(bytes) && !ids.has(hex)) return { hex, bytes: Uint8Array.from(bytes) };
    }
  };

  const write = (c: Conn, bytes: Uint8Array): void => {
    if (c.role === 'closed' || c.socket.destroyed) return;
    c.socket.write(bytes);
    if (c.socket.writableLength > cfg.maxBufferedBytes)
      drop(c, new RetroArchTunnelError('overflow', `more than ${cfg.maxBufferedBytes} bytes unread by ${c.address}`));
  };

  const end = (c: Conn): void => {
    c.socket.end();
    setTimeout(() => c.socket.destroy(), 2000).unref();
  };

  const hexOf = (id: Uint8Array): string => tunnelIdHex(id);

  /** Closes `c` (and what depends on it) with `error` (undefined: a clean close by the peer). */
  function drop(c: Conn, error: RetroArchTunnelError | undefined): void {
    if (c.role === 'closed') return;
    const role = c.role;
    c.role = 'closed';
    conns.delete(c);
    gate.release(c);
    if (error !== undefined) errors[error.code] = (errors[error.code] ?? 0) + 1;
    end(c);
    const s = c.session;
    if (role === 'pending') {
      if (error !== undefined) emit('refused', { address: c.address, error });
    } else if (role === 'host' && s !== undefined) {
      s.open = false;
      sessions.delete(s.id);
      ids.delete(s.id);
      const n = (sessionsPerAddress.get(c.address) ?? 1) - 1;
      if (n > 0) sessionsPerAddress.set(c.address, n);
      else sessionsPerAddress.delete(c.address);
      emit('sessionClosed', { session: s.id, address: c.address, error });
      for (const w of [...s.clients.values()]) {
        if (w.peer === undefined)
          drop(w, new RetroArchTunnelError('no-session', `the host of session ${s.id} left before linking`));
      }
    } else if (role === 'client' && s !== undefined && c.client !== undefined) {
      s.clients.delete(c.client);
      ids.delete(c.client);
      const link = c.peer;
      emit('unlink', {
        session: s.id,
        client: c.client,
        bytesToHost: c.copied,
        bytesToClient: link?.copied ?? 0,
        error,
      });
      if (link !== undefined) drop(link, undefined);
    } else if (role === 'link') {
      const client = c.peer;
      if (client !== undefined && client.role !== 'closed')
        drop(client, error?.code === 'bandwidth' ? error : undefined);
    }
  }

  /** A socket's first whole tunnel message (`rest`: the bytes after it in the same chunk). */
  function opening(c: Conn, rest: Buffer, now: number): void {
    const r = decodeTunnelMessage(c.head, 0, 'peer');
    if (r.kind !== 'message') return;
    gate.release(c);
    const m = r.message;
    if (m.type === 'netplay') {
      c.socket.write(Uint8Array.from(TUNNEL_OUTDATED_REPLY));
      drop(
        c,
        new RetroArchTunnelError('outdated', `${c.address} opened with a netplay header (RANP), not a tunnel message`),
      );
      return;
    }
    if (m.type === 'ping' || m.type === 'address') {
      drop(
        c,
        new RetroArchTunnelError('unknown-magic', `${c.address} opened with ${m.type === 'ping' ? 'RATP' : 'RATA'}`),
      );
      return;
    }
    if (m.type === 'session' && isZeroTunnelId(m.id)) {
      if (sessions.size >= cfg.maxSessions) {
        drop(c, new RetroArchTunnelError('sessions-full', `the relay holds ${cfg.maxSessions} sessions`));
        return;
      }
      const mine = sessionsPerAddress.get(c.address) ?? 0;
      if (mine >= cfg.maxSessionsPerAddress) {
        drop(c, new RetroArchTunnelError('sessions-full', `${c.address} hosts ${mine} sessions already`));
        return;
      }
      const { hex, bytes } = newId();
      const s: Session = {
        id: hex,
        host: c,
        clients: new Map(),
        heardAt: now,
        pings: 0,
        budget: sessionLimits === false ? undefined : new RateBudget(sessionLimits, now),
        bytesToHost: 0,
        bytesToClients: 0,
        open: true,
      };
      c.role = 'host';
      c.session = s;
      c.headLen = 0;
      if (hostLimits !== false) c.budget = new RateBudget(hostLimits, now);
      sessions.set(hex, s);
      ids.set(hex, s);
      sessionsPerAddress.set(c.address, mine + 1);
      totals.sessionsCreated++;
      write(c, encodeTunnelMessage({ type: 'session', id: bytes }));
      emit('session', { session: hex, address: c.address });
      if (rest.length > 0) hostBytes(c, rest, now);
      return;
    }
    const want = hexOf(m.id);
    if (m.type === 'session') {
      const s = ids.get(want);
      if (s === undefined || !('clients' in s) || !s.open) {
        drop(c, new RetroArchTunnelError('no-session', `no session ${want}`));
        return;
      }
      if (s.clients.size >= cfg.maxClientsPerSession) {
        drop(c, new RetroArchTunnelError('session-full', `session ${want} holds ${cfg.maxClientsPerSession} clients`));
        return;
      }
      const { hex, bytes } = newId();
      c.role = 'client';
      c.session = s;
      c.client = hex;
      c.since = now;
      s.clients.set(hex, c);
      ids.set(hex, c);
      write(s.host, encodeTunnelMessage({ type: 'link', id: bytes }));
      emit('client', { session: s.id, client: hex, address: c.address });
      if (rest.length > 0) clientBytes(c, rest, now);
      return;
    }
    // RATL + client id: the host's link connection.
    const client = ids.get(want);
    if (client === undefined || !('socket' in client) || client.role !== 'client' || client.peer !== undefined) {
      drop(c, new RetroArchTunnelError('no-peer', `no client ${want} waits for a link`));
      return;
    }
    const s = client.session!;
    c.role = 'link';
    c.session = s;
    c.client = want;
    c.peer = client;
    client.peer = c;
    totals.linksMade++;
    emit('link', { session: s.id, client: want, address: c.address });
    for (const b of client.early.splice(0)) forward(client, b, now);
    client.earlyBytes = 0;
    if (rest.length > 0) forward(c, rest, now);
  }

  function hostBytes(c: Conn, chunk: Buffer, now: number): void {
    const s = c.session!;
    let at = 0;
    while (at < chunk.length && c.role === 'host') {
      const take = Math.min(TUNNEL_MESSAGE_BYTES - c.headLen, chunk.length - at);
      c.head.set(chunk.subarray(at, at + take), c.headLen);
      c.headLen += take;
      at += take;
      const r = decodeTunnelMessage(c.head.subarray(0, c.headLen), 0, 'peer');
      if (r.kind === 'incomplete') continue;
      if (r.kind === 'error') {
        drop(c, r.error);
        return;
      }
      // A whole message: give back the bytes past it.
      at -= c.headLen - r.size;
      c.headLen = 0;
      if (c.budget !== undefined && !c.budget.take(r.size, now)) {
        drop(c, new RetroArchTunnelError('flood', `host of session ${s.id}: ${c.budget.describe()}`));
        return;
      }
      s.heardAt = now;
      const m = r.message;
      if (m.type === 'ping') s.pings = 0;
      else if (m.type === 'address') {
        const hex = hexOf(m.id);
        const client = s.clients.get(hex);
        write(
          c,
          encodeTunnelMessage(
            client === undefined
              ? { type: 'address', id: new Uint8Array(TUNNEL_ID_BYTES), address: new Uint8Array(16) }
              : { type: 'address', id: m.id, address: tunnelAddressBytes(client.remote) },
          ),
        );
        emit('address', { session: s.id, client: hex, known: client !== undefined });
      } else {
        drop(
          c,
          new RetroArchTunnelError('unknown-magic', `host of session ${s.id} sent ${m.type} on its session connection`),
        );
        return;
      }
    }
  }

  function clientBytes(c: Conn, chunk: Buffer, now: number): void {
    if (c.peer !== undefined) {
      forward(c, chunk, now);
      return;
    }
    c.earlyBytes += chunk.length;
    if (c.earlyBytes > cfg.maxPendingBytes) {
      drop(
        c,
        new RetroArchTunnelError(
          'overflow',
          `client ${c.client} sent over ${cfg.maxPendingBytes} bytes before its link`,
        ),
      );
      return;
    }
    c.early.push(Buffer.from(chunk));
  }

  function forward(from: Conn, chunk: Buffer, now: number): void {
    const to = from.peer;
    const s = from.session;
    if (to === undefined || s === undefined || to.role === 'closed') return;
    if (s.budget !== undefined && !s.budget.take(chunk.length, now)) {
      const why = s.budget.describe();
      s.budget = sessionLimits === false ? undefined : new RateBudget(sessionLimits, now);
      drop(from, new RetroArchTunnelError('bandwidth', `session ${s.id} over its cap: ${why}`));
      return;
    }
    from.copied += chunk.length;
    if (from.role === 'client') {
      s.bytesToHost += chunk.length;
      totals.bytesToHosts += chunk.length;
    } else {
      s.bytesToClients += chunk.length;
      totals.bytesToClients += chunk.length;
    }
    if (!to.socket.write(chunk)) {
      if (to.socket.writableLength > cfg.maxBufferedBytes) {
        drop(
          to,
          new RetroArchTunnelError('overflow', `more than ${cfg.maxBufferedBytes} bytes unread by ${to.address}`),
        );
        return;
      }
      if (!from.socket.isPaused()) {
        from.socket.pause();
        to.socket.once('drain', () => from.socket.resume());
      }
    }
  }

  function onData(c: Conn, chunk: Buffer): void {
    const now = performance.now();
    switch (c.role) {
      case 'pending': {
        let at = 0;
        while (at < chunk.length && c.role === 'pending') {
          const take = Math.min(TUNNEL_MESSAGE_BYTES - c.headLen, chunk.length - at);
          c.head.set(chunk.subarray(at, at + take), c.headLen);
          c.headLen += take;
          at += take;
          const r = decodeTunnelMessage(c.head.subarray(0, c.headLen), 0, 'peer');
          if (r.kind === 'error') {
            drop(c, r.error);
            return;
          }
          if (r.kind === 'message') {
            at -= c.headLen - r.size;
            opening(c, chunk.subarray(at), now);
            return;
          }
        }
        return;
      }
      case 'host':
        hostBytes(c, chunk, now);
        return;
      case 'client':
        clientBytes(c, chunk, now);
        return;
      case 'link':
        forward(c, chunk, now);
        return;
      default:
        return;
    }
  }

  const sweepMs = Math.max(
    5,
    Math.min(250, gate.limits.pendingTimeoutMs / 4, cfg.pingIntervalMs / 4, cfg.linkTimeoutMs / 4),
  );
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const c of gate.expire(now, []))
      drop(c, new RetroArchTunnelError('timeout', `no tunnel message within ${gate.limits.pendingTimeoutMs} ms`));
    for (const s of [...sessions.values()]) {
      for (const c of [...s.clients.values()]) {
        if (c.peer === undefined && now - c.since >= cfg.linkTimeoutMs)
          drop(
            c,
            new RetroArchTunnelError(
              'link-timeout',
              `the host did not link client ${c.client} within ${cfg.linkTimeoutMs} ms`,
            ),
          );
      }
      if (now - s.heardAt < cfg.pingIntervalMs) continue;
      if (s.pings >= cfg.maxUnansweredPings) {
        drop(
          s.host,
          new RetroArchTunnelError('ping-timeout', `the host of session ${s.id} answered none of ${s.pings} pings`),
        );
        continue;
      }
      s.pings++;
      s.heardAt = now;
      write(s.host, encodeTunnelMessage({ type: 'ping' }));
      emit('ping', { session: s.id, unanswered: s.pings });
    }
  }, sweepMs);
  sweep.unref();

  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    const now = performance.now();
    const remote = socket.remoteAddress ?? '';
    const c: Conn = {
      socket,
      address: addressKey(remote),
      remote: remote.startsWith('::ffff:') && remote.includes('.') ? remote.slice(7) : remote,
      role: 'pending',
      head: new Uint8Array(TUNNEL_MESSAGE_BYTES),
      headLen: 0,
      early: [],
      earlyBytes: 0,
      since: now,
      copied: 0,
    };
    socket.on('close', () => drop(c, undefined));
    if (conns.size >= cfg.maxConnections) {
      drop(c, new RetroArchTunnelError('full', `the relay holds ${cfg.maxConnections} connections`));
      socket.destroy();
      return;
    }
    const admitted = gate.admit(c.address, c, now);
    if (!admitted.ok) {
      drop(
        c,
        new RetroArchTunnelError(
          'full',
          `${gate.limits.maxPendingPerAddress} connections from ${c.address} have not sent a tunnel message`,
        ),
      );
      socket.destroy();
      return;
    }
    conns.add(c);
    if (admitted.evicted !== undefined)
      drop(
        admitted.evicted,
        new RetroArchTunnelError('timeout', `no tunnel message before ${gate.limits.maxPending} newer connections`),
      );
    socket.on('data', (chunk: Buffer) => onData(c, chunk));
  });

  const handle: RetroArchTunnel = {
    get port() {
      return (server.address() as AddressInfo).port;
    },
    events: emitter,
    sessions: () =>
      [...sessions.values()].map((s) => {
        let links = 0;
        for (const c of s.clients.values()) if (c.peer !== undefined) links++;
        return {
          id: s.id,
          address: s.host.address,
          waiting: s.clients.size - links,
          links,
          bytesToHost: s.bytesToHost,
          bytesToClients: s.bytesToClients,
          unansweredPings: s.pings,
        };
      }),
    stats: () => {
      let links = 0;
      for (const c of conns) if (c.role === 'link') links++;
      return {
        connections: conns.size,
        pending: gate.pending,
        sessions: sessions.size,
        links,
        ...totals,
        errors: { ...errors },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweep);
        for (const c of [...conns]) {
          drop(c, undefined);
          c.socket.destroy();
        }
        server.close(() => resolve());
      }),
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve(handle));
  });
}
