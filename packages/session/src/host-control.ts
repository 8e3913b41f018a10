import type { ClientServerServer } from '@netplay/lockstep';
import { FceuCommand } from '@netplay/protocol';
import type { P2PSession } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import { CommandWord, checkChat, sanitizeChat } from './commands.js';
import { SessionError } from './errors.js';
import type { Peer } from './host-peer.js';
import { ROLLBACK_PLAYS, SlotCore, type SlotLayout, slotLayoutFor } from './local-ports.js';
import {
  type ChatMessage,
  encodeChat,
  encodeCommand,
  type HelloMessage,
  type RosterEntry,
  type SessionMessage,
  SessionMessageType,
  SPECTATOR_SLOT,
  type SyncMessage,
} from './messages.js';
import type { SessionMode } from './mode.js';

/** A chat line as the session's `chat` events give it (host and clients alike, in the same order). */
export type ChatEvent = ChatMessage;

/** What {@link HostControl} needs of the host. */
export interface ControlHost {
  readonly mode: SessionMode;
  readonly nick: string;
  /** The host's next frame. */
  frame(): number;
  /** Whether the game runs. */
  started(): boolean;
  /** Rollback: the host's scheduler. */
  rollback(): P2PSession | undefined;
  /** lockstep-cs: the server. */
  server(): ClientServerServer | undefined;
  /** Lockstep: hands the host's (packed) input to the runner at once. */
  setLockstepInput(input: Uint8Array): void;
  /** Every admitted client (players, waiting players and spectators). */
  admitted(): Iterable<Peer>;
  send(peer: Peer, data: Uint8Array): void;
  refuse(peer: Peer, error: SessionError): void;
  chat(e: ChatEvent): void;
  command(kind: 'paused' | 'resumed' | 'reset', frame: number): void;
}

/**
 * The host's side of issue 15's items 2 and 3: several local players per peer (the slot layout,
 * each client's ports, packing the host's ports into its one scheduler input) and the host's
 * commands (chat, pause / resume, reset), host-authoritative and applied at agreed frames in
 * every mode, reusing what the schedulers have (rollback's pause and reset by state,
 * lockstep-cs's reset command) and the command byte elsewhere.
 */
export class HostControl {
  /** How ports are laid out on the scheduler. */
  readonly layout: SlotLayout;
  /** Ports the host drives. */
  readonly localPlayers: number;
  /** Most ports a client may take (the slot's block). */
  readonly maxLocalPlayers: number;
  private readonly word = new CommandWord();
  private readonly packed: Uint8Array;
  private readonly coreView: Uint8Array;
  private readonly ports = new WeakMap<Peer, number>();
  private lastInput: Uint8Array | readonly Uint8Array[] | undefined;
  private slotCore: SlotCore | undefined;
  private chatSeq = 0;
  private rollbackPaused = false;
  /** Rollback: resets asked for, each waiting for its own next frame the host's input lands on. */
  private rollbackResets = 0;
  /** Rollback: the last frame the host's input was packed for. */
  private lastPacked = -1;

  constructor(
    private readonly host: ControlHost,
    private readonly core: Core,
    slots: number,
    options: { readonly localPlayers?: number; readonly maxLocalPlayers?: number },
  ) {
    this.localPlayers = options.localPlayers ?? 1;
    this.maxLocalPlayers = options.maxLocalPlayers ?? this.localPlayers;
    if (!Number.isInteger(this.localPlayers) || this.localPlayers < 1 || this.localPlayers > this.maxLocalPlayers)
      throw new SessionError(
        'bad-argument',
        `localPlayers must be 1..maxLocalPlayers (${this.maxLocalPlayers}), got ${this.localPlayers}`,
      );
    this.layout = slotLayoutFor(host.mode, slots, this.maxLocalPlayers, core.inputBytes);
    if (this.layout.ports > core.ports)
      throw new SessionError(
        'bad-argument',
        `${slots} player slots × ${this.maxLocalPlayers} local players need ${this.layout.ports} ports; the core has ${core.ports}`,
      );
    this.packed = new Uint8Array(this.layout.slotBytes);
    this.coreView = new Uint8Array(this.layout.ports * core.inputBytes);
  }

  /** Input bytes of one slot on the scheduler. */
  get slotBytes(): number {
    return this.layout.slotBytes;
  }

  /** The core the scheduler drives: the real one, or a {@link SlotCore} over it. `powerOn`: what a reset loads. */
  schedulerCore(powerOn: Uint8Array): Core {
    if (this.layout.identity) return this.core;
    this.slotCore = new SlotCore(this.core, this.layout, powerOn, this.host.mode === 'rollback');
    return this.slotCore;
  }

  /** HELLO: remembers how many ports the peer asks for. */
  hello(peer: Peer, m: HelloMessage): void {
    this.ports.set(peer, m.spectate ? 0 : (m.localPlayers ?? 1));
  }

  /** Ports `peer` drives (1 unless it asked for more; 0 for a spectator). */
  localPlayersOf(peer: Peer): number {
    return this.ports.get(peer) ?? 1;
  }

  /** The refusal for a peer asking more ports than a slot holds, if it does. */
  portsError(peer: Peer): SessionError | undefined {
    const n = this.localPlayersOf(peer);
    if (peer.spectate || n <= this.maxLocalPlayers) return undefined;
    return new SessionError(
      'bad-argument',
      `too many local players: you asked for ${n}, this host takes at most ${this.maxLocalPlayers} per peer`,
    );
  }

  /** SYNC's layout fields for `roster` (`slotOf` finds a roster slot's peer). */
  syncFields(roster: readonly RosterEntry[], peerOf: (slot: number) => Peer | undefined): Partial<SyncMessage> {
    if (this.layout.identity && this.localPlayers === 1 && roster.every((e) => this.portsAt(e.slot, peerOf) === 1))
      return {};
    return {
      portsPerSlot: this.layout.portsPerSlot,
      commandByte: this.layout.commandByte,
      localPlayers: roster.map((e) => this.portsAt(e.slot, peerOf)),
    };
  }

  private portsAt(slot: number, peerOf: (slot: number) => Peer | undefined): number {
    if (slot === 0) return this.localPlayers;
    const p = peerOf(slot);
    return p === undefined ? 1 : this.localPlayersOf(p);
  }

  /** The host's scheduler input for this frame: its ports' inputs and the command byte. */
  localInput(input: Uint8Array | readonly Uint8Array[]): Uint8Array {
    this.lastInput = input;
    if (this.layout.identity && input instanceof Uint8Array && input.length === this.core.inputBytes) return input;
    this.layout.pack(input, this.localPlayers, this.rollbackCommand(), this.packed);
    return this.packed;
  }

  /**
   * Rollback: the command byte of the input about to be added for frame `currentFrame + delay`:
   * bit 1 on exactly one frame after a reset (a frame the host gives its input for the first time:
   * P2PSession ignores a second input for a frame), which every peer then runs from the power-on state.
   */
  private rollbackCommand(): number {
    const rb = this.host.rollback();
    if (rb === undefined) return this.word.byte;
    const frame = rb.currentFrame + rb.inputDelay;
    const fresh = frame > this.lastPacked;
    if (fresh) this.lastPacked = frame;
    if (this.rollbackResets === 0 || !fresh) return ROLLBACK_PLAYS;
    this.rollbackResets--;
    for (const p of this.host.admitted()) this.host.send(p, encodeCommand({ kind: 'reset', frame }));
    this.host.command('reset', frame);
    return ROLLBACK_PLAYS | 2;
  }

  /** Lockstep: a frame ran with the scheduler's `inputs`; returns every port's input and emits what the frame did. */
  lockstepFrame(frame: number, inputs: Uint8Array): Uint8Array {
    const sc = this.slotCore;
    if (sc === undefined) return inputs;
    for (let i = 0; i < sc.resetCount; i++) this.host.command('reset', frame);
    if (sc.pauseChanged) this.host.command(sc.paused ? 'paused' : 'resumed', frame);
    return this.layout.coreInputs(inputs, this.coreView);
  }

  /** Rollback: relays the scheduler's pause events. */
  attachRollback(session: P2PSession): void {
    session.on('paused', ({ paused, frame }) => {
      this.rollbackPaused = paused;
      this.host.command(paused ? 'paused' : 'resumed', frame);
    });
  }

  /** True while the game is paused (or a pause is on its way to the next frame, lockstep). */
  get paused(): boolean {
    return this.host.mode === 'rollback' ? this.rollbackPaused : this.word.paused;
  }

  /** Host API: pause (true) or resume (false) every peer. */
  setPaused(paused: boolean): void {
    this.requireStarted(paused ? 'pause' : 'resume');
    const rb = this.host.rollback();
    if (rb !== undefined) {
      if (rb.paused !== paused) rb.setHostPaused(paused);
      return;
    }
    this.requireCommandByte(paused ? 'pause' : 'resume');
    if (this.word.paused === paused) return;
    this.word.setPaused(paused);
    this.pushWord();
  }

  /** Host API: every peer loads the power-on state at one agreed frame. */
  reset(): void {
    this.requireStarted('reset');
    const rb = this.host.rollback();
    if (rb !== undefined) {
      // In the host's next new input (see rollbackCommand): a frame every peer agrees on, final
      // only once every input of it is known, so no peer's final history changes. Two resets asked
      // for within one frame land on two frames: each call is one reset everywhere.
      this.rollbackResets++;
      return;
    }
    const server = this.host.server();
    if (server !== undefined) {
      // lockstep-cs: the scheduler's own command, in the frame data; the slot core resets by state.
      server.command(FceuCommand.Reset);
      return;
    }
    this.requireCommandByte('reset');
    this.word.reset();
    this.pushWord();
  }

  /** Host API: a chat line from the host. */
  chat(text: string): ChatEvent {
    return this.relayChat(0, this.host.nick, checkChat(text));
  }

  /**
   * A session message from an admitted client other than the handshake's: CHAT_SEND and
   * COMMAND_REQUEST. Returns false for any other type (the host refuses it).
   */
  onClientMessage(peer: Peer, m: SessionMessage): boolean {
    if (m.type === SessionMessageType.ChatSend) {
      const text = sanitizeChat(m.text);
      if (text !== '')
        this.relayChat(peer.spectate ? SPECTATOR_SLOT : (peer.slot ?? SPECTATOR_SLOT), peer.nick ?? '', text);
      return true;
    }
    if (m.type === SessionMessageType.CommandRequest) {
      if (peer.spectate || peer.stage !== 'playing') {
        this.host.refuse(peer, new SessionError('protocol', `${m.kind} request from a spectator`));
        return true;
      }
      // Any player may pause or resume, as in RetroArch; before the start there is nothing to pause.
      if (this.host.started() && (this.host.rollback() !== undefined || this.layout.commandByte))
        this.setPaused(m.kind === 'pause');
      return true;
    }
    return false;
  }

  private relayChat(slot: number, nick: string, text: string): ChatEvent {
    const e: ChatEvent = { seq: this.chatSeq++, frame: this.host.frame(), slot, nick, text };
    const data = encodeChat(e);
    for (const p of this.host.admitted()) this.host.send(p, data);
    this.host.chat(e);
    return e;
  }

  private pushWord(): void {
    if (this.lastInput === undefined) this.lastInput = new Uint8Array(this.core.inputBytes);
    this.host.setLockstepInput(this.localInput(this.lastInput));
  }

  private requireStarted(what: string): void {
    if (!this.host.started()) throw new SessionError('bad-argument', `cannot ${what}: the game has not started`);
  }

  private requireCommandByte(what: string): void {
    if (!this.layout.commandByte)
      throw new SessionError(
        'unsupported-mode',
        `cannot ${what} in ${this.host.mode} with ${this.layout.portsPerSlot * this.core.inputBytes} input bytes per peer: the command byte does not fit MAMEHub's 4-byte mask`,
      );
  }
}
