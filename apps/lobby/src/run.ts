import { type LobbyServer, startLobby } from '@netplay/lobby/node';
import type { LobbyCliOptions } from './options.js';

/** Starts a lobby node from parsed options and prints what it does through `log`. */
export async function runLobby(o: LobbyCliOptions, log: (line: string) => void): Promise<LobbyServer> {
  const lobby = await startLobby({
    port: o.port,
    host: o.host,
    ttlMs: o.ttlMs,
    ...(o.publicUrl ? { publicUrl: o.publicUrl } : {}),
    ...(o.redis ? { redis: o.redis } : {}),
    ...(o.redisPrefix ? { redisPrefix: o.redisPrefix } : {}),
    ...(o.nodeId ? { nodeId: o.nodeId } : {}),
    ...(o.signal ? {} : { signaling: false as const }),
    ...(o.relay
      ? {
          relay: o.relayRate ? { bytesPerSecond: o.relayRate } : {},
          ...(o.relayPort !== undefined ? { relayPort: o.relayPort } : {}),
          ...(o.relayPublicUrl ? { relayPublicUrl: o.relayPublicUrl } : {}),
        }
      : { relay: false as const }),
  });
  log(`netplay-lobby node ${lobby.nodeId} listening on ${lobby.url} (bound to ${o.host}:${lobby.port})`);
  log(
    `  store:     ${o.redis ? `Redis ${o.redis} (prefix ${o.redisPrefix ?? 'np:lobby:'})` : 'in memory (this node only)'}`,
  );
  log(`  rooms:     ${lobby.url}/rooms  (room TTL ${o.ttlMs} ms)`);
  log(`  feed:      ${lobby.url.replace(/^http/, 'ws')}/feed`);
  log(`  signaling: ${lobby.signalingUrl ?? 'off'}`);
  log(
    `  relay:     ${lobby.relay ? `${lobby.relay.publicUrl}/relay/{host,join,link} (a UDP port per room whose host asks)` : 'off'}`,
  );
  if (!o.quiet) {
    lobby.store.subscribe((e) => {
      if (e.type === 'put') {
        const r = e.room.info;
        log(
          `room ${r.id} "${r.name}" ${r.game}/${r.core} ${r.mode} ${r.players}/${r.slots}${r.hasPassword ? ' password' : ''} via ${r.node}`,
        );
      } else log(`room ${e.id} ${e.reason}`);
    });
  }
  return lobby;
}
