import { WebSocket } from 'ws';
import type { FeedServerMessage, RoomAnnounce } from '../src/index.js';

/** A valid announce body; `over` replaces fields. */
export function announce(over: Partial<RoomAnnounce> = {}): RoomAnnounce {
  return {
    name: 'Space Racer night',
    game: 'space-racer',
    core: 'chip8',
    mode: 'rollback',
    hasPassword: false,
    players: 1,
    slots: 2,
    endpoints: [{ kind: 'webrtc', peer: 'host' }],
    ...over,
  };
}

export interface Reply {
  status: number;
  body: unknown;
}

/** One HTTP request; `body` as a string is sent raw. */
export async function http(base: string, method: string, path: string, body?: unknown, token?: string): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body !== undefined
      ? {
          body: typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body) : JSON.stringify(body),
        }
      : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The error code of a refusal reply. */
export function code(r: Reply): string | undefined {
  return (r.body as { error?: { code?: string } } | undefined)?.error?.code;
}
export function reason(r: Reply): string {
  return (r.body as { error?: { reason?: string } } | undefined)?.error?.reason ?? '';
}

/** A feed socket collecting messages. */
export class FeedProbe {
  readonly messages: FeedServerMessage[] = [];
  closed: { code: number; reason: string } | undefined;
  readonly ws: WebSocket;
  readonly opened: Promise<void>;
  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('error', () => {});
    this.ws.on('message', (d, bin) => {
      if (!bin) this.messages.push(JSON.parse(d.toString()) as FeedServerMessage);
    });
    this.ws.on('close', (c, r) => {
      this.closed = { code: c, reason: r.toString() };
    });
    this.opened = new Promise((res, rej) => {
      this.ws.once('open', () => res());
      this.ws.once('close', () => rej(new Error('closed before open')));
    });
    this.opened.catch(() => {});
  }
  async until<T>(pick: () => T | undefined, ms = 5000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = pick();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > end) throw new Error(`feed: timed out; got ${JSON.stringify(this.messages).slice(0, 400)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  of<K extends FeedServerMessage['type']>(type: K): Extract<FeedServerMessage, { type: K }>[] {
    return this.messages.filter((m) => m.type === type) as Extract<FeedServerMessage, { type: K }>[];
  }
}

export async function waitFor<T>(
  pick: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 5000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pick();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
