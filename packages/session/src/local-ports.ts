import type { Core } from '@netplay/state';
import { SessionError } from './errors.js';

/**
 * How a session lays the game's ports out on the scheduler (couch + online, as GGPO/GGRS let a
 * peer carry several local players). Each player **slot** (one peer: the host is slot 0) owns a
 * block of `portsPerSlot` consecutive ports, `slot × portsPerSlot …`, of which it drives the first
 * `localPlayers`. The scheduler sees one player per slot whose input is the whole block
 * (`portsPerSlot × inputBytes` bytes), so every port of a peer travels in the one message that
 * carries that peer's input, in every mode. The lockstep modes add one byte to every slot's input:
 * in the host's, the {@link CommandWord} (pause, reset) every peer applies at the same frame;
 * other slots send 0 there and it is ignored.
 */
export class SlotLayout {
  /** Bytes of one slot's input on the scheduler: `portsPerSlot × inputBytes`, plus the command byte. */
  readonly slotBytes: number;

  constructor(
    /** Player slots (peers that play, the host included): the scheduler's players. */
    readonly slots: number,
    /** Ports in each slot's block. */
    readonly portsPerSlot: number,
    /** Input bytes of one core port. */
    readonly inputBytes: number,
    /** Whether the slots' inputs end with the command byte (lockstep modes). */
    readonly commandByte: boolean,
  ) {
    this.slotBytes = portsPerSlot * inputBytes + (commandByte ? 1 : 0);
  }

  /** Whether the scheduler can drive the core directly (one port per slot, no command byte). */
  get identity(): boolean {
    return this.portsPerSlot === 1 && !this.commandByte;
  }

  /** Core ports the layout spans (`slots × portsPerSlot`). */
  get ports(): number {
    return this.slots * this.portsPerSlot;
  }

  /** The core ports of `slot` driving `localPlayers` players. */
  portsOf(slot: number, localPlayers: number): number[] {
    const out: number[] = [];
    for (let k = 0; k < localPlayers; k++) out.push(slot * this.portsPerSlot + k);
    return out;
  }

  /**
   * Writes one slot's scheduler input into `out` (`slotBytes`): the `localPlayers` ports' inputs
   * from `input` (one port's bytes, or all of them end to end, or one array per port; missing
   * ports read neutral), zeros for the block's unused ports, then `command` if there is a command byte.
   * @throws SessionError `bad-argument` for an input of another size.
   */
  pack(input: Uint8Array | readonly Uint8Array[], localPlayers: number, command: number, out: Uint8Array): void {
    const n = this.inputBytes;
    out.fill(0);
    if (input instanceof Uint8Array) {
      if (input.length !== n && input.length !== n * localPlayers)
        throw new SessionError(
          'bad-argument',
          `input of ${input.length} bytes: expected ${n} (one port) or ${n * localPlayers} (${localPlayers} local players × ${n})`,
        );
      out.set(input, 0);
    } else {
      if (input.length > localPlayers)
        throw new SessionError('bad-argument', `${input.length} port inputs for ${localPlayers} local players`);
      for (let k = 0; k < input.length; k++) {
        const one = input[k]!;
        if (one.length !== n)
          throw new SessionError('bad-argument', `port input ${k} has ${one.length} bytes, expected ${n}`);
        out.set(one, k * n);
      }
    }
    if (this.commandByte) out[this.portsPerSlot * n] = command & 0xff;
  }

  /**
   * The core's view of a frame's scheduler inputs (`slots × slotBytes`): every port's input, port 0
   * first (`ports × inputBytes` bytes), written into `out`. Without a command byte the two are the
   * same bytes and `wide` itself is returned.
   */
  coreInputs(wide: Uint8Array, out: Uint8Array): Uint8Array {
    if (!this.commandByte) return wide;
    const block = this.portsPerSlot * this.inputBytes;
    for (let s = 0; s < this.slots; s++) {
      const from = s * this.slotBytes;
      for (let i = 0; i < block; i++) out[s * block + i] = wide[from + i] ?? 0;
    }
    return out;
  }
}

/**
 * Rollback: bit 7 of every player's command byte, set by each peer in its own input ("this slot
 * plays"; a departed or empty slot reads 0). The reset bit (bit 1) counts only in the command byte
 * of the lowest slot that plays at that frame: the host's, or after a host hand-over the new host's
 * (the lowest connected slot) once every lower slot has left. Each frame's inputs alone decide.
 */
export const ROLLBACK_PLAYS = 0x80;

/**
 * The core as the scheduler sees it under a {@link SlotLayout}: `slots` players of `slotBytes`
 * each, each slot's input spread over its block of the real core's ports. With a command byte it
 * also applies the host's commands at the frame they land on: a reset loads the power-on state
 * before the frame runs (reset by state, identical on every peer); while paused the real core
 * does not advance. Everything else goes to the real core. Allocates nothing per frame.
 */
export class SlotCore implements Core {
  readonly ports: number;
  readonly inputBytes: number;
  private readonly portInputs: Uint8Array[] = [];
  private command = 0;
  /** Rollback: each slot's command byte of the frame about to run. */
  private readonly slotCommands: Uint8Array;
  private lastResets: number | undefined;
  private pausedFlag = false;
  private resetFlag = false;
  /** How many resets the frame that just ran stood for (several resets at one frame: one load). */
  private resetsAtFrame = 0;
  /** A reset was applied for the frame about to run (before its `advance`). */
  private resetPending = false;
  private pauseChangedFlag = false;

  constructor(
    /** The real core. */
    readonly inner: Core,
    /** How the session packs ports into slots (ports per slot, command byte); its `slotBytes` is this core's `inputBytes`. */
    readonly layout: SlotLayout,
    /** The state every peer started from (lockstep: the SYNC state); a reset loads it. */
    private readonly powerOn: Uint8Array | undefined,
    /**
     * Rollback: the command byte's bit 1 means "reset at this frame" (each frame's input alone
     * decides, so resimulation and prediction replay it exactly), and pauses are the scheduler's.
     * Lockstep (false): bit 0 paused, bits 1–7 a reset count (see {@link CommandWord}).
     */
    private readonly oneShotReset = false,
  ) {
    this.ports = layout.slots;
    this.inputBytes = layout.slotBytes;
    if (layout.ports > inner.ports)
      throw new SessionError(
        'bad-argument',
        `${layout.slots} slots × ${layout.portsPerSlot} ports need ${layout.ports} ports; the core has ${inner.ports}`,
      );
    for (let p = 0; p < layout.ports; p++) this.portInputs.push(new Uint8Array(inner.inputBytes));
    this.slotCommands = new Uint8Array(layout.slots);
  }

  get frame(): number {
    return this.inner.frame;
  }

  get stateBytes(): number {
    return this.inner.stateBytes;
  }

  /** True while the host's command byte says paused (lockstep). */
  get paused(): boolean {
    return this.pausedFlag;
  }

  setInput(slot: number, input: Uint8Array): void {
    const { portsPerSlot: w, inputBytes: n } = this.layout;
    for (let k = 0; k < w; k++) {
      const port = slot * w + k;
      const buf = this.portInputs[port];
      if (buf === undefined) continue;
      for (let i = 0; i < n; i++) buf[i] = input[k * n + i] ?? 0;
      this.inner.setInput(port, buf);
    }
    if (this.layout.commandByte && this.oneShotReset && slot < this.slotCommands.length)
      this.slotCommands[slot] = input[w * n] ?? 0;
    else if (this.layout.commandByte && slot === 0) this.command = input[w * n] ?? 0;
  }

  advance(): void {
    this.resetFlag = false;
    this.resetsAtFrame = 0;
    this.pauseChangedFlag = false;
    if (this.resetPending) {
      // Reset by a command before this frame (lockstep-cs's reset, applied through `reset()`).
      this.resetPending = false;
      this.resetFlag = true;
      this.resetsAtFrame = 1;
    }
    if (this.layout.commandByte && this.oneShotReset) {
      if (this.rollbackReset()) {
        this.resetToPowerOn();
        this.resetPending = false;
        this.resetFlag = true;
        this.resetsAtFrame = 1;
      }
    } else if (this.layout.commandByte) {
      const resets = this.command >> 1;
      // The first frame this peer runs is its baseline (a late joiner starts from the host's state).
      if (this.lastResets !== undefined && resets !== this.lastResets) {
        this.resetToPowerOn();
        this.resetPending = false;
        this.resetFlag = true;
        // The count travels mod 128: two resets the host made before one frame are two here.
        this.resetsAtFrame = (resets - this.lastResets) & 0x7f;
      }
      this.lastResets = resets;
      const paused = (this.command & 1) !== 0;
      if (paused !== this.pausedFlag) {
        this.pausedFlag = paused;
        this.pauseChangedFlag = true;
      }
      if (paused) return;
    }
    this.inner.advance();
  }

  /** Rollback: the reset bit of the lowest slot that plays at this frame ({@link ROLLBACK_PLAYS}; none: slot 0's). */
  private rollbackReset(): boolean {
    const c = this.slotCommands;
    for (let s = 0; s < c.length; s++) if ((c[s]! & ROLLBACK_PLAYS) !== 0) return (c[s]! & 2) !== 0;
    return ((c[0] ?? 0) & 2) !== 0;
  }

  /**
   * Loads the power-on state now and sets the ports' inputs again (reset by state), for the frame
   * about to run. lockstep-cs applies its scheduler's reset command through this.
   */
  resetToPowerOn(): void {
    if (this.powerOn === undefined) this.inner.reset();
    else this.inner.load(this.powerOn);
    for (let p = 0; p < this.portInputs.length; p++) this.inner.setInput(p, this.portInputs[p]!);
    this.resetPending = true;
  }

  /** Whether the frame that just ran reset (without allocating). */
  get didReset(): boolean {
    return this.resetFlag;
  }

  /** How many resets the frame that just ran stood for (0, 1, or more made before one frame). */
  get resetCount(): number {
    return this.resetsAtFrame;
  }

  /** Whether the pause flag changed at the frame that just ran. */
  get pauseChanged(): boolean {
    return this.pauseChangedFlag;
  }

  saveInto(target: Uint8Array): number {
    return this.inner.saveInto(target);
  }

  load(state: Uint8Array): void {
    this.inner.load(state);
  }

  checksum(): bigint {
    return this.inner.checksum();
  }

  /**
   * With a power-on state: reset by state ({@link resetToPowerOn}), so a scheduler's reset command
   * (lockstep-cs's `FceuCommand.Reset`, which the runner applies with `core.reset()`) puts every
   * peer in the same state. Without: the real core's reset.
   */
  reset(): void {
    if (this.powerOn !== undefined) this.resetToPowerOn();
    else this.inner.reset();
  }
}

/**
 * The slot layout of a session: `portsPerSlot` from the host's `maxLocalPlayers`; a command byte
 * in the lockstep modes when it fits the mode's wire (lockstep-p2p carries at most 4 bytes per
 * slot: MAMEHub's 32-bit mask).
 * @throws SessionError `bad-argument` when one slot's ports do not fit the mode at all.
 */
export function slotLayoutFor(
  mode: 'rollback' | 'lockstep-cs' | 'lockstep-p2p' | 'frame-advance',
  slots: number,
  portsPerSlot: number,
  inputBytes: number,
): SlotLayout {
  if (!Number.isInteger(portsPerSlot) || portsPerSlot < 1 || portsPerSlot > 16)
    throw new SessionError('bad-argument', `local players per peer must be 1..16, got ${portsPerSlot}`);
  if (mode === 'rollback') return new SlotLayout(slots, portsPerSlot, inputBytes, true);
  const block = portsPerSlot * inputBytes;
  if (mode === 'lockstep-p2p') {
    if (block > 4)
      throw new SessionError(
        'bad-argument',
        `lockstep-p2p carries 1..4 input bytes per peer (one MAMEHub mask): ${portsPerSlot} local players × ${inputBytes} bytes do not fit`,
      );
    return new SlotLayout(slots, portsPerSlot, inputBytes, block + 1 <= 4);
  }
  return new SlotLayout(slots, portsPerSlot, inputBytes, true);
}
