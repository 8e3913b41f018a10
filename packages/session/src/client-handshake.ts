import type { ClientContext } from './client-context.js';
import { ClientMesh } from './client-mesh.js';
import { SessionError } from './errors.js';
import { encodeLinkAddress } from './link-messages.js';
import { type ChallengeMessage, encodeInfo, SESSION_MAGIC, SESSION_PROTOCOL_VERSION } from './messages.js';
import { passwordProof } from './password.js';

/**
 * The host's CHALLENGE: the refusal (`version-mismatch`) if it is not a session host of our
 * protocol version; else INFO (the salted password proof, core and content) goes out, then the
 * player's link setup (LINK_ADDRESS), and the direct links' manager is returned if `links` was given.
 */
export function answerChallenge(
  c: ClientContext,
  m: ChallengeMessage,
  sendHost: (data: Uint8Array) => void,
): SessionError | ClientMesh | undefined {
  const o = c.options;
  const mine = o.protocolVersion ?? SESSION_PROTOCOL_VERSION;
  if (m.magic !== SESSION_MAGIC)
    return new SessionError('version-mismatch', 'the host is not a netplay session host (bad magic)');
  if (m.version !== mine)
    return new SessionError(
      'version-mismatch',
      `version mismatch: host speaks session protocol ${m.version}, you speak ${mine}`,
    );
  const pw = o.password;
  const content = o.content;
  sendHost(
    encodeInfo({
      passwordHash: m.passwordRequired && pw !== undefined && pw !== '' ? passwordProof(m.salt, pw) : new Uint8Array(0),
      coreId: content.coreId,
      coreVersion: content.coreVersion,
      contentHash: content.contentHash,
    }),
  );
  if (o.spectate === true) return undefined;
  if (o.links === undefined) {
    sendHost(encodeLinkAddress({ address: '', dials: false }));
    return undefined;
  }
  return new ClientMesh(o.links, {
    clock: o.clock,
    sendHost,
    session: () => c.game.p2p,
    hostMessage: (msg) => c.control.onMessage(msg),
    slotOf: (n) => c.game.slotOf.get(n),
    chat: (e) => c.emitter.emit('chat', e),
    hostChanged: (e) => c.emitter.emit('host-changed', e),
  });
}
