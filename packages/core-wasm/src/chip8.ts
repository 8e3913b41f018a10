import { decodeBase64 } from './base64.js';
import { type Chip8Config, type Chip8Platform, checkConfig, DEFAULT_SEED, IDENTITY_KEYS } from './chip8-config.js';
import { CHIP8_WASM_BASE64 } from './chip8-wasm.generated.js';
import { WasmCoreError } from './errors.js';
import { type RomSetupOptions, resolveRomSetup } from './rom-setup.js';
import { WasmCore, type WasmCoreOptions } from './wasm-core.js';

/** The extra exports of the CHIP-8 module (beyond the netplay ABI). */
interface Chip8Exports {
  c8_configure(platform: number, quirks: number, tickrate: number, seed: number): void;
  c8_set_keymap(port: number, bit: number, key: number): void;
  c8_config_word(index: number): number;
  c8_get_keymap(port: number, bit: number): number;
  c8_step(count: number): void;
  c8_peek(addr: number): number;
  c8_poke(addr: number, value: number): void;
  c8_pc(): number;
  c8_v(x: number): number;
  c8_i(): number;
  c8_cycles(): number;
  c8_sound_timer(): number;
}

let wasmBytes: Uint8Array | undefined;
let compiled: Promise<WebAssembly.Module> | undefined;
let compiledSync: WebAssembly.Module | undefined;

/** The bytes of the CHIP-8 core module (embedded in the package, decoded once). */
export function chip8WasmBytes(): Uint8Array {
  wasmBytes ??= decodeBase64(CHIP8_WASM_BASE64);
  return wasmBytes;
}

/** The compiled CHIP-8 module, compiled once per process (asynchronously). */
export function chip8Module(): Promise<WebAssembly.Module> {
  if (compiled === undefined) {
    compiled =
      compiledSync !== undefined
        ? Promise.resolve(compiledSync)
        : WebAssembly.compile(chip8WasmBytes() as BufferSource);
  }
  return compiled;
}

function chip8ModuleSync(): WebAssembly.Module {
  compiledSync ??= new WebAssembly.Module(chip8WasmBytes() as BufferSource);
  return compiledSync;
}

/** Options of {@link Chip8Core.create}: the ROM setup (database lookup and overrides) and the state mode. */
export interface Chip8CoreOptions extends RomSetupOptions {
  /** How to snapshot the state (default `auto`, which uses the core's regions). */
  readonly state?: WasmCoreOptions['state'];
  /** How many ports `Core.ports` reports, 1..4 (default 4). */
  readonly ports?: number;
}

/**
 * The CHIP-8 / SUPER-CHIP / XO-CHIP core: a {@link WasmCore} running the bundled AssemblyScript
 * module, configured from the ROM's chip-8-database entry (see {@link resolveRomSetup}).
 *
 * Input: each port is 2 bytes, a 16-bit little-endian mask; `config.keyMap` maps its bits to
 * CHIP-8 keys and the machine keypad is the OR of every port.
 */
export class Chip8Core extends WasmCore {
  private readonly c8: Chip8Exports;
  private configValue: Chip8Config;
  private rom: Uint8Array = new Uint8Array(0);
  /** The database entry title, or undefined for a ROM that is not in the bundled database. */
  title: string | undefined;

  /** Instantiates the core asynchronously (works on a browser's main thread) and loads `rom`. */
  static async create(rom: Uint8Array, options: Chip8CoreOptions = {}): Promise<Chip8Core> {
    const instance = await WebAssembly.instantiate(await chip8Module(), {});
    return new Chip8Core(instance, rom, options);
  }

  /**
   * Instantiates the core synchronously and loads `rom`. Fine in Node and workers; browsers may
   * refuse synchronous compilation on the main thread, where {@link Chip8Core.create} is the way.
   */
  static createSync(rom: Uint8Array, options: Chip8CoreOptions = {}): Chip8Core {
    return new Chip8Core(new WebAssembly.Instance(chip8ModuleSync(), {}), rom, options);
  }

  private constructor(instance: WebAssembly.Instance, rom: Uint8Array, options: Chip8CoreOptions) {
    super(instance, {
      state: options.state ?? 'auto',
      stateModule: 'chip8',
      ...(options.ports !== undefined ? { ports: options.ports } : {}),
    });
    this.c8 = instance.exports as unknown as Chip8Exports;
    const setup = resolveRomSetup(rom, options);
    this.title = setup.title;
    this.configValue = setup.config;
    this.applyConfig();
    this.loadRom(rom);
  }

  /**
   * The configuration in effect, read back from the machine (it is part of the savestate, so a
   * loaded state brings its own tickrate, quirks, seed and key map).
   */
  get config(): Chip8Config {
    const c = this.c8;
    const platform = c.c8_config_word(0) as Chip8Platform;
    const quirks = c.c8_config_word(1) >>> 0;
    const tickrate = c.c8_config_word(2) >>> 0;
    const seed = c.c8_config_word(3) >>> 0;
    const v = this.configValue;
    if (
      v.platform !== platform ||
      v.quirks !== quirks ||
      v.tickrate !== tickrate ||
      v.seed !== seed ||
      !this.sameKeys()
    ) {
      this.configValue = { platform, quirks, tickrate, seed, keyMap: this.readKeyMap() };
    }
    return this.configValue;
  }

  private sameKeys(): boolean {
    const map = this.configValue.keyMap;
    for (let port = 0; port < 4; port++) {
      const keys = map[port] ?? IDENTITY_KEYS;
      for (let bit = 0; bit < 16; bit++) {
        const k = this.c8.c8_get_keymap(port, bit);
        if ((k > 15 ? -1 : k) !== (keys[bit] ?? -1)) return false;
      }
    }
    return true;
  }

  private readKeyMap(): number[][] {
    return Array.from({ length: 4 }, (_, port) =>
      Array.from({ length: 16 }, (_, bit) => {
        const k = this.c8.c8_get_keymap(port, bit);
        return k > 15 ? -1 : k;
      }),
    );
  }

  /**
   * Changes the configuration and reloads the ROM (frame 0). The savestate layout may change (the
   * XO-CHIP memory is 64 KiB), so states saved under another platform do not load.
   */
  configure(config: Partial<Chip8Config>): void {
    const next: Chip8Config = { ...this.config, ...config };
    checkConfig(next);
    this.configValue = next;
    this.applyConfig();
    this.loadRom(this.rom);
  }

  /** Loads another ROM with the current configuration (no database lookup) at frame 0. */
  loadRom(rom: Uint8Array): void {
    this.rom = rom.slice();
    this.loadContent(this.rom);
  }

  /** Executes exactly `count` instructions, outside the frame loop (no timers, no waits). */
  step(count: number): void {
    if (!Number.isInteger(count) || count < 0) throw new WasmCoreError('bad-option', 'count must be a natural number');
    this.c8.c8_step(count);
  }

  /** Reads a byte of machine memory. */
  peek(addr: number): number {
    return this.c8.c8_peek(addr);
  }

  /** Writes a byte of machine memory (e.g. Timendus' 0x1FF menu selector). */
  poke(addr: number, value: number): void {
    this.c8.c8_poke(addr, value & 0xff);
  }

  /** Register vX (x = 0..15). */
  v(x: number): number {
    return this.c8.c8_v(x);
  }

  /** The index register I. */
  get i(): number {
    return this.c8.c8_i();
  }

  /** The program counter. */
  get pc(): number {
    return this.c8.c8_pc();
  }

  /** Instructions executed since reset (modulo 2^32). */
  get cycles(): number {
    return this.c8.c8_cycles() >>> 0;
  }

  /** The sound timer (the buzzer sounds while it is non-zero). */
  get soundTimer(): number {
    return this.c8.c8_sound_timer();
  }

  private applyConfig(): void {
    const c = this.configValue;
    this.c8.c8_configure(c.platform, c.quirks, c.tickrate, c.seed === 0 ? DEFAULT_SEED : c.seed);
    for (let port = 0; port < 4; port++) {
      const keys = c.keyMap[port] ?? IDENTITY_KEYS;
      for (let bit = 0; bit < 16; bit++) {
        const k = keys[bit] ?? -1;
        this.c8.c8_set_keymap(port, bit, k < 0 ? 0xff : k);
      }
    }
  }
}
