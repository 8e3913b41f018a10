// The CHIP-8 / SUPER-CHIP 1.1 / XO-CHIP core of @netplay/core-wasm, in AssemblyScript.
//
// Every bit of machine state lives in linear memory at fixed addresses (no globals, no heap), so
// the three state regions below are the whole savestate and the host's whole-memory fallback works
// as well. The exported `np_*` functions are the netplay core ABI (see the package README); the
// `c8_*` functions are specific to this core (configuration, single-stepping, memory poke/peek).

// ---------------------------------------------------------------------------------------------
// Memory map
// ---------------------------------------------------------------------------------------------

/** Machine registers, configuration and key map: the "cpu" state region. */
const CPU: u32 = 0x0200;
const CPU_LEN: u32 = 0x0140;
/** The physical 128x64 display, one byte per pixel, bit 0 = plane 0, bit 1 = plane 1: "display". */
const DISPLAY: u32 = 0x0400;
const DISPLAY_LEN: u32 = 128 * 64;
/** The logical framebuffer handed to the host (64x32 or 128x64 bytes), rebuilt on demand. */
const OUTFB: u32 = 0x2400;
/** One frame of audio: signed 16-bit mono samples at AUDIO_RATE. */
const AUDIO: u32 = 0x4400;
const AUDIO_RATE: u32 = 48000;
const AUDIO_SAMPLES: u32 = 800; // 48000 / 60
/** The staged input of each port (not part of the state). */
const INPUTS: u32 = 0x4c00;
const MAX_PORTS: u32 = 4;
/** Where the host writes the content (ROM) before np_load. */
const CONTENT: u32 = 0x10000;
const CONTENT_MAX: u32 = 0x10000 - 0x200;
/** The machine's memory (4 KiB used by CHIP-8 / SUPER-CHIP, 64 KiB by XO-CHIP): "ram". */
const RAM: u32 = 0x20000;

// Offsets inside CPU.
const V: u32 = CPU + 0; // 16 x u8
const R_I: u32 = CPU + 16;
const R_PC: u32 = CPU + 20;
const R_SP: u32 = CPU + 24;
const R_DT: u32 = CPU + 28;
const R_ST: u32 = CPU + 32;
const R_HIRES: u32 = CPU + 36;
const R_PLANES: u32 = CPU + 40;
const R_PITCH: u32 = CPU + 44;
const R_PHASE: u32 = CPU + 48;
const R_RNG: u32 = CPU + 52;
const R_HALTED: u32 = CPU + 56;
const R_KEYPAD: u32 = CPU + 60;
const R_WAITMASK: u32 = CPU + 64;
const R_PLATFORM: u32 = CPU + 72;
const R_QUIRKS: u32 = CPU + 76;
const R_TICKRATE: u32 = CPU + 80;
const R_SEED: u32 = CPU + 84;
const R_ROMLEN: u32 = CPU + 88;
const R_CYCLES_LO: u32 = CPU + 92;
const R_CYCLES_HI: u32 = CPU + 96;
const R_MEMMASK: u32 = CPU + 100;
const STACK: u32 = CPU + 128; // 16 x u16
const RPL: u32 = CPU + 160; // 16 x u8
const PATTERN: u32 = CPU + 176; // 16 x u8
const KEYMAP: u32 = CPU + 256; // MAX_PORTS x 16 x u8: input bit -> CHIP-8 key (0xff = none)

// ---------------------------------------------------------------------------------------------
// Platforms and quirks
// ---------------------------------------------------------------------------------------------

const PLATFORM_CHIP8: u32 = 0; // COSMAC VIP CHIP-8
const PLATFORM_MODERN_CHIP8: u32 = 1;
const PLATFORM_SCHIP_MODERN: u32 = 2;
const PLATFORM_SCHIP_LEGACY: u32 = 3;
const PLATFORM_XOCHIP: u32 = 4;

/** 8xy1/2/3 set vF = 0. */
const Q_LOGIC: u32 = 1;
/** Fx55/Fx65 increment I by x + 1 (VIP). */
const Q_MEM_INC: u32 = 2;
/** Fx55/Fx65 increment I by x (CHIP-48, SCHIP 1.0). Without Q_MEM_INC and Q_MEM_INC_X, I is unchanged. */
const Q_MEM_INC_X: u32 = 4;
/** Dxyn waits for the next frame in lores. */
const Q_VBLANK_LORES: u32 = 8;
/** Dxyn waits for the next frame in hires. */
const Q_VBLANK_HIRES: u32 = 16;
/** Sprites clip at the right and bottom edges (else they wrap). */
const Q_CLIP: u32 = 32;
/** 8xy6/8xyE shift vX in place. */
const Q_SHIFT: u32 = 64;
/** Bxnn jumps to xnn + vX. */
const Q_JUMP: u32 = 128;
/** 8xy4/5/6/7/E with x = F: the result overwrites the flag (else vF keeps the flag). */
const Q_VF_ORDER: u32 = 256;
/** Fx1E sets vF = 1 when I + vX > 0xFFF (Amiga). */
const Q_FX1E_FLAG: u32 = 512;
/** Scrolling in lores moves by half pixels (legacy SUPER-CHIP on the HP48). */
const Q_SCROLL_HALF_LORES: u32 = 1024;
/** In hires, Dxyn sets vF to the rows that collided plus the rows clipped at the bottom (SCHIP 1.1). */
const Q_COLLISION_ROWS: u32 = 2048;
/** In lores, Dxy0 draws an 8x16 sprite (SCHIP 1.1) instead of 16x16. */
const Q_LORES_DXY0_8X16: u32 = 4096;
/** 00FE/00FF only switch the mode and keep the screen (SCHIP 1.1 on the HP48); else they clear it. */
const Q_MODE_KEEPS_SCREEN: u32 = 8192;

export function c8_platform_quirks(platform: u32): u32 {
  if (platform == PLATFORM_CHIP8) return Q_LOGIC | Q_MEM_INC | Q_VBLANK_LORES | Q_VBLANK_HIRES | Q_CLIP;
  if (platform == PLATFORM_MODERN_CHIP8) return Q_MEM_INC | Q_CLIP;
  if (platform == PLATFORM_SCHIP_MODERN) return Q_SHIFT | Q_JUMP | Q_CLIP;
  if (platform == PLATFORM_SCHIP_LEGACY) {
    return (
      Q_SHIFT |
      Q_JUMP |
      Q_CLIP |
      Q_VBLANK_LORES |
      Q_SCROLL_HALF_LORES |
      Q_COLLISION_ROWS |
      Q_LORES_DXY0_8X16 |
      Q_MODE_KEEPS_SCREEN
    );
  }
  return Q_MEM_INC; // XO-CHIP: wraps, no display wait
}

export function c8_platform_tickrate(platform: u32): u32 {
  if (platform == PLATFORM_CHIP8) return 15;
  if (platform == PLATFORM_MODERN_CHIP8) return 12;
  if (platform == PLATFORM_XOCHIP) return 100;
  return 30;
}

// ---------------------------------------------------------------------------------------------
// Fonts
// ---------------------------------------------------------------------------------------------

const SMALL_FONT = memory.data<u8>([
  0xf0, 0x90, 0x90, 0x90, 0xf0, 0x20, 0x60, 0x20, 0x20, 0x70, 0xf0, 0x10, 0xf0, 0x80, 0xf0, 0xf0, 0x10, 0xf0, 0x10, 0xf0,
  0x90, 0x90, 0xf0, 0x10, 0x10, 0xf0, 0x80, 0xf0, 0x10, 0xf0, 0xf0, 0x80, 0xf0, 0x90, 0xf0, 0xf0, 0x10, 0x20, 0x40, 0x40,
  0xf0, 0x90, 0xf0, 0x90, 0xf0, 0xf0, 0x90, 0xf0, 0x10, 0xf0, 0xf0, 0x90, 0xf0, 0x90, 0x90, 0xe0, 0x90, 0xe0, 0x90, 0xe0,
  0xf0, 0x80, 0x80, 0x80, 0xf0, 0xe0, 0x90, 0x90, 0x90, 0xe0, 0xf0, 0x80, 0xf0, 0x80, 0xf0, 0xf0, 0x80, 0xf0, 0x80, 0x80,
]);
const BIG_FONT = memory.data<u8>([
  0xff, 0xff, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xff, 0xff, 0x18, 0x78, 0x78, 0x18, 0x18, 0x18, 0x18, 0x18, 0xff, 0xff,
  0xff, 0xff, 0x03, 0x03, 0xff, 0xff, 0xc0, 0xc0, 0xff, 0xff, 0xff, 0xff, 0x03, 0x03, 0xff, 0xff, 0x03, 0x03, 0xff, 0xff,
  0xc3, 0xc3, 0xc3, 0xc3, 0xff, 0xff, 0x03, 0x03, 0x03, 0x03, 0xff, 0xff, 0xc0, 0xc0, 0xff, 0xff, 0x03, 0x03, 0xff, 0xff,
  0xff, 0xff, 0xc0, 0xc0, 0xff, 0xff, 0xc3, 0xc3, 0xff, 0xff, 0xff, 0xff, 0x03, 0x03, 0x06, 0x0c, 0x18, 0x18, 0x18, 0x18,
  0xff, 0xff, 0xc3, 0xc3, 0xff, 0xff, 0xc3, 0xc3, 0xff, 0xff, 0xff, 0xff, 0xc3, 0xc3, 0xff, 0xff, 0x03, 0x03, 0xff, 0xff,
  0x7e, 0xff, 0xc3, 0xc3, 0xc3, 0xff, 0xff, 0xc3, 0xc3, 0xc3, 0xfc, 0xfc, 0xc3, 0xc3, 0xfc, 0xfc, 0xc3, 0xc3, 0xfc, 0xfc,
  0x3c, 0xff, 0xc3, 0xc0, 0xc0, 0xc0, 0xc0, 0xc3, 0xff, 0x3c, 0xfc, 0xfe, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xfe, 0xfc,
  0xff, 0xff, 0xc0, 0xc0, 0xff, 0xff, 0xc0, 0xc0, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0, 0xff, 0xff, 0xc0, 0xc0, 0xc0, 0xc0,
]);
const SMALL_FONT_ADDR: u32 = 0x000;
const BIG_FONT_ADDR: u32 = 0x050;

// Region names, NUL-terminated ASCII.
const NAME_CPU = memory.data<u8>([0x63, 0x70, 0x75, 0]); // "cpu"
const NAME_RAM = memory.data<u8>([0x72, 0x61, 0x6d, 0]); // "ram"
const NAME_DISPLAY = memory.data<u8>([0x64, 0x69, 0x73, 0x70, 0x6c, 0x61, 0x79, 0]); // "display"

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

@inline function rd(addr: u32): u32 {
  return load<u32>(addr);
}
@inline function wr(addr: u32, value: u32): void {
  store<u32>(addr, value);
}
@inline function vget(x: u32): u32 {
  return <u32>load<u8>(V + x);
}
@inline function vset(x: u32, value: u32): void {
  store<u8>(V + x, <u8>value);
}
@inline function mget(addr: u32): u32 {
  return <u32>load<u8>(RAM + (addr & rd(R_MEMMASK)));
}
@inline function mset(addr: u32, value: u32): void {
  store<u8>(RAM + (addr & rd(R_MEMMASK)), <u8>value);
}
@inline function hasQuirk(q: u32): bool {
  return (rd(R_QUIRKS) & q) != 0;
}
@inline function isXO(): bool {
  return rd(R_PLATFORM) == PLATFORM_XOCHIP;
}
@inline function hasHires(): bool {
  return rd(R_PLATFORM) >= PLATFORM_SCHIP_MODERN;
}

/** Writes the result and the flag of an 8xy_ operation in the order the quirk says. */
@inline function setWithFlag(x: u32, result: u32, flag: u32): void {
  if (hasQuirk(Q_VF_ORDER)) {
    vset(15, flag);
    vset(x, result);
  } else {
    vset(x, result);
    vset(15, flag);
  }
}

// ---------------------------------------------------------------------------------------------
// Configuration and lifecycle
// ---------------------------------------------------------------------------------------------

/** Sets platform, quirks, tickrate and PRNG seed; they take effect at the next np_reset. */
export function c8_configure(platform: u32, quirks: u32, tickrate: u32, seed: u32): void {
  wr(R_PLATFORM, platform > PLATFORM_XOCHIP ? PLATFORM_MODERN_CHIP8 : platform);
  wr(R_QUIRKS, quirks);
  wr(R_TICKRATE, tickrate == 0 ? 1 : tickrate);
  wr(R_SEED, seed);
  wr(R_MEMMASK, platform == PLATFORM_XOCHIP ? 0xffff : 0x0fff);
}

/** Reads the configuration back: 0 platform, 1 quirks, 2 tickrate, 3 seed. */
export function c8_config_word(index: u32): u32 {
  if (index == 0) return rd(R_PLATFORM);
  if (index == 1) return rd(R_QUIRKS);
  if (index == 2) return rd(R_TICKRATE);
  return rd(R_SEED);
}

/** The CHIP-8 key input bit `bit` of `port` presses (0xff = none). */
export function c8_get_keymap(port: u32, bit: u32): u32 {
  if (port >= MAX_PORTS || bit >= 16) return 0xff;
  return load<u8>(KEYMAP + port * 16 + bit);
}

/** Maps input bit `bit` of `port` to CHIP-8 key `key` (0..15), or to nothing when key > 15. */
export function c8_set_keymap(port: u32, bit: u32, key: u32): void {
  if (port >= MAX_PORTS || bit >= 16) return;
  store<u8>(KEYMAP + port * 16 + bit, key > 15 ? 0xff : <u8>key);
}

function defaultKeymap(): void {
  for (let p: u32 = 0; p < MAX_PORTS; p++) {
    for (let b: u32 = 0; b < 16; b++) store<u8>(KEYMAP + p * 16 + b, <u8>b);
  }
}

// Defaults at instantiation: VIP-less modern CHIP-8, identity key map.
c8_configure(PLATFORM_MODERN_CHIP8, c8_platform_quirks(PLATFORM_MODERN_CHIP8), 12, 0x2545f491);
defaultKeymap();

/** ABI: the version of the netplay core ABI this module implements. */
export function np_abi_version(): u32 {
  return 1;
}

/** ABI: a pointer where the host may write up to `len` bytes of content, or 0 when too large. */
export function np_content_ptr(len: u32): u32 {
  return len > CONTENT_MAX ? 0 : CONTENT;
}

/** ABI: loads the `len` bytes written at np_content_ptr and resets. Returns 0, or 1 when too large. */
export function np_load(len: u32): u32 {
  const platformMax: u32 = rd(R_MEMMASK) + 1 - 0x200;
  if (len > CONTENT_MAX || len > platformMax) return 1;
  wr(R_ROMLEN, len);
  np_reset();
  return 0;
}

/** ABI: power-on state with the loaded content. Inputs are cleared. */
export function np_reset(): void {
  for (let i: u32 = 0; i < 16; i++) store<u8>(V + i, 0);
  wr(R_I, 0);
  wr(R_PC, 0x200);
  wr(R_SP, 0);
  wr(R_DT, 0);
  wr(R_ST, 0);
  wr(R_HIRES, 0);
  wr(R_PLANES, 1);
  wr(R_PITCH, 64);
  wr(R_PHASE, 0);
  const seed = rd(R_SEED);
  wr(R_RNG, seed == 0 ? 0x2545f491 : seed);
  wr(R_HALTED, 0);
  wr(R_KEYPAD, 0);
  wr(R_WAITMASK, 0);
  wr(R_CYCLES_LO, 0);
  wr(R_CYCLES_HI, 0);
  wr(R_MEMMASK, isXO() ? 0xffff : 0x0fff);
  memory.fill(STACK, 0, 32);
  memory.fill(RPL, 0, 16);
  for (let i: u32 = 0; i < 16; i++) store<u8>(PATTERN + i, 0xf0);
  memory.fill(DISPLAY, 0, DISPLAY_LEN);
  memory.fill(RAM, 0, 0x10000);
  memory.copy(RAM + SMALL_FONT_ADDR, SMALL_FONT, 80);
  memory.copy(RAM + BIG_FONT_ADDR, BIG_FONT, 160);
  memory.copy(RAM + 0x200, CONTENT, rd(R_ROMLEN));
  memory.fill(INPUTS, 0, MAX_PORTS * 4);
  memory.fill(AUDIO, 0, AUDIO_SAMPLES * 2);
}

/** ABI: the number of input ports. */
export function np_ports(): u32 {
  return MAX_PORTS;
}

/** ABI: the size in bytes of one port's input (at most 4). */
export function np_input_bytes(): u32 {
  return 2;
}

/** ABI: sets the input of `port` for the next frame (the input bytes, little-endian, in an i32). */
export function np_set_input(port: u32, value: u32): void {
  if (port < MAX_PORTS) store<u32>(INPUTS + port * 4, value & 0xffff);
}

// ---------------------------------------------------------------------------------------------
// Display
// ---------------------------------------------------------------------------------------------

/** Draws a sprite; returns vF. */
function draw(xr: u32, yr: u32, n: u32): u32 {
  const hires = rd(R_HIRES) != 0;
  const w: u32 = hires ? 128 : 64;
  const h: u32 = hires ? 64 : 32;
  const scale: u32 = hires ? 1 : 2;
  const x0 = vget(xr) & (w - 1);
  const y0 = vget(yr) & (h - 1);
  const clip = hasQuirk(Q_CLIP);
  let rows: u32 = n;
  let cols: u32 = 8;
  if (n == 0) {
    if (!hasHires()) return 0;
    rows = 16;
    cols = !hires && hasQuirk(Q_LORES_DXY0_8X16) ? 8 : 16;
  }
  const countRows = hires && clip && hasQuirk(Q_COLLISION_ROWS);
  let rowHits: u32 = 0;
  const bytesPerRow: u32 = cols >> 3;
  const planes = rd(R_PLANES);
  let addr = rd(R_I);
  let collision: u32 = 0;
  for (let plane: u32 = 1; plane <= 2; plane <<= 1) {
    if ((planes & plane) == 0) continue;
    for (let row: u32 = 0; row < rows; row++) {
      let py = y0 + row;
      if (py >= h) {
        if (clip) {
          if (countRows) rowHits += rows - row;
          break;
        }
        py -= h;
      }
      let bits: u32 = mget(addr + row * bytesPerRow);
      if (cols == 16) bits = (bits << 8) | mget(addr + row * 2 + 1);
      if (bits == 0) continue;
      let rowHit = false;
      for (let col: u32 = 0; col < cols; col++) {
        if (((bits >> (cols - 1 - col)) & 1) == 0) continue;
        let px = x0 + col;
        if (px >= w) {
          if (clip) break;
          px -= w;
        }
        const base = DISPLAY + py * scale * 128 + px * scale;
        if ((load<u8>(base) & plane) != 0) {
          collision = 1;
          rowHit = true;
        }
        store<u8>(base, load<u8>(base) ^ <u8>plane);
        if (scale == 2) {
          store<u8>(base + 1, load<u8>(base + 1) ^ <u8>plane);
          store<u8>(base + 128, load<u8>(base + 128) ^ <u8>plane);
          store<u8>(base + 129, load<u8>(base + 129) ^ <u8>plane);
        }
      }
      if (rowHit) rowHits++;
    }
    addr += rows * bytesPerRow;
  }
  return countRows ? rowHits : collision;
}

function clearPlanes(mask: u32): void {
  const keep: u8 = <u8>(~mask & 0xff);
  for (let i: u32 = 0; i < DISPLAY_LEN; i++) store<u8>(DISPLAY + i, load<u8>(DISPLAY + i) & keep);
}

/** The scroll distance in physical pixels for `n` logical pixels. */
@inline function physical(n: u32): u32 {
  if (rd(R_HIRES) != 0 || hasQuirk(Q_SCROLL_HALF_LORES)) return n;
  return n * 2;
}

/** Moves the selected planes by (dx, dy) physical pixels; pixels moved off the screen are lost. */
function scroll(dx: i32, dy: i32): void {
  const mask: u8 = <u8>(rd(R_PLANES) & 3);
  const keep: u8 = ~mask;
  const yStart: i32 = dy > 0 ? 63 : 0;
  const yStep: i32 = dy > 0 ? -1 : 1;
  const xStart: i32 = dx > 0 ? 127 : 0;
  const xStep: i32 = dx > 0 ? -1 : 1;
  for (let j: i32 = 0, y: i32 = yStart; j < 64; j++, y += yStep) {
    for (let i: i32 = 0, x: i32 = xStart; i < 128; i++, x += xStep) {
      const sx = x - dx;
      const sy = y - dy;
      let src: u8 = 0;
      if (sx >= 0 && sx < 128 && sy >= 0 && sy < 64) src = load<u8>(DISPLAY + <u32>(sy * 128 + sx)) & mask;
      const d = DISPLAY + <u32>(y * 128 + x);
      store<u8>(d, (load<u8>(d) & keep) | src);
    }
  }
}

/** ABI: the logical framebuffer: one byte per pixel, the plane bits (format 0, "index8"). */
export function np_fb_ptr(): u32 {
  const hires = rd(R_HIRES) != 0;
  if (hires) {
    memory.copy(OUTFB, DISPLAY, DISPLAY_LEN);
  } else {
    for (let y: u32 = 0; y < 32; y++) {
      for (let x: u32 = 0; x < 64; x++) store<u8>(OUTFB + y * 64 + x, load<u8>(DISPLAY + y * 256 + x * 2));
    }
  }
  return OUTFB;
}
export function np_fb_width(): u32 {
  return rd(R_HIRES) != 0 ? 128 : 64;
}
export function np_fb_height(): u32 {
  return rd(R_HIRES) != 0 ? 64 : 32;
}
/** ABI: framebuffer format 0 = one byte per pixel holding a palette index (here: plane bits 0..3). */
export function np_fb_format(): u32 {
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Audio
// ---------------------------------------------------------------------------------------------

function renderAudio(): void {
  if (rd(R_ST) == 0) {
    memory.fill(AUDIO, 0, AUDIO_SAMPLES * 2);
    return;
  }
  // Pattern bit rate: 4000 * 2^((pitch - 64) / 48) bits per second, phase in 16.16 bits.
  const rate: f64 = 4000.0 * Math.pow(2.0, (<f64>(<i32>rd(R_PITCH)) - 64.0) / 48.0);
  const step: u32 = <u32>((rate * 65536.0) / <f64>AUDIO_RATE);
  let phase = rd(R_PHASE);
  for (let s: u32 = 0; s < AUDIO_SAMPLES; s++) {
    const bitIndex = (phase >> 16) & 127;
    const byte: u32 = load<u8>(PATTERN + (bitIndex >> 3));
    const on = (byte >> (7 - (bitIndex & 7))) & 1;
    store<i16>(AUDIO + s * 2, on != 0 ? 8192 : -8192);
    phase = (phase + step) & 0x7fffff; // 128 bits << 16
  }
  wr(R_PHASE, phase);
}

/** ABI: the audio of the last frame, signed 16-bit mono (format 0). */
export function np_audio_ptr(): u32 {
  return AUDIO;
}
export function np_audio_len(): u32 {
  return AUDIO_SAMPLES;
}
export function np_audio_rate(): u32 {
  return AUDIO_RATE;
}

// ---------------------------------------------------------------------------------------------
// The interpreter
// ---------------------------------------------------------------------------------------------

const STEP_OK: u32 = 0;
/** The instruction ends the frame (display wait, key wait, exit). */
const STEP_YIELD: u32 = 1;

@inline function skip(pc: u32): u32 {
  // XO-CHIP: skipping over F000 nnnn skips four bytes.
  if (isXO() && mget(pc) == 0xf0 && mget(pc + 1) == 0x00) return pc + 4;
  return pc + 2;
}

function step(): u32 {
  let pc = rd(R_PC);
  const hi = mget(pc);
  const lo = mget(pc + 1);
  pc = (pc + 2) & 0xffff;
  const x = hi & 15;
  const y = lo >> 4;
  const n = lo & 15;
  const nnn = ((hi & 15) << 8) | lo;
  let result = STEP_OK;
  let c = rd(R_CYCLES_LO) + 1;
  wr(R_CYCLES_LO, c);
  if (c == 0) wr(R_CYCLES_HI, rd(R_CYCLES_HI) + 1);

  switch (hi >> 4) {
    case 0x0: {
      if (hi == 0 && lo == 0xe0) {
        clearPlanes(rd(R_PLANES));
      } else if (hi == 0 && lo == 0xee) {
        const sp = (rd(R_SP) - 1) & 15;
        wr(R_SP, sp);
        pc = <u32>load<u16>(STACK + sp * 2);
      } else if (hi == 0 && y == 0xc && hasHires()) {
        scroll(0, <i32>physical(n));
      } else if (hi == 0 && y == 0xd && isXO()) {
        scroll(0, -<i32>physical(n));
      } else if (hi == 0 && lo == 0xfb && hasHires()) {
        scroll(<i32>physical(4), 0);
      } else if (hi == 0 && lo == 0xfc && hasHires()) {
        scroll(-<i32>physical(4), 0);
      } else if (hi == 0 && lo == 0xfd && hasHires()) {
        wr(R_HALTED, 1);
        pc = (pc - 2) & 0xffff;
        result = STEP_YIELD;
      } else if (hi == 0 && lo == 0xfe && hasHires()) {
        wr(R_HIRES, 0);
        if (!hasQuirk(Q_MODE_KEEPS_SCREEN)) clearPlanes(3);
      } else if (hi == 0 && lo == 0xff && hasHires()) {
        wr(R_HIRES, 1);
        if (!hasQuirk(Q_MODE_KEEPS_SCREEN)) clearPlanes(3);
      }
      // Other 0nnn (machine code calls) are ignored.
      break;
    }
    case 0x1:
      pc = nnn;
      break;
    case 0x2: {
      const sp = rd(R_SP);
      store<u16>(STACK + sp * 2, <u16>pc);
      wr(R_SP, (sp + 1) & 15);
      pc = nnn;
      break;
    }
    case 0x3:
      if (vget(x) == lo) pc = skip(pc);
      break;
    case 0x4:
      if (vget(x) != lo) pc = skip(pc);
      break;
    case 0x5: {
      if (n == 0) {
        if (vget(x) == vget(y)) pc = skip(pc);
      } else if (n == 2 && isXO()) {
        const i = rd(R_I);
        const count: u32 = x <= y ? y - x : x - y;
        for (let k: u32 = 0; k <= count; k++) mset(i + k, vget(x <= y ? x + k : x - k));
      } else if (n == 3 && isXO()) {
        const i = rd(R_I);
        const count: u32 = x <= y ? y - x : x - y;
        for (let k: u32 = 0; k <= count; k++) vset(x <= y ? x + k : x - k, mget(i + k));
      }
      break;
    }
    case 0x6:
      vset(x, lo);
      break;
    case 0x7:
      vset(x, vget(x) + lo);
      break;
    case 0x8: {
      const vx = vget(x);
      const vy = vget(y);
      switch (n) {
        case 0x0:
          vset(x, vy);
          break;
        case 0x1:
          vset(x, vx | vy);
          if (hasQuirk(Q_LOGIC)) vset(15, 0);
          break;
        case 0x2:
          vset(x, vx & vy);
          if (hasQuirk(Q_LOGIC)) vset(15, 0);
          break;
        case 0x3:
          vset(x, vx ^ vy);
          if (hasQuirk(Q_LOGIC)) vset(15, 0);
          break;
        case 0x4: {
          const sum = vx + vy;
          setWithFlag(x, sum & 255, sum > 255 ? 1 : 0);
          break;
        }
        case 0x5:
          setWithFlag(x, (vx - vy) & 255, vx >= vy ? 1 : 0);
          break;
        case 0x6: {
          const src = hasQuirk(Q_SHIFT) ? vx : vy;
          setWithFlag(x, src >> 1, src & 1);
          break;
        }
        case 0x7:
          setWithFlag(x, (vy - vx) & 255, vy >= vx ? 1 : 0);
          break;
        case 0xe: {
          const src = hasQuirk(Q_SHIFT) ? vx : vy;
          setWithFlag(x, (src << 1) & 255, src >> 7);
          break;
        }
        default:
          break;
      }
      break;
    }
    case 0x9:
      if (n == 0 && vget(x) != vget(y)) pc = skip(pc);
      break;
    case 0xa:
      wr(R_I, nnn);
      break;
    case 0xb:
      pc = (nnn + vget(hasQuirk(Q_JUMP) ? x : 0)) & 0xffff;
      break;
    case 0xc: {
      let r = rd(R_RNG);
      r ^= r << 13;
      r ^= r >> 17;
      r ^= r << 5;
      wr(R_RNG, r);
      vset(x, (r >> 24) & lo);
      break;
    }
    case 0xd: {
      vset(15, draw(x, y, n));
      const hires = rd(R_HIRES) != 0;
      if (hasQuirk(hires ? Q_VBLANK_HIRES : Q_VBLANK_LORES)) result = STEP_YIELD;
      break;
    }
    case 0xe: {
      const key = vget(x) & 15;
      const down = (rd(R_KEYPAD) >> key) & 1;
      if (lo == 0x9e && down != 0) pc = skip(pc);
      else if (lo == 0xa1 && down == 0) pc = skip(pc);
      break;
    }
    case 0xf: {
      if (x == 0 && lo == 0x00 && isXO()) {
        wr(R_I, (mget(pc) << 8) | mget(pc + 1));
        pc = (pc + 2) & 0xffff;
        break;
      }
      switch (lo) {
        case 0x01:
          if (isXO()) wr(R_PLANES, x & 3);
          break;
        case 0x02:
          if (x == 0 && isXO()) {
            const i = rd(R_I);
            for (let k: u32 = 0; k < 16; k++) store<u8>(PATTERN + k, <u8>mget(i + k));
          }
          break;
        case 0x07:
          vset(x, rd(R_DT));
          break;
        case 0x0a: {
          // Wait for a key to be pressed and then released.
          const keys = rd(R_KEYPAD);
          const released = rd(R_WAITMASK) & ~keys & 0xffff;
          if (released != 0) {
            vset(x, ctz(released));
            wr(R_WAITMASK, 0);
          } else {
            wr(R_WAITMASK, rd(R_WAITMASK) | keys);
            pc = (pc - 2) & 0xffff;
            result = STEP_YIELD;
          }
          break;
        }
        case 0x15:
          wr(R_DT, vget(x));
          break;
        case 0x18:
          wr(R_ST, vget(x));
          break;
        case 0x1e: {
          const sum = rd(R_I) + vget(x);
          if (hasQuirk(Q_FX1E_FLAG)) vset(15, sum > 0xfff ? 1 : 0);
          wr(R_I, sum & 0xffff);
          break;
        }
        case 0x29:
          wr(R_I, SMALL_FONT_ADDR + (vget(x) & 15) * 5);
          break;
        case 0x30:
          if (hasHires()) wr(R_I, BIG_FONT_ADDR + (vget(x) & 15) * 10);
          break;
        case 0x33: {
          const v = vget(x);
          const i = rd(R_I);
          mset(i, v / 100);
          mset(i + 1, (v / 10) % 10);
          mset(i + 2, v % 10);
          break;
        }
        case 0x3a:
          if (isXO()) wr(R_PITCH, vget(x));
          break;
        case 0x55:
        case 0x65: {
          const i = rd(R_I);
          for (let k: u32 = 0; k <= x; k++) {
            if (lo == 0x55) mset(i + k, vget(k));
            else vset(k, mget(i + k));
          }
          if (hasQuirk(Q_MEM_INC)) wr(R_I, (i + x + 1) & 0xffff);
          else if (hasQuirk(Q_MEM_INC_X)) wr(R_I, (i + x) & 0xffff);
          break;
        }
        case 0x75:
          if (hasHires()) {
            const last = isXO() ? x : x & 7;
            for (let k: u32 = 0; k <= last; k++) store<u8>(RPL + k, <u8>vget(k));
          }
          break;
        case 0x85:
          if (hasHires()) {
            const last = isXO() ? x : x & 7;
            for (let k: u32 = 0; k <= last; k++) vset(k, load<u8>(RPL + k));
          }
          break;
        default:
          break;
      }
      break;
    }
    default:
      break;
  }
  wr(R_PC, pc & 0xffff);
  return result;
}

/** Computes the machine keypad: the OR of every port's input mapped through the key map. */
function latchKeypad(): void {
  let keys: u32 = 0;
  for (let p: u32 = 0; p < MAX_PORTS; p++) {
    const input = load<u32>(INPUTS + p * 4);
    if (input == 0) continue;
    for (let b: u32 = 0; b < 16; b++) {
      if (((input >> b) & 1) == 0) continue;
      const key: u32 = load<u8>(KEYMAP + p * 16 + b);
      if (key < 16) keys |= 1 << key;
    }
  }
  wr(R_KEYPAD, keys);
}

/** ABI: runs one 60 Hz frame: `tickrate` instructions (fewer on a display or key wait), then the timers. */
export function np_run_frame(): void {
  latchKeypad();
  if (rd(R_HALTED) == 0) {
    const tickrate = rd(R_TICKRATE);
    for (let k: u32 = 0; k < tickrate; k++) {
      if (step() != STEP_OK) break;
    }
  }
  renderAudio();
  const dt = rd(R_DT);
  if (dt > 0) wr(R_DT, dt - 1);
  const st = rd(R_ST);
  if (st > 0) wr(R_ST, st - 1);
}

/** Executes exactly `count` instructions, ignoring frames, timers and waits (for tests and tools). */
export function c8_step(count: u32): void {
  latchKeypad();
  for (let k: u32 = 0; k < count; k++) {
    if (rd(R_HALTED) != 0) return;
    step();
  }
}

/** Reads a byte of machine memory. */
export function c8_peek(addr: u32): u32 {
  return mget(addr);
}

/** Writes a byte of machine memory. */
export function c8_poke(addr: u32, value: u32): void {
  mset(addr, value);
}

/** Register vX (x = 0..15). */
export function c8_v(x: u32): u32 {
  return vget(x & 15);
}

/** The index register I. */
export function c8_i(): u32 {
  return rd(R_I);
}

/** The program counter. */
export function c8_pc(): u32 {
  return rd(R_PC);
}

/** Instructions executed since reset (low 32 bits). */
export function c8_cycles(): u32 {
  return rd(R_CYCLES_LO);
}

/** The current sound timer. */
export function c8_sound_timer(): u32 {
  return rd(R_ST);
}

// ---------------------------------------------------------------------------------------------
// State regions
// ---------------------------------------------------------------------------------------------

/** ABI (optional): how many state regions the core has. */
export function np_state_regions(): u32 {
  return 3;
}
export function np_state_region_ptr(index: u32): u32 {
  if (index == 0) return CPU;
  if (index == 1) return DISPLAY;
  return RAM;
}
export function np_state_region_len(index: u32): u32 {
  if (index == 0) return CPU_LEN;
  if (index == 1) return DISPLAY_LEN;
  if (index == 2) return rd(R_MEMMASK) + 1;
  return 0;
}
/** A NUL-terminated ASCII name. */
export function np_state_region_name(index: u32): u32 {
  if (index == 0) return <u32>NAME_CPU;
  if (index == 1) return <u32>NAME_DISPLAY;
  return <u32>NAME_RAM;
}
