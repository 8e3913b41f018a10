import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';

/** What `os.networkInterfaces()` returns (injectable for tests). */
export type Interfaces = Readonly<Record<string, readonly NetworkInterfaceInfo[] | undefined>>;

/** An address a friend can reach this machine at, and the interface that holds it. */
export interface FriendAddress {
  readonly address: string;
  readonly family: 'IPv4' | 'IPv6';
  readonly interface: string;
}

const WILDCARD_V4 = '0.0.0.0';
const WILDCARD_V6 = new Set(['::', '::0', '0:0:0:0:0:0:0:0']);

/** Whether `address` is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\./.test(address) || address === '::ffff:127.0.0.1';
}

/**
 * The addresses a friend can use to reach a host bound to `bind`: for the wildcard `0.0.0.0`
 * every non-internal IPv4 address of every interface; for `::` every non-internal IPv4 and IPv6
 * address (IPv6 link-local ones need a scope and are left out); for a specific address, that
 * address alone unless it is loopback (then none: only this machine can join).
 */
export function friendAddresses(bind: string, interfaces: Interfaces = networkInterfaces()): FriendAddress[] {
  const v4 = bind === WILDCARD_V4;
  const v6 = WILDCARD_V6.has(bind);
  const out: FriendAddress[] = [];
  if (!v4 && !v6) {
    if (isLoopback(bind)) return out;
    for (const [name, infos] of Object.entries(interfaces))
      for (const i of infos ?? [])
        if (i.address === bind) return [{ address: bind, family: i.family, interface: name }];
    return [{ address: bind, family: bind.includes(':') ? 'IPv6' : 'IPv4', interface: '?' }];
  }
  for (const [name, infos] of Object.entries(interfaces)) {
    for (const i of infos ?? []) {
      if (i.internal || isLoopback(i.address)) continue;
      if (i.family === 'IPv4') out.push({ address: i.address, family: 'IPv4', interface: name });
      else if (v6 && i.family === 'IPv6' && !/^fe80:/i.test(i.address))
        out.push({ address: i.address, family: 'IPv6', interface: name });
    }
  }
  return out;
}

/** `address:port`, with brackets around an IPv6 address. */
export function hostPort(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/**
 * The lines a host prints so a friend can join: one `netplay join ADDRESS:PORT …` per address of
 * {@link friendAddresses} (with `joinArgs` after it), then one line on reaching it from the
 * internet (port forwarding of `protocol` `port` on the router: NAT), or why only this machine
 * can join.
 */
export function friendLines(
  bind: string,
  port: number,
  protocol: 'UDP' | 'TCP',
  joinArgs: string,
  interfaces?: Interfaces,
): string[] {
  const addresses = friendAddresses(bind, interfaces);
  if (addresses.length === 0) {
    return isLoopback(bind)
      ? [
          `bound to ${bind}: only this machine can join (netplay join ${hostPort(bind, port)}${joinArgs}); --bind 0.0.0.0 lets others in`,
        ]
      : [
          `no network interface but loopback: only this machine can join (netplay join ${hostPort('127.0.0.1', port)}${joinArgs})`,
        ];
  }
  const lines = ['a friend on your network joins with one of:'];
  for (const a of addresses)
    lines.push(`  netplay join ${hostPort(a.address, port)}${joinArgs}    (${a.interface}, ${a.family})`);
  lines.push(
    `from the internet: forward ${protocol} port ${port} on your router to ${addresses[0]!.address} (NAT) and give your public ` +
      `address instead; or meet through a signaling server with --transport webrtc (no forwarding)`,
  );
  return lines;
}

/**
 * Whether `address` is private (not routed on the internet): RFC 1918 (10/8, 172.16/12,
 * 192.168/16), carrier-grade NAT (100.64/10), link-local (169.254/16, fe80::/10), unique local
 * IPv6 (fc00::/7) or loopback. A host whose addresses are all private sits behind NAT.
 */
export function isPrivateAddress(address: string): boolean {
  if (isLoopback(address)) return true;
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.\d+\.\d+$/i.exec(address);
  if (v4) {
    const a = Number(v4[1]);
    const b = Number(v4[2]);
    return (
      a === 10 ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254)
    );
  }
  return /^f[cd]/i.test(address) || /^fe[89ab]/i.test(address);
}
