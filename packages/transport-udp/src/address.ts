import { isIPv6 } from 'node:net';

/** `host:port`, with IPv6 hosts in brackets: `127.0.0.1:5000`, `[::1]:5000`. */
export function formatAddress(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The inverse of {@link formatAddress}. */
export function parseAddress(address: string): {
  /** Everything before the last `:`, without IPv6 brackets (`::1` from `[::1]:5000`); not checked to be an IP literal. */
  host: string;
  /** The digits after the last `:` as a number (`NaN` if they are not a number; the range is not checked). */
  port: number;
} {
  const i = address.lastIndexOf(':');
  let host = address.slice(0, i);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port: Number(address.slice(i + 1)) };
}
