import type { ContentInfo } from './content.js';
import { SessionError } from './errors.js';
import {
  type HelloMessage,
  type InfoMessage,
  MAX_NICK_BYTES,
  SESSION_MAGIC,
  SESSION_PROTOCOL_VERSION,
  utf8Length,
} from './messages.js';
import { equalBytes, passwordProof } from './password.js';

/** The host's checks of a HELLO (magic, version, nick; every mode takes spectators): the refusal, or undefined. */
export function helloError(m: HelloMessage): SessionError | undefined {
  if (m.magic !== SESSION_MAGIC)
    return new SessionError('version-mismatch', 'not a netplay session client (bad magic)');
  if (m.version !== SESSION_PROTOCOL_VERSION)
    return new SessionError(
      'version-mismatch',
      `version mismatch: host speaks session protocol ${SESSION_PROTOCOL_VERSION}, you speak ${m.version}`,
    );
  const n = utf8Length(m.nick);
  if (n === 0 || n > MAX_NICK_BYTES)
    return new SessionError('bad-nick', `nick must be 1..${MAX_NICK_BYTES} UTF-8 bytes, got ${n}`);
  return undefined;
}

/** The password check of an INFO against `salt`: the message of the refusal, or undefined when it matches. */
export function passwordMismatch(m: InfoMessage, salt: number, password: string): string | undefined {
  if (m.passwordHash.length === 0) return 'this session needs a password';
  if (!equalBytes(m.passwordHash, passwordProof(salt, password))) return 'wrong password';
  return undefined;
}

/** The core and content checks of an INFO: the refusal naming both sides, or undefined. */
export function contentError(m: InfoMessage, c: ContentInfo): SessionError | undefined {
  if (m.coreId !== c.coreId || m.coreVersion !== c.coreVersion)
    return new SessionError(
      'core-mismatch',
      `core mismatch: host runs ${c.coreId} ${c.coreVersion}, you have ${m.coreId} ${m.coreVersion}`,
    );
  if (m.contentHash !== c.contentHash)
    return new SessionError(
      'content-mismatch',
      `content mismatch: host runs ${c.contentHash}, you have ${m.contentHash}`,
    );
  return undefined;
}
