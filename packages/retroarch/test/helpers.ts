import {
  decodeRetroArchHeader,
  decodeRetroArchPayload,
  encodeRetroArchHeader,
  encodeRetroArchMessageToBytes,
  FrameDecoder,
  type RetroArchHeader,
  type RetroArchMessage,
  type RetroArchSyncMessage,
  retroArchHostHeader,
} from '@netplay/protocol';
import { RetroArchClient, type RetroArchClientEvent, type RetroArchClientOptions } from '../src/index.js';

export function headerBytes(h: RetroArchHeader): Uint8Array {
  const out = new Uint8Array(24);
  encodeRetroArchHeader(h, out);
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const msg = (m: RetroArchMessage): Uint8Array => encodeRetroArchMessageToBytes(m);

export const HOST_INFO = {
  type: 'info',
  contentCrc: 0xec4b5f44,
  coreName: 'Nestopia',
  coreVersion: '1.52.0 ',
} as const;

export function sync(frame: number, client = 1, devices = [1, 1]): RetroArchSyncMessage {
  return {
    type: 'sync',
    frame,
    paused: false,
    client,
    devices: Array.from({ length: 16 }, (_, i) => devices[i] ?? 0),
    shareModes: new Array<number>(16).fill(0),
    deviceClients: Array.from({ length: 16 }, (_, i) => (i === 0 ? 1 : 0)),
    nick: 'netplay',
    sram: new Uint8Array(0),
  };
}

/** What a RetroArch 1.14 host sends a new client, up to and including SYNC and the settings. */
export function hostHandshake(options: { salt?: number; frame?: number } = {}): Uint8Array {
  return concat(
    headerBytes(retroArchHostHeader({ salt: options.salt ?? 0 })),
    msg({ type: 'nick', nick: 'rahost' }),
    msg(HOST_INFO),
    msg(sync(options.frame ?? 10)),
    msg({ type: 'settingAllowPausing', allowPausing: true }),
    msg({ type: 'settingInputLatencyFrames', min: 0, max: 0 }),
  );
}

/** Decodes what the client sent: its header, then frames. */
export function decodeClientOutput(
  bytes: Uint8Array,
  withHeader: boolean,
): {
  header?: RetroArchHeader;
  messages: RetroArchMessage[];
} {
  const d = new FrameDecoder({ copy: true });
  d.push(bytes);
  const header = withHeader ? decodeRetroArchHeader(d.readRaw(24) ?? new Uint8Array(0), 'client') : undefined;
  const messages: RetroArchMessage[] = [];
  for (let f = d.next(); f !== undefined; f = d.next()) {
    messages.push(decodeRetroArchPayload(f.command, f.payload, 0, f.payload.length, 'client'));
  }
  if (d.buffered !== 0) throw new Error(`${d.buffered} bytes left over`);
  return header === undefined ? { messages } : { header, messages };
}

/** A client plus the events it emitted (input events copied). */
export function newClient(options: RetroArchClientOptions = {}) {
  const events: RetroArchClientEvent[] = [];
  const client = new RetroArchClient({
    ...options,
    onEvent: (e) => {
      events.push(
        e.type === 'input' ? { ...e, words: e.words.slice() } : e.type === 'noInput' || e.type === 'crc' ? { ...e } : e,
      );
    },
  });
  return { client, events };
}
