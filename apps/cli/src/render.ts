import { type Framebuffer, framebufferToText } from '@netplay/core-wasm';
import type { PeerReport } from '@netplay/lockstep';
import type { P2PSession } from '@netplay/rollback';

/**
 * Redraws a terminal in place: cursor home, each line followed by clear-to-end-of-line, then clear
 * below (no full clear, so no flicker).
 */
export function redraw(lines: readonly string[]): string {
  return `\x1b[H${lines.join('\n').split('\n').join('\x1b[K\n')}\x1b[K\n\x1b[J`;
}

/** The game in half-blocks (▀▄█), one text row per two pixel rows. */
export function drawScreen(fb: Framebuffer): string {
  return framebufferToText(fb, 'half-blocks');
}

/**
 * One peer's live stats line: frame, final frame, ping (the worst player link), frames ahead,
 * rollbacks (and the deepest), and session bytes per second sent and received.
 */
export function statsLine(name: string, session: P2PSession, localPlayer: number | undefined): string {
  let ping = 0;
  let sent = 0;
  let received = 0;
  for (const r of session.peerStats()) {
    if (r.connected && r.rttMs > ping) ping = r.rttMs;
    sent += r.sendBytesPerSec;
    received += r.receiveBytesPerSec;
  }
  const s = session.stats;
  const who = localPlayer === undefined ? '  ' : `P${localPlayer + 1}`;
  return (
    `${name.padEnd(10)} ${who} frame ${String(session.currentFrame).padStart(5)}  final ${String(session.confirmedFrame).padStart(5)}` +
    `  ping ${ping.toFixed(0).padStart(3)} ms  ahead ${session.framesAhead.toFixed(1).padStart(5)}` +
    `  rollbacks ${String(s.rollbacks).padStart(4)} (max ${s.maxRollbackDepth})` +
    `  ${sent.toFixed(0).padStart(5)} B/s out ${received.toFixed(0).padStart(5)} B/s in`
  );
}

/** A lockstep peer's live stats line: frames run, input latency, stalls and wire bytes per second. */
export function lockstepStatsLine(name: string, r: PeerReport, localPlayer: number | undefined): string {
  const who = localPlayer === undefined ? '  ' : `P${localPlayer + 1}`;
  return (
    `${name.padEnd(10)} ${who} frame ${String(r.frames).padStart(5)}  input latency ${r.meanLatencyFrames.toFixed(1)} f` +
    ` (max ${r.maxLatencyFrames})  stalls ${String(r.stalls).padStart(4)} (${r.stallMs.toFixed(0)} ms)` +
    `  ${r.bytesPerSecond.toFixed(0).padStart(5)} B/s out`
  );
}
