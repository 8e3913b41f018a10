/** A TCP proxy on loopback that counts the REQUEST_SAVESTATE messages a RetroArch client sends its host. */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CountingProxy {
  readonly server: Server;
  /** REQUEST_SAVESTATE (0x41) frames sent by clients through the proxy. */
  requests(): number;
  close(): Promise<void>;
}

export function startCountingProxy(listenPort: number, hostPort: number): Promise<CountingProxy> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = createServer((down) => {
    const up = connect({ port: hostPort, host: '127.0.0.1' });
    sockets.add(down).add(up);
    let buf = Buffer.alloc(0);
    let headerDone = false;
    down.on('data', (chunk: Buffer) => {
      up.write(chunk);
      buf = Buffer.concat([buf, chunk]);
      if (!headerDone) {
        if (buf.length < 24) return;
        buf = buf.subarray(24);
        headerDone = true;
      }
      while (buf.length >= 8 && buf.length >= 8 + buf.readUInt32BE(4)) {
        if (buf.readUInt32BE(0) === 0x41) requests++;
        buf = buf.subarray(8 + buf.readUInt32BE(4));
      }
    });
    up.on('data', (chunk: Buffer) => down.write(chunk));
    const end = () => {
      down.destroy();
      up.destroy();
    };
    down.on('close', end).on('error', end);
    up.on('close', end).on('error', end);
  });
  return new Promise((resolve) => {
    server.listen(listenPort, '127.0.0.1', () =>
      resolve({
        server,
        requests: () => requests,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      }),
    );
  });
}
