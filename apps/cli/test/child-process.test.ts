import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';

const cwd = fileURLToPath(new URL('..', import.meta.url));

/** Runs the CLI from its sources in a child process, killed by PID after `timeoutMs`. */
function runChild(
  args: string[],
  timeoutMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@netplay/source', '--import', 'tsx', 'src/main.ts', ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
      reject(new Error(`netplay ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the netplay command in a child process', () => {
  it('a missing ROM: message on stderr, exit BadRom', async () => {
    const r = await runChild(['synctest', '--rom', 'does-not-exist.ch8']);
    expect(r.stderr).toMatch(/netplay synctest: cannot read ROM does-not-exist\.ch8: no such file/);
    expect(r.code).toBe(ExitCode.BadRom);
  });

  it('synctest of the embedded ROM: exit 0', async () => {
    const r = await runChild(['synctest', '--rom', 'assets/spaceracer.ch8', '--frames', '120']);
    expect(r.stdout).toMatch(/synctest: OK, 120 frames/);
    expect(r.code).toBe(ExitCode.Ok);
  });

  it('an unknown command: usage, exit Usage', async () => {
    const r = await runChild(['nonsense']);
    expect(r.stderr).toMatch(/unknown command "nonsense"/);
    expect(r.code).toBe(ExitCode.Usage);
  });
});
