/**
 * Manual interoperability check against a real, headless RetroArch host on loopback (not part of
 * `npm test`: it needs `apt-get install retroarch libretro-nestopia` and the `efp` ROM). Set up as
 * `shared/interop/RETROARCH.md` describes. It joins the host with this package's codecs only:
 * header, NICK, (PASSWORD), INFO, then SYNC, settings, LOAD_SAVESTATE and per-frame INPUT / NOINPUT /
 * CRC; asks to PLAY, plays for a few seconds, sends a PLAYER_CHAT and checks the host relays it,
 * answers pings, re-encodes every message the host sent and compares it with the wire bytes, then sends an unknown command (RetroArch skips it and stays connected) and a CRC of
 * the wrong size (RetroArch answers NAK and hangs up). A second
 * run checks a password-protected host accepts the right hash and drops a wrong one. A third puts a
 * proxy between a real RetroArch host and a real RetroArch client that decodes every frame both
 * ways and forwards only the re-encoded bytes.
 *
 * Run: node --conditions=@netplay/source --import tsx test/interop/retroarch-live.ts
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeRetroArchHeader,
  decodeRetroArchPayload,
  encodeRetroArchHeader,
  encodeRetroArchInput,
  encodeRetroArchMessage,
  encodeRetroArchMessageToBytes,
  FrameDecoder,
  RetroArchHeaderMagic,
  type RetroArchMessage,
  type RetroArchSender,
  retroArchClientHeader,
  retroArchMessageSize,
  retroArchPasswordHash,
} from '../../src/index.js';

const CORE = '/usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so';
const INFO = '/usr/share/libretro/info/nestopia_libretro.info';

function check(cond: boolean, what: string): void {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) process.exitCode = 1;
}

function setup(password: string): { dir: string; rom: string; cfg: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ra-live-'));
  const info = join(dir, 'info');
  mkdirSync(info);
  writeFileSync(
    join(info, 'nestopia_libretro.info'),
    readFileSync(INFO, 'utf8').replace(/savestate_features = "serialized"/, 'savestate_features = "deterministic"'),
  );
  const romDir = '/tmp/ra-live-rom';
  if (!existsSync(join(romDir, 'usr/share/nes/efp.nes'))) {
    mkdirSync(romDir, { recursive: true });
    spawnSync('sh', ['-c', `cd ${romDir} && apt-get download efp && dpkg-deb -x efp_*.deb .`], { stdio: 'inherit' });
  }
  const rom = join(dir, 'efp.nes');
  copyFileSync(join(romDir, 'usr/share/nes/efp.nes'), rom);
  for (const d of ['saves', 'states', 'system']) mkdirSync(join(dir, d));
  const off = (k: string) => `${k} = "false"`;
  const cfg = join(dir, 'host.cfg');
  writeFileSync(
    cfg,
    [
      ...['video', 'audio', 'input', 'input_joypad', 'menu', 'camera', 'location', 'midi', 'record', 'wifi'].map(
        (d) => `${d}_driver = "null"`,
      ),
      'vrr_runloop_enable = "true"',
      'config_save_on_exit = "false"',
      ...[
        'netplay_public_announce',
        'netplay_use_mitm_server',
        'netplay_nat_traversal',
        'cheevos_enable',
        'network_cmd_enable',
        'discord_allow',
      ].map(off),
      'core_updater_buildbot_cores_url = "http://127.0.0.1:9/"',
      'core_updater_buildbot_assets_url = "http://127.0.0.1:9/"',
      'netplay_check_frames = "30"',
      'netplay_nickname = "rahost"',
      `netplay_password = "${password}"`,
      `libretro_info_path = "${info}"`,
      'libretro_directory = "/usr/lib/x86_64-linux-gnu/libretro"',
      `savefile_directory = "${join(dir, 'saves')}"`,
      `savestate_directory = "${join(dir, 'states')}"`,
      `system_directory = "${join(dir, 'system')}"`,
      '',
    ].join('\n'),
  );
  return { dir, rom, cfg };
}

async function startHost(port: number, password: string) {
  const { dir, rom, cfg } = setup(password);
  const child = spawn(
    'timeout',
    ['60', 'retroarch', '-c', cfg, '-v', '-L', CORE, '--host', '--port', String(port), rom],
    {
      env: { ...process.env, HOME: dir },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  for (let i = 0; i < 100; i++) {
    const ss = spawnSync('ss', ['-ltn'], { encoding: 'utf8' }).stdout;
    if (ss.includes(`:${port} `)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('RetroArch did not start listening');
}

/** A client session over one socket, using only this package's codecs. */
class Client {
  private readonly decoder = new FrameDecoder();
  private readonly waiters: (() => void)[] = [];
  readonly received: RetroArchMessage[] = [];
  header: ReturnType<typeof decodeRetroArchHeader> | undefined;
  closed = false;
  reencoded = 0;
  readonly mismatches: string[] = [];
  private readonly out = new Uint8Array(1 << 16);

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Uint8Array) => {
      this.decoder.push(chunk);
      if (this.header === undefined) {
        const raw = this.decoder.readRaw(24);
        if (raw === undefined) return;
        this.header = decodeRetroArchHeader(raw, 'host');
        const again = new Uint8Array(24);
        encodeRetroArchHeader(this.header, again);
        if (again.some((b, i) => b !== raw[i])) this.mismatches.push('header');
      }
      while (this.decoder.readFrame()) {
        const d = this.decoder;
        const m = decodeRetroArchPayload(d.command, d.bytes, d.payloadOffset, d.payloadLength, 'host');
        this.received.push(m);
        // Real RetroArch bytes must re-encode identically.
        const wire = d.bytes.slice(d.payloadOffset - 8, d.payloadOffset + d.payloadLength);
        if (m.type === 'playerChat') {
          // RetroArch 1.14 sends the chat nick with uninitialised stack bytes after its NUL
          // (observed); compare the canonical form, NUL-padded with zeros.
          const nul = wire.subarray(8, 40).indexOf(0);
          if (nul >= 0) wire.fill(0, 8 + nul, 40);
        }
        const again = encodeRetroArchMessageToBytes(m);
        this.reencoded++;
        if (again.length !== wire.length || again.some((b, i) => b !== wire[i])) {
          this.mismatches.push(m.type);
          console.log('     wire ', Buffer.from(wire).toString('hex'));
          console.log('     again', Buffer.from(again).toString('hex'));
        }
      }
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('error', () => undefined);
  }

  send(m: RetroArchMessage): void {
    const n = encodeRetroArchMessage(m, this.out, 0);
    if (n !== retroArchMessageSize(m)) throw new Error('size mismatch');
    this.socket.write(this.out.slice(0, n));
  }

  sendRaw(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Waits until `pred` holds for the received messages (or the socket closes / times out). */
  async until(pred: () => boolean, ms = 5000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (this.closed || Date.now() > deadline) return pred();
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
    return true;
  }

  find<T extends RetroArchMessage['type']>(type: T): Extract<RetroArchMessage, { type: T }> | undefined {
    return this.received.find((m) => m.type === type) as Extract<RetroArchMessage, { type: T }> | undefined;
  }
}

async function join_(port: number, password: string | undefined): Promise<Client> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  const c = new Client(socket);
  const h = new Uint8Array(24);
  encodeRetroArchHeader(retroArchClientHeader(), h);
  c.sendRaw(h);
  c.send({ type: 'nick', nick: 'netplay-ts' });
  await c.until(() => c.header !== undefined);
  if (password !== undefined && c.header?.sender === 'host') {
    c.send({ type: 'password', hash: retroArchPasswordHash(c.header.salt, password) });
  }
  return c;
}

const WORDS_OF_DEVICE: Record<number, number> = { 1: 1, 2: 2, 3: 5, 4: 2, 5: 3 };

async function session(port: number): Promise<void> {
  const host = await startHost(port, '');
  try {
    const c = await join_(port, undefined);
    const h = c.header;
    check(h?.sender === 'host' && h.magic === RetroArchHeaderMagic.Ranp, 'host header decodes as RANP');
    check(h?.sender === 'host' && h.protocol === 6 && h.salt === 0, 'host chose protocol 6, no salt');
    check(await c.until(() => c.find('nick') !== undefined), 'host NICK decodes');
    check(await c.until(() => c.find('info') !== undefined), 'host INFO decodes');
    const info = c.find('info');
    console.log('     INFO', info);
    if (info) c.send(info);
    check(await c.until(() => c.find('sync') !== undefined), 'SYNC decodes');
    const sync = c.find('sync');
    console.log('     SYNC', sync && { ...sync, sram: `${sync.sram.length} bytes` });
    check(await c.until(() => c.find('settingInputLatencyFrames') !== undefined), 'settings decode');
    check(await c.until(() => c.find('loadSavestate') !== undefined), 'LOAD_SAVESTATE decodes');
    check(
      await c.until(() => c.received.some((m) => m.type === 'input' || m.type === 'noInput')),
      'per-frame INPUT / NOINPUT decode',
    );

    c.send({ type: 'play', slave: false, shareMode: 0, devices: 0 });
    check(await c.until(() => c.find('mode') !== undefined || c.find('modeRefused') !== undefined), 'PLAY answered');
    const mode = c.find('mode');
    console.log('     MODE', mode);
    if (mode?.you && mode.playing && sync) {
      let words = 0;
      for (let d = 0; d < 16; d++) if (mode.devices & (1 << d)) words += WORDS_OF_DEVICE[sync.devices[d]! & 0xff] ?? 1;
      const input = new Uint32Array(words);
      let next = mode.frame;
      const buf = new Uint8Array(64);
      let sent = 0;
      let hostFrame = mode.frame;
      const tick = setInterval(() => {
        for (const m of c.received.splice(0, c.received.length)) {
          keep.push(m);
          if ((m.type === 'input' || m.type === 'noInput') && m.frame > hostFrame) hostFrame = m.frame;
          if (m.type === 'pingRequest') c.send({ type: 'pingResponse' });
        }
        // Keep our input up with the host's frames (plus a small lead), as a player must.
        while (next <= hostFrame + 2) {
          const n = encodeRetroArchInput(buf, 0, next++, mode.client, input);
          c.sendRaw(buf.slice(0, n));
          sent++;
        }
      }, 2);
      const keep: RetroArchMessage[] = [];
      await new Promise((r) => setTimeout(r, 3000));
      c.send({ type: 'playerChat', text: 'hello from netplay-ts' });
      await new Promise((r) => setTimeout(r, 1000));
      clearInterval(tick);
      keep.push(...c.received.splice(0, c.received.length));
      const counts: Record<string, number> = {};
      for (const m of keep) counts[m.type] = (counts[m.type] ?? 0) + 1;
      console.log(`     sent ${sent} INPUT frames; received`, counts);
      check(!keep.some((m) => m.type === 'nak') && !c.closed, 'playing: no NAK, still connected');
      check((counts.input ?? 0) > 100, 'playing: host INPUT frames keep coming');
      const chat = keep.find((m) => m.type === 'playerChat');
      console.log('     CHAT', chat);
      check(chat?.type === 'playerChat' && chat.text === 'hello from netplay-ts', 'PLAYER_CHAT relayed (host layout)');
      check((counts.crc ?? 0) > 0, 'CRC messages decode');
    }
    console.log(`     re-encoded ${c.reencoded} host frames and the header; mismatches:`, c.mismatches);
    check(c.reencoded > 100 && c.mismatches.length === 0, 'every real host message re-encodes to its exact bytes');
    c.received.length = 0;
    c.sendRaw(Uint8Array.of(0, 0, 0x77, 0x77, 0, 0, 0, 2, 0xab, 0xcd)); // an unknown command, 2-byte payload
    await c.until(() => c.closed, 1500);
    check(!c.closed && c.find('nak') === undefined, 'unknown command: RetroArch skips it (no NAK, still connected)');
    c.sendRaw(Uint8Array.of(0, 0, 0, 0x40, 0, 0, 0, 4, 0, 0, 0, 1)); // CRC with a 4-byte payload (bad length)
    check(await c.until(() => c.find('nak') !== undefined || c.closed, 3000), 'bad-length CRC: NAK / hang-up');
    console.log('     after the bad CRC:', [...new Set(c.received.map((m) => m.type))], 'closed:', c.closed);
    c.socket.destroy();
  } finally {
    host.kill();
  }
}

async function passwords(port: number): Promise<void> {
  const host = await startHost(port, 'sesame');
  try {
    const good = await join_(port, 'sesame');
    check(good.header?.sender === 'host' && good.header.salt !== 0, 'password host sends a salt');
    check(await good.until(() => good.find('info') !== undefined), 'right password → INFO');
    good.socket.destroy();
    const bad = await join_(port, 'wrong');
    check(await bad.until(() => bad.closed || bad.find('info') !== undefined, 4000), 'wrong password answered');
    check(bad.find('info') === undefined, 'wrong password → no INFO (dropped)');
    bad.socket.destroy();
  } finally {
    host.kill();
  }
}

/**
 * A real RetroArch client joins a real RetroArch host through a proxy that decodes every frame in
 * both directions with this package and forwards only the re-encoded bytes: the session works only
 * if every message our encoders write is one RetroArch accepts.
 */
async function proxy(hostPort: number, proxyPort: number): Promise<void> {
  const host = await startHost(hostPort, '');
  const counts = { client: {} as Record<string, number>, host: {} as Record<string, number> };
  let closedEarly = false;
  const server = createServer((down) => {
    const up = connect(hostPort, '127.0.0.1');
    const pipe = (from: Socket, to: Socket, sender: RetroArchSender) => {
      const decoder = new FrameDecoder();
      let header = false;
      from.on('data', (chunk: Uint8Array) => {
        decoder.push(chunk);
        if (!header) {
          const raw = decoder.readRaw(24);
          if (raw === undefined) return;
          const out = new Uint8Array(24);
          encodeRetroArchHeader(decodeRetroArchHeader(raw, sender), out);
          to.write(out);
          header = true;
        }
        while (decoder.readFrame()) {
          const m = decodeRetroArchPayload(
            decoder.command,
            decoder.bytes,
            decoder.payloadOffset,
            decoder.payloadLength,
            sender,
          );
          counts[sender][m.type] = (counts[sender][m.type] ?? 0) + 1;
          to.write(encodeRetroArchMessageToBytes(m));
        }
      });
      from.on('close', () => {
        closedEarly = true;
        to.destroy();
      });
      from.on('error', () => undefined);
    };
    pipe(down, up, 'client');
    pipe(up, down, 'host');
  });
  await new Promise<void>((r) => server.listen(proxyPort, '127.0.0.1', () => r()));
  const { dir, rom, cfg } = setup('');
  writeFileSync(
    cfg,
    `${readFileSync(cfg, 'utf8')}netplay_nickname = "raclient"\nnetplay_start_as_spectator = "false"\n`,
  );
  const client = spawn(
    'timeout',
    ['60', 'retroarch', '-c', cfg, '-v', '-L', CORE, '--connect', '127.0.0.1', '--port', String(proxyPort), rom],
    { env: { ...process.env, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  client.stdout.on('data', (d: Buffer) => (log += d.toString()));
  client.stderr.on('data', (d: Buffer) => (log += d.toString()));
  try {
    await new Promise((r) => setTimeout(r, 8000));
    console.log('     client → host', counts.client);
    console.log('     host → client', counts.host);
    check(!closedEarly, 'proxied session still connected after 8 s');
    check((counts.client.input ?? 0) > 100, 'the real client plays through re-encoded frames');
    check((counts.host.mode ?? 0) > 0 && (counts.host.loadSavestate ?? 0) > 0, 'host sent MODE and LOAD_SAVESTATE');
    check(!counts.client.nak && !counts.host.nak, 'no NAK either way');
    const netplayErrors = log.split('\n').filter((l) => l.includes('[ERROR] [Netplay]'));
    check(
      netplayErrors.length === 0,
      `client log has no netplay errors${netplayErrors.length ? `: ${netplayErrors[0]}` : ''}`,
    );
  } finally {
    client.kill();
    host.kill();
    server.close();
  }
}

await session(55441);
await passwords(55442);
await proxy(55443, 55444);
