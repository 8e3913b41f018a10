/**
 * The command byte of FCE Ultra 0.91's server→client frame data (seed 002). `0` means no command.
 * Two commands are ranges: the eight VS Unisystem dip switches (11–18, switch = code − 11) and
 * the nine save-state slots (42–50, slot = code − 42); their first and last codes are named here
 * and {@link fceuDipSwitchCommand} / {@link fceuSelectSlotCommand} build them.
 */
export enum FceuCommand {
  /** No command this frame. */
  None = 0,
  /** Select FDS disk side. */
  FdsSelectSide = 1,
  /** Insert/eject FDS disk. */
  FdsInsertEject = 2,
  /** Toggle VS Unisystem dip switch editing. */
  VsDipSwitchEditing = 10,
  /** Toggle VS Unisystem dip switch 0 (first of the range 11–18). */
  VsDipSwitchFirst = 11,
  /** Toggle VS Unisystem dip switch 7 (last of the range 11–18). */
  VsDipSwitchLast = 18,
  /** Insert VS Unisystem coin. */
  VsInsertCoin = 19,
  /** Reset NES. */
  Reset = 30,
  /** Power toggle NES. */
  PowerToggle = 31,
  /** Save state (the seed notes it is "not implemented correctly" in FCE Ultra). */
  SaveState = 40,
  /** Load state (the seed notes it is "not implemented correctly" in FCE Ultra). */
  LoadState = 41,
  /** Select save-state slot 0 (first of the range 42–50). */
  SelectSlotFirst = 42,
  /** Select save-state slot 8 (last of the range 42–50). */
  SelectSlotLast = 50,
}

/** Number of VS Unisystem dip switches addressable by commands 11–18. */
export const FCEU_DIP_SWITCHES = 8;
/** Number of save-state slots addressable by commands 42–50. */
export const FCEU_SAVE_SLOTS = 9;

/** 1 at every command code the seed defines: 0, 1, 2, 10–19, 30, 31, 40–50. */
const COMMAND_TABLE: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (const [from, to] of [
    [0, 2],
    [10, 19],
    [30, 31],
    [40, 50],
  ] as const) {
    for (let c = from; c <= to; c++) t[c] = 1;
  }
  return t;
})();

/** True when `code` is one of the command codes the seed defines. One table load: decoders call it every frame. */
export function isFceuCommand(code: number): boolean {
  // `(code & 0xff) === code` holds exactly for the integers 0–255 (not for fractions, NaN or ±∞).
  return (code & 0xff) === code && COMMAND_TABLE[code] === 1;
}

/** The command toggling VS Unisystem dip switch `index` (0–7): `11 + index`. */
export function fceuDipSwitchCommand(index: number): number {
  if (!Number.isInteger(index) || index < 0 || index >= FCEU_DIP_SWITCHES) {
    throw new RangeError(`dip switch ${index} is not in 0..${FCEU_DIP_SWITCHES - 1}`);
  }
  return FceuCommand.VsDipSwitchFirst + index;
}

/** The command selecting save-state slot `slot` (0–8): `42 + slot`. */
export function fceuSelectSlotCommand(slot: number): number {
  if (!Number.isInteger(slot) || slot < 0 || slot >= FCEU_SAVE_SLOTS) {
    throw new RangeError(`save slot ${slot} is not in 0..${FCEU_SAVE_SLOTS - 1}`);
  }
  return FceuCommand.SelectSlotFirst + slot;
}

/** A command code split into what it means; ranges carry their index. */
export type FceuCommandInfo =
  | {
      /** Code 0: no command this frame. */
      readonly kind: 'none';
    }
  | {
      /** Code 1: select the Famicom Disk System disk side. */
      readonly kind: 'fds-select-side';
    }
  | {
      /** Code 2: insert or eject the Famicom Disk System disk. */
      readonly kind: 'fds-insert-eject';
    }
  | {
      /** Code 10: toggle VS Unisystem dip switch editing. */
      readonly kind: 'vs-dip-switch-editing';
    }
  | {
      /** Codes 11–18: toggle one VS Unisystem dip switch. */
      readonly kind: 'vs-dip-switch';
      /** The dip switch toggled, 0–7 (the code − 11). */
      readonly index: number;
    }
  | {
      /** Code 19: insert a VS Unisystem coin. */
      readonly kind: 'vs-insert-coin';
    }
  | {
      /** Code 30: reset the NES. */
      readonly kind: 'reset';
    }
  | {
      /** Code 31: toggle the NES's power. */
      readonly kind: 'power-toggle';
    }
  | {
      /** Code 40: save a state (not implemented correctly in FCE Ultra, says the seed). */
      readonly kind: 'save-state';
    }
  | {
      /** Code 41: load a state (not implemented correctly in FCE Ultra, says the seed). */
      readonly kind: 'load-state';
    }
  | {
      /** Codes 42–50: select a save-state slot. */
      readonly kind: 'select-slot';
      /** The slot selected, 0–8 (the code − 42). */
      readonly slot: number;
    };

/** Describes a command code, or returns `undefined` for a code the seed does not define. */
export function describeFceuCommand(code: number): FceuCommandInfo | undefined {
  if (code >= FceuCommand.VsDipSwitchFirst && code <= FceuCommand.VsDipSwitchLast && Number.isInteger(code)) {
    return { kind: 'vs-dip-switch', index: code - FceuCommand.VsDipSwitchFirst };
  }
  if (code >= FceuCommand.SelectSlotFirst && code <= FceuCommand.SelectSlotLast && Number.isInteger(code)) {
    return { kind: 'select-slot', slot: code - FceuCommand.SelectSlotFirst };
  }
  switch (code) {
    case FceuCommand.None:
      return { kind: 'none' };
    case FceuCommand.FdsSelectSide:
      return { kind: 'fds-select-side' };
    case FceuCommand.FdsInsertEject:
      return { kind: 'fds-insert-eject' };
    case FceuCommand.VsDipSwitchEditing:
      return { kind: 'vs-dip-switch-editing' };
    case FceuCommand.VsInsertCoin:
      return { kind: 'vs-insert-coin' };
    case FceuCommand.Reset:
      return { kind: 'reset' };
    case FceuCommand.PowerToggle:
      return { kind: 'power-toggle' };
    case FceuCommand.SaveState:
      return { kind: 'save-state' };
    case FceuCommand.LoadState:
      return { kind: 'load-state' };
    default:
      return undefined;
  }
}
