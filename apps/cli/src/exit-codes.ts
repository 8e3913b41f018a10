/**
 * The exit codes of the `netplay` command, in one place (the README's table lists them).
 */
export const ExitCode = {
  /** Success: the run finished, the check held. */
  Ok: 0,
  /** The check failed: SyncTest found a desync, or the demo's peers disagree on the final state. */
  CheckFailed: 1,
  /** Bad command line (unknown command or option, bad value). */
  Usage: 2,
  /** The ROM is missing, unreadable, empty or refused by the core. */
  BadRom: 3,
  /** Network: the port is busy, the host cannot be reached, or the connection failed. */
  Network: 4,
  /** The host refused the password. */
  PasswordRefused: 5,
  /** The host speaks another session protocol version (or is not a netplay host). */
  VersionMismatch: 6,
  /** The host is full. */
  Full: 7,
  /** A peer or the host was lost mid-game. */
  PeerLost: 8,
  /** The host runs a mode (or an input layout) this version does not support. */
  Unsupported: 9,
  /** The host runs another core, core version or ROM. */
  ContentMismatch: 10,
  /** Too many wrong passwords from this address: the host answers without checking until the back-off ends. */
  TooManyAttempts: 11,
  /** The libretro core (--core) is missing, not a libretro core, refused to run, or crashed. */
  BadCore: 12,
  /** The lobby (--lobby) has no such room: a wrong id, or the room ended or expired. */
  NoRoom: 13,
  /** An unexpected internal error (a bug: please report it with the stack trace). */
  Internal: 70,
  /** Interrupted by the user (Ctrl-C). */
  Interrupted: 130,
} as const;

/** One of the {@link ExitCode} values. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error that ends the command with a message and an exit code. */
export class CliError extends Error {
  constructor(
    /** The exit code of the process. */
    readonly exitCode: ExitCodeValue,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }

  /** Error code (the exit code's name), as every error class of the project carries one. */
  get code(): string {
    return Object.entries(ExitCode).find(([, v]) => v === this.exitCode)?.[0] ?? 'Unknown';
  }
}
