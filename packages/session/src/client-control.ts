import type { P2PSession } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import { checkChat } from './commands.js';
import { SessionError } from './errors.js';
import type { ChatEvent } from './host-control.js';
import { ROLLBACK_PLAYS, SlotCore, SlotLayout } from './local-ports.js';
import {
  encodeChatSend,
  encodeCommandRequest,
  type SessionMessage,
  SessionMessageType,
  SPECTATOR_SLOT,
  type SyncMessage,
} from './messages.js';

/** What {@link ClientControl} needs of the client. */
export interface ControlClient {
  /** Sends on the session control channel. */
  send(data: Uint8Array): void;
  chat(e: ChatEvent): void;
  command(kind: 'paused' | 'resumed' | 'reset', frame: number): void;
}

/**
 * The client's side of issue 15's items 2 and 3: its ports under the host's slot layout (its
 * local players' inputs packed into its one scheduler input), chat lines and pause requests to
 * the host, and the host's chat, pause, resume and reset as events at the frames every peer
 * agrees on.
 */
export class ClientControl {
  private layout: SlotLayout | undefined;
  private slotCore: SlotCore | undefined;
  private packed: Uint8Array | undefined;
  private coreView: Uint8Array | undefined;
  private neutral: Uint8Array;
  private slot: number | undefined;
  private pausedFlag = false;
  private rollbackMode = false;

  constructor(
    private readonly client: ControlClient,
    private readonly core: Core,
    /** Ports this client asks for. */
    readonly localPlayers: number,
  ) {
    if (!Number.isInteger(localPlayers) || localPlayers < 1 || localPlayers > 16)
      throw new SessionError('bad-argument', `localPlayers must be 1..16, got ${localPlayers}`);
    this.neutral = new Uint8Array(core.inputBytes * localPlayers);
  }

  /**
   * SYNC: takes the host's slot layout. Returns the refusal when this core cannot run it, or the
   * host gave this client another number of ports than it asked for.
   */
  sync(m: SyncMessage): SessionError | undefined {
    const layout = new SlotLayout(m.players, m.portsPerSlot ?? 1, m.inputBytes, m.commandByte ?? false);
    if (m.inputBytes !== this.core.inputBytes || layout.ports > this.core.ports)
      return new SessionError(
        'core-mismatch',
        `core mismatch: host has ${m.players} players × ${layout.portsPerSlot} ports × ${m.inputBytes} input bytes, this core ${this.core.ports} × ${this.core.inputBytes}`,
      );
    if (m.slot !== SPECTATOR_SLOT) {
      const i = m.roster.findIndex((e) => e.slot === m.slot);
      const given = i >= 0 ? (m.localPlayers?.[i] ?? 1) : 1;
      if (given !== this.localPlayers || this.localPlayers > layout.portsPerSlot)
        return new SessionError(
          'protocol',
          `the host gave this client ${given} ports in a block of ${layout.portsPerSlot}; it asked for ${this.localPlayers}`,
        );
      this.slot = m.slot;
    }
    this.layout = layout;
    this.rollbackMode = m.mode === 'rollback';
    this.packed = new Uint8Array(layout.slotBytes);
    this.coreView = new Uint8Array(layout.ports * m.inputBytes);
    return undefined;
  }

  /** The core ports this client drives (empty for a spectator or before SYNC). */
  get ports(): number[] {
    return this.layout === undefined || this.slot === undefined
      ? []
      : this.layout.portsOf(this.slot, this.localPlayers);
  }

  /** Input bytes of one slot on the scheduler (after SYNC). */
  get slotBytes(): number {
    return this.layout?.slotBytes ?? this.core.inputBytes;
  }

  /** True while the game is paused (as the frames run so far, or rollback's host, say). */
  get paused(): boolean {
    return this.pausedFlag;
  }

  /** The core the scheduler drives (after SYNC). `powerOn`: what a reset loads (lockstep). */
  schedulerCore(powerOn: Uint8Array | undefined): Core {
    const layout = this.layout;
    if (layout === undefined || layout.identity) return this.core;
    this.slotCore = new SlotCore(this.core, layout, powerOn?.slice(), this.rollbackMode);
    return this.slotCore;
  }

  /** Rollback: the reset bit of the input about to be added (the new host's, after a hand-over). */
  rollbackBit: (() => number) | undefined;

  /** The client's scheduler input: its ports' inputs (neutral when none); command byte 0 (lockstep) or {@link ROLLBACK_PLAYS} and the reset bit (rollback). */
  localInput(input: Uint8Array | readonly Uint8Array[] | undefined): Uint8Array {
    const layout = this.layout;
    const given = input ?? this.neutral;
    if (layout === undefined || this.packed === undefined) return given instanceof Uint8Array ? given : this.neutral;
    if (layout.identity && given instanceof Uint8Array && given.length === this.core.inputBytes) return given;
    // Rollback: "this slot plays", and the reset bit when this client resets as the new host.
    const command = this.rollbackMode ? ROLLBACK_PLAYS | (this.rollbackBit?.() ?? 0) : 0;
    layout.pack(given, this.localPlayers, command, this.packed);
    return this.packed;
  }

  /** Lockstep: a frame ran with the scheduler's `inputs`; returns every port's input and emits what the frame did. */
  lockstepFrame(frame: number, inputs: Uint8Array): Uint8Array {
    const sc = this.slotCore;
    if (sc === undefined || this.layout === undefined || this.coreView === undefined) return inputs;
    for (let i = 0; i < sc.resetCount; i++) this.client.command('reset', frame);
    if (sc.pauseChanged) {
      this.pausedFlag = sc.paused;
      this.client.command(sc.paused ? 'paused' : 'resumed', frame);
    }
    return this.layout.coreInputs(inputs, this.coreView);
  }

  /** Rollback: relays the scheduler's pause events (the host's PAUSE). */
  attachRollback(session: P2PSession): void {
    session.on('paused', ({ paused, frame }) => {
      this.pausedFlag = paused;
      this.client.command(paused ? 'paused' : 'resumed', frame);
    });
  }

  /** CHAT and COMMAND from the host; false for any other message. */
  onMessage(m: SessionMessage): boolean {
    if (m.type === SessionMessageType.Chat) {
      this.client.chat({ seq: m.seq, frame: m.frame, slot: m.slot, nick: m.nick, text: m.text });
      return true;
    }
    if (m.type === SessionMessageType.Command) {
      // Rollback's reset (the LOAD itself travels in the scheduler); lockstep commands are in the inputs.
      if (m.kind === 'reset') this.client.command('reset', m.frame);
      return true;
    }
    return false;
  }

  /** Sends a chat line to the host, which relays it to everyone (this client's `chat` event comes then). */
  chat(text: string): void {
    this.client.send(encodeChatSend({ text: checkChat(text) }));
  }

  /** Asks the host to pause (true) or resume (false). @throws SessionError for a spectator or before SYNC. */
  requestPause(paused: boolean): void {
    if (this.slot === undefined)
      throw new SessionError('bad-argument', `only a player in a running game can ${paused ? 'pause' : 'resume'}`);
    this.client.send(encodeCommandRequest({ kind: paused ? 'pause' : 'resume' }));
  }
}
