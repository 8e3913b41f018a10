// Entry point of the netplay command.
import { runCli } from './cli.js';
import { ExitCode } from './exit-codes.js';
import { processIo } from './io.js';

const abort = new AbortController();
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(ExitCode.Interrupted);
  interrupted = true;
  abort.abort();
});

try {
  const stdin = process.stdin.isTTY ? process.stdin : undefined;
  const code = await runCli(
    process.argv.slice(2),
    processIo(abort.signal),
    stdin ? { host: { stdin }, join: { stdin }, demo: { stdin } } : {},
  );
  process.exitCode = interrupted && code === ExitCode.Ok ? ExitCode.Interrupted : code;
} catch (e) {
  process.stderr.write(`netplay: internal error: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = ExitCode.Internal;
}
// The command is over: a socket still lingering (waiting for a close acknowledgement) must not
// keep the process alive for its whole timeout.
setTimeout(() => process.exit(), 1000).unref();
