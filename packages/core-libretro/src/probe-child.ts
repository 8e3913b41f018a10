// The child process of probeLibretroCore: reads a ProbeRequest (JSON) on stdin, prints one JSON
// line ({ report } or { error }) on stdout.
import { readFileSync } from 'node:fs';
import { LibretroError } from './errors.js';
import { LibretroCore } from './libretro-core.js';
import { setPrivateCopyRoot } from './private-copy.js';
import type { ProbeReport, ProbeRequest } from './probe.js';

const request = JSON.parse(readFileSync(0, 'utf8')) as ProbeRequest;
setPrivateCopyRoot(request.tmpDir);
try {
  const content = request.contentPath ?? new Uint8Array(Buffer.from(request.contentBase64 ?? '', 'base64'));
  const { tmpDir: _tmp, ...req } = request;
  const core = LibretroCore.load({
    core: req.core,
    content,
    ...(request.contentName !== undefined ? { contentName: request.contentName } : {}),
    ...(request.ports !== undefined ? { ports: request.ports } : {}),
    ...(request.options !== undefined ? { options: request.options } : {}),
    ...(request.systemDir !== undefined ? { systemDir: request.systemDir } : {}),
    ...(request.saveDir !== undefined ? { saveDir: request.saveDir } : {}),
  });
  const frames = request.frames ?? 60;
  for (let i = 0; i < frames; i++) core.advance();
  const saved = core.save();
  core.advance();
  const first = core.checksum();
  core.load(saved);
  core.advance();
  const report: ProbeReport = {
    libraryName: core.info.libraryName,
    libraryVersion: core.info.libraryVersion,
    stateBytes: core.stateBytes,
    frames: core.frame,
    refusedEnvironmentCalls: core.refusedEnvironmentCalls,
    serializationQuirks: core.serializationQuirks,
    savestateContextAsked: core.savestateContextAsked,
    reloadAgrees: core.checksum() === first,
  };
  core.close();
  process.stdout.write(`${JSON.stringify({ report })}\n`);
} catch (e) {
  if (e instanceof LibretroError)
    process.stdout.write(`${JSON.stringify({ error: { code: e.code, message: e.message, file: e.file } })}\n`);
  else throw e;
}
