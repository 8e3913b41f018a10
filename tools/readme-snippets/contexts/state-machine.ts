// An emulated machine's memory and registers.
declare const z80Regs: Uint16Array;
declare const ram: Uint8Array;
declare let irqEnable: number;
declare const hiscores: Uint8Array;
declare const rom: Uint8Array;
declare const bank: Uint8Array;
declare let bankPointer: Uint8Array;
