import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cwd = fileURLToPath(new URL('..', import.meta.url));

/** A CLI child process (from the sources through tsx), with its output so far. */
export interface Child {
  readonly process: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the exit code (null when killed by a signal); rejects after the timeout (the child is killed by PID). */
  readonly exit: Promise<number | null>;
  /** Resolves once stdout matches `re` (rejects after `timeoutMs`). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** SIGKILL by PID. */
  kill(): void;
}

/** Spawns `netplay ARGS`, bounded by `timeoutMs` (killed by PID then). */
export function spawnCli(args: readonly string[], timeoutMs = 40_000): Child {
  const child = spawn(process.execPath, ['--conditions=@netplay/source', '--import', 'tsx', 'src/main.ts', ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const kill = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const exit = new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`netplay ${args.join(' ')} timed out; stdout: ${stdout} stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  exit.catch(() => {});
  return {
    process: child,
    stdout: () => stdout,
    stderr: () => stderr,
    exit,
    kill,
    async waitFor(re, ms = 20_000) {
      const until = Date.now() + ms;
      for (;;) {
        const m = re.exec(stdout);
        if (m) return m;
        if (Date.now() > until || child.exitCode !== null)
          throw new Error(`no ${re} from netplay ${args.join(' ')}; stdout: ${stdout} stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
}

/**
 * How long a `netplay` process takes to start (node, tsx, the CLI's modules) and exit on this
 * machine now (`netplay join --help`), in ms. A host that plays a fixed `--seconds` from its start
 * must hold the start-up of the processes that join it, which is the machine's, not the session's:
 * tests size it with {@link hostSeconds} from this (a fixed 7-8 s ran out before a join started
 * on a loaded machine).
 */
export async function startupMs(): Promise<number> {
  const t0 = Date.now();
  const c = spawnCli(['join', '--help'], 60_000);
  const code = await c.exit;
  if (code !== 0) throw new Error(`netplay join --help exited ${code}: ${c.stderr()}`);
  return Date.now() - t0;
}

/** Seconds a host plays from its start to hold `playSeconds` of play and `startups` process start-ups of `startup` ms. */
export function hostSeconds(playSeconds: number, startup: number, startups = 2): number {
  return Math.ceil(playSeconds + (startups * startup) / 1000);
}
