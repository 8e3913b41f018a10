/** Where a command writes, so tests can run commands in-process and capture their output. */
export interface CliIo {
  /** Writes to standard output (no newline added). */
  out(text: string): void;
  /** Writes to standard error (no newline added). */
  err(text: string): void;
  /** Whether standard output is a terminal (live redraws); otherwise a few snapshots are printed. */
  readonly live: boolean;
  /** Aborted on Ctrl-C (or by a test) to stop a long command early. */
  readonly signal?: AbortSignal;
}

/** The process's standard streams. */
export function processIo(signal?: AbortSignal): CliIo {
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    live: process.stdout.isTTY === true,
    ...(signal !== undefined ? { signal } : {}),
  };
}

/** Collects output in memory (tests). */
export function memoryIo(signal?: AbortSignal): CliIo & { readonly stdout: string[]; readonly stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (t) => void stdout.push(t),
    err: (t) => void stderr.push(t),
    live: false,
    ...(signal !== undefined ? { signal } : {}),
  };
}
