import { DecodeError } from '@netplay/protocol';
import type { P2PSession } from '@netplay/rollback';
import { type Clock, type Connection, TransportError } from '@netplay/transport';
import { SESSION_CONTROL_CHANNEL } from './channels.js';
import { HandOver } from './client-handover.js';
import { HandOverDoor } from './client-handover-door.js';
import { ClientLinks, type LinkOptions } from './client-links.js';
import type { ContentInfo } from './content.js';
import { SessionError } from './errors.js';
import type { ChatEvent } from './host-control.js';
import { decodeLinkMessage, LinkMessageType } from './link-messages.js';
import type { SessionMessage, SyncMessage } from './messages.js';
import type { RejoinTarget } from './rejoin-message.js';

/** What the host elected after a hand-over needs to take back a player who left (issue 15; `HandOverDoor`). */
export interface DoorOptions {
  readonly password: string | undefined;
  readonly content: ContentInfo;
  readonly frameMs: number;
  randomU32(): number;
  /** The nick of each other player's slot (the client's relay map). */
  readonly nickOf: ReadonlyMap<number, string>;
}

/** What {@link ClientMesh} needs of the client. */
export interface ClientMeshDeps {
  readonly clock: Clock;
  /** Sends a session message to the host over the session connection. */
  sendHost(data: Uint8Array): void;
  /** The rollback scheduler (undefined before SYNC). */
  session(): P2PSession | undefined;
  /** CHAT / COMMAND from the new host. */
  hostMessage(m: SessionMessage): void;
  slotOf(nick: string): number | undefined;
  chat(e: ChatEvent): void;
  hostChanged(e: { nick: string; frame: number; self: boolean }): void;
}

/**
 * A rollback client's direct links and host hand-over (issues 17 and 15), as the client uses
 * them: {@link ClientLinks} sets the links up before the game; {@link connectionTo} is the path of
 * the scheduler's messages to a linked player; when the host's connection closes,
 * {@link takeOver} keeps the game going over the links (the scheduler's migration elects the new
 * host) and {@link HandOver} moves chat and pause to it.
 */
export class ClientMesh {
  readonly links: ClientLinks;
  private handOver: HandOver | undefined;
  /** Issue 15: takes back players who left, once this client is the host elected after a hand-over. */
  private door: HandOverDoor | undefined;
  private doorOptions: DoorOptions | undefined;
  private syncMessage: SyncMessage | undefined;
  private nick = '';
  private slot = -1;
  /** True once the host's connection closed and the game goes on over the links. */
  hostGone = false;

  constructor(
    options: LinkOptions,
    private readonly deps: ClientMeshDeps,
  ) {
    this.links = new ClientLinks(options, {
      clock: deps.clock,
      sendHost: (d) => this.send(d),
      message: (nick, channel, d) => this.onLinkMessage(nick, channel, d),
      lost: (nick, how) => deps.session()?.disconnectPeer(nick, how),
      door: (conn) => this.door?.accept(conn) ?? false,
      doorClosed: (reason) => this.door?.close(reason),
    });
  }

  /** The direct link to `peer` in the game, if any. */
  connectionTo(peer: string): Connection | undefined {
    return this.links.connectionTo(peer);
  }

  /** A session message from this client: to the host, or after the hand-over to the new one. */
  send(data: Uint8Array): void {
    if (this.hostGone) this.handOver?.send(data);
    else this.deps.sendHost(data);
  }

  /** Lets this client take back players who left once it is the host elected after a hand-over (issue 15). */
  openDoor(o: DoorOptions): void {
    this.doorOptions = o;
  }

  /** The SYNC (or ENTRY's SYNC) this client starts from, its state unpacked: what a returning player's ENTRY is built on. */
  synced(m: SyncMessage): void {
    this.syncMessage = m;
  }

  /**
   * After a hand-over to another player: where this client comes back if it drops (the new host's
   * link address and the token of this client's pair with it); undefined otherwise.
   */
  rejoinTarget(): RejoinTarget | undefined {
    const host = this.handOver?.hostNick;
    if (host === undefined || host === this.nick) return undefined;
    const slot = this.deps.slotOf(host);
    const e = slot === undefined ? undefined : this.links.entryOf(slot);
    if (e === undefined || e.nick !== host) return undefined;
    return { host, address: e.address, slot: this.slot, token: e.token.slice() };
  }

  /** The rollback game started (SYNC): messages over links reach the scheduler, host changes become events. */
  started(s: P2PSession, nick: string, slot: number): Array<() => void> {
    const links = this.links;
    const handOver = new HandOver({
      nick,
      slot,
      session: s,
      hostMessage: (m) => this.deps.hostMessage(m),
      sendTo: (to, d) => sendOn(links.connectionTo(to), d),
      linked: () => links.linkedNicks(),
      slotOf: (n) => this.deps.slotOf(n),
      chat: (e) => this.deps.chat(e),
      linkMessage: (from, d, fromHost) => {
        if (fromHost) links.onHostMessage(d);
        else this.door?.onLinkMessage(from, d);
      },
    });
    this.handOver = handOver;
    this.nick = nick;
    this.slot = slot;
    const o = this.doorOptions;
    if (o !== undefined)
      this.door = new HandOverDoor({
        clock: this.deps.clock,
        nick,
        slot,
        password: o.password,
        content: o.content,
        frameMs: o.frameMs,
        randomU32: () => o.randomU32(),
        session: () => s,
        isHost: () => this.hostGone && handOver.isHost,
        sync: () => this.syncMessage,
        entry: (n) => links.entryOf(n),
        linked: () => links.linkedNicks(),
        linkTo: (n) => links.connectionTo(n),
        nickOf: (n) => o.nickOf.get(n),
        slotOf: (n) => this.deps.slotOf(n),
        attach: (n, c) => links.attach(n, c),
        sessionMessage: (n, d) => handOver.onMessage(n, d),
      });
    links.startDelivery();
    return [
      s.on('host-changed', ({ peer, frame }) => {
        const host = peer ?? nick;
        handOver.changed(host);
        this.deps.hostChanged({ nick: host, frame, self: peer === undefined });
      }),
    ];
  }

  /**
   * Resets the game as the new host after a hand-over.
   * @throws SessionError `bad-argument` when this client is not the host (before a hand-over, or another player was elected).
   */
  reset(): void {
    if (this.handOver === undefined || !this.hostGone)
      throw new SessionError('bad-argument', 'only the host resets: this client is not the host');
    this.handOver.reset();
  }

  /** The reset bit of the input this client adds now (2 on the frame a reset it made as the new host lands on, else 0). */
  commandBit(): number {
    return this.hostGone ? (this.handOver?.commandBit() ?? 0) : 0;
  }

  /** A chat line reached this client (the new host numbers on from it). */
  sawChat(seq: number): void {
    this.handOver?.sawChat(seq);
  }

  /**
   * The host's connection closed while the game runs: with at least one direct link, the game
   * goes on (true): the scheduler learns the host is gone (`left` if it closed, else `lost`) and
   * its migration elects the new host or ends the game by the quorum rule. `hostLeft` runs just
   * before (the client's `host-left` event). The scheduler may have elected one already, when its
   * own liveness rule dropped the host before the transport did.
   */
  takeOver(s: P2PSession, hostNick: string, left: boolean, hostLeft: () => void): boolean {
    if (this.handOver === undefined || this.links.linkedNicks().length === 0) return false;
    this.hostGone = true;
    // `host-left` first: telling the scheduler may elect the new host (`host-changed`) at once.
    hostLeft();
    s.disconnectPeer(hostNick, left ? 'left' : 'lost');
    return true;
  }

  private onLinkMessage(nick: string, channel: string, data: Uint8Array): void {
    if (channel === SESSION_CONTROL_CHANNEL) this.handOver?.onMessage(nick, data);
    else this.deps.session()?.receive(nick, channel, data);
  }
}

function sendOn(conn: Connection | undefined, data: Uint8Array): boolean {
  if (conn === undefined || conn.state !== 'open') return false;
  try {
    conn.send(SESSION_CONTROL_CHANNEL, data);
    return true;
  } catch (e) {
    if (!(e instanceof TransportError)) throw e;
    return false;
  }
}

/**
 * A link message from the host: after CHALLENGE and before SYNC (or ENTRY), LINKS and LINK_SET; in
 * the game, LINK_ADD and LINK_ADD_SET (a player entering it). They go to the client's links; a
 * client without links checks and ignores them (its pairs keep the relay). False: a message the
 * host never sends, one at the wrong stage (before CHALLENGE: any), or a malformed one (the client
 * refuses the host with `protocol`).
 */
export function linkMessageFromHost(
  mesh: ClientMesh | undefined,
  stage: 'before-challenge' | 'handshaking' | 'joined',
  data: Uint8Array,
): boolean {
  const t = data[0];
  const setup = t === LinkMessageType.Links || t === LinkMessageType.LinkSet;
  const add = t === LinkMessageType.LinkAdd || t === LinkMessageType.LinkAddSet;
  if (stage === 'before-challenge' || (stage === 'handshaking' ? !setup : !add)) return false;
  if (mesh !== undefined) return mesh.links.onHostMessage(data);
  try {
    decodeLinkMessage(data);
    return true;
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    return false;
  }
}
