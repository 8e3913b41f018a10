/** Where a room's relay is: the node's WebSocket base and, when the host asked for it, its UDP room port. */
export interface RelayPlacement {
  /** The WebSocket base of the node's relay (`ws://node:port`); clients join at `/relay/join` under it. */
  readonly ws: string;
  /** The room's UDP port on that node as `udp://host:port`, when the host registered with UDP. */
  readonly udp?: string;
}

/** The store's placement value (JSON). */
export function encodePlacement(p: RelayPlacement): string {
  return JSON.stringify(p);
}

/** Reads a placement value; a bare URL (older nodes) is a WebSocket base. */
export function decodePlacement(value: string): RelayPlacement | undefined {
  if (!value.startsWith('{')) return { ws: value };
  try {
    const v = JSON.parse(value) as RelayPlacement;
    return typeof v.ws === 'string' ? { ws: v.ws, ...(typeof v.udp === 'string' ? { udp: v.udp } : {}) } : undefined;
  } catch {
    return undefined;
  }
}
