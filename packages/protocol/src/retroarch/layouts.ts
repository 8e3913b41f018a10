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
  /**
   * Word 0 (offset 0): `RANP` 0x52414E50, `FULL` / `DENY` from a host refusing the client, or `POKE` from a client that
   * only wants the host's header.
   */
  magic: number;
  /**
   * Word 1 (offset 4): bit 30 = big-endian, bits 29–15 = sizeof(size_t), bits 14–0 = sizeof(long); 0x00040008 on
   * x86-64.
   */
  platformMagic: number;
  /** Word 2 (offset 8): the compression the sender supports, bit 0 = zlib; both ends use the intersection. */
  compression: number;
  /** client: highest protocol; host: salt. */
  word3: number;
  /** client: lowest protocol; host: chosen protocol. */
  word4: number;
  /**
   * Word 5 (offset 20): a hash of the sender's RetroArch version string (0x469 for "1.14.0"); a mismatch only warns.
   */
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
  /** Offset 0, u32: the command id (a `RetroArchCommand`). */
  command: number;
  /** Offset 4, u32: the payload length in bytes, not counting this 8-byte prefix. */
  length: number;
}
/** Declaration of the frame prefix. */
export const frameHeaderLayout: Structure<FrameHeaderFields> = declare<FrameHeaderFields>([
  u32be('command'),
  u32be('length'),
]);

/** NICK and PAUSE payload: char[32]. */
export interface NickFields {
  /** The 32 bytes: the nick as UTF-8, NUL-padded (at most 31 bytes of text). */
  nick: Uint8Array;
}
/** Declaration of the NICK / PAUSE payload. */
export const nickLayout: Structure<NickFields> = declare<NickFields>([blob(32, 'nick')]);

/** PASSWORD payload: char[64]. */
export interface PasswordFields {
  /** The 64 bytes: lowercase hex SHA-256 of the `%08lX` salt followed by the password, no NUL. */
  hash: Uint8Array;
}
/** Declaration of the PASSWORD payload. */
export const passwordLayout: Structure<PasswordFields> = declare<PasswordFields>([blob(64, 'hash')]);

/** INFO payload: 68 bytes. */
export interface InfoFields {
  /** Offset 0, u32: CRC-32 of the loaded content; a mismatch between host and client only warns. */
  contentCrc: number;
  /** Offset 4, char[32]: the core's library name, NUL-padded; it must match the peer's case-insensitively. */
  coreName: Uint8Array;
  /** Offset 36, char[32]: the core's version string, NUL-padded; a mismatch only warns. */
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
  /** Offset 0, u32: the host's current frame, the frame the new client starts at. */
  frame: number;
  /** Bit 31: paused; bits 0–30: the client number. */
  clientWord: number;
  /**
   * Offset 8, u32[16]: the libretro device type plugged into each port (RETRO_DEVICE_*: 0 none, 1 joypad, 2 mouse, 3
   * keyboard, 4 lightgun, 5 analog).
   */
  devices: number[];
  /**
   * Offset 72, u8[16]: each device's share mode: 0 not shared, bits 2–4 digital (0x04 OR, 0x08 XOR, 0x0C vote), bits
   * 5–7 analog (0x20 max, 0x40 average).
   */
  shareModes: number[];
  /** Offset 88, u32[16]: for each device, the bitmap of client numbers whose input drives it (bit n = client n). */
  deviceClients: number[];
  /** Offset 152, char[32]: the nick the host assigned the client (made unique among the connections), NUL-padded. */
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
  /** Offset 0, u32: the frame from which the new mode applies. */
  frame: number;
  /** Bit 31 you, bit 30 playing, bit 29 slave, bits 0–15 client number. */
  modeWord: number;
  /** Offset 8, u32: bitmap of the devices (ports) the client now controls, bit n = port n; 0 for a spectator. */
  devices: number;
  /**
   * Offset 12, u8[16]: each device's share mode: 0 not shared, bits 2–4 digital (0x04 OR, 0x08 XOR, 0x0C vote), bits
   * 5–7 analog (0x20 max, 0x40 average).
   */
  shareModes: number[];
  /** Offset 28, char[32]: the nick of the client whose mode changed, NUL-padded. */
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
  /**
   * The payload's one big-endian u32 (PLAY's mode bits, MODE_REFUSED's reason, STALL's frame count, RESET's frame, or
   * the 0 / 1 of SETTING_ALLOW_PAUSING).
   */
  value: number;
}
/** Declaration of a one-word payload. */
export const wordLayout: Structure<WordFields> = declare<WordFields>([u32be('value')]);

/** The fixed part of LOAD_SAVESTATE: 8 bytes, then the (zlib) data. */
export interface LoadSavestateFields {
  /** Offset 0, u32: the frame the savestate was taken at, which the receiver resumes from. */
  frame: number;
  /**
   * Offset 4, u32: the size in bytes of the serialized state once inflated (the size of the data when not compressed).
   */
  uncompressedSize: number;
}
/** Declaration of the fixed part of LOAD_SAVESTATE. */
export const loadSavestateLayout: Structure<LoadSavestateFields> = declare<LoadSavestateFields>([
  u32be('frame'),
  u32be('uncompressedSize'),
]);

/** SETTING_INPUT_LATENCY_FRAMES payload: two signed words. */
export interface LatencyFields {
  /** Offset 0, i32: the host's minimum input latency, in frames. */
  min: number;
  /** Offset 4, i32: the host's maximum input latency, in frames. */
  max: number;
}
/** Declaration of the SETTING_INPUT_LATENCY_FRAMES payload. */
export const latencyLayout: Structure<LatencyFields> = declare<LatencyFields>([s32be('min'), s32be('max')]);

/** The LAN discovery query: the 4 bytes RANQ. */
export interface DiscoveryQueryFields {
  /** The 4 bytes `RANQ` (0x52414E51); a datagram with anything else, or of another size, is not a query. */
  magic: number;
}
/** Declaration of the discovery query. */
export const discoveryQueryLayout: Structure<DiscoveryQueryFields> = declare<DiscoveryQueryFields>([u32be('magic')]);

/** The LAN discovery reply: 688 bytes. */
export interface DiscoveryReplyFields {
  /** Offset 0: `RANS` 0x52414E53. */
  magic: number;
  /** Offset 4, u32: CRC-32 of the content the host is running. */
  contentCrc: number;
  /** Offset 8, u32: the host's netplay TCP port (55435 by default). */
  port: number;
  /** Offset 12, u32: bit 0 = playing needs a password, bit 1 = spectating needs a password; other bits ignored. */
  flags: number;
  /** Offset 16, char[32]: the host's nick. */
  nick: Uint8Array;
  /** Offset 48, char[32]: the host's frontend identifier, e.g. "Linux x86_64". */
  frontend: Uint8Array;
  /** Offset 80, char[32]: the core's library name. */
  core: Uint8Array;
  /** Offset 112, char[32]: the core's version string. */
  coreVersion: Uint8Array;
  /** Offset 144, char[32]: the host's RetroArch version, e.g. "1.14.0". */
  retroarchVersion: Uint8Array;
  /** Offset 176, char[256]: the name of the content (game) being played. */
  content: Uint8Array;
  /** Offset 432, char[256]: the libretro subsystem name, empty when the content uses none. */
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
  /** Offset 0, u32: 0x03 (INPUT). */
  command: number;
  /** Offset 4, u32: the payload length, 8 + 4 × the number of input words. */
  length: number;
  /** Offset 8, u32: the frame this input is for. */
  frame: number;
  /** Offset 12, u32: the sender's client number (RetroArch reads the low 16 bits; a host ignores the claimed value). */
  client: number;
  /** Offset 16, u32 each: the input words, device by device (joypad 1, mouse / lightgun 2, analog 3, keyboard 5). */
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
  /** Offset 0, u32: 0x04 (NOINPUT). */
  command: number;
  /** Offset 4, u32: 4, the payload length. */
  length: number;
  /** Offset 8, u32: the frame the host passed without input of its own. */
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
  /** Offset 0, u32: 0x40 (CRC). */
  command: number;
  /** Offset 4, u32: 8, the payload length. */
  length: number;
  /** Offset 8, u32: the frame whose serialized state was hashed. */
  frame: number;
  /** Offset 12, u32: CRC-32 of the serialized state at that frame. */
  crc: number;
}
/** Declaration of a whole CRC frame (oracle of `encodeRetroArchCrc`). */
export const crcFrameLayout: Structure<CrcFrameFields> = declare<CrcFrameFields>([
  u32be('command'),
  u32be('length'),
  u32be('frame'),
  u32be('crc'),
]);
