/**
 * The emulating host and client, sans-I/O, on a tiny deterministic JS core (the real-core runs
 * against RetroArch are in interop/): wire order, lockstep on the player's input, CRCs, savestate
 * requests, and the client emulator's CRC check (red on a desync, repaired by a savestate).
 */
import { crc32 } from '@netplay/protocol';
import fc from 'fast-check';
import { inflate } from 'pako';
import { describe, expect, it } from 'vitest';
import {
  RetroArchClient,
  RetroArchClientEmulator,
  type RetroArchClientEvent,
  type RetroArchCore,
  RetroArchEmulatingHost,
  RetroArchHostConnection,
  zlibStored,
} from '../src/index.js';

/** A core whose 8-byte state mixes every frame's inputs; states shrink after frame 0 like Nestopia's. */
class MixCore implements RetroArchCore {
  readonly info = { libraryName: 'Mix', libraryVersion: '1 ' };
  readonly contentCrc32 = 0x1234;
  readonly ports = 2;
  readonly rawStateBytes = 16;
  frame = 0;
  private s = 1;
  private readonly inputs = [0, 0];
  setInputMask(port: number, mask: number): void {
    this.inputs[port] = mask;
  }
  advance(): void {
    this.s = (Math.imul(this.s, 31) + this.inputs[0]! * 7 + this.inputs[1]! * 13 + 1) >>> 0;
    this.frame++;
  }
  saveRawInto(t: Uint8Array): number {
    new DataView(t.buffer, t.byteOffset).setUint32(0, this.s);
    if (this.frame === 0) {
      t.fill(0xee, 4, 12);
      return 12;
    }
    return 4;
  }
  loadRaw(state: Uint8Array, frame: number): void {
    if (state.length < 4) throw new Error('short');
    this.s = new DataView(state.buffer, state.byteOffset).getUint32(0);
    this.frame = frame;
  }
}

it('zlibStored is a zlib stream that inflates back to the data (any size, several blocks)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 140_000 }), (data) => {
      expect(inflate(zlibStored(data))).toEqual(data);
    }),
    { numRuns: 20 },
  );
});

describe('RetroArchEmulatingHost with a sans-I/O client', () => {
  function setup(checkFrames = 4) {
    const core = new MixCore();
    const game = new RetroArchEmulatingHost({ core, checkFrames, localInput: (f) => (f >> 1) & 3 });
    const events: RetroArchClientEvent[] = [];
    const order: string[] = [];
    const client = new RetroArchClient({
      nick: 'c',
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'savestate' || e.type === 'input' || e.type === 'crc') order.push(`${e.type}@${e.frame}`);
      },
    });
    let conn: RetroArchHostConnection;
    const peer = {
      get host() {
        return conn;
      },
      relay: (b: Uint8Array) => conn.relay(b),
    };
    conn = new RetroArchHostConnection({ ...game.hostOptions(), onEvent: (e) => game.onPeerEvent(peer, e) });
    const pump = () => {
      for (let i = 0; i < 20; i++) {
        const a = client.takeOutput();
        if (a !== undefined) conn.receive(a, 0);
        const b = conn.takeOutput();
        if (b !== undefined) client.receive(b, 0);
        if (a === undefined && b === undefined) return;
      }
    };
    return { core, game, client, conn, pump, events, order };
  }

  it('SYNC at the live frame, LOAD_SAVESTATE padded to the power-on size before that frame, CRCs of the padded state', () => {
    const { core, game, client, pump, events, order } = setup();
    game.runUntil(3);
    client.start(0);
    pump();
    expect(client.session?.sync.frame).toBe(3);
    expect(client.session?.hostInfo).toEqual({ contentCrc: 0x1234, coreName: 'Mix', coreVersion: '1 ' });
    game.runUntil(9);
    pump();
    expect(order).toEqual([
      'savestate@3',
      'input@3',
      'input@4',
      'crc@4',
      'input@5',
      'input@6',
      'input@7',
      'input@8',
      'crc@8',
    ]);
    const st = events.find((e) => e.type === 'savestate');
    expect(st?.type === 'savestate' && st.state.length).toBe(12); // padded to the power-on size
    expect(st?.type === 'savestate' && Array.from(st.state.subarray(4))).toEqual(new Array(8).fill(0));
    // CRC@8 is the padded state at the start of frame 8: replay it here.
    const replay = new MixCore();
    for (let f = 0; f < 8; f++) {
      replay.setInputMask(0, (f >> 1) & 3);
      replay.advance();
    }
    const b = new Uint8Array(12);
    replay.saveRawInto(b);
    const crc = events.filter((e) => e.type === 'crc').at(-1);
    expect(crc?.type === 'crc' && crc.crc).toBe(crc32(b));
    expect(core.frame).toBe(9);
  });

  it('waits for the player: frame F runs only with its input, which reaches the core', () => {
    const { core, game, client, pump } = setup(0);
    client.start(0);
    pump();
    client.play();
    pump();
    expect(client.state).toBe('playing'); // MODE at frame 0; the client sent input for 0..2 (lead 2)
    expect(game.runUntil(50)).toBe(3);
    client.setInput([5]);
    pump(); // host frames 0..2 make the client send 3..4
    expect(game.runUntil(50)).toBe(2);
    const replay = new MixCore();
    for (let f = 0; f < 5; f++) {
      replay.setInputMask(0, (f >> 1) & 3);
      replay.setInputMask(1, f >= 3 ? 5 : 0);
      replay.advance();
    }
    const a = new Uint8Array(16);
    const b = new Uint8Array(16);
    core.saveRawInto(a);
    replay.saveRawInto(b);
    expect(a).toEqual(b);
  });

  it('a player that leaves no longer holds the host: frames run on without its input, the seat is free again', () => {
    const { game, client, conn, pump } = setup(0);
    client.start(0);
    pump();
    client.play();
    pump();
    expect(game.playerClient).toBe(1);
    expect(game.runUntil(50)).toBe(3);
    expect(game.runUntil(50)).toBe(0); // waits for the player
    conn.connectionClosed();
    expect(game.playerClient).toBeUndefined();
    expect(game.runUntil(50)).toBe(47);
    expect(game.hostOptions().canPlay?.()).toBe(true);
  });

  it('REQUEST_SAVESTATE: a fresh LOAD_SAVESTATE at the next frame, before its input', () => {
    const { game, client, pump, order } = setup(0);
    client.start(0);
    pump();
    game.runUntil(2);
    pump();
    client.requestSavestate();
    pump();
    expect(game.stats.savestateRequests).toBe(1);
    game.runUntil(4);
    pump();
    expect(order).toEqual(['savestate@0', 'input@0', 'input@1', 'savestate@2', 'input@2', 'input@3']);
  });
});

describe('RetroArchClientEmulator', () => {
  it('checks host CRCs; a desync is counted, asked to repair, and a savestate repairs it', () => {
    const host = new MixCore();
    const core = new MixCore();
    let requests = 0;
    let breakAt = -1;
    const broken: RetroArchCore = Object.assign(Object.create(core) as MixCore, {
      setInputMask: (p: number, m: number) => core.setInputMask(p, core.frame === breakAt ? m | 1 : m),
      advance: () => core.advance(),
      saveRawInto: (t: Uint8Array) => core.saveRawInto(t),
      loadRaw: (s: Uint8Array, f: number) => core.loadRaw(s, f),
    });
    Object.defineProperty(broken, 'frame', { get: () => core.frame });
    const emu = new RetroArchClientEmulator({ core: broken, requestSavestate: () => requests++ });
    const dev = new Array<number>(16).fill(1);
    emu.onClientEvent({
      type: 'synced',
      session: {
        header: { sender: 'host', magic: 0, platform: 0, compression: 1, salt: 0, protocol: 6, implementation: 0 },
        hostNick: 'h',
        hostInfo: { contentCrc: 0, coreName: 'Mix', coreVersion: '' },
        sync: {
          type: 'sync',
          frame: 0,
          paused: false,
          client: 1,
          devices: dev,
          shareModes: new Array<number>(16).fill(0),
          deviceClients: [1, ...new Array<number>(15).fill(0)],
          nick: 'c',
          sram: new Uint8Array(0),
        },
      },
    } as unknown as RetroArchClientEvent);
    const pad = new Uint8Array(12);
    const state = (): Uint8Array => {
      pad.fill(0);
      host.saveRawInto(pad);
      return pad.slice();
    };
    emu.onClientEvent({ type: 'savestate', frame: 0, state: state() });
    const words = new Uint32Array(1);
    const run = (to: number) => {
      while (host.frame < to) {
        const f = host.frame;
        if (f % 10 === 0) emu.onClientEvent({ type: 'crc', frame: f, crc: crc32(state()) });
        words[0] = f % 3;
        emu.onClientEvent({ type: 'input', frame: f, client: 0, words });
        host.setInputMask(0, f % 3);
        host.advance();
      }
    };
    run(31);
    expect(emu.stats).toMatchObject({ crcsChecked: 4, crcMismatches: 0, savestateRequests: 0 });
    breakAt = 33;
    run(51);
    expect(emu.stats).toMatchObject({ crcsChecked: 6, crcMismatches: 2, savestateRequests: 1 });
    emu.onClientEvent({ type: 'savestate', frame: 51, state: state() });
    run(81);
    expect(emu.stats).toMatchObject({ crcsChecked: 9, crcMismatches: 2, savestateRequests: 1, savestatesLoaded: 2 });
    expect(emu.frame).toBe(81);
  });
});

/** MixCore plus a turbo button (bit 9) whose pulse counts `advance` calls outside the state, like Nestopia's wrapper. */
class TurboCore extends MixCore {
  private runs = 0;
  private pressed = 0;
  override setInputMask(port: number, mask: number): void {
    this.pressed = port === 0 ? mask & (1 << 9) : this.pressed;
    super.setInputMask(
      port,
      port === 0 && this.pressed !== 0 && this.runs % 3 === 0 ? (mask & ~(1 << 9)) | 1 : mask & ~(1 << 9),
    );
  }
  override advance(): void {
    this.runs++;
    super.advance();
  }
}

describe('RetroArchClientEmulator and state outside the savestate (turbo)', () => {
  /** Host and client TurboCores, the client `lead` advances ahead; turbo held every other 5 frames; CRC every 10 frames; a request is answered at the next frame. */
  function run(lead: number, shiftOnRepair: boolean | undefined, frames = 300) {
    const host = new TurboCore();
    const core = new TurboCore();
    for (let i = 0; i < lead; i++) core.advance();
    let requested = false;
    const mismatches: number[] = [];
    const emu = new RetroArchClientEmulator({
      core,
      requestSavestate: () => {
        requested = true;
      },
      onEvent: (e) => {
        if (e.type === 'crcChecked' && e.host !== e.ours) mismatches.push(e.frame);
      },
      ...(shiftOnRepair === undefined ? {} : { shiftOnRepair }),
    });
    emu.onClientEvent({
      type: 'synced',
      session: { sync: { frame: 0, client: 1, deviceClients: [1, ...new Array<number>(15).fill(0)] } },
    } as unknown as RetroArchClientEvent);
    const pad = new Uint8Array(12);
    const state = (): Uint8Array => {
      pad.fill(0);
      host.saveRawInto(pad);
      return pad.slice();
    };
    emu.onClientEvent({ type: 'savestate', frame: 0, state: state() });
    const words = new Uint32Array(1);
    while (host.frame < frames) {
      const f = host.frame;
      if (requested) {
        requested = false;
        emu.onClientEvent({ type: 'savestate', frame: f, state: state() });
      }
      if (f % 10 === 0) emu.onClientEvent({ type: 'crc', frame: f, crc: crc32(state()) });
      words[0] = Math.floor(f / 5) % 2 === 1 ? 1 << 9 : 0;
      emu.onClientEvent({ type: 'input', frame: f, client: 0, words });
      host.setInputMask(0, words[0]);
      host.advance();
    }
    return { mismatches, stats: emu.stats };
  }

  it('in phase: no mismatch', () => {
    for (const lead of [0, 3, 6]) expect(run(lead, true).mismatches).toEqual([]);
  });

  it('out of phase: without shiftOnRepair every savestate is broken again; with it (the default) at most 2 repairs', () => {
    for (const lead of [1, 2]) {
      const off = run(lead, false);
      expect(off.mismatches.length).toBeGreaterThan(20); // of 29 checks after frame 0
      expect(off.mismatches.at(-1)).toBeGreaterThanOrEqual(280);
      const on = run(lead, undefined);
      expect(on.mismatches.length).toBe(lead === 2 ? 1 : 2);
      expect(on.stats.repairShifts).toBe(on.mismatches.length);
      expect(on.mismatches.at(-1)).toBeLessThan(40);
    }
  });
});
