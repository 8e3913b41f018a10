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

const isNodeOnly = (spec: string) => isNodeBuiltin(spec) || spec === 'ws' || spec.startsWith('ws/');

describe('the browser entry', () => {
  const graph = walk(resolve(here, '../src/index.ts'));

  it('resolves every relative import it reaches', () => {
    expect(graph.missing).toEqual([]);
  });

  it('reaches the package sources and @netplay/transport', () => {
    expect(graph.files.some((f) => f.endsWith('transport-ws/src/connection.ts'))).toBe(true);
    expect(graph.files.some((f) => f.endsWith('transport/src/emitter.ts'))).toBe(true);
  });

  it('imports no Node module and no ws, anywhere in its module graph', () => {
    expect(graph.external.filter((e) => isNodeOnly(e.spec))).toEqual([]);
    // Nothing outside the workspace at all: a browser bundle needs no npm package for it.
    expect(graph.external).toEqual([]);
  });

  it('uses no Node global in the files it reaches', () => {
    const offenders = nodeGlobalUsers(graph.files).map((f) => f.slice(packagesDir.length + 1));
    expect(offenders).toEqual([]);
  });

  it('the scanner does see the Node imports of the server entry (it is not blind)', () => {
    const server = walk(resolve(here, '../src/server.ts'));
    const specs = server.external.map((e) => e.spec);
    expect(specs).toContain('ws');
    expect(specs).toContain('node:http');
    expect(nodeGlobalUsers(server.files).length > 0).toBe(true);
  });
});
