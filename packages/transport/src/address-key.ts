/**
 * The part of a printable remote address that identifies the sender for per-address limits: the host
 * without its port (`127.0.0.1:5000` → `127.0.0.1`, `[::1]:5000` → `::1`, `::ffff:10.0.0.1` →
 * `10.0.0.1`). An address with no port (a simulator endpoint name) is returned as it is.
 */
export function addressKey(remoteAddress: string): string {
  let host = remoteAddress;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end > 0 ? host.slice(1, end) : host;
  } else {
    const colon = host.lastIndexOf(':');
    // One colon: host:port. More than one without brackets: a bare IPv6 address, kept whole.
    if (colon > 0 && host.indexOf(':') === colon) host = host.slice(0, colon);
  }
  const lower = host.toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice(7) : lower;
}
