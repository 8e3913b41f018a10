import { pollUntil } from '@netplay/transport/conformance';
import { WebSocket } from 'ws';
import { parseServerMessage, type ServerMessage } from '../src/index.js';

/** A bare `ws` client for signaling-server tests: records every server message and the close. */
export class RawClient {
  readonly messages: ServerMessage[] = [];
  /** Server messages that did not parse (must stay empty: the server only sends valid ones). */
  readonly invalid: string[] = [];
  closed: { code: number; reason: string } | undefined;
  opened = false;
  readonly ws: WebSocket;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('open', () => {
      this.opened = true;
    });
    this.ws.on('error', () => {});
    this.ws.on('message', (data, isBinary) => {
      const text = data.toString();
      try {
        if (isBinary) throw new Error('binary');
        this.messages.push(parseServerMessage(text));
      } catch {
        this.invalid.push(text);
      }
    });
    this.ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static async open(url: string): Promise<RawClient> {
    const c = new RawClient(url);
    if (!(await pollUntil(() => c.opened || c.closed !== undefined, 5000)) || !c.opened) {
      throw new Error('raw client did not open');
    }
    return c;
  }

  /** Opens a socket and joins `room` as `peer`; resolves after `joined`. */
  static async joined(url: string, room: string, peer: string): Promise<RawClient> {
    const c = await RawClient.open(url);
    c.json({ v: 1, type: 'join', room, peer });
    if (!(await c.waitFor((m) => m.type === 'joined' || m.type === 'refused'))) throw new Error('no answer to join');
    return c;
  }

  json(value: unknown): void {
    this.ws.send(JSON.stringify(value));
  }

  send(data: string | Uint8Array): void {
    this.ws.send(data);
  }

  /** Waits until a message matching `pred` arrived (or the socket closed); resolves to whether it did. */
  async waitFor(pred: (m: ServerMessage) => boolean, ms = 5000): Promise<boolean> {
    await pollUntil(() => this.messages.some(pred) || this.closed !== undefined, ms);
    return this.messages.some(pred);
  }

  refusals(): Array<Extract<ServerMessage, { type: 'refused' }>> {
    return this.messages.filter((m): m is Extract<ServerMessage, { type: 'refused' }> => m.type === 'refused');
  }

  close(): void {
    this.ws.terminate();
  }
}
