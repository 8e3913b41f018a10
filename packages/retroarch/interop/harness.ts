/**
 * A headless RetroArch 1.14 on loopback for the interop tests, set up as
 * `shared/interop/RETROARCH.md` describes (null drivers, patched core info, temp HOME). Every
 * process runs under `timeout` and is ended by its own PID.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CORE_DIR = '/usr/lib/x86_64-linux-gnu/libretro';
export const CORE = join(CORE_DIR, 'nestopia_libretro.so');
const CORE_INFO = '/usr/share/libretro/info/nestopia_libretro.info';

/** The efp ROM: `$NETPLAY_EFP_ROM`, else where `.ci/setup-retroarch.sh` unpacks it. */
export function efpRom(): string {
  const rom =
    process.env.NETPLAY_EFP_ROM ?? join(process.env.NETPLAY_EFP_DIR ?? '/tmp/netplay-efp', 'usr/share/nes/efp.nes');
  if (!existsSync(rom)) throw new Error(`no efp ROM at ${rom}: run .ci/setup-retroarch.sh`);
  return rom;
}

/** A running RetroArch process and its log. */
export interface RetroArchProcess {
  readonly child: ChildProcess;
  readonly dir: string;
  log(): string;
  /** Ends the process by its PID and removes its temp HOME. */
  stop(): Promise<void>;
}

export interface RetroArchConfig {
  readonly nick: string;
  readonly password?: string;
  readonly checkFrames?: number;
  readonly extra?: readonly string[];
}

function writeConfig(dir: string, c: RetroArchConfig): { cfg: string; rom: string } {
  const info = join(dir, 'info');
  mkdirSync(info);
  writeFileSync(
    join(info, 'nestopia_libretro.info'),
    readFileSync(CORE_INFO, 'utf8').replace(
      /savestate_features = "serialized"/,
      'savestate_features = "deterministic"',
    ),
  );
  for (const d of ['saves', 'states', 'system']) mkdirSync(join(dir, d));
  const rom = join(dir, 'efp.nes');
  copyFileSync(efpRom(), rom);
  const cfg = join(dir, 'retroarch.cfg');
  const off = (k: string) => `${k} = "false"`;
  // RetroArch keeps the first of two lines with one key: a key in `extra` replaces the default.
  const key = (line: string) => line.split('=')[0]!.trim();
  const overridden = new Set((c.extra ?? []).map(key));
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
      `netplay_check_frames = "${c.checkFrames ?? 600}"`,
      `netplay_nickname = "${c.nick}"`,
      `netplay_password = "${c.password ?? ''}"`,
      `libretro_info_path = "${info}"`,
      `libretro_directory = "${CORE_DIR}"`,
      `savefile_directory = "${join(dir, 'saves')}"`,
      `savestate_directory = "${join(dir, 'states')}"`,
      `system_directory = "${join(dir, 'system')}"`,
    ]
      .filter((line) => !overridden.has(key(line)))
      .concat(c.extra ?? [], '')
      .join('\n'),
  );
  return { cfg, rom };
}

function listening(port: number): boolean {
  const ss = spawnSync('ss', ['-ltn'], { encoding: 'utf8' }).stdout ?? '';
  return ss.split('\n').some((l) => new RegExp(`[:\\]]${port}\\s`).test(l));
}

/** Waits until something listens on `port` (polling `ss -ltn`). */
export async function waitForPort(port: number, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!listening(port)) {
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function run(args: string[], c: RetroArchConfig, seconds: number): RetroArchProcess {
  const dir = mkdtempSync(join(tmpdir(), 'netplay-ra-'));
  const { cfg, rom } = writeConfig(dir, c);
  const child = spawn('timeout', [String(seconds), 'retroarch', '-c', cfg, '-v', '-L', CORE, ...args, rom], {
    env: { ...process.env, HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    dir,
    log: () => log,
    stop: async () => {
      const pid = child.pid;
      if (child.exitCode === null && child.signalCode === null && pid !== undefined) {
        // End RetroArch itself (the child of `timeout`) and `timeout`, each by its own PID.
        const kids = (spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout ?? '')
          .split('\n')
          .map((l) => Number(l.trim()))
          .filter((n) => n > 0);
        const signal = (sig: NodeJS.Signals) => {
          for (const k of [...kids, pid]) {
            try {
              process.kill(k, sig);
            } catch {
              // already gone
            }
          }
        };
        signal('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        signal('SIGKILL');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 1000))]);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a headless RetroArch host on `port` and waits for its listening socket. */
export async function startHost(port: number, c: RetroArchConfig, seconds = 60): Promise<RetroArchProcess> {
  const p = run(['--host', '--port', String(port)], c, seconds);
  try {
    await waitForPort(port);
  } catch (e) {
    await p.stop();
    throw e;
  }
  return p;
}

/**
 * Starts a headless RetroArch host without waiting for a listening socket: a host configured for a
 * tunnel relay (`extra` with `netplay_use_mitm_server`) connects out instead of listening.
 */
export function startHostUnwaited(port: number, c: RetroArchConfig, seconds = 60): RetroArchProcess {
  return run(['--host', '--port', String(port)], c, seconds);
}

/** Starts a headless RetroArch client joining 127.0.0.1:`port`. */
export function startClient(port: number, c: RetroArchConfig, seconds = 60): RetroArchProcess {
  return run(['--connect', '127.0.0.1', '--port', String(port)], c, seconds);
}

/** Resolves when `pred` holds, polling every 20 ms; rejects after `ms`. */
export async function until(pred: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
