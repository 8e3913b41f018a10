import { RECORD_USAGE, runRecordCommand } from '@netplay/retroarch/node';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { CliIo } from '../io.js';

/** In-process hooks for tests. */
export interface RecordDeps {
  /** Replaces @netplay/retroarch's recorder (tests). */
  readonly run?: typeof runRecordCommand;
}

/**
 * `netplay record HOST:PORT --out FILE [--frames N --nick NICK --password PW --timeout S]`:
 * spectates a RetroArch 1.14 host and writes its input log (JSON lines; see @netplay/retroarch's
 * README). Exit codes: 0 recorded, 2 usage, 4 connection or session failure before N frames.
 */
export async function recordCommand(argv: readonly string[], io: CliIo, deps: RecordDeps = {}): Promise<ExitCodeValue> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(`usage: ${RECORD_USAGE}\n`);
    return ExitCode.Ok;
  }
  const code = await (deps.run ?? runRecordCommand)(argv, (line) => io.err(`${line}\n`));
  return code === 0 ? ExitCode.Ok : code === 2 ? ExitCode.Usage : ExitCode.Network;
}
