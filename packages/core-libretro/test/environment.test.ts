// The environment answers, driven with native memory as a core would pass it (no core needed).
import koffi from 'koffi';
import { afterEach, describe, expect, it } from 'vitest';
import { ENV_EXPERIMENTAL, Env, SavestateContextValue } from '../src/abi.js';
import { Environment } from '../src/environment.js';
import { libretroProtos, NativeBuffer } from '../src/ffi.js';

libretroProtos();
const made: Environment[] = [];
const buffers: NativeBuffer[] = [];
afterEach(() => {
  for (const e of made.splice(0)) e.dispose();
  for (const b of buffers.splice(0)) b.free();
});

function env(options: Record<string, string> = {}): Environment {
  const e = new Environment({
    ports: 3,
    systemDir: '/sys-dir',
    saveDir: '/save-dir',
    corePath: '/tmp/x_libretro.so',
    options,
    savestateContext: SavestateContextValue['rollback-netplay'],
    log: undefined,
  });
  made.push(e);
  return e;
}

function mem(size: number): NativeBuffer {
  const b = new NativeBuffer(size);
  b.bytes.fill(0);
  buffers.push(b);
  return b;
}

function cstr(text: string): bigint {
  const b = NativeBuffer.cString(text);
  buffers.push(b);
  return b.ptr;
}

describe('Environment', () => {
  it('answers the calls a headless frontend must answer', () => {
    const e = env();
    const b = mem(16);
    expect(e.handle(Env.GET_CAN_DUPE, b.ptr)).toBe(true);
    expect(b.bytes[0]).toBe(1);
    expect(e.handle(Env.GET_SYSTEM_DIRECTORY, b.ptr)).toBe(true);
    expect(koffi.decode(b.ptr, 'const char *')).toBe('/sys-dir');
    expect(e.handle(Env.GET_SAVE_DIRECTORY, b.ptr)).toBe(true);
    expect(koffi.decode(b.ptr, 'const char *')).toBe('/save-dir');
    expect(e.handle(Env.GET_INPUT_MAX_USERS, b.ptr)).toBe(true);
    expect(koffi.decode(b.ptr, 'unsigned int')).toBe(3);
    expect(e.handle(Env.GET_SAVESTATE_CONTEXT | ENV_EXPERIMENTAL, b.ptr)).toBe(true);
    expect(koffi.decode(b.ptr, 'int')).toBe(3);
    expect(e.savestateContextAsked).toBe(true);
    expect(e.handle(Env.GET_INPUT_BITMASKS | ENV_EXPERIMENTAL, null)).toBe(true);
    koffi.encode(b.ptr, 'int', 2);
    expect(e.handle(Env.SET_PIXEL_FORMAT, b.ptr)).toBe(true);
    expect(e.pixelFormat).toBe('rgb565');
    koffi.encode(b.ptr, 'int', 7);
    expect(e.handle(Env.SET_PIXEL_FORMAT, b.ptr)).toBe(false);
    koffi.encode(b.ptr, 'uint64_t', 1n << 2n);
    expect(e.handle(Env.SET_SERIALIZATION_QUIRKS, b.ptr)).toBe(true);
    expect(e.quirks).toBe(4);
    expect(e.handle(Env.GET_LOG_INTERFACE, b.ptr)).toBe(true);
    expect(koffi.decode(b.ptr, 'void *')).not.toBe(null);
    expect(e.refused).toEqual([]);
  });

  it('declares variables, answers defaults and user values, and reports updates once', () => {
    const e = env({ core_speed: 'fast' });
    const vars = mem(16 * 3);
    koffi.encode(vars.ptr, 0, 'void *', cstr('core_speed'));
    koffi.encode(vars.ptr, 8, 'void *', cstr('Speed; normal|fast'));
    koffi.encode(vars.ptr, 16, 'void *', cstr('core_palette'));
    koffi.encode(vars.ptr, 24, 'void *', cstr('Palette; warm|cold'));
    expect(e.handle(Env.SET_VARIABLES, vars.ptr)).toBe(true);
    expect([...e.variables.keys()]).toEqual(['core_speed', 'core_palette']);
    const v = mem(16);
    koffi.encode(v.ptr, 0, 'void *', cstr('core_speed'));
    expect(e.handle(Env.GET_VARIABLE, v.ptr)).toBe(true);
    expect(koffi.decode(v.ptr, 8, 'const char *')).toBe('fast');
    koffi.encode(v.ptr, 0, 'void *', cstr('core_palette'));
    expect(e.handle(Env.GET_VARIABLE, v.ptr)).toBe(true);
    expect(koffi.decode(v.ptr, 8, 'const char *')).toBe('warm');
    koffi.encode(v.ptr, 0, 'void *', cstr('unknown_key'));
    expect(e.handle(Env.GET_VARIABLE, v.ptr)).toBe(false);
    const flag = mem(1);
    expect(e.handle(Env.GET_VARIABLE_UPDATE, flag.ptr)).toBe(true);
    expect(flag.bytes[0]).toBe(1);
    expect(e.handle(Env.GET_VARIABLE_UPDATE, flag.ptr)).toBe(true);
    expect(flag.bytes[0]).toBe(0);
  });

  it('refuses the rest by name, and flags a request for hardware rendering', () => {
    const e = env();
    const b = mem(256);
    expect(e.handle(Env.SET_HW_RENDER, b.ptr)).toBe(false);
    expect(e.wantsHardwareRender).toBe(true);
    expect(e.handle(Env.GET_RUMBLE_INTERFACE, b.ptr)).toBe(false);
    expect(e.handle(Env.GET_VFS_INTERFACE | ENV_EXPERIMENTAL, b.ptr)).toBe(false);
    expect(e.handle(Env.SET_SERIALIZATION_QUIRKS | ENV_EXPERIMENTAL, b.ptr)).toBe(false); // SET_HW_SHARED_CONTEXT
    expect(e.handle(0x20000 | 5, b.ptr)).toBe(false);
    expect(e.handle(9999, b.ptr)).toBe(false);
    expect(e.refused).toEqual([
      'RETRO_ENVIRONMENT_SET_HW_RENDER',
      'RETRO_ENVIRONMENT_GET_RUMBLE_INTERFACE',
      'RETRO_ENVIRONMENT_GET_VFS_INTERFACE',
      'RETRO_ENVIRONMENT_SET_HW_SHARED_CONTEXT',
      'private environment call 131077',
      'RETRO_ENVIRONMENT_9999',
    ]);
  });
});
