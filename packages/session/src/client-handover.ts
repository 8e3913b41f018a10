import { DecodeError } from '@netplay/protocol';
import type { P2PSession } from '@netplay/rollback';
import { checkChat, sanitizeChat } from './commands.js';
import { SessionError } from './errors.js';
import type { ChatEvent } from './host-control.js';
import { isLinkMessage } from './link-messages.js';
import {
  decodeSessionMessage,
  encodeChat,
  encodeCommand,
  type SessionMessage,
  SessionMessageType,
} from './messages.js';

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
  /** A link message (types 15–27) over a direct link: from the new host (`fromHost`), or to it from a player. */
  linkMessage(from: string, data: Uint8Array, fromHost: boolean): void;
}

/**
 * A rollback client after the host left (issue 15, host hand-over): the scheduler's migration
 * chose the new host (`host-changed`); the session's host duties that matter after the hand-over
 * move with it. The new host relays chat (numbering on from the last line it saw) to every player
 * it has a direct link with, and takes their pause / resume requests (rollback's `setHostPaused`,
 * which its scheduler now may call). The other players send their chat and requests to it over
 * their direct link, and take its CHAT and COMMAND from that link. The new host resets as the old
 * one did, through the reset bit of its own input ({@link commandBit}).
 */
export class HandOver {
  private host: string | undefined;
  private nextSeq = 0;
  /** Resets asked for on this peer as the new host, not landed on a frame yet. */
  private resets = 0;
  /** The last frame an input was packed for (a second input for a frame is ignored by the scheduler). */
  private lastPacked = -1;

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

  /**
   * As the new host: resets every player at a frame they all agree on, through the inputs (the
   * reset bit in this peer's command byte: {@link commandBit}). @throws SessionError `bad-argument`
   * when this peer is not the host.
   */
  reset(): void {
    if (!this.isHost)
      throw new SessionError('bad-argument', `only the host resets: ${this.host ?? 'no host'} is the host now`);
    this.resets++;
  }

  /**
   * The reset bit (2, else 0) of the input this peer adds now (for frame `currentFrame + inputDelay`):
   * on one fresh frame per reset asked for, once every lower slot has left by that frame (the bit
   * counts only in the lowest slot that plays: `ROLLBACK_PLAYS`). Every linked player is told
   * (COMMAND reset, as the old host did) and the `reset` event fires here.
   */
  commandBit(): number {
    const s = this.deps.session;
    const frame = s.currentFrame + s.inputDelay;
    const fresh = frame > this.lastPacked;
    if (fresh) this.lastPacked = frame;
    if (this.resets === 0 || !fresh || !this.isHost) return 0;
    for (let slot = 0; slot < this.deps.slot; slot++) {
      const left = s.playerLeftAt(slot);
      if (left === undefined || left > frame) return 0;
    }
    this.resets--;
    const bytes = encodeCommand({ kind: 'reset', frame });
    for (const nick of this.deps.linked()) this.deps.sendTo(nick, bytes);
    this.deps.hostMessage({ type: SessionMessageType.Command, kind: 'reset', frame });
    return 2;
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
    if (isLinkMessage(data)) {
      // A player coming back after the hand-over is linked with the others by the new host (issue 15).
      if (this.isHost || from === this.host) this.deps.linkMessage(from, data, !this.isHost);
      return;
    }
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
