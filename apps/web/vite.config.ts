import { networkInterfaces } from 'node:os';
import { defineConfig, type Plugin } from 'vite';

/**
 * `npm run demo:web` (the dev server) also starts a WebRTC signaling server for the share-a-link
 * flow: on 127.0.0.1:8787 (or, with `vite --host`, on every interface), port from
 * `NETPLAY_SIGNAL_PORT`; `NETPLAY_SIGNAL_PORT=0` starts none. `vite build` starts nothing.
 */
function signalingServer(): Plugin {
  return {
    name: 'netplay-signaling',
    apply: 'serve',
    async configureServer(server) {
      const port = Number(process.env.NETPLAY_SIGNAL_PORT ?? 8787);
      if (!Number.isInteger(port) || port <= 0) return;
      // Loaded only here, from the workspace sources: `npm run dev` runs Vite under tsx with the
      // @netplay/source condition (the config bundler must not try to resolve it).
      const entry = '@netplay/transport-webrtc/server';
      const { listenSignaling } = (await import(
        /* @vite-ignore */ entry
      )) as typeof import('@netplay/transport-webrtc/server');
      const exposed = server.config.server.host;
      const host =
        exposed === true || exposed === '0.0.0.0' ? '0.0.0.0' : typeof exposed === 'string' ? exposed : '127.0.0.1';
      const signaling = await listenSignaling({ port, host });
      server.config.logger.info(`  netplay signaling: ${signaling.url} (rooms for "Host a game")`);
      server.httpServer?.once('close', () => {
        void signaling.close();
      });
    },
  };
}

/**
 * `npm run demo:web` also starts an in-memory lobby (`startLobby` of `@netplay/lobby/node`: rooms
 * API, feed and WebRTC signaling at /signal) on 127.0.0.1:8788 (every interface with `vite --host`),
 * port from `NETPLAY_LOBBY_PORT`; `0` starts none. The page lists its rooms and announces hosted
 * games there. `vite build` starts nothing and compiles no lobby in (`VITE_NETPLAY_LOBBY` or
 * `?lobby=` name one).
 */
function lobbyServer(): Plugin {
  const port = Number(process.env.NETPLAY_LOBBY_PORT ?? 8788);
  const enabled = Number.isInteger(port) && port > 0;
  return {
    name: 'netplay-lobby',
    config: (_config, { command }) => ({
      define: { __NETPLAY_DEV_LOBBY_PORT__: JSON.stringify(command === 'serve' && enabled ? port : 0) },
    }),
    async configureServer(server) {
      if (!enabled) return;
      const entry = '@netplay/lobby/node';
      const { startLobby } = (await import(/* @vite-ignore */ entry)) as typeof import('@netplay/lobby/node');
      const exposed = server.config.server.host;
      const host =
        exposed === true || exposed === '0.0.0.0' ? '0.0.0.0' : typeof exposed === 'string' ? exposed : '127.0.0.1';
      // Join info names the lobby's public URL (the page's signaling for a room): with `--host`,
      // this machine's first LAN IPv4 address, so another machine can use it.
      const lan =
        host === '0.0.0.0'
          ? Object.values(networkInterfaces())
              .flat()
              .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address
          : undefined;
      const lobby = await startLobby({ port, host, ...(lan ? { publicUrl: `http://${lan}:${port}` } : {}) });
      server.config.logger.info(`  netplay lobby:     ${lobby.url} (rooms, feed, signaling at /signal)`);
      server.httpServer?.once('close', () => {
        void lobby.close();
      });
    },
  };
}

export default defineConfig({
  resolve: { conditions: ['@netplay/source', 'module', 'browser', 'import', 'default'] },
  build: { outDir: 'dist', emptyOutDir: true },
  plugins: [signalingServer(), lobbyServer()],
});
