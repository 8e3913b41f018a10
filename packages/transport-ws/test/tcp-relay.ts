import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP relay for tests: forwards every accepted connection to `127.0.0.1:targetPort`.
 * `cut()` makes it swallow all bytes in both directions from then on (a pulled cable, without the
 * TCP connection closing), which is how the conformance suite's timeout test is run over WebSockets.
 */
export class TcpRelay {
  private cutAll = false;
  private paused = false;
  private readonly sockets = new Set<Socket>();
  private readonly downs = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static start(targetPort: number): Promise<TcpRelay> {
    return new Promise((resolve, reject) => {
      let relay: TcpRelay | undefined;
      const server = createServer((down) => {
        const r = relay!;
        const up = createConnection({ host: '127.0.0.1', port: targetPort });
        r.downs.add(down);
        down.on('close', () => r.downs.delete(down));
        for (const s of [down, up]) {
          r.sockets.add(s);
          s.on('error', () => {});
          s.on('close', () => r.sockets.delete(s));
        }
        if (r.paused) down.pause();
        down.on('data', (chunk) => {
          if (!r.cutAll) up.write(chunk);
        });
        up.on('data', (chunk) => {
          if (!r.cutAll) down.write(chunk);
        });
        down.on('end', () => up.end());
        up.on('end', () => down.end());
        down.on('close', () => up.destroy());
        up.on('close', () => down.destroy());
      });
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const addr = server.address();
        if (addr === null || typeof addr === 'string') {
          reject(new Error('no port'));
          return;
        }
        relay = new TcpRelay(server, addr.port);
        resolve(relay);
      });
    });
  }

  /**
   * Stops reading from the clients (client → server direction) until {@link resume}: their
   * socket buffers fill up, as on a congested link.
   */
  pause(): void {
    this.paused = true;
    for (const s of this.downs) s.pause();
  }

  /** Reads from the clients again. */
  resume(): void {
    this.paused = false;
    for (const s of this.downs) s.resume();
  }

  /** Drops every byte in both directions from now on. */
  cut(): void {
    this.cutAll = true;
  }

  /** Closes the relay and destroys every relayed socket. */
  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
