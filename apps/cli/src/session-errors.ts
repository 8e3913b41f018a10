import { SessionError, type SessionErrorCode } from '@netplay/session';
import { TransportError } from '@netplay/transport';
import { CliError, ExitCode, type ExitCodeValue } from './exit-codes.js';

const BY_CODE: Readonly<Record<SessionErrorCode, ExitCodeValue>> = {
  'version-mismatch': ExitCode.VersionMismatch,
  'bad-password': ExitCode.PasswordRefused,
  'core-mismatch': ExitCode.ContentMismatch,
  'content-mismatch': ExitCode.ContentMismatch,
  'server-full': ExitCode.Full,
  'bad-nick': ExitCode.Usage,
  'unsupported-mode': ExitCode.Unsupported,
  protocol: ExitCode.Network,
  timeout: ExitCode.Network,
  'bad-argument': ExitCode.Usage,
  closed: ExitCode.Network,
  'too-many-attempts': ExitCode.TooManyAttempts,
  flood: ExitCode.Network,
  removed: ExitCode.PeerLost,
  'host-lost': ExitCode.PeerLost,
  partitioned: ExitCode.PeerLost,
};

/** Short explanations printed before the session's own message. */
const HEADLINE: Readonly<Record<SessionErrorCode, string>> = {
  'version-mismatch': 'version mismatch',
  'bad-password': 'password refused',
  'core-mismatch': 'the host runs another core',
  'content-mismatch': 'the host runs another ROM',
  'server-full': 'the host is full',
  'bad-nick': 'bad nick',
  'unsupported-mode': 'mode not supported',
  protocol: 'protocol error',
  timeout: 'handshake timed out',
  'bad-argument': 'bad option',
  closed: 'connection closed',
  'too-many-attempts': 'password attempts blocked',
  flood: 'disconnected for flooding the host',
  removed: 'removed from the game',
  'host-lost': 'the host was lost',
  partitioned: 'cut off from the other players',
};

/**
 * A session failure as a CLI error. `afterJoin`: a connection that closes once the game runs is a
 * lost peer (`PeerLost`), not a network failure.
 */
export function sessionFailure(e: unknown, afterJoin = false): CliError {
  if (e instanceof SessionError) {
    if (afterJoin && (e.code === 'closed' || e.code === 'timeout' || e.code === 'host-lost'))
      return new CliError(ExitCode.PeerLost, `the host was lost mid-game: ${e.message}`);
    return new CliError(BY_CODE[e.code], `${HEADLINE[e.code]}: ${e.message}`);
  }
  if (e instanceof TransportError) return new CliError(ExitCode.Network, `network: ${e.message}`);
  if (e instanceof CliError) return e;
  throw e;
}
