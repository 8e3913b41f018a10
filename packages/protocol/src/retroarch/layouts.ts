/**
 * buffer-layout declarations of RetroArch protocol 6 payloads. Cold-path messages (header, NICK,
 * INFO, SYNC, MODE, discovery, …) are encoded and decoded through these; the per-frame messages
 * (INPUT, NOINPUT, CRC) have hand-written DataView codecs, and these declarations are the oracle
 * their property tests compare against.
 */
import { blob, type Layout, type Structure, s32be, seq, struct, u8, u32be } from '@solana/buffer-layout';

/** A declared structure whose fields are all named. */
function declare<T>(fields: Layout<unknown>[]): Structure<T> {
  return struct<T>(fields as Layout<T[keyof T]>[]);
}

/** The 24-byte connection header, six big-endian words. */
export interface HeaderFields {
  magic: number;
  platformMagic: number;
  compression: number;
  /** client: highest protocol; host: salt. */
  word3: number;
  /** client: lowest protocol; host: chosen protocol. */
  word4: number;
  implementationMagic: number;
}
/** Declaration of the connection header. */
export const headerLayout: Structure<HeaderFields> = declare<HeaderFields>([
  u32be('magic'),
  u32be('platformMagic'),
  u32be('compression'),
  u32be('word3'),
  u32be('word4'),
  u32be('implementationMagic'),
]);

/** `[u32 command][u32 length]`, the prefix of every frame. */
export interface FrameHeaderFields {
  command: number;
  length: number;
}
/** Declaration of the frame prefix. */
export const frameHeaderLayout: Structure<FrameHeaderFields> = declare<FrameHeaderFields>([
  u32be('command'),
  u32be('length'),
]);

/** NICK and PAUSE payload: char[32]. */
export interface NickFields {
  nick: Uint8Array;
}
/** Declaration of the NICK / PAUSE payload. */
export const nickLayout: Structure<NickFields> = declare<NickFields>([blob(32, 'nick')]);

/** PASSWORD payload: char[64]. */
export interface PasswordFields {
  hash: Uint8Array;
}
/** Declaration of the PASSWORD payload. */
export const passwordLayout: Structure<PasswordFields> = declare<PasswordFields>([blob(64, 'hash')]);

/** INFO payload: 68 bytes. */
export interface InfoFields {
  contentCrc: number;
  coreName: Uint8Array;
  coreVersion: Uint8Array;
}
/** Declaration of the INFO payload. */
export const infoLayout: Structure<InfoFields> = declare<InfoFields>([
  u32be('contentCrc'),
  blob(32, 'coreName'),
  blob(32, 'coreVersion'),
]);

/** SYNC payload before the SRAM: 184 bytes. */
export interface SyncFields {
  frame: number;
  /** Bit 31: paused; bits 0–30: the client number. */
  clientWord: number;
  devices: number[];
  shareModes: number[];
  deviceClients: number[];
  nick: Uint8Array;
}
/** Declaration of the fixed part of the SYNC payload. */
export const syncLayout: Structure<SyncFields> = declare<SyncFields>([
  u32be('frame'),
  u32be('clientWord'),
  seq(u32be(), 16, 'devices'),
  seq(u8(), 16, 'shareModes'),
  seq(u32be(), 16, 'deviceClients'),
  blob(32, 'nick'),
]);

/** MODE payload: 60 bytes. */
export interface ModeFields {
  frame: number;
  /** Bit 31 you, bit 30 playing, bit 29 slave, bits 0–15 client number. */
  modeWord: number;
  devices: number;
  shareModes: number[];
  nick: Uint8Array;
}
/** Declaration of the MODE payload. */
export const modeLayout: Structure<ModeFields> = declare<ModeFields>([
  u32be('frame'),
  u32be('modeWord'),
  u32be('devices'),
  seq(u8(), 16, 'shareModes'),
  blob(32, 'nick'),
]);

/** A payload of one u32: PLAY, MODE_REFUSED, STALL, RESET, SETTING_ALLOW_PAUSING. */
export interface WordFields {
  value: number;
}
/** Declaration of a one-word payload. */
export const wordLayout: Structure<WordFields> = declare<WordFields>([u32be('value')]);

/** The fixed part of LOAD_SAVESTATE: 8 bytes, then the (zlib) data. */
export interface LoadSavestateFields {
  frame: number;
  uncompressedSize: number;
}
/** Declaration of the fixed part of LOAD_SAVESTATE. */
export const loadSavestateLayout: Structure<LoadSavestateFields> = declare<LoadSavestateFields>([
  u32be('frame'),
  u32be('uncompressedSize'),
]);

/** SETTING_INPUT_LATENCY_FRAMES payload: two signed words. */
export interface LatencyFields {
  min: number;
  max: number;
}
/** Declaration of the SETTING_INPUT_LATENCY_FRAMES payload. */
export const latencyLayout: Structure<LatencyFields> = declare<LatencyFields>([s32be('min'), s32be('max')]);

/** The LAN discovery query: the 4 bytes RANQ. */
export interface DiscoveryQueryFields {
  magic: number;
}
/** Declaration of the discovery query. */
export const discoveryQueryLayout: Structure<DiscoveryQueryFields> = declare<DiscoveryQueryFields>([u32be('magic')]);

/** The LAN discovery reply: 688 bytes. */
export interface DiscoveryReplyFields {
  magic: number;
  contentCrc: number;
  port: number;
  flags: number;
  nick: Uint8Array;
  frontend: Uint8Array;
  core: Uint8Array;
  coreVersion: Uint8Array;
  retroarchVersion: Uint8Array;
  content: Uint8Array;
  subsystem: Uint8Array;
}
/** Declaration of the discovery reply. */
export const discoveryReplyLayout: Structure<DiscoveryReplyFields> = declare<DiscoveryReplyFields>([
  u32be('magic'),
  u32be('contentCrc'),
  u32be('port'),
  u32be('flags'),
  blob(32, 'nick'),
  blob(32, 'frontend'),
  blob(32, 'core'),
  blob(32, 'coreVersion'),
  blob(32, 'retroarchVersion'),
  blob(256, 'content'),
  blob(256, 'subsystem'),
]);

// --- Oracles of the hand-written per-frame codecs (whole frames, prefix included) ---

/** A whole INPUT frame with `words` input words. */
export interface InputFrameFields {
  command: number;
  length: number;
  frame: number;
  client: number;
  input: number[];
}
/** Declaration of a whole INPUT frame with `words` input words (oracle of `encodeRetroArchInput`). */
export function inputFrameLayout(words: number): Structure<InputFrameFields> {
  return declare<InputFrameFields>([
    u32be('command'),
    u32be('length'),
    u32be('frame'),
    u32be('client'),
    seq(u32be(), words, 'input'),
  ]);
}

/** A whole NOINPUT frame. */
export interface NoInputFrameFields {
  command: number;
  length: number;
  frame: number;
}
/** Declaration of a whole NOINPUT frame (oracle of `encodeRetroArchNoInput`). */
export const noInputFrameLayout: Structure<NoInputFrameFields> = declare<NoInputFrameFields>([
  u32be('command'),
  u32be('length'),
  u32be('frame'),
]);

/** A whole CRC frame. */
export interface CrcFrameFields {
  command: number;
  length: number;
  frame: number;
  crc: number;
}
/** Declaration of a whole CRC frame (oracle of `encodeRetroArchCrc`). */
export const crcFrameLayout: Structure<CrcFrameFields> = declare<CrcFrameFields>([
  u32be('command'),
  u32be('length'),
  u32be('frame'),
  u32be('crc'),
]);
