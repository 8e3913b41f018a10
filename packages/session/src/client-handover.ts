import { DecodeError } from '@netplay/protocol';
import type { P2PSession } from '@netplay/rollback';
import { checkChat, sanitizeChat } from './commands.js';
import { SessionError } from './errors.js';
import type { ChatEvent } from './host-control.js';
import { decodeSessionMessage, encodeChat, type SessionMessage, SessionMessageType } from './messages.js';

/** What {@link HandOver} needs of the client. */
export interface HandOverDeps {
  /** This client's nick and slot. */
  readonly nick: string;
  readonly slot: number;
  readonly session: P2PSession;
  /** The session messages the old host's messages went to (CHAT, COMMAND). */
  hostMessage(m: SessionMessage): void;
  /** Sends a session message to one player over its direct link (false: no open link). */
  sendTo(nick: string, data: Uint8Array): boolean;
  /** Players with an open direct link. */
  linked(): readonly string[];
  /** The slot of a player nick (undefined: unknown). */
  slotOf(nick: string): number | undefined;
  /** A chat line this peer relayed as the new host (the client's `chat` event). */
  chat(e: ChatEvent): void;
}

/**
 * A rollback client after the host left (issue 15, host hand-over): the scheduler's migration
 * chose the new host (`host-changed`); the session's host duties that matter after the hand-over
 * move with it. The new host relays chat (numbering on from the last line it saw) to every player
 * it has a direct link with, and takes their pause / resume requests (rollback's `setHostPaused`,
 * which its scheduler now may call). The other players send their chat and requests to it over
 * their direct link, and take its CHAT from that link. Reset stays with the old host (its command
 * bit is in slot 0's input, see the README).
 */
export class HandOver {
  private host: string | undefined;
  private nextSeq = 0;

  constructor(private readonly deps: HandOverDeps) {}

  /** The host's nick now (undefined while none is elected). */
  get hostNick(): string | undefined {
    return this.host;
  }

  /** True once this client is the host. */
  get isHost(): boolean {
    return this.host === this.deps.nick;
  }

  /** A chat line seen before or after the hand-over (keeps the numbering going). */
  sawChat(seq: number): void {
    if (seq + 1 > this.nextSeq) this.nextSeq = seq + 1;
  }

  /** The scheduler elected `nick` (this client's own nick when it is the new host). */
  changed(nick: string): void {
    this.host = nick;
  }

  /** A session message from this client (chat, pause requests) after the hand-over. */
  send(data: Uint8Array): void {
    if (this.isHost) {
      this.fromPlayer(this.deps.nick, data);
      return;
    }
    if (this.host !== undefined) this.deps.sendTo(this.host, data);
  }

  /** A session message from another player over its direct link. */
  onMessage(from: string, data: Uint8Array): void {
    if (this.isHost) {
      this.fromPlayer(from, data);
      return;
    }
    if (from !== this.host) return;
    let m: SessionMessage;
    try {
      m = decodeSessionMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      return;
    }
    if (m.type === SessionMessageType.Chat) this.sawChat(m.seq);
    if (m.type === SessionMessageType.Chat || m.type === SessionMessageType.Command) this.deps.hostMessage(m);
  }

  /** As the new host: a player's chat line or pause request. */
  private fromPlayer(from: string, data: Uint8Array): void {
    let m: SessionMessage;
    try {
      m = decodeSessionMessage(data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      return;
    }
    if (m.type === SessionMessageType.ChatSend) {
      const text = sanitizeChat(m.text);
      try {
        checkChat(text);
      } catch {
        return;
      }
      const e: ChatEvent = {
        seq: this.nextSeq++,
        frame: this.deps.session.currentFrame,
        slot: this.deps.slotOf(from) ?? 255,
        nick: from,
        text,
      };
      const bytes = encodeChat(e);
      for (const nick of this.deps.linked()) this.deps.sendTo(nick, bytes);
      this.deps.chat(e);
      return;
    }
    if (m.type === SessionMessageType.CommandRequest) {
      const paused = m.kind === 'pause';
      if (this.deps.session.paused !== paused) this.deps.session.setHostPaused(paused);
    }
  }
}

/**
 * Why a joined client ends when its host's connection closes without a refusal and no hand-over
 * follows: `host-lost` (a spectator's, or a player's at `finalFrame`, its last final frame) when the
 * close says the host left or went silent (`closed`, `timeout`); undefined for any other reason (a
 * host that ended the game says why, e.g. `partitioned`).
 */
export function hostGone(reason: string, spectator: boolean, finalFrame: number | undefined): SessionError | undefined {
  const code = SessionError.fromCloseReason(reason).code;
  if (code !== 'closed' && code !== 'timeout') return undefined;
  if (spectator)
    return new SessionError('host-lost', `the host is gone (${reason}); spectators do not follow a host hand-over`);
  if (finalFrame === undefined) return undefined;
  return new SessionError(
    'host-lost',
    `the game ended for this peer at frame ${finalFrame}: the host was lost (${reason}) and no other host took over`,
  );
}
