import { fileURLToPath } from 'node:url';
import type { FinalStates } from '../src/agreement.js';
import { runCli } from '../src/cli.js';
import { memoryIo } from '../src/io.js';

/** The embedded Space Racer ROM. */
export const spaceRacer = fileURLToPath(new URL('../assets/spaceracer.ch8', import.meta.url));

/** Starts `netplay host --bot` in-process on a free loopback port; resolves the port once it listens. */
export function startHost(args: string[], seconds: number) {
  const io = memoryIo();
  let finals: FinalStates | undefined;
  let resolvePort: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => {
    resolvePort = resolve;
  });
  const done = runCli(
    ['host', '--rom', spaceRacer, '--bind', '127.0.0.1', '--port', '0', '--bot', '--seconds', String(seconds), ...args],
    io,
    { host: { onListening: resolvePort, onFinals: (f) => (finals = f) } },
  );
  done.then(() => resolvePort(-1));
  return { io, port, done, finals: () => finals };
}

/** Runs `netplay join 127.0.0.1:PORT ARGS` in-process. */
export function join_(port: number, args: string[]) {
  const io = memoryIo();
  let finals: FinalStates | undefined;
  const done = runCli(['join', `127.0.0.1:${port}`, ...args], io, { join: { onFinals: (f) => (finals = f) } });
  return { io, done, finals: () => finals };
}

/** Waits until `io` printed text matching `re` (every one of them, if several) (bounded). */
export async function printed(
  io: { stdout: string[] },
  re: RegExp | readonly RegExp[],
  timeoutMs = 15_000,
): Promise<void> {
  const all = re instanceof RegExp ? [re] : re;
  const until = Date.now() + timeoutMs;
  while (!all.every((r) => r.test(io.stdout.join('')))) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${all.join(' and ')}: ${io.stdout.join('')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
