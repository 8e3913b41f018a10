/**
 * Bad input to the emulating client and host, with the real Nestopia core (no RetroArch needed):
 * a truncated savestate, another core's savestate, and a client that sends a savestate to our host.
 * Each is a typed error (`core-state`); the core is unchanged and the process runs on.
 */
import { existsSync } from 'node:fs';
import { DEBIAN_LIBRETRO_DIR, LibretroCore } from '@netplay/core-libretro';
import { encodeRetroArchMessageToBytes, RETROARCH_MAX_DEVICES } from '@netplay/protocol';
import { afterEach, expect, it } from 'vitest';
import {
  RetroArchClient,
  RetroArchClientEmulator,
  type RetroArchClientEmulatorEvent,
  RetroArchEmulatingHost,
  type RetroArchEmulatingHostEvent,
  RetroArchHostConnection,
  type RetroArchSessionInfo,
  zlibStored,
} from '../src/index.js';
import { loadNestopia } from './cores.js';
import { efpRom } from './harness.js';

const cores: LibretroCore[] = [];
afterEach(() => {
  for (const c of cores.splice(0)) c.close();
});

function nestopia(): LibretroCore {
  const c = loadNestopia();
  cores.push(c);
  return c;
}

const session = {
  header: { sender: 'host', magic: 0x52414e50, platform: 0, compression: 1, salt: 0, protocol: 6, implementation: 0 },
  hostNick: 'h',
  hostInfo: { contentCrc: 0, coreName: 'Nestopia', coreVersion: '' },
  sync: {
    type: 'sync',
    frame: 0,
    paused: false,
    client: 1,
    devices: new Array<number>(RETROARCH_MAX_DEVICES).fill(1),
    shareModes: new Array<number>(RETROARCH_MAX_DEVICES).fill(0),
    deviceClients: [1, ...new Array<number>(RETROARCH_MAX_DEVICES - 1).fill(0)],
    nick: 'c',
    sram: new Uint8Array(0),
  },
} as unknown as RetroArchSessionInfo;

function emulator(core: LibretroCore) {
  const events: RetroArchClientEmulatorEvent[] = [];
  let requests = 0;
  const emu = new RetroArchClientEmulator({
    core,
    requestSavestate: () => requests++,
    onEvent: (e) => events.push(e),
  });
  emu.onClientEvent({ type: 'synced', session });
  return { emu, events, requests: () => requests };
}

/** A real Nestopia state after `frames` frames, zero-padded to the power-on size as RetroArch sends it. */
function hostState(frames: number): { state: Uint8Array; crcFrame: number } {
  const h = nestopia();
  const size = h.saveRawInto(new Uint8Array(h.rawStateBytes));
  for (let i = 0; i < frames; i++) h.advance();
  const state = new Uint8Array(size);
  const buf = new Uint8Array(h.rawStateBytes);
  state.set(buf.subarray(0, h.saveRawInto(buf)));
  return { state, crcFrame: frames };
}

it('a truncated savestate from the host: core-state error, core unchanged, a new savestate asked for and loaded', () => {
  const { state } = hostState(30);
  const core = nestopia();
  const { emu, events, requests } = emulator(core);
  emu.onClientEvent({ type: 'savestate', frame: 30, state: state.subarray(0, 1000) });
  const err = events.find((e) => e.type === 'stateError');
  expect(err?.type === 'stateError' && err.error.code).toBe('core-state');
  expect(err?.type === 'stateError' && err.error.message).toMatch(/frame 30 \(1000 bytes\)/);
  expect(core.frame).toBe(0);
  expect(emu.running).toBe(false);
  expect(requests()).toBe(1);
  emu.onClientEvent({ type: 'savestate', frame: 30, state });
  expect(emu.running).toBe(true);
  expect(core.frame).toBe(30);
  expect(emu.stats).toMatchObject({ stateErrors: 1, savestatesLoaded: 1 });
});

it("another core's savestate (Gambatte's) from the host: core-state error, the core runs on", () => {
  const gb = `${DEBIAN_LIBRETRO_DIR}/gambatte_libretro.so`;
  if (!existsSync(gb)) throw new Error(`no Gambatte core at ${gb}: run .ci/setup-libretro.sh`);
  const g = LibretroCore.load({ core: gb, content: efpRom(), contentName: 'efp.gb', ports: 1 });
  cores.push(g);
  g.advance();
  const foreign = new Uint8Array(g.rawStateBytes);
  const n = g.saveRawInto(foreign);
  const core = nestopia();
  const { emu, events } = emulator(core);
  emu.onClientEvent({ type: 'savestate', frame: 5, state: foreign.subarray(0, n) });
  const err = events.find((e) => e.type === 'stateError');
  expect(err?.type === 'stateError' && err.error.code).toBe('core-state');
  expect(emu.running).toBe(false);
  core.advance(); // the core is intact
  expect(core.frame).toBe(1);
});

it('our host drops a client that sends a savestate and runs on for the others', () => {
  const core = nestopia();
  const events: RetroArchEmulatingHostEvent[] = [];
  const game = new RetroArchEmulatingHost({ core, checkFrames: 10, onEvent: (e) => events.push(e) });
  const join = (n: number) => {
    const client = new RetroArchClient({ nick: `c${n}` });
    let conn: RetroArchHostConnection;
    const peer = {
      get host() {
        return conn;
      },
      relay: (b: Uint8Array) => conn.relay(b),
    };
    conn = new RetroArchHostConnection({
      ...game.hostOptions(),
      clientNumber: n,
      onEvent: (e) => game.onPeerEvent(peer, e),
    });
    const pump = () => {
      for (let i = 0; i < 10; i++) {
        const a = client.takeOutput();
        if (a !== undefined) conn.receive(a, 0);
        const b = conn.takeOutput();
        if (b !== undefined) client.receive(b, 0);
        if (a === undefined && b === undefined) return;
      }
    };
    client.start(0);
    pump();
    return { client, conn, pump };
  };
  const bad = join(1);
  const good = join(2);
  expect(bad.client.state).toBe('spectating');
  game.runUntil(5);
  bad.pump();
  good.pump();
  const raw = encodeRetroArchMessageToBytes({
    type: 'loadSavestate',
    frame: 5,
    uncompressedSize: 100,
    data: zlibStored(new Uint8Array(100)),
  });
  bad.conn.receive(raw, 0);
  expect(bad.conn.state).toBe('closed');
  expect(bad.conn.error?.code).toBe('core-state');
  expect(events.some((e) => e.type === 'peerError' && e.client === 1 && e.error.code === 'core-state')).toBe(true);
  expect(game.runUntil(30)).toBe(25);
  good.pump();
  expect(good.client.state).toBe('spectating');
  expect(good.client.hostFrame).toBe(29);
  expect(events.filter((e) => e.type === 'crc').map((e) => e.type === 'crc' && e.frame)).toEqual([0, 10, 20]);
});
