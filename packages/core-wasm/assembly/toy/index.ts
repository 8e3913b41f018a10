// A toy core for the host's tests: it meets the netplay core ABI without state regions, keeps
// part of its state in exported mutable globals, and so exercises the whole-memory fallback.

const FB: u32 = 1024; // 8x8 index8 framebuffer
const AUDIO: u32 = 2048; // 4 samples
const CONTENT: u32 = 4096;
const INPUTS: u32 = 8192; // 2 ports x u32

/** The frame's accumulated inputs (a mutable global: saved by the fallback). */
export let acc: i32 = 0;
/** A 64-bit mutable global, to check i64 globals survive a snapshot. */
export let wide: i64 = 0;
/** An immutable export: not state. */
export const VERSION: i32 = 7;
let contentLen: u32 = 0;

export function np_abi_version(): u32 {
  return 1;
}
export function np_ports(): u32 {
  return 2;
}
export function np_input_bytes(): u32 {
  return 1;
}
export function np_content_ptr(len: u32): u32 {
  return len > 1024 ? 0 : CONTENT;
}
export function np_load(len: u32): u32 {
  contentLen = len;
  np_reset();
  return 0;
}
export function np_reset(): void {
  acc = 0;
  wide = 0;
  memory.fill(FB, 0, 64);
  memory.fill(INPUTS, 0, 8);
  memory.fill(AUDIO, 0, 8);
}
export function np_set_input(port: u32, value: u32): void {
  if (port < 2) store<u32>(INPUTS + port * 4, value & 0xff);
}
export function np_run_frame(): void {
  const a = load<u32>(INPUTS);
  const b = load<u32>(INPUTS + 4);
  acc = acc * 31 + <i32>(a * 7 + b + 1);
  wide = wide * 1000003 + <i64>acc;
  let seed: u32 = contentLen > 0 ? <u32>load<u8>(CONTENT) : 0;
  const pixel: u32 = (<u32>acc + seed) & 63;
  store<u8>(FB + pixel, load<u8>(FB + pixel) ^ 1);
  for (let i: u32 = 0; i < 4; i++) store<i16>(AUDIO + i * 2, <i16>(acc + <i32>i));
}
export function np_fb_ptr(): u32 {
  return FB;
}
export function np_fb_width(): u32 {
  return 8;
}
export function np_fb_height(): u32 {
  return 8;
}
export function np_fb_format(): u32 {
  return 0;
}
export function np_audio_ptr(): u32 {
  return AUDIO;
}
export function np_audio_len(): u32 {
  return 4;
}
export function np_audio_rate(): u32 {
  return 240;
}
