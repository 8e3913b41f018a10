import type { P2PSession } from '@netplay/rollback';

/** One line of live stats for a rollback peer: ping, frames ahead, rollbacks, bytes per second. */
export function rollbackStats(session: P2PSession): string {
  let ping = 0;
  let sent = 0;
  let received = 0;
  for (const r of session.peerStats()) {
    if (r.connected && r.rttMs > ping) ping = r.rttMs;
    sent += r.sendBytesPerSec;
    received += r.receiveBytesPerSec;
  }
  const s = session.stats;
  return (
    `frame ${session.currentFrame}  final ${session.confirmedFrame}  ping ${ping.toFixed(0)} ms` +
    `  ahead ${session.framesAhead.toFixed(1)}  rollbacks ${s.rollbacks} (max ${s.maxRollbackDepth})` +
    `  ${sent.toFixed(0)} B/s out  ${received.toFixed(0)} B/s in`
  );
}
