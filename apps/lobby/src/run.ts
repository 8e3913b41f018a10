import { type LobbyServer, startLobby } from '@netplay/lobby/node';
import { listenRetroArchTunnel, type RetroArchTunnel } from '@netplay/retroarch/node';
import type { LobbyCliOptions } from './options.js';

/** A running `netplay-lobby`: the lobby node and, with `--retroarch-port`, the RetroArch tunnel relay. */
export interface RunningLobby {
  readonly lobby: LobbyServer;
  /** The RetroArch tunnel relay (undefined without `--retroarch-port`). */
  readonly retroarch: RetroArchTunnel | undefined;
  /** The `HOST|PORT` a RetroArch host puts in `netplay_custom_mitm_server` (undefined: no relay). */
  readonly retroarchAddress: string | undefined;
  /** Closes the tunnel relay, then the lobby. */
  close(): Promise<void>;
}

/** The host name of `http://host:port` (brackets of an IPv6 literal removed). */
function hostnameOf(url: string): string {
  return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Starts a lobby node (and the RetroArch tunnel relay) from parsed options; prints what it does through `log`. */
export async function runLobby(o: LobbyCliOptions, log: (line: string) => void): Promise<RunningLobby> {
  const retroarch =
    o.retroarchPort === undefined
      ? undefined
      : await listenRetroArchTunnel({
          port: o.retroarchPort,
          host: o.host,
          ...(o.quiet ? {} : { log: (line: string) => log(`retroarch: ${line}`) }),
        });
  let lobby: LobbyServer;
  try {
    lobby = await startLobby({
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
      ...(retroarch
        ? {
            api: {
              routes: {
                'retroarch/sessions': () => ({ sessions: retroarch.sessions(), stats: retroarch.stats() }),
              },
            },
          }
        : {}),
    });
  } catch (e) {
    await retroarch?.close();
    throw e;
  }
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
  // What a RetroArch host is told: the public URL's host name (the bound address when there is none).
  const retroarchAddress = retroarch ? `${hostnameOf(lobby.url)}|${retroarch.port}` : undefined;
  if (retroarch) {
    log(`  retroarch: tunnel relay on ${o.host}:${retroarch.port}, sessions at ${lobby.url}/retroarch/sessions`);
    log('    a RetroArch 1.14 host uses it with these lines in retroarch.cfg:');
    log('      netplay_use_mitm_server = "true"');
    log('      netplay_mitm_server = "custom"');
    log(`      netplay_custom_mitm_server = "${retroarchAddress}"`);
  } else log('  retroarch: off (--retroarch-port N runs a RetroArch tunnel relay)');
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
  const started = lobby;
  return {
    lobby: started,
    retroarch,
    retroarchAddress,
    close: async () => {
      await retroarch?.close();
      await started.close();
    },
  };
}
