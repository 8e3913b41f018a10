import { createWriteStream, openSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { RetroArchError } from './errors.js';
import { connectRetroArch } from './node.js';
import { RetroArchRecorder } from './recorder.js';

/** Usage of {@link runRecordCommand}. */
export const RECORD_USAGE =
  'netplay record HOST:PORT --out FILE [--frames N] [--nick NICK] [--password PASSWORD] [--timeout SECONDS]';

/**
 * `netplay record HOST:PORT --out FILE --frames N`: spectates a RetroArch 1.14 host and writes its
 * input log (JSON lines, see the README) to FILE until N frames (default 600) were recorded or
 * `--timeout` seconds (default 60) passed, then disconnects cleanly.
 * @param argv the arguments after `record`.
 * @param log where progress lines go (default stderr).
 * @returns the process exit code: 0 when the frames were recorded, 1 on a session error or
 *   timeout, 2 on bad arguments (an `--out` path that cannot be written included).
 */
export async function runRecordCommand(
  argv: readonly string[],
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    log(`${e instanceof Error ? e.message : String(e)}\nusage: ${RECORD_USAGE}`);
    return 2;
  }
  const { host, port, out, frames, nick, password, timeout } = parsed;
  // Open the output before connecting, so an unwritable path fails at once with a clear message
  // (and a write error later is reported, never left unhandled).
  let fd: number;
  try {
    fd = openSync(out, 'w');
  } catch (e) {
    log(`cannot write ${out}: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  let writeError: Error | undefined;
  const file = createWriteStream('', { fd });
  file.on('error', (e) => {
    writeError ??= e;
  });
  const recorder = new RetroArchRecorder((line) => file.write(`${line}\n`), frames);
  let finished = false;
  const conn = await connectRetroArch({
    host,
    port,
    nick,
    ...(password === undefined ? {} : { password }),
    onEvent: (e) => {
      recorder.onEvent(e);
      if (recorder.done && !finished) {
        finished = true;
        queueMicrotask(() => conn?.close());
      }
    },
  }).catch((e: unknown) => {
    log(`cannot connect to ${host}:${port}: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  });
  if (conn === undefined) {
    file.end();
    return 1;
  }
  const timer = setTimeout(() => conn.close(), timeout * 1000);
  const error = await conn.closed;
  clearTimeout(timer);
  recorder.end();
  await new Promise<void>((r) => file.end(() => r()));
  if (writeError !== undefined) {
    log(`writing ${out} failed: ${writeError.message}`);
    return 1;
  }
  if (recorder.recordedFrames >= frames) {
    log(`recorded ${recorder.recordedFrames} frames to ${out}`);
    return 0;
  }
  log(`recorded only ${recorder.recordedFrames} of ${frames} frames${error ? `: ${error.message}` : ' (timeout)'}`);
  return 1;
}

function parse(argv: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      frames: { type: 'string', default: '600' },
      nick: { type: 'string', default: 'netplay-rec' },
      password: { type: 'string' },
      timeout: { type: 'string', default: '60' },
    },
  });
  if (positionals.length !== 1) throw new RetroArchError('state', 'expected one HOST:PORT');
  const m = /^(.+):(\d{1,5})$/.exec(positionals[0]!);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port < 1 || port > 65535) throw new RetroArchError('state', `bad HOST:PORT ${positionals[0]}`);
  if (values.out === undefined) throw new RetroArchError('state', '--out FILE is required');
  const frames = Number(values.frames);
  const timeout = Number(values.timeout);
  if (!Number.isInteger(frames) || frames < 1) throw new RetroArchError('state', `bad --frames ${values.frames}`);
  if (!(timeout > 0)) throw new RetroArchError('state', `bad --timeout ${values.timeout}`);
  return {
    host: m[1]!,
    port,
    out: values.out,
    frames,
    nick: values.nick,
    password: values.password,
    timeout,
  };
}
