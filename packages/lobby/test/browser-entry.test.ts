import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  isNodeBuiltin,
  nodeGlobalUsers,
  walkModuleGraph,
  workspaceSourceResolver,
} from '@netplay/transport/conformance';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = resolve(here, '../..');
const walk = (entry: string) => walkModuleGraph(entry, { resolvePackage: workspaceSourceResolver(packagesDir) });

describe('the browser entry (@netplay/lobby: the room-list client apps/web uses)', () => {
  const graph = walk(resolve(here, '../src/index.ts'));

  it('resolves every relative import it reaches', () => {
    expect(graph.missing).toEqual([]);
  });

  it('reaches the client and @netplay/transport', () => {
    expect(graph.files.some((f) => f.endsWith('lobby/src/client.ts'))).toBe(true);
    expect(graph.files.some((f) => f.endsWith('transport/src/index.ts'))).toBe(true);
  });

  it('imports nothing outside the workspace (no node:, ws, @redis/client) and uses no Node global', () => {
    expect(graph.external).toEqual([]);
    const offenders = nodeGlobalUsers(graph.files).map((f) => f.slice(packagesDir.length + 1));
    expect(offenders).toEqual([]);
  });

  it('the scanner sees the Node imports of /node (it is not blind)', () => {
    const node = walk(resolve(here, '../src/node.ts'));
    const specs = node.external.map((e) => e.spec);
    expect(specs).toContain('ws');
    expect(specs).toContain('@redis/client');
    expect(specs.some(isNodeBuiltin)).toBe(true);
  });
});
