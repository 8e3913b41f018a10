/** Parsed command line of `netplay-lobby`. */
export interface LobbyCliOptions {
  readonly port: number;
  readonly host: string;
  readonly publicUrl: string | undefined;
  readonly redis: string | undefined;
  readonly redisPrefix: string | undefined;
  readonly nodeId: string | undefined;
  readonly ttlMs: number;
  readonly signal: boolean;
  readonly relay: boolean;
  readonly relayPort: number | undefined;
  readonly relayPublicUrl: string | undefined;
  readonly relayRate: number | undefined;
  /** Port of the RetroArch tunnel relay (undefined: off). */
  readonly retroarchPort: number | undefined;
  readonly quiet: boolean;
  readonly help: boolean;
}

/** A bad command line: the message names the option. */
export class UsageError extends Error {
  readonly code = 'usage';
}

export const USAGE = `netplay-lobby: a netplay lobby node (rooms API and feed, WebRTC signaling, relay)

Usage: netplay-lobby [options]

  --port N            HTTP port (default 8787): /rooms, /health, /feed, /signal, /relay/*
  --host ADDR         address to bind (default 127.0.0.1; 0.0.0.0 for every interface)
  --public-url URL    how clients reach this node (default http://HOST:PORT)
  --redis URL         share rooms, signaling and relay placement with other nodes (redis://host:6379)
  --redis-prefix P    key prefix in Redis (default np:lobby:)
  --node-id ID        this node's name (default random)
  --ttl MS            a room vanishes this long after its last heartbeat (default 30000)
  --no-signal         no WebRTC signaling at /signal
  --no-relay          no relay
  --relay-port N      serve the relay on its own port instead of --port
  --relay-public-url  how clients reach that port (default ws://HOST:RELAY_PORT)
  --relay-rate B      relay budget per room, bytes per second (default 4194304)
  --retroarch-port N  also run a RetroArch tunnel relay ("custom MITM server") on TCP port N
                      (default off; 0 = any free port); sessions at GET /retroarch/sessions
  --quiet             print only the startup lines
  -h, --help          this text`;

function num(name: string, v: string | undefined, min: number, max: number): number {
  const n = Number(v);
  if (v === undefined || !/^\d+$/.test(v) || n < min || n > max) {
    throw new UsageError(`${name} needs a whole number from ${min} to ${max}, got ${v ?? 'nothing'}`);
  }
  return n;
}

function str(name: string, v: string | undefined): string {
  if (v === undefined || v.startsWith('--')) throw new UsageError(`${name} needs a value`);
  return v;
}

/** Parses `argv` (without node and the script); throws {@link UsageError}. */
export function parseArgs(argv: readonly string[]): LobbyCliOptions {
  const o = {
    port: 8787,
    host: '127.0.0.1',
    publicUrl: undefined as string | undefined,
    redis: undefined as string | undefined,
    redisPrefix: undefined as string | undefined,
    nodeId: undefined as string | undefined,
    ttlMs: 30_000,
    signal: true,
    relay: true,
    relayPort: undefined as number | undefined,
    relayPublicUrl: undefined as string | undefined,
    relayRate: undefined as number | undefined,
    retroarchPort: undefined as number | undefined,
    quiet: false,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = () => argv[++i];
    switch (a) {
      case '--port':
        o.port = num(a, next(), 0, 65535);
        break;
      case '--host':
        o.host = str(a, next());
        break;
      case '--public-url':
        o.publicUrl = str(a, next());
        break;
      case '--redis': {
        const v = str(a, next());
        if (!/^rediss?:\/\//.test(v)) throw new UsageError(`--redis needs a redis:// URL, got ${v}`);
        o.redis = v;
        break;
      }
      case '--redis-prefix':
        o.redisPrefix = str(a, next());
        break;
      case '--node-id':
        o.nodeId = str(a, next());
        break;
      case '--ttl':
        o.ttlMs = num(a, next(), 1000, 3_600_000);
        break;
      case '--signal':
        o.signal = true;
        break;
      case '--no-signal':
        o.signal = false;
        break;
      case '--relay':
        o.relay = true;
        break;
      case '--no-relay':
        o.relay = false;
        break;
      case '--relay-port':
        o.relayPort = num(a, next(), 0, 65535);
        break;
      case '--relay-public-url':
        o.relayPublicUrl = str(a, next());
        break;
      case '--relay-rate':
        o.relayRate = num(a, next(), 1024, 1 << 30);
        break;
      case '--retroarch-port':
        o.retroarchPort = num(a, next(), 0, 65535);
        break;
      case '--quiet':
        o.quiet = true;
        break;
      case '-h':
      case '--help':
        o.help = true;
        break;
      default:
        throw new UsageError(`unknown option ${a} (see --help)`);
    }
  }
  return o;
}
